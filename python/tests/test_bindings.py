"""`import dtrcheck`: the module runs the library code the CLI runs, so every
result must equal the CLI's --json output field for field."""

import json
import subprocess
import sys
import threading
import time

import pytest

import dtrcheck
from conftest import RESNET32, TRACES, cli, cli_json, need_traces

LSTM = TRACES / "lstm-128-11000000000.0-2020-10-1-16-38-52-default.log"


@pytest.fixture(scope="module")
def resnet32():
    need_traces()
    return dtrcheck.load(RESNET32)


def test_the_resnet32_inversion_is_the_clis(resnet32):
    runs = dtrcheck.sweep(resnet32, [0.101, 0.102])
    assert [(r.ratio, r.result) for r in runs] == [(0.101, "pass"), (0.102, "oom")]
    assert [r.to_dict() for r in runs] == cli_json("sweep", RESNET32, "--ratios", "0.101,0.102")
    assert runs[1].oom.op == "cudnn_batch_norm/193" and runs[1].oom.remat_depth == 117


def test_python_c_import_dtrcheck_reproduces_the_inversion():
    need_traces()
    code = ("import dtrcheck; "
            f"runs = dtrcheck.sweep({str(RESNET32)!r}, '0.101,0.102'); "
            "print(*(f'{r.ratio} {r.result} {r.overhead!r} {r.budget}' for r in runs), sep='\\n')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    want = [f"{r['ratio']} {r['result']} {r['overhead']!r} {r['budget']}"
            for r in cli_json("sweep", RESNET32, "--ratios", "0.101,0.102")]
    assert p.stdout.splitlines() == want


def test_replay_info_and_a_path_argument_are_the_clis(resnet32):
    assert dtrcheck.replay(resnet32, "0.102").to_dict() == cli_json("replay", RESNET32, "--ratio", "0.102")[0]
    assert dtrcheck.replay(str(RESNET32), budget=1016179094, heuristic="LRU").to_dict() == \
        cli_json("replay", RESNET32, "--budget", "1016179094", "--heuristic", "LRU")[0]
    assert resnet32.info().to_dict() == cli_json("info", RESNET32)[0]


def test_atlas_and_scan_are_the_clis(resnet32):
    atlas = resnet32.atlas((0.1, 0.103), jobs=1)
    assert atlas.to_dict() == cli_json("atlas", RESNET32, "--ratios", "0.1:0.103", "-j", "1")[0]
    assert len(atlas.to_pandas()) == atlas.summary.intervals
    assert "stopped_at_cap" not in atlas.to_dict()
    # A cap of heuristic evaluations stops the walk where the CLI's does; the
    # answer is the atlas of the part walked, and says so.
    capped = resnet32.atlas((0.1, 0.103), jobs=2, max_evals=atlas.to_dict()["heuristic_evals"] // 2)
    assert capped.to_dict() == cli_json("atlas", RESNET32, "--ratios", "0.1:0.103", "--max-evals",
                                        str(atlas.to_dict()["heuristic_evals"] // 2), "-j", "1")[0]
    stop = capped.to_dict()["stopped_at_cap"]
    assert stop["asked_budget_hi"] == atlas.to_dict()["budget_hi"]
    assert capped.to_dict()["budget_hi"] < stop["asked_budget_hi"]
    assert capped.to_dict()["heuristic_evals"] >= stop["max_evals"]
    assert 0 < capped.summary.intervals < atlas.summary.intervals
    scan = resnet32.scan("0.1:0.11:0.001", jobs=2)
    assert scan.to_dict() == cli_json("scan", RESNET32, "--ratios", "0.1:0.11:0.001")[0]
    assert list(scan.to_pandas()["result"][:3]) == ["pass", "pass", "oom"]


def test_explain_and_prove_are_the_clis(resnet32):
    explained = resnet32.explain(0.102, z3=False)
    assert explained.verdict == "policy-induced"
    assert explained.to_dict() == cli_json("explain", RESNET32, "--ratio", "0.102", "--no-z3")[0]
    proved = resnet32.prove(0.102, z3=False)
    assert proved.to_dict() == cli_json("prove", RESNET32, "--ratio", "0.102", "--no-z3")[0]


def test_cut_false_is_the_clis_no_cut(resnet32):
    # At 0.058 only the keep-or-recompute cut proves the OOM inherent.
    assert resnet32.prove(0.058, z3=False).verdict == "inherent"
    uncut = resnet32.prove(0.058, z3=False, cut=False)
    assert uncut.verdict == "undetermined"
    assert uncut.to_dict() == cli_json("prove", RESNET32, "--ratio", "0.058", "--no-z3", "--no-cut")[0]
    assert resnet32.explain(0.058, z3=False, cut=False).to_dict() == \
        cli_json("explain", RESNET32, "--ratio", "0.058", "--no-z3", "--no-cut")[0]


def test_report_refuses_z3_limits_without_z3_as_the_cli_does(resnet32, tmp_path):
    with pytest.raises(dtrcheck.Error, match="report: --timeout, --work-limit set Z3's limits and need --z3"):
        resnet32.report("0.1", out=tmp_path, timeout=5, work_limit=100)
    with pytest.raises(dtrcheck.Error, match=r"--timeout: -1 is outside the range \[0, 86400\] \(see --help\)"):
        resnet32.report("0.1", out=tmp_path, z3=True, timeout=-1)
    assert not any(tmp_path.iterdir())  # nothing written
    refused = cli("report", RESNET32, "--ratios", "0.1", "--out", tmp_path / "cli", "--work-limit", "100", code=2)
    assert "--z3" in refused.stderr


def test_a_work_limit_cuts_each_z3_call_as_in_the_cli(resnet32):
    # Z3's rlimit: 1 unit cuts every call on any machine (without it this window is sat).
    cut = resnet32.prove(0.095, work_limit=1, windows=1)
    assert cut.verdict == "undetermined"
    assert [w["answer"] for w in cut.to_dict()["windows"]] == ["unknown"]
    assert cut.to_dict() == cli_json("prove", RESNET32, "--ratio", "0.095", "--work-limit", "1", "--windows", "1")[0]
    with pytest.raises(dtrcheck.Error, match=r"--work-limit: -1 is outside the range 0\.\.2\^32-1 \(see --help\)"):
        resnet32.prove(0.095, work_limit=-1)


def test_report_writes_the_clis_files(resnet32, tmp_path):
    # No atlas: its 622 replays are test_atlas_and_scan_are_the_clis's.
    report = resnet32.report("0.1:0.11:0.005", out=tmp_path / "py", jobs=1, atlas=False)
    cli("report", RESNET32, "--ratios", "0.1:0.11:0.005", "--out", tmp_path / "cli", "-j", "1", "--no-atlas")
    assert report.files == [str(tmp_path / "py" / f) for f in ("report.json", "report.md", "report.html")]
    written = json.loads((tmp_path / "py" / "report.json").read_text())
    assert report.to_dict() == written == json.loads((tmp_path / "cli" / "report.json").read_text())
    assert list(report.to_pandas()["result"]) == ["pass", "oom", "pass"]  # 0.105 is in the inversion


def test_a_certificate_store_is_the_clis(resnet32, tmp_path, monkeypatch):
    # prove at 0.102 finds a script (DTR's run at 0.1015) and stores it; prove
    # at 0.103 then takes the stored script, checked again. The same calls
    # with the CLI's --store write the same file and print the same verdicts.
    monkeypatch.delenv("DTRCHECK_STORE", raising=False)
    py_store, cli_store = tmp_path / "py", tmp_path / "cli"
    first = resnet32.prove(0.102, z3=False, store=py_store)
    assert first.verdict == "feasible"
    assert first.to_dict() == cli_json("prove", RESNET32, "--ratio", "0.102", "--no-z3", "--store", cli_store)[0]
    stored = sorted(p.name for p in py_store.iterdir())
    assert stored == sorted(p.name for p in cli_store.iterdir()) and len(stored) == 1
    assert (py_store / stored[0]).read_bytes() == (cli_store / stored[0]).read_bytes()
    assert resnet32.prove(0.103, z3=False).certificate["source"] != "certificate store"
    second = resnet32.prove(0.103, z3=False, store=py_store)
    assert second.certificate["source"] == "certificate store"
    assert second.to_dict() == cli_json("prove", RESNET32, "--ratio", "0.103", "--no-z3", "--store", cli_store)[0]
    monkeypatch.setenv("DTRCHECK_STORE", str(py_store))  # the default, as the CLI's
    assert resnet32.explain(0.103, z3=False).certificate["source"] == "certificate store"
    # report reads the store (the same one, as report.json names it).
    monkeypatch.setenv("DTRCHECK_STORE", str(cli_store))
    report = resnet32.report("0.103", out=tmp_path / "report-py", jobs=1, atlas=False, divergence=False)
    cli("report", RESNET32, "--ratios", "0.103", "--out", tmp_path / "report-cli", "-j", "1", "--no-atlas",
        "--no-divergence", "--store", cli_store)
    assert report.to_dict() == json.loads((tmp_path / "report-cli" / "report.json").read_text())
    unstored = resnet32.report("0.103", out=tmp_path / "report-none", jobs=1, atlas=False, divergence=False,
                               store="")
    assert report.to_dict() != unstored.to_dict()


def test_a_sweep_is_a_table_in_pandas(resnet32):
    frame = dtrcheck.sweep(resnet32, "0.1:0.104:0.001", heuristic=["DTR", "LRU"]).to_pandas()
    assert len(frame) == 10
    assert list(frame.columns[:3]) == ["log", "heuristic", "runtime"]
    assert {"ratio", "result", "overhead", "oom.request"} <= set(frame.columns)
    assert list(frame["heuristic"]) == ["DTR"] * 5 + ["LRU"] * 5


def test_a_captured_trace_gives_the_clis_numbers(captured):
    runs = dtrcheck.sweep(captured["resnet"], "0.3:1.0:0.1")
    assert [r.to_dict() for r in runs] == cli_json("sweep", captured["resnet"], "--ratios", "0.3:1.0:0.1")


# The CLI's exit status of each (docs/cli.md): 3 bad input, 2 a usage error.
@pytest.mark.parametrize("call, args, code", [
    (lambda: dtrcheck.load("/nonexistent/model.log"), ["info", "/nonexistent/model.log"], 3),
    (lambda: dtrcheck.sweep(RESNET32, "0.2:0.1:0.01"), ["sweep", RESNET32, "--ratios", "0.2:0.1:0.01"], 2),
    (lambda: dtrcheck.replay(RESNET32, 0.5, heuristic="Oracle"),
     ["replay", RESNET32, "--ratio", "0.5", "--heuristic", "Oracle"], 2),
    (lambda: dtrcheck.replay(RESNET32, 0.5, heuristic="MSPS", runtime="RuntimeV1"),
     ["replay", RESNET32, "--ratio", "0.5", "--heuristic", "MSPS", "--runtime", "RuntimeV1"], 2),
])
def test_errors_carry_the_clis_message(call, args, code):
    need_traces()
    with pytest.raises(dtrcheck.Error) as e:
        call()
    stderr = cli(*args, code=code).stderr
    assert stderr == f"dtrcheck: {e.value}\n"


def test_a_bad_trace_line_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "bad.log"
    path.write_text('{"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}\n{"INSTRUCTION":"CONSTANT","NAME":"x0"}\n')
    with pytest.raises(dtrcheck.Error, match=r"bad.log:2: CONSTANT result x0 has no MEMORY line"):
        dtrcheck.load(path)
    assert cli("info", path, code=3).stderr.startswith(f"dtrcheck: {path}:2: ")


def test_a_long_call_releases_the_gil():
    need_traces()
    lstm = dtrcheck.load(LSTM)
    window = {}

    def sweep():
        window["start"] = time.monotonic()
        dtrcheck.sweep(lstm, "0.2:1.0:0.05", jobs=1)  # about a second
        window["end"] = time.monotonic()

    worker = threading.Thread(target=sweep)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.monotonic())
        time.sleep(0.005)
    worker.join()
    inside = [t for t in ticks if window["start"] + 0.05 < t < window["end"] - 0.05]
    assert window["end"] - window["start"] > 0.3  # long enough to tell
    assert len(inside) >= 10  # this thread kept running while the sweep ran
