"""The dtrcheck commands as Python functions, over the C++ library.

Each function runs what the CLI command of the same name runs (the same
library code, in dtrcheck._core) and returns what its ``--json`` prints, as
a Result (results.py) whose attributes are the JSON field names. A trace is
a path or a Trace from ``load()`` (load once to reuse its parse and
baseline). Ratios are decimals, given as strings ("0.101") or floats (0.101;
Python's shortest repr is parsed as the decimal, exactly as the CLI parses
the text). Long calls release the GIL; ``jobs=None`` means one worker thread
per core. A keyword left at None takes the CLI's default, and every value
is checked by the C++ front door as the CLI checks its flag: errors raise
dtrcheck.Error with the CLI's one-line message.
"""

from __future__ import annotations

import os

from .errors import Error
from .results import Atlas, Classification, Plan, Report, Result, Run, Runs, Scan, TraceInfo

DEFAULT_RUNTIME = "RuntimeV2EagerOptimized"


def _core():
    try:
        from . import _core as core
    except ImportError as e:
        raise ImportError(
            "dtrcheck's C++ module (dtrcheck._core) is not built or not on the path: build with "
            "cmake (DTRCHECK_PYTHON=ON, the default) and put build/python on PYTHONPATH "
            "(docs/python.md)") from e
    return core


def _ratio(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise Error(f"a ratio is a decimal like 0.101 or '0.101', got {value!r}")
    return value if isinstance(value, str) else repr(float(value))


def _ratios(value) -> str:
    """A grid "A:B:STEP" or "r1,r2,..." as text, from text or a list of ratios."""
    if isinstance(value, str):
        return value
    return ",".join(_ratio(v) for v in value)


def _range(value, item) -> str | None:
    """A range "LO:HI" as text, from text or a pair (each end written by `item`)."""
    if value is None or isinstance(value, str):
        return value
    lo, hi = value
    return f"{item(lo)}:{item(hi)}"


class Trace:
    """A parsed trace and its simrd baseline (RuntimeV1, infinite budget).

    The methods are the module functions with this trace as the first argument.
    """

    def __init__(self, path: str):
        self._loaded = _core().load(str(path))
        self.path = self._loaded.path
        self.log = self._loaded.log  # the file name, as the JSON's "log"

    def info(self) -> TraceInfo:
        return info(self)

    def replay(self, ratio=None, **kwargs) -> Run:
        return replay(self, ratio, **kwargs)

    def sweep(self, ratios, **kwargs) -> Runs:
        return sweep(self, ratios, **kwargs)

    def atlas(self, ratios=None, **kwargs) -> Atlas:
        return atlas(self, ratios, **kwargs)

    def scan(self, ratios, **kwargs) -> Scan:
        return scan(self, ratios, **kwargs)

    def explain(self, ratio=None, **kwargs) -> Classification:
        return explain(self, ratio, **kwargs)

    def prove(self, ratio=None, **kwargs) -> Classification:
        return prove(self, ratio, **kwargs)

    def plan(self, ratio=None, **kwargs) -> Plan:
        return plan(self, ratio, **kwargs)

    def report(self, ratios=None, **kwargs) -> Report:
        return report(self, ratios, **kwargs)

    def __repr__(self) -> str:
        return f"Trace({self.path!r})"


def load(path: str) -> Trace:
    """Parses a trace (docs/trace_format.md) and computes its baseline."""
    return Trace(path)


def _loaded(trace):
    return (trace if isinstance(trace, Trace) else Trace(trace))._loaded


def info(trace) -> TraceInfo:
    """`dtrcheck info --json`: sizes and baseline of the trace."""
    return TraceInfo(_core().info(_loaded(trace)))


def replay(trace, ratio=None, *, budget: int | None = None, heuristic: str = "DTR",
           runtime: str = DEFAULT_RUNTIME, overhead_limit: float | None = None, seed: int = 0) -> Run:
    """`dtrcheck replay --json`: one run at ratio (of the baseline peak) or budget (bytes)."""
    return Run(_core().replay(_loaded(trace), _ratio(ratio), budget, heuristic, runtime,
                              overhead_limit, seed))


def sweep(trace, ratios, *, heuristic="DTR", runtime: str = DEFAULT_RUNTIME,
          overhead_limit: float | None = None, seed: int = 0, jobs: int | None = None) -> Runs:
    """`dtrcheck sweep --json`: one run per (heuristic, ratio), heuristics outer.

    ratios: "A:B:STEP", "r1,r2,...", or a list of ratios; heuristic: a name or a list.
    """
    heuristics = [heuristic] if isinstance(heuristic, str) else list(heuristic)
    runs = _core().sweep(_loaded(trace), _ratios(ratios), heuristics, runtime, overhead_limit, seed, jobs)
    return Runs(Run(r) for r in runs)


def atlas(trace, ratios=None, *, budgets=None, heuristic: str = "DTR", runtime: str = DEFAULT_RUNTIME,
          overhead_limit: float | None = None, seed: int = 0, jobs: int | None = None,
          max_runs: int = 0, max_evals: int | None = None) -> Atlas:
    """`dtrcheck atlas --json`: every budget interval of identical behaviour.

    ratios=(lo, hi) or "A:B", or budgets=(lo_bytes, hi_bytes) or "LO:HI", both
    ends included. As the CLI's --max-runs and --max-evals: max_runs > 0 stops
    after that many replays, max_evals (default the CLI's; 0: none) after that
    many heuristic evaluations; the result is then the atlas of the part walked,
    with `stopped_at_cap` saying where the range asked for ended.
    """
    return Atlas(_core().atlas(_loaded(trace), _range(ratios, _ratio), _range(budgets, str), heuristic, runtime,
                               overhead_limit, seed, jobs, max_runs, max_evals))


def scan(trace, ratios, *, heuristic: str = "DTR", runtime: str = DEFAULT_RUNTIME,
         overhead_limit: float | None = None, seed: int = 0, cliff_factor: float | None = None,
         refine: bool = False, exact: bool = False, max_walk: int | None = None,
         jobs: int | None = None) -> Scan:
    """`dtrcheck scan --json`: regimes, cliffs and feasibility inversions of a grid."""
    return Scan(_core().scan(_loaded(trace), _ratios(ratios), heuristic, runtime, overhead_limit, seed,
                             cliff_factor, refine, exact, max_walk, jobs))


def _store(value) -> str | None:
    """store=: None for the CLI's default ($DTRCHECK_STORE), else a directory ("" for none)."""
    return None if value is None else os.fspath(value)


def explain(trace, ratio=None, *, budget: int | None = None, heuristic: str = "DTR",
            runtime: str = DEFAULT_RUNTIME, z3: bool = True, timeout: float | None = None,
            work_limit: int | None = None, windows: int | None = None, window_ops: int | None = None,
            cut: bool = True, witness_heuristics=(), next_use_computations: int | None = None,
            store=None) -> Classification:
    """`dtrcheck explain --json`: why the run OOMs, policy-induced or inherent, with its certificate.
    `store` (default $DTRCHECK_STORE): a certificate store, used and added to as by --store."""
    return Classification(_core().classify(_loaded(trace), "explain", _ratio(ratio), budget, heuristic,
                                           runtime, z3, timeout, work_limit, windows, window_ops, cut,
                                           list(witness_heuristics), next_use_computations, _store(store)))


def prove(trace, ratio=None, *, budget: int | None = None, runtime: str = DEFAULT_RUNTIME,
          z3: bool = True, timeout: float | None = None, work_limit: int | None = None,
          windows: int | None = None, window_ops: int | None = None, cut: bool = True,
          witness_heuristics=(), next_use_computations: int | None = None,
          store=None) -> Classification:
    """`dtrcheck prove --json`: whether any eviction order fits the budget.
    `store` (default $DTRCHECK_STORE): a certificate store, used and added to as by --store."""
    return Classification(_core().classify(_loaded(trace), "prove", _ratio(ratio), budget, "DTR", runtime,
                                           z3, timeout, work_limit, windows, window_ops, cut,
                                           list(witness_heuristics), next_use_computations,
                                           _store(store)))


def plan(trace, ratio=None, *, budget: int | None = None) -> Plan:
    """`dtrcheck plan --json`: which modules of a captured step to wrap in
    torch.utils.checkpoint to fit the budget, with the predicted peak and
    overhead; ``modules`` lists them, ``to_pandas()`` shows them. Apply it with
    ``dtrcheck.capture.capture_script(..., checkpoint=p.module_paths())``."""
    return Plan(_core().plan(_loaded(trace), _ratio(ratio), budget))


def report(trace, ratios=None, *, out: str = "out/report", heuristic="DTR",
           runtime: str = DEFAULT_RUNTIME, overhead_limit: float | None = None, timeline_ratio=None,
           cliff_factor: float | None = None, jobs: int | None = None, atlas: bool = True,
           atlas_max_runs: int | None = None, atlas_max_evals: int | None = None, max_verdicts: int | None = None,
           proofs: bool = True, divergence: bool = True, z3: bool = False, timeout: float | None = None,
           work_limit: int | None = None, windows: int | None = None, window_ops: int | None = None,
           cut: bool = True, store=None) -> Report:
    """`dtrcheck report`: writes report.json, report.md and report.html to `out`;
    returns report.json's content, with ``files`` the paths written. ratios=None:
    the CLI's default grid; heuristic: a name or a list (one report part each). Z3's limits
    (timeout, work_limit, windows, window_ops) need z3=True, as the CLI's flags need --z3.
    `store` (default $DTRCHECK_STORE): a certificate store whose schedules and bounds
    the verdicts use, as --store (read only)."""
    heuristics = [heuristic] if isinstance(heuristic, str) else list(heuristic)
    result = _core().report(_loaded(trace), "" if ratios is None else _ratios(ratios),
                            None if out is None else os.fspath(out), heuristics, runtime, overhead_limit,
                            _ratio(timeline_ratio), cliff_factor, jobs, atlas, atlas_max_runs, atlas_max_evals,
                            max_verdicts, proofs,
                            divergence, z3, timeout, work_limit, windows, window_ops, cut,
                            _store(store))
    r = Report(result["report"])
    r.files = result["files"]
    return r


__all__ = ["Atlas", "Classification", "Error", "Plan", "Report", "Result", "Run", "Runs", "Scan", "Trace",
           "TraceInfo", "atlas", "explain", "info", "load", "plan", "prove", "replay", "report", "scan",
           "sweep"]
