"""A script with no step(), captured as it is (docs/python.md, "A script as
it is"): from the first forward of its model to the end of the first
optimizer step, or to the script's end when it has no optimizer."""

import json
import linecache
import textwrap

import pytest

from conftest import SCRIPTS, capture_cli
from dtrcheck.capture import CaptureError, capture_script

MODEL = """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
x = torch.randn(2, 4)
y = torch.randn(2, 2)
"""


def script(tmp_path, body: str, name: str = "train.py"):
    path = tmp_path / name
    path.write_text(MODEL + textwrap.dedent(body))
    return path


def statement_of(line: dict) -> dict:
    """The line with SOURCE given as the statement's text instead of file:line."""
    if "SOURCE" in line:
        path, _, number = line["SOURCE"].rpartition(":")
        line = {**line, "SOURCE": linecache.getline(path, int(number)).strip()}
    return line


def test_a_training_loop_at_module_level_gives_the_trace_of_its_step_function():
    # scripts/mlp_loop.py runs scripts/mlp.py's step in a loop at module
    # level. The traces are equal line by line, attribution keys included,
    # with two differences that follow from where the code sits: SOURCE
    # names each script's own line of the same statement (compared by its
    # text), and step() returns, so its locals (the loss) are released at the
    # end of its trace, where the loop keeps them as module globals.
    step = [statement_of(json.loads(l)) for l in capture_script(str(SCRIPTS / "mlp.py")).lines]
    loop = [statement_of(json.loads(l)) for l in capture_script(str(SCRIPTS / "mlp_loop.py")).lines]
    assert step[:len(loop)] == loop
    assert [l["INSTRUCTION"] for l in step[len(loop):]] == ["RELEASE"]
    assert {l["SOURCE"] for l in loop if "SOURCE" in l} == {
        "loss = nn.functional.mse_loss(model(x), y)", "loss.backward()", "optimizer.step()"}


def test_the_capture_stops_the_script_after_the_first_optimizer_step(tmp_path):
    path = script(tmp_path, """
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(3):
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
            open(f"{__file__}.{i}", "w").close()
        """)
    lines = [json.loads(l) for l in capture_script(str(path)).lines]
    assert [f.name for f in tmp_path.iterdir()] == ["train.py"]  # the loop's first write never ran
    assert [l["PHASE"] for l in lines if "PHASE" in l][-1] == "optimizer"
    assert sum(l["INSTRUCTION"] == "ANNOTATE" for l in lines) == 2  # START, BACKWARD


def test_a_script_without_an_optimizer_is_captured_to_its_end(tmp_path):
    path = script(tmp_path, """
        def main():
            nn.functional.mse_loss(model(x), y).backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
            print(model(x).sum().item())

        if __name__ == "__main__":
            main()
        """)
    ops = [json.loads(l) for l in capture_script(str(path)).lines]
    ops = [l for l in ops if l["INSTRUCTION"] in ("CALL", "MUTATE")]
    # The update after backward is the optimizer phase; the forward after it
    # (a top-level module call) is a forward again, to the script's last line.
    phases = [l["PHASE"] for l in ops]
    assert phases.index("optimizer") < len(phases) - phases[::-1].index("forward")
    assert {l["SOURCE"] for l in ops if l["PHASE"] == "optimizer"} == {f"{path}:12"}
    assert ops[-1]["SOURCE"] == f"{path}:13"


def test_a_loop_variable_named_step_does_not_make_a_step_script(tmp_path):
    path = script(tmp_path, """
        import sys
        assert sys.argv == [__file__]
        for step in range(2):
            nn.functional.mse_loss(model(x), y).backward()
        """)
    lines = capture_script(str(path)).lines
    assert sum('"NAME":"addmm"' in l for l in lines) == 4  # both iterations: no optimizer step


@pytest.mark.parametrize("body, message", [
    ("z = x @ x.t()\n", "the script never called the forward of a torch.nn.Module with parameters to train, "
                        "so there is no step to capture"),
    ("z = model(x)\n", "the script never called backward() after the first forward of its model "
                       "(Sequential), so there is no training step to capture"),
])
def test_a_script_with_nothing_to_capture_is_one_error(tmp_path, body, message):
    path = script(tmp_path, body)
    with pytest.raises(CaptureError) as e:
        capture_script(str(path), str(tmp_path / "model.log"))
    assert str(e.value) == f"{path}: {message}"
    assert not (tmp_path / "model.log").exists()


def test_a_script_that_raises_after_its_first_forward_names_the_line(tmp_path):
    path = script(tmp_path, """
        loss = model(x).sum()
        raise RuntimeError("diverged")
        """)
    with pytest.raises(CaptureError) as e:
        capture_script(str(path))
    assert str(e.value) == f"{path}:9: the script raised RuntimeError: diverged"


def test_the_command_line_captures_a_script_as_it_is(tmp_path):
    out = tmp_path / "loop.log"
    p = capture_cli(SCRIPTS / "mlp_loop.py", out)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"wrote {out}: 162 lines, 38 operators")  # no "epoch" line: stopped first
    assert out.read_text().count('"PHASE":"optimizer"') == 5
