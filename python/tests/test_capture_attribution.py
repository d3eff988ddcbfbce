"""The attribution keys of captured traces (docs/trace_format.md, "Attribution
keys"): MODULE, PHASE, SOURCE and ENTER on CALL and MUTATE lines, ROLE on MEMORY
lines. scripts/mlp.py is checked operator by operator; scripts/residual.py
(a forward of its own, a tensor used twice, SGD with momentum) for the cases
mlp.py lacks; both for the keys a trace may hold and for the bytes each ROLE
accounts for."""

import json
import re
from pathlib import Path

import pytest
import torch

from conftest import BINARY, SCRIPTS, cli, cli_json
from dtrcheck.capture import Capture, capture_script

# Every key a line of each instruction may have (the format's, then ours).
KEYS = {
    "ANNOTATE": {"INSTRUCTION", "ANNOTATION"},
    "CONSTANT": {"INSTRUCTION", "NAME"},
    "MEMORY": {"INSTRUCTION", "NAME", "MEMORY", "ROLE"},
    "ALIAS": {"INSTRUCTION", "NAME", "ALIAS"},
    "CALL": {"INSTRUCTION", "NAME", "ARGS", "RESULT", "TIME", "MODULE", "PHASE", "SOURCE", "ENTER"},
    "MUTATE": {"INSTRUCTION", "NAME", "ARGS", "MUTATE", "TIME", "MODULE", "PHASE", "SOURCE", "ENTER"},
    "COPY": {"INSTRUCTION", "DST", "SRC"},
    "COPY_FROM": {"INSTRUCTION", "DST", "SRC"},
    "RELEASE": {"INSTRUCTION", "NAME"},
}
ROLE = re.compile(r"(parameter|buffer|gradient)( \S+)?|optimizer \S+( \S+)?|input")

# scripts/mlp.py, operator by operator: NAME PHASE MODULE LINE, where MODULE
# "-" is none and LINE is the line of mlp.py in SOURCE. Lines: 13 the forward
# (`loss = mse_loss(model(x), y)`; nn.Linear's code is torch's, so the frame
# shown is the caller's), 14 `loss.backward()`, 15 `optimizer.step()`.
MLP = """
t                  forward   0  13
addmm              forward   0  13
relu_              forward   1  13
detach             forward   1  13   # autograd saves relu_'s result: still ReLU's
t                  forward   2  13
addmm              forward   2  13
mse_loss           forward   -  13   # the loss is outside the model
ones_like          backward  -  14   # the seed gradient: no node, where backward() ran
mse_loss_backward  backward  -  13   # the loss's node: its forward operator's line
t                  backward  2  13   # AddmmBackward of Linear 2
mm                 backward  2  13
t                  backward  2  13
mm                 backward  2  13
t                  backward  2  13
sum                backward  2  13
view               backward  2  13
detach             backward  2  14   # AccumulateGrad of 2.bias: the parameter's module,
detach             backward  2  14   # where backward() ran
t                  backward  2  13   # TBackward: the transpose in F.linear
detach             backward  2  14   # AccumulateGrad of 2.weight
detach             backward  2  14
detach             backward  1  13   # relu_'s saved result, unpacked by its node
threshold_backward backward  1  13
t                  backward  0  13
mm                 backward  0  13
t                  backward  0  13
sum                backward  0  13
view               backward  0  13
detach             backward  0  14
detach             backward  0  14
t                  backward  0  13
detach             backward  0  14
detach             backward  0  14
zeros              optimizer -  15   # optimizer.step()'s record_function handle
add_               optimizer -  15
add_               optimizer -  15
add_               optimizer -  15
add_               optimizer -  15
"""

MLP_ROLES = {"x0": "parameter 0.weight", "x1": "parameter 0.bias", "x2": "parameter 2.weight",
             "x3": "parameter 2.bias", "x5": "input", "x10": "input",
             "x22": "gradient 2.bias", "x25": "gradient 2.weight", "x34": "gradient 0.bias",
             "x37": "gradient 0.weight"}


def lines_of(cap) -> list:
    return [json.loads(line) for line in cap.lines]


def operators(lines) -> list:
    return [l for l in lines if l["INSTRUCTION"] in ("CALL", "MUTATE")]


def where(source: str):
    """(resolved file, line) of a SOURCE value."""
    path, _, line = source.rpartition(":")
    return Path(path).resolve(), int(line)


@pytest.fixture(scope="module")
def mlp():
    return lines_of(capture_script(str(SCRIPTS / "mlp.py")))


@pytest.fixture(scope="module")
def residual():
    return lines_of(capture_script(str(SCRIPTS / "residual.py")))


def test_mlp_attribution_matches_the_table_operator_by_operator(mlp):
    want = [row.split("#")[0].split() for row in MLP.strip().splitlines()]
    got = operators(mlp)
    assert len(got) == len(want)
    for i, (g, (name, phase, module, line)) in enumerate(zip(got, want), start=1):
        assert (g["NAME"], g["PHASE"], g.get("MODULE", "-")) == (name, phase, module), f"operator {i}"
        assert where(g["SOURCE"]) == (SCRIPTS / "mlp.py", int(line)), f"operator {i}"


def test_mlp_roles_name_parameters_gradients_and_inputs(mlp):
    roles = {l["NAME"]: l["ROLE"] for l in mlp if "ROLE" in l}
    assert roles == MLP_ROLES


def test_enter_marks_the_first_operator_of_each_module_call(mlp, residual):
    def enters(lines):
        return [(l["NAME"], l["ENTER"]) for l in operators(lines) if "ENTER" in l]
    # mlp.py: Sequential(Linear, ReLU, Linear); mse_loss is outside the model.
    assert enters(mlp) == [("t", ["", "0"]), ("relu_", ["1"]), ("t", ["2"])]
    # residual.py: the block's call starts with its fc's first operator.
    assert enters(residual) == [("t", ["", "0"]), ("t", ["1", "1.fc"]), ("t", ["2"])]


def test_enter_names_each_call_of_a_module_and_never_a_container():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(2)])
            self.act = torch.nn.Tanh()

        def forward(self, x):
            for layer in self.layers:
                x = self.act(layer(x))
            return x

    model = Net()
    with Capture(model=model) as cap:
        model(torch.randn(2, 4)).sum().backward()
    calls = [m for l in operators(lines_of(cap)) for m in l.get("ENTER", [])]
    assert calls == ["", "layers.0", "act", "layers.1", "act"]
    assert all("ENTER" not in l for l in operators(lines_of(cap)) if l["PHASE"] != "forward")


def test_operators_in_a_forward_of_the_models_own_show_its_lines(residual):
    fwd = [l for l in operators(residual) if l["PHASE"] == "forward"]
    inside = [(l["NAME"], l["MODULE"], where(l["SOURCE"])[1]) for l in fwd
              if where(l["SOURCE"])[1] in (15, 16)]
    assert inside == [("t", "1.fc", 15), ("addmm", "1.fc", 15), ("tanh", "1", 15), ("detach", "1", 15),
                      ("add", "1", 16)]
    # tanh's node runs tanh_backward: the forward operator's module and line.
    tb = next(l for l in operators(residual) if l["NAME"] == "tanh_backward")
    assert (tb["PHASE"], tb["MODULE"], where(tb["SOURCE"])[1]) == ("backward", "1", 15)


def test_the_sum_of_two_gradients_is_the_node_that_receives_it(residual):
    # Linear 0's output is used twice (x + tanh(fc(x))): the engine adds the
    # two gradients before Linear 0's node runs; the add is that node's.
    adds = [l for l in operators(residual) if l["NAME"] == "add" and l["PHASE"] == "backward"]
    assert len(adds) == 1
    assert (adds[0]["MODULE"], where(adds[0]["SOURCE"])) == ("0", (SCRIPTS / "residual.py", 27))


def test_zero_grad_before_the_forward_is_in_the_optimizer_phase(residual):
    first = operators(residual)[0]
    assert (first["NAME"], first["PHASE"], where(first["SOURCE"])[1]) == ("zeros", "optimizer", 26)
    phases = [l["PHASE"] for l in operators(residual)[1:]]
    assert phases == sorted(phases, key=["forward", "backward", "optimizer"].index)


def storages_at_end(lines) -> dict:
    """Live name -> (storage id, bytes) when the trace ends, as the format
    binds names to storages (CALL results, ALIAS, COPY, COPY_FROM, MUTATE)."""
    storage, size, live, fresh = {}, {}, set(), iter(range(1 << 30))
    i = 0
    while i < len(lines):
        l = lines[i]
        kind = l["INSTRUCTION"]
        if kind == "CONSTANT":
            s = next(fresh)
            size[s], storage[l["NAME"]] = int(lines[i + 1]["MEMORY"]), s
            live.add(l["NAME"])
            i += 2
            continue
        if kind == "CALL":
            for k, r in enumerate(l["RESULT"]):
                memory, alias = lines[i + 1 + 2 * k], lines[i + 2 + 2 * k]
                if alias["ALIAS"] == "-1":
                    s = next(fresh)
                    size[s], storage[r] = int(memory["MEMORY"]), s
                else:
                    storage[r] = storage[l["ARGS"][int(alias["ALIAS"])]]
                live.add(r)
            i += 1 + 2 * len(l["RESULT"])
            continue
        if kind == "MUTATE":
            for m in l["MUTATE"]:
                s = next(fresh)
                size[s] = size[storage[l["ARGS"][m]]]
                storage[l["ARGS"][m]] = s
        elif kind in ("COPY", "COPY_FROM"):
            storage[l["DST"]] = storage[l["SRC"]]
            live.add(l["DST"])
        elif kind == "RELEASE":
            live.discard(l["NAME"])
        i += 1
    return {n: (storage[n], size[storage[n]]) for n in live}


def bytes_by_role_kind(lines) -> dict:
    roles = {l["NAME"]: l["ROLE"].split()[0] for l in lines if "ROLE" in l}
    out, counted = {}, set()
    for name, (s, nbytes) in storages_at_end(lines).items():
        if name in roles and s not in counted:
            counted.add(s)
            out[roles[name]] = out.get(roles[name], 0) + nbytes
    return out


def test_role_bytes_at_the_end_are_the_models_parameters_gradients_and_momentum(residual):
    ns = {}
    torch.manual_seed(0)
    exec(compile((SCRIPTS / "residual.py").read_text(), "residual.py", "exec"), ns)
    params = sum(p.numel() * p.element_size() for p in ns["model"].parameters())
    inputs = sum(t.numel() * t.element_size() for t in (ns["x"], ns["y"]))
    assert bytes_by_role_kind(residual) == {"parameter": params, "gradient": params, "optimizer": params,
                                            "input": inputs}
    roles = {l["ROLE"] for l in residual if "ROLE" in l}
    assert "optimizer momentum_buffer 1.fc.weight" in roles and "gradient 1.fc.bias" in roles


@pytest.mark.parametrize("script", ["mlp.py", "residual.py", "inplace_views.py"])
def test_captured_lines_hold_only_documented_keys_and_parse(tmp_path, script):
    cap = capture_script(str(SCRIPTS / script))
    lines = lines_of(cap)
    for i, l in enumerate(lines, start=1):
        assert set(l) <= KEYS[l["INSTRUCTION"]], f"line {i}: {l}"
        if l["INSTRUCTION"] in ("CALL", "MUTATE"):
            assert l["PHASE"] in ("forward", "backward", "optimizer"), f"line {i}"
            assert isinstance(l.get("MODULE", ""), str), f"line {i}"
            assert re.fullmatch(r".+:[0-9]+", l.get("SOURCE", "f:1")), f"line {i}"
        if "ROLE" in l:
            assert ROLE.fullmatch(l["ROLE"]), f"line {i}: {l['ROLE']}"
        if l["INSTRUCTION"] == "CONSTANT":  # every constant says what it is
            assert "ROLE" in lines[i], f"line {i + 1}"
    # The format's own structure, as simrd's parse/parse.py reads it.
    for i, l in enumerate(lines):
        if l["INSTRUCTION"] == "CONSTANT":
            assert (lines[i + 1]["INSTRUCTION"], lines[i + 1]["NAME"]) == ("MEMORY", l["NAME"])
        if l["INSTRUCTION"] == "CALL":
            for k, r in enumerate(l["RESULT"]):
                assert (lines[i + 1 + 2 * k]["INSTRUCTION"], lines[i + 1 + 2 * k]["NAME"]) == ("MEMORY", r)
                assert (lines[i + 2 + 2 * k]["INSTRUCTION"], lines[i + 2 + 2 * k]["NAME"]) == ("ALIAS", r)
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is not built: the C++ parser's check is left out")
    path = tmp_path / "trace.log"
    cap.save(str(path))
    info = cli_json("info", path)[0]  # its operators count the constants, as simrd's GOps do
    assert info["constants"] == sum(l["INSTRUCTION"] == "CONSTANT" for l in lines)
    assert info["operators"] == len(operators(lines)) + info["constants"]


def test_without_a_model_the_first_module_called_names_the_others():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh())
    x = torch.randn(2, 4)
    with Capture() as cap:
        model(x).sum().backward()
    fwd = [l for l in operators(lines_of(cap)) if l["PHASE"] == "forward"]
    assert [l.get("MODULE") for l in fwd] == ["0", "0", "1", "1", None]  # t, addmm, tanh, its saved result, sum
    roles = {l["ROLE"] for l in lines_of(cap) if "ROLE" in l}
    assert "parameter 0.weight" in roles and "gradient 0.bias" in roles


def test_optimizer_state_made_before_the_capture_is_named_on_its_constants():
    # Adam stepped once before the capture: its state tensors are CONSTANTs
    # of the captured step, named when the step in the block ends.
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(1, 3)).sum().backward()
    opt.step()
    with Capture(model=model) as cap:
        opt.zero_grad()
        model(torch.randn(1, 3)).sum().backward()
        opt.step()
    lines = lines_of(cap)
    constants = {l["NAME"] for l in lines if l["INSTRUCTION"] == "CONSTANT"}
    roles = {l["ROLE"] for l in lines if "ROLE" in l and l["NAME"] in constants}
    assert {"optimizer exp_avg weight", "optimizer exp_avg_sq bias", "optimizer step weight",
            "gradient weight", "parameter bias"} <= roles


def test_the_node_of_a_view_written_in_place_is_the_in_place_operators():
    # scripts/inplace_views.py line 20, b.tanh_() with b a view of y: PyTorch
    # gives y a CopySlices node, which runs tanh_'s backward inside it.
    lines = lines_of(capture_script(str(SCRIPTS / "inplace_views.py")))
    tb = next(l for l in operators(lines) if l["NAME"] == "tanh_backward")
    assert (tb["MODULE"], where(tb["SOURCE"])) == ("", (SCRIPTS / "inplace_views.py", 20))
    # The model computes its own loss: every backward operator has a MODULE
    # but the seed gradient.
    bare = [l["NAME"] for l in operators(lines) if l["PHASE"] == "backward" and "MODULE" not in l]
    assert bare == ["ones_like"]


@pytest.mark.parametrize("set_to_none", [False, True])
def test_optimizer_state_from_an_earlier_step_is_declared_before_the_first_operator(tmp_path, set_to_none):
    # A step after the first finds the optimizer's momentum allocated: it
    # holds memory from the start, not from the optimizer step that first
    # reads it. Gradients are CONSTANTs only when zero_grad() keeps them.
    model = torch.nn.Linear(64, 64)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(8, 64)

    def step():
        opt.zero_grad(set_to_none=set_to_none)
        model(x).sum().backward()
        opt.step()

    step()
    with Capture(model=model) as cap:
        step()
    lines = lines_of(cap)
    first_call = next(i for i, l in enumerate(lines) if l["INSTRUCTION"] == "CALL")
    declared = {l["ROLE"] for l in lines[:first_call] if "ROLE" in l}
    assert {"optimizer momentum_buffer weight", "optimizer momentum_buffer bias"} <= declared
    constants = {l["NAME"] for l in lines if l["INSTRUCTION"] == "CONSTANT"}
    constant_roles = {l["ROLE"] for l in lines if "ROLE" in l and l["NAME"] in constants}
    assert {"gradient weight", "gradient bias"}.isdisjoint(constant_roles) == set_to_none
    # The peak counts the momentum: weight and bias, their momentum, and their
    # new gradients are live together at the optimizer step.
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    assert cap.recorder.peak_bytes >= 3 * params
    # info names the gradients held from the start, and only those.
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is not built")
    cap.save(str(tmp_path / "t.log"))
    floor = cli_json("info", tmp_path / "t.log")[0]["pinned_floor"]
    grads = next(p for p in floor["parts"] if p["part"] == "gradients")
    assert grads["from_start_bytes"] == (0 if set_to_none else params)
    text = cli("info", tmp_path / "t.log").stdout
    assert ("of the gradients are held from the start of the step" in text) != set_to_none
