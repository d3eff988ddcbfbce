"""One grammar: every command that takes a grid reads the same two forms
(A:B:STEP and r1,r2,...) into the same budgets, `atlas` alone also takes a
range A:B (it walks every byte between), every command that finds cliffs
uses one default factor, and an OOM row carries no overhead in text, CSV or
pandas (JSON keeps simrd's number, which is the clock at the failure)."""

import csv
import io
import json
import math

import pytest

import dtrcheck
from conftest import cli, cli_json

STEP = "0.44:0.46:0.01"
LIST = "0.44,0.45,0.46"
# On the demo, 0.44 and 0.45 run out of memory and 0.46 passes.
OOM_RATIO, PASS_RATIO = "0.44", "0.46"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("grammar") / "demo.log"
    cli("gen", "demo", "-o", path)
    return path


def report_json(demo, tmp_path, *args):
    out = tmp_path / "r"
    cli("report", demo, "--out", out, "--no-proofs", "--no-divergence", *args)
    return json.loads((out / "report.json").read_text())


# (command, extra flags, the part of its JSON that holds the grid's runs).
GRID_COMMANDS = [
    ("sweep", [], lambda j: j),
    ("scan", [], lambda j: j["points"]),
    ("ablate", [], lambda j: j["base"]["points"]),
    ("bounds", ["--windows", "0", "--search-seconds", "0", "--plan-seconds", "0", "--cut-seconds", "0"],
     lambda j: j["heuristics"]),
]


@pytest.mark.parametrize("command, extra, runs", GRID_COMMANDS, ids=[c[0] for c in GRID_COMMANDS])
def test_both_grid_forms_give_the_same_runs(demo, command, extra, runs):
    step = cli_json(command, demo, "--ratios", STEP, *extra)
    listed = cli_json(command, demo, "--ratios", LIST, *extra)
    assert runs(step if command == "sweep" else step[0]) == runs(listed if command == "sweep" else listed[0])
    if command in ("sweep", "scan", "ablate"):
        rows = runs(step if command == "sweep" else step[0])
        assert [r["ratio"] for r in rows] == [0.44, 0.45, 0.46]


def test_report_takes_both_grid_forms(demo, tmp_path):
    a = report_json(demo, tmp_path, "--ratios", STEP, "--no-atlas")
    b = report_json(demo, tmp_path, "--ratios", LIST, "--no-atlas")
    rows = lambda j: [(r["ratio"], r["budget"], r["result"]) for r in j["heuristics"][0]["runs"]]
    assert rows(a) == rows(b)
    assert [r[0] for r in rows(a)] == [0.44, 0.45, 0.46]


def test_atlas_takes_a_range_and_both_grid_forms_alike(demo):
    intervals = [cli_json("atlas", demo, "--ratios", g)[0]["intervals"] for g in ("0.44:0.46", STEP, LIST)]
    assert intervals[0] == intervals[1] == intervals[2]
    assert len(intervals[0]) >= 2  # the OOM stretch and the pass above it


@pytest.mark.parametrize("command", ["sweep", "scan", "ablate", "bounds", "report"])
def test_a_range_is_not_a_grid(demo, tmp_path, command):
    p = cli(command, demo, "--ratios", "0.44:0.46", *(["--out", tmp_path / "r"] if command == "report" else []),
            code=2)
    assert "expected START:STOP:STEP" in p.stderr


def test_one_default_cliff_factor(demo, tmp_path):
    scan = cli_json("scan", demo, "--ratios", STEP)[0]
    ablate = cli_json("ablate", demo, "--ratios", STEP)[0]
    report = report_json(demo, tmp_path, "--ratios", STEP, "--no-atlas")
    factors = {scan["cliff_factor"], ablate["cliff_factor"], report["config"]["cliff_factor"],
               dtrcheck.scan(str(demo), STEP).cliff_factor}
    assert len(factors) == 1
    # Each command's --help names that default.
    for command in ("scan", "ablate", "report"):
        help_text = " ".join(cli(command, "--help").stdout.split())
        assert f"(default {scan['cliff_factor']:g})" in help_text, command


def test_the_cliff_factor_is_used(demo):
    # The demo's 0.59 -> 0.60 step is a cliff of about 1.31x.
    loose = cli_json("scan", demo, "--ratios", "0.59,0.60", "--cliff-factor", "1.3")[0]
    strict = cli_json("scan", demo, "--ratios", "0.59,0.60", "--cliff-factor", "1.4")[0]
    assert len(loose["cliffs"]) == 1 and 1.3 < loose["cliffs"][0]["factor"] <= 1.4
    assert strict["cliffs"] == []


def text_row(text, ratio):
    """The cells of the text table's row for `ratio` (blank cells vanish)."""
    for line in text.splitlines():
        cells = line.split()
        if ratio in cells[:2]:
            return cells
    raise AssertionError(f"no row for {ratio} in\n{text}")


@pytest.mark.parametrize("command", ["sweep", "scan"])
def test_an_oom_row_has_no_overhead(demo, command):
    grid = f"{OOM_RATIO},{PASS_RATIO}"
    as_json = cli_json(command, demo, "--ratios", grid)
    rows = as_json if command == "sweep" else as_json[0]["points"]
    oom = next(r for r in rows if r["result"] == "oom")
    passed = next(r for r in rows if r["result"] == "pass")
    # JSON keeps simrd's number (not a result); the other forms drop it.
    assert isinstance(oom["overhead"], float) and oom["overhead"] > 0

    text = cli(command, demo, "--ratios", grid).stdout
    oom_cells, pass_cells = text_row(text, OOM_RATIO), text_row(text, PASS_RATIO)
    assert f"{passed['overhead']:.4f}" in pass_cells
    assert not any(c.replace(".", "", 1).isdigit() and "." in c and len(c.split(".")[1]) == 4
                   and float(c) == round(oom["overhead"], 4) for c in oom_cells)
    assert len(oom_cells) == len(pass_cells) - 1  # exactly the overhead cell is blank

    table = list(csv.DictReader(io.StringIO(cli(command, demo, "--ratios", grid, "--csv").stdout)))
    by_result = {r["result"]: r for r in table}
    assert by_result["oom"]["overhead"] == ""
    assert float(by_result["pass"]["overhead"]) == passed["overhead"]

    runs = dtrcheck.sweep(str(demo), grid) if command == "sweep" else dtrcheck.scan(str(demo), grid)
    frame = runs.to_pandas().set_index("result")
    assert math.isnan(frame.loc["oom", "overhead"])
    assert frame.loc["pass", "overhead"] == passed["overhead"]
