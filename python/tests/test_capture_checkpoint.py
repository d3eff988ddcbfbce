"""A checkpoint plan applied by the capture (issue 52, item 5): the named
modules run under torch.utils.checkpoint during the capture only, the trace
stays a correct trace of the checkpointed step, and bad plans are one line."""

import copy
import json
import linecache
import re

import pytest
import torch
from torch import nn

from conftest import SCRIPTS, capture_cli, cli
from dtrcheck.capture import Capture, CaptureError, capture_script
from dtrcheck.capture.__main__ import main as capture_main

BLOCKS = SCRIPTS / "linear_blocks.py"
ACTIVATION = 1024 * 64 * 4  # bytes of one block's output in linear_blocks.py


def baseline(trace) -> int:
    """`dtrcheck info`'s baseline memory of a trace, in bytes."""
    m = re.search(r"baseline memory +(\d+) bytes", cli("info", trace).stdout)
    assert m
    return int(m.group(1))


def records(cap):
    return [json.loads(line) for line in cap.lines]


def small_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 8), nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8)),
                         nn.Linear(8, 2))


def test_checkpointing_the_middle_group_lowers_the_peak_by_what_it_drops(tmp_path):
    plain = capture_script(str(BLOCKS), str(tmp_path / "plain.log"))
    checkpointed = capture_script(str(BLOCKS), str(tmp_path / "ck.log"), checkpoint=["middle"])
    # The three ReLU outputs inside `middle` are not kept for the backward;
    # the recomputation brings them back one region at a time, so the peak
    # falls by at least one activation and at most the three.
    saved = plain.peak_bytes - checkpointed.peak_bytes
    assert ACTIVATION <= saved <= 3 * ACTIVATION
    # The trace agrees with the capture's own count, and dtrcheck reads it.
    assert baseline(tmp_path / "plain.log") == plain.peak_bytes
    assert baseline(tmp_path / "ck.log") == checkpointed.peak_bytes


def test_checkpointing_single_blocks_keeps_the_same_tensors(tmp_path):
    # Each block keeps only its output, which the next region keeps as its input.
    plain = capture_script(str(BLOCKS))
    checkpointed = capture_script(str(BLOCKS), checkpoint="middle.0,middle.1,middle.2,middle.3")
    assert checkpointed.peak_bytes == plain.peak_bytes


def test_recomputed_operators_are_backward_operators_of_the_module_they_recompute():
    cap = capture_script(str(BLOCKS), checkpoint=["middle"])
    lines = records(cap)
    start = next(i for i, r in enumerate(lines) if r.get("ANNOTATION") == "BACKWARD")
    recomputed = [(r["NAME"], r.get("MODULE")) for r in lines[start:]
                  if r.get("INSTRUCTION") == "CALL" and r["NAME"] == "addmm"]
    assert recomputed == [("addmm", f"middle.{k}.0") for k in range(4)]
    assert all(r["PHASE"] == "backward" for r in lines[start:] if r.get("NAME") == "addmm")


def test_the_checkpointed_step_computes_the_plain_steps_gradients():
    model = small_model()
    twin = copy.deepcopy(model)
    x, y = torch.randn(4, 8), torch.randn(4, 2)
    with Capture(model=model):
        nn.functional.mse_loss(model(x), y).backward()
    # "0" takes the input, which requires no grad: the reentrant form would
    # leave its parameters without a gradient.
    with Capture(model=twin, checkpoint=["0", "1"]) as cap:
        nn.functional.mse_loss(twin(x), y).backward()
    assert sum(r.get("NAME") == "addmm" for r in records(cap)) == 4 + 3  # 0 and 1's three recomputed
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        assert q.grad is not None, name
        assert torch.equal(p.grad, q.grad), name


def test_a_script_as_it_is_is_checkpointed_as_its_step_function():
    # As in test_capture_plain_script.py: mlp_loop.py's trace is mlp.py's,
    # SOURCE compared by the statement's text, but for step()'s last RELEASE.
    def lines(script):
        out = []
        for line in capture_script(str(SCRIPTS / script), checkpoint=["2"]).lines:
            r = json.loads(line)
            if "SOURCE" in r:
                path, _, number = r["SOURCE"].rpartition(":")
                r["SOURCE"] = linecache.getline(path, int(number)).strip()
            out.append(r)
        return out

    step, loop = lines("mlp.py"), lines("mlp_loop.py")
    assert step[:len(loop)] == loop
    assert [r["INSTRUCTION"] for r in step[len(loop):]] == ["RELEASE"]
    recomputed = [r for r in loop if r.get("PHASE") == "backward" and r.get("NAME") == "addmm"]
    assert [r["MODULE"] for r in recomputed] == ["2"]


def test_keyword_arguments_and_tuple_outputs():
    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, *, scale):
            h = self.fc(x)
            return h * scale, h.sum()

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.pair = Pair()

        def forward(self, x):
            a, b = self.pair(x, scale=2.0)
            return a.sum() + b

    model = Model()
    twin = copy.deepcopy(model)
    x = torch.randn(3, 4)
    model(x).backward()
    with Capture(model=twin, checkpoint=["pair"]):
        twin(x).backward()
    assert torch.equal(model.pair.fc.weight.grad, twin.pair.fc.weight.grad)


def test_the_model_is_restored_after_the_block_and_after_an_exception():
    model = small_model()
    own = model[1].forward  # a forward the user set on the instance is put back
    model[1].forward = own
    x = torch.randn(4, 8)
    expected = model(x)
    with Capture(model=model, checkpoint=["0", "1"]):
        assert "forward" in model[0].__dict__ and model[1].forward is not own
        model(x).sum().backward()
    assert "forward" not in model[0].__dict__ and model[1].__dict__["forward"] is own
    with pytest.raises(ValueError):
        with Capture(model=model, checkpoint=["0"]):
            raise ValueError("the step failed")
    assert "forward" not in model[0].__dict__
    assert torch.equal(model(x), expected)


@pytest.mark.parametrize("plan, message", [
    (["3"], "checkpoint: '3' names no submodule of the model (Sequential)"),
    (["1.3"], "checkpoint: '1.3' names no submodule of the model (Sequential)"),
    ([""], "checkpoint: '' is the model itself; name submodules to checkpoint"),
    (["1", "1.0"], "checkpoint: '1.0' is inside '1'; name one or the other"),
    (["1.2", "1"], "checkpoint: '1.2' is inside '1'; name one or the other"),
    (["0", "0"], "checkpoint: '0' is named twice"),
])
def test_a_bad_plan_is_one_line_naming_the_path(plan, message):
    model = small_model()
    with pytest.raises(CaptureError) as e:
        with Capture(model=model, checkpoint=plan):
            pass
    assert str(e.value) == message
    assert all("forward" not in m.__dict__ for m in model.modules())
    assert not torch.nn.modules.module._global_forward_pre_hooks


def test_a_plan_needs_the_model():
    with pytest.raises(CaptureError, match=r"^checkpoint= needs model=, the model whose submodules it names$"):
        with Capture(checkpoint=["0"]):
            pass


def test_the_command_line_flag_with_a_plan_file(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text('["middle"]\n')
    out = tmp_path / "ck.log"
    p = capture_cli(BLOCKS, out, "--checkpoint", f"@{plan}")
    assert p.returncode == 0, p.stderr
    checkpointed = capture_script(str(BLOCKS), checkpoint="middle")
    assert out.read_text() == checkpointed.text
    assert f"peak of live storages {checkpointed.peak_bytes} bytes" in p.stdout
    assert baseline(out) == checkpointed.peak_bytes < capture_script(str(BLOCKS)).peak_bytes


@pytest.mark.parametrize("flag, message", [
    ("middle.9", "{script}: checkpoint: 'middle.9' names no submodule of the model (Sequential)"),
    ("@missing.json", "missing.json: cannot read the checkpoint plan: No such file or directory"),
    ("@bad.json", "bad.json: the checkpoint plan must be a JSON list of module paths or the output "
                  "of dtrcheck plan --json"),
])
def test_a_bad_flag_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, flag, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text('{"modules": ["middle"]}')
    assert capture_main([str(BLOCKS), "-o", "ck.log", "--checkpoint", flag]) == 1
    err = capsys.readouterr().err
    assert err == f"dtrcheck.capture: {message.format(script=BLOCKS)}\n"
    assert not (tmp_path / "ck.log").exists()


def test_a_module_the_step_never_calls_is_refused():
    # `dtrcheck plan` proposed `encoder.layers` of torch.nn.Transformer, an
    # nn.ModuleList its parent walks child by child: its forward never runs,
    # so wrapping it changed nothing and the re-capture measured the plain step.
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).relu()
            return x

    model = Stack()
    with pytest.raises(CaptureError, match=r"^checkpoint: 'layers' was never called during the step"):
        with Capture(model=model, checkpoint=["layers"]):
            model(torch.randn(2, 4, requires_grad=True)).sum().backward()
    with Capture(model=model, checkpoint=["layers.0", "layers.1"]) as cap:
        model(torch.randn(2, 4, requires_grad=True)).sum().backward()
    assert cap.recorder.backward_seen


def test_a_plan_from_python_applied_by_the_capture_fits_as_predicted(tmp_path):
    # The loop of docs/python.md: capture, plan for a budget between the floor
    # and the peak, capture again with the plan applied, and measure.
    import dtrcheck
    plain = capture_script(str(BLOCKS), str(tmp_path / "plain.log"))
    budget = plain.peak_bytes - ACTIVATION
    plan = dtrcheck.plan(tmp_path / "plain.log", budget=budget)
    assert plan.to_dict() == json.loads(cli("plan", tmp_path / "plain.log", "--budget", str(budget),
                                            "--json").stdout)
    assert plan.verdict == "fits" and plan.predicted_peak <= budget
    assert list(plan.to_pandas()["module"]) == plan.module_paths() != []
    checked = capture_script(str(BLOCKS), str(tmp_path / "ck.log"), checkpoint=plan)
    assert checked.peak_bytes <= budget
    assert abs(checked.peak_bytes - plan.predicted_peak) <= 0.05 * plan.predicted_peak
    # `dtrcheck plan --json > plan.json` is a plan file for --checkpoint @plan.json.
    (tmp_path / "plan.json").write_text(json.dumps(plan.to_dict()))
    p = capture_cli(BLOCKS, tmp_path / "ck2.log", "--checkpoint", f"@{tmp_path / 'plan.json'}")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "ck2.log").read_text() == (tmp_path / "ck.log").read_text()
