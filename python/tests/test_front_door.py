"""One front door (api/front_door.h): the CLI and the module fill the same
request, so a value the CLI refuses is refused in Python with the CLI's
message, as dtrcheck.Error, and a value the CLI takes is taken. Each case
runs the CLI on the same trace and compares its line after "dtrcheck: "."""

import pytest

import dtrcheck
from conftest import SOURCE, cli, cli_json

CHAIN = SOURCE / "tests" / "fuzz" / "seeds" / "chain.log"


@pytest.fixture(scope="module")
def chain():
    return dtrcheck.load(CHAIN)


# (Python call on the loaded trace, the CLI's arguments after the trace).
REFUSED = [
    (lambda t: t.sweep("0.5", jobs=-1), ["sweep", "--ratios", "0.5", "-j", "-1"]),
    (lambda t: t.sweep("0.5", jobs=0), ["sweep", "--ratios", "0.5", "-j", "0"]),
    (lambda t: t.sweep("0.5", jobs=10**6), ["sweep", "--ratios", "0.5", "-j", "1000000"]),
    (lambda t: t.sweep("0.5", seed=-1), ["sweep", "--ratios", "0.5", "--seed", "-1"]),
    (lambda t: t.sweep("0.5", seed=2**64), ["sweep", "--ratios", "0.5", "--seed", str(2**64)]),
    (lambda t: t.sweep("0.2:0.1:0.01"), ["sweep", "--ratios", "0.2:0.1:0.01"]),
    (lambda t: t.sweep("0.5", heuristic="Oracle"), ["sweep", "--ratios", "0.5", "--heuristic", "Oracle"]),
    (lambda t: t.scan("0.5", max_walk=-1), ["scan", "--ratios", "0.5", "--max-walk", "-1"]),
    (lambda t: t.scan("0.5", cliff_factor=1), ["scan", "--ratios", "0.5", "--cliff-factor", "1"]),
    (lambda t: t.scan("0.5", refine=True, exact=True), ["scan", "--ratios", "0.5", "--refine", "--exact"]),
    (lambda t: t.replay(0.5, overhead_limit=float("inf")),
     ["replay", "--ratio", "0.5", "--overhead-limit", "inf"]),
    (lambda t: t.replay(0.5, overhead_limit=0), ["replay", "--ratio", "0.5", "--overhead-limit", "0"]),
    (lambda t: t.replay(0), ["replay", "--ratio", "0.0"]),
    (lambda t: t.replay(budget=-1), ["replay", "--budget", "-1"]),
    (lambda t: t.replay(budget=2**63), ["replay", "--budget", str(2**63)]),
    (lambda t: t.replay(), ["replay"]),
    (lambda t: t.replay(0.5, heuristic="DTR,LRU"), ["replay", "--ratio", "0.5", "--heuristic", "DTR,LRU"]),
    (lambda t: t.replay(0.5, runtime="RuntimeV3"), ["replay", "--ratio", "0.5", "--runtime", "RuntimeV3"]),
    (lambda t: t.atlas("0.6:0.5"), ["atlas", "--ratios", "0.6:0.5"]),
    (lambda t: t.atlas(), ["atlas"]),
    (lambda t: t.atlas(budgets=("x", 5)), ["atlas", "--budgets", "x:5"]),
    (lambda t: t.prove(0.5, windows=-1), ["prove", "--ratio", "0.5", "--windows", "-1"]),
    (lambda t: t.prove(0.5, window_ops=0), ["prove", "--ratio", "0.5", "--window-ops", "0"]),
    (lambda t: t.prove(0.5, work_limit=-1), ["prove", "--ratio", "0.5", "--work-limit", "-1"]),
    (lambda t: t.prove(0.5, timeout=-1), ["prove", "--ratio", "0.5", "--timeout", "-1"]),
    (lambda t: t.prove(0.5, runtime="RuntimeV1"), ["prove", "--ratio", "0.5", "--runtime", "RuntimeV1"]),
    (lambda t: t.explain(0.5, heuristic="Oracle"), ["explain", "--ratio", "0.5", "--heuristic", "Oracle"]),
    (lambda t: t.report("0.5", out="unused", cliff_factor=0.5),
     ["report", "--ratios", "0.5", "--out", "unused", "--cliff-factor", "0.5"]),
    (lambda t: t.report("0.5", out="unused", max_verdicts=0),
     ["report", "--ratios", "0.5", "--out", "unused", "--max-verdicts", "0"]),
    (lambda t: t.explain(0.5, next_use_computations=0),
     ["explain", "--ratio", "0.5", "--next-use-computations", "0"]),
    (lambda t: t.prove(0.5, next_use_computations=-1),
     ["prove", "--ratio", "0.5", "--next-use-computations", "-1"]),
    (lambda t: t.report("0.5", out="unused", atlas_max_runs=0),
     ["report", "--ratios", "0.5", "--out", "unused", "--atlas-max-runs", "0"]),
    (lambda t: t.report("0.5", out="unused", timeline_ratio="x"),
     ["report", "--ratios", "0.5", "--out", "unused", "--timeline-ratio", "x"]),
    (lambda t: t.report("0.5", out="unused", z3=True, timeout=-1),
     ["report", "--ratios", "0.5", "--out", "unused", "--z3", "--timeout", "-1"]),
]


@pytest.mark.parametrize("call, args", REFUSED)
def test_python_refuses_what_the_cli_refuses_with_its_message(chain, call, args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(dtrcheck.Error) as e:
        call(chain)
    stderr = cli(args[0], CHAIN, *args[1:], code=2).stderr
    assert stderr == f"dtrcheck: {e.value}\n"
    assert not any(tmp_path.iterdir())  # nothing written


def test_report_without_an_output_directory_is_refused(chain, tmp_path, monkeypatch):
    # out=None once wrote into ./None.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(dtrcheck.Error, match=r"report needs an output directory \(--out DIR\)"):
        chain.report("0.5", out=None)
    assert not any(tmp_path.iterdir())


def test_an_atlas_range_as_text_is_the_clis(chain):
    # "0.5:0.6" once split into the characters "0" and ".".
    assert chain.atlas("0.5:0.6", jobs=1).to_dict() == chain.atlas((0.5, 0.6), jobs=1).to_dict()


def test_atlas_takes_the_grids_sweep_takes(chain):
    # One grid syntax: atlas walks a grid's lowest to highest ratio, every budget between.
    whole = cli_json("atlas", CHAIN, "--ratios", "0.5:0.6", "-j", "1")
    assert cli_json("atlas", CHAIN, "--ratios", "0.5:0.6:0.05", "-j", "1") == whole
    assert cli_json("atlas", CHAIN, "--ratios", "0.6,0.55,0.5", "-j", "1") == whole
    assert chain.atlas("0.5:0.6:0.05", jobs=1).to_dict() == whole[0]
    assert len(cli_json("sweep", CHAIN, "--ratios", "0.5:0.6:0.05")) == 3


def test_an_oom_row_has_no_overhead_in_text_csv_and_pandas(chain):
    # chain.log runs out of memory at 0.5 and passes at 1.0. An OOM run's
    # overhead is simrd's clock at the failure: --json keeps it (the reference
    # files have it), the tables leave it out so no pivot ranks it.
    runs = chain.sweep("0.5,1.0")
    assert [r.result for r in runs] == ["oom", "pass"] and runs[0].overhead > 0
    frame = runs.to_pandas()
    assert frame["overhead"].isna().tolist() == [True, False]
    csv = cli("sweep", CHAIN, "--ratios", "0.5,1.0", "--csv").stdout.splitlines()
    column = csv[0].split(",").index("overhead")
    assert [row.split(",")[column] for row in csv[1:]] == ["", repr(runs[1].overhead)]
    text = cli("sweep", CHAIN, "--ratios", "0.5,1.0").stdout.splitlines()
    assert text[2].split()[3:5] == ["oom", "0"]  # result, then no overhead: the evictions
    assert text[3].split()[3:5] == ["pass", f"{runs[1].overhead:.4f}"]
