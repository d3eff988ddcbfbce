"""Regressions of issue 51 in the module: no argument or environment ends the
interpreter; the library's errors arrive as dtrcheck.Error."""

import resource
import subprocess
import sys

import pytest

import dtrcheck
from conftest import cli


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.log"
    cli("gen", "demo", "-o", path)
    return path


def test_sweep_with_threads_the_system_refuses_answers_as_with_one(demo):
    # sweep(jobs=8) killed the interpreter (std::terminate from the task farm)
    # when a worker thread could not start. Each thread's stack would take
    # 3 GiB of a 6 GiB address space here, so at most one more starts.
    # The limits are set before the interpreter starts: glibc takes a
    # thread's default stack size from RLIMIT_STACK at start-up.
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        resource.setrlimit(resource.RLIMIT_STACK, (3 << 30, 3 << 30))

    code = ("import dtrcheck; "
            f"runs = dtrcheck.sweep({str(demo)!r}, '0.3:1.0:0.05', jobs=8); "
            "print(*(f'{r.ratio} {r.result} {r.overhead!r}' for r in runs), sep='\\n')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limits)
    assert p.returncode == 0, p.stderr
    want = [f"{r.ratio} {r.result} {r.overhead!r}" for r in dtrcheck.sweep(demo, "0.3:1.0:0.05", jobs=1)]
    assert p.stdout.splitlines() == want


def test_a_trace_without_operators_is_an_error_not_a_crash(tmp_path):
    # dtrcheck.prove on a trace holding only START killed the interpreter (a segfault).
    path = tmp_path / "start.log"
    path.write_text('{"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}\n')
    for call in (lambda: dtrcheck.prove(path, budget=1, z3=False), lambda: dtrcheck.replay(path, budget=1),
                 lambda: dtrcheck.info(path)):
        with pytest.raises(dtrcheck.Error, match="start.log:1: the trace has no CONSTANT, CALL or MUTATE"):
            call()


def test_a_store_that_cannot_be_written_keeps_the_answer(demo):
    # The CLI prints the answer, then reports the store (exit 3); prove(store=)
    # raised and lost the answer. Now the answer comes back with a RuntimeWarning.
    with pytest.warns(RuntimeWarning, match="cannot"):
        c = dtrcheck.prove(demo, ratio="0.2", z3=False, store="/proc/self")
    assert c.verdict == dtrcheck.prove(demo, ratio="0.2", z3=False, store="").verdict


def test_a_captured_trace_gets_the_mode_open_would_give(tmp_path):
    # Item 11: captured traces were written with mkstemp's mode 0600.
    import os
    from dtrcheck.capture import write_atomically
    old = os.umask(0o022)
    try:
        write_atomically(str(tmp_path / "t.log"), "x\n")
    finally:
        os.umask(old)
    assert (tmp_path / "t.log").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["t.log"]  # no temporary left


def test_capture_o_past_a_file_size_limit_is_one_line_and_leaves_nothing(tmp_path):
    # The capture's -o under a full disk or a file size limit ended in an
    # OSError traceback; now one line, exit 1, no file and no temporary.
    from conftest import SCRIPTS, capture_cli

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    out = tmp_path / "out.log"
    p = subprocess.run([sys.executable, "-m", "dtrcheck.capture", str(SCRIPTS / "mlp.py"), "-o", str(out)],
                       capture_output=True, text=True, preexec_fn=limit)
    assert p.returncode == 1
    assert p.stderr == f"dtrcheck.capture: {out}: cannot write (File too large)\n"
    assert list(tmp_path.iterdir()) == []
    assert capture_cli(SCRIPTS / "mlp.py", out).returncode == 0  # without the limit it is written
