"""Scripts that cannot be captured: one clear line on stderr, exit status 1,
and no trace written (an existing file of that name is left as it was)."""

import textwrap

import pytest
import torch

from conftest import capture_cli
from dtrcheck.capture import Capture, CaptureError

MODEL = """
import torch
model = torch.nn.Linear(4, 2)
x = torch.randn(3, 4)
"""


def script(tmp_path, body: str):
    path = tmp_path / "bad_step.py"
    path.write_text(MODEL + textwrap.dedent(body))
    return path


def fails(tmp_path, path, message: str, keep: str | None = None):
    """Runs the capture CLI on `path`; checks the one-line error and that nothing was written."""
    out = tmp_path / "model.log"
    if keep is not None:
        out.write_text(keep)
    p = capture_cli(path, out)
    assert p.returncode == 1
    assert p.stdout == ""
    assert p.stderr == f"dtrcheck.capture: {message}\n"
    if keep is None:
        assert not out.exists()
    else:
        assert out.read_text() == keep
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(
        [path.name] + (["model.log"] if keep is not None else []))


def test_a_step_that_raises_is_one_error_naming_the_line(tmp_path):
    path = script(tmp_path, """
        def step():
            loss = model(x).sum()
            raise RuntimeError("out of ideas")
        """)
    fails(tmp_path, path, f"{path}:8: step() raised RuntimeError: out of ideas")


def test_a_script_that_raises_before_the_step_is_one_error_naming_the_line(tmp_path):
    path = script(tmp_path, """
        y = torch.randn(3, 5) @ torch.randn(4, 2)
        def step():
            return model(x).sum()
        """)
    fails(tmp_path, path, f"{path}:6: the script raised RuntimeError: mat1 and mat2 shapes cannot be "
                          "multiplied (3x5 and 4x2)")


def test_a_step_that_never_calls_backward_is_an_error(tmp_path):
    path = script(tmp_path, """
        def step():
            return model(x).sum()
        """)
    fails(tmp_path, path, f"{path}: the captured step never called backward(): a training step runs "
                          "forward, loss.backward() and usually optimizer.step()")


def test_a_step_that_returns_a_non_tensor_is_an_error(tmp_path):
    path = script(tmp_path, """
        def step():
            loss = model(x).sum()
            loss.backward()
            return loss.item()
        """)
    fails(tmp_path, path, f"{path}: step() returned float; it must return the loss tensor")


def test_a_model_with_a_non_tensor_output_fails_in_the_step(tmp_path):
    path = script(tmp_path, """
        class Pair(torch.nn.Module):
            def forward(self, x):
                return x, x
        model = Pair()
        def step():
            loss = model(x)
            loss.backward()
            return loss
        """)
    fails(tmp_path, path, f"{path}:12: step() raised AttributeError: 'tuple' object has no attribute "
                          "'backward'")


def test_an_existing_trace_is_left_untouched_by_a_failed_capture(tmp_path):
    path = script(tmp_path, """
        def step():
            raise ValueError("no")
        """)
    fails(tmp_path, path, f"{path}:7: step() raised ValueError: no", keep="the previous trace\n")


@pytest.mark.parametrize("body, message", [
    ("def step():\n    pass\n", None),
    ("model = 3\ndef step():\n    pass\n", "the script defines 'model' as a int; it must define model, "
                                          "a torch.nn.Module"),
    ("step = 3\n", "the script defines no function step() (one training step)"),
])
def test_a_script_breaking_the_contract_is_an_error(tmp_path, body, message):
    if message is None:  # no model at all
        path = tmp_path / "bad_step.py"
        path.write_text("import torch\n" + body)
        message = "the script defines no 'model'; it must define model, a torch.nn.Module"
    else:
        path = script(tmp_path, body)
    fails(tmp_path, path, f"{path}: {message}")


def test_a_missing_script_is_an_error(tmp_path):
    p = capture_cli(tmp_path / "nowhere.py", tmp_path / "model.log")
    assert p.returncode == 1
    assert p.stderr == f"dtrcheck.capture: {tmp_path / 'nowhere.py'}: no such script\n"
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_clock_is_a_usage_error(tmp_path):
    p = capture_cli(tmp_path / "x.py", tmp_path / "model.log", "--time", "sundial")
    assert p.returncode == 2 and "invalid choice: 'sundial'" in p.stderr


def test_the_context_manager_writes_nothing_when_the_block_raises(tmp_path):
    model = torch.nn.Linear(4, 2)
    out = tmp_path / "model.log"
    with pytest.raises(ValueError):
        with Capture(str(out), model=model):
            model(torch.randn(3, 4)).sum().backward()
            raise ValueError("stop")
    assert list(tmp_path.iterdir()) == []


def test_the_context_manager_writes_the_trace_when_the_block_ends(tmp_path):
    model = torch.nn.Linear(4, 2)
    out = tmp_path / "model.log"
    with Capture(str(out), model=model) as cap:
        model(torch.randn(3, 4)).sum().backward()
    assert out.read_text() == cap.text
    assert [f.name for f in tmp_path.iterdir()] == ["model.log"]
    with pytest.raises(CaptureError, match="never called backward"):
        with Capture(str(tmp_path / "other.log"), model=model):
            model(torch.randn(3, 4))
    assert [f.name for f in tmp_path.iterdir()] == ["model.log"]
