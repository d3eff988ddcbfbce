"""A model with in-place operators and views (scripts/inplace_views.py): its
trace parses, replays at every budget with every heuristic without an error,
and shows each kind of line the capture writes for them."""

import json

import pytest

from conftest import SCRIPTS, cli_json
from dtrcheck.capture import capture_script

HEURISTICS = "DTR,DTREqClass,DTRLocal,MSPS,LRU,LargestStorage,RandomStorage"


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("inplace") / "inplace.log"
    capture_script(str(SCRIPTS / "inplace_views.py"), str(path))
    return path


def instructions(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_inplace_trace_writes_every_kind_of_line(trace):
    kinds = {line["INSTRUCTION"] for line in instructions(trace)}
    assert kinds == {"ANNOTATE", "CONSTANT", "MEMORY", "CALL", "ALIAS", "MUTATE", "COPY", "COPY_FROM",
                     "RELEASE"}


def test_inplace_on_a_view_moves_every_tensor_of_its_storage_to_the_new_one(trace):
    # b.tanh_() with b = y[:, 4:]: a MUTATE of b, then y (x6, the linear's
    # output) follows b to the new storage, so the old one is released.
    lines = instructions(trace)
    i = next(i for i, l in enumerate(lines) if l.get("NAME") == "tanh_")
    assert lines[i]["INSTRUCTION"] == "MUTATE" and lines[i]["MUTATE"] == [0]
    view = lines[i]["ARGS"][0]
    assert lines[i + 1] == {"DST": "x6", "INSTRUCTION": "COPY_FROM", "SRC": view}


def test_inplace_on_a_sole_tensor_is_a_mutate_and_on_a_constant_an_alias(trace):
    lines = instructions(trace)
    mutated = {l["NAME"] for l in lines if l["INSTRUCTION"] == "MUTATE"}
    assert {"add_", "relu_", "copy_"} <= mutated
    count_update = [l for l in lines if l["INSTRUCTION"] == "CALL" and l["NAME"] == "add_"
                    and l["ARGS"][0] == "x2"]  # x2: the buffer `count`, a CONSTANT
    assert count_update


def test_a_storage_that_grows_gets_a_new_storage_of_its_new_size(trace):
    lines = instructions(trace)
    i = next(i for i, l in enumerate(lines) if l.get("NAME") == "resize_")
    assert lines[i + 1]["MEMORY"] == "64" and lines[i + 2]["ALIAS"] == "-1"
    assert lines[i + 3]["INSTRUCTION"] == "COPY_FROM"


def test_inplace_trace_replays_at_ratio_one(trace):
    run = cli_json("replay", trace, "--ratio", "1.0")[0]
    assert run["result"] == "pass"


@pytest.mark.parametrize("runtime", ["RuntimeV2EagerOptimized", "RuntimeV2Optimized", "RuntimeV1"])
def test_inplace_trace_replays_without_error_at_every_budget(trace, runtime):
    heuristics = "LRU,LargestStorage,RandomStorage" if runtime == "RuntimeV1" else HEURISTICS
    runs = cli_json("sweep", trace, "--ratios", "0.3:1.0:0.02", "--heuristic", heuristics, "--runtime", runtime)
    assert {r["result"] for r in runs} <= {"pass", "oom"}
    assert all(r["max_memory"] <= r["budget"] for r in runs if r["result"] == "pass")
