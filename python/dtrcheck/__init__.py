"""dtrcheck from Python (docs/python.md).

- dtrcheck.capture: record a PyTorch training step as a DTR trace (needs only
  torch): ``python3 -m dtrcheck.capture SCRIPT.py -o model.log``.
- load, replay, sweep, atlas, scan, explain, prove, plan, report, info: the
  dtrcheck commands over the C++ library (the compiled module dtrcheck._core),
  returning what their --json prints as objects with the same field names,
  each with to_pandas().

    import dtrcheck
    runs = dtrcheck.sweep("model.log", "0.1:1.0:0.05")
    runs.to_pandas()[["ratio", "result", "overhead"]]
"""

from .api import (Atlas, Classification, Plan, Report, Result, Run, Runs, Scan, Trace, TraceInfo,
                  atlas, explain, info, load, plan, prove, replay, report, scan, sweep)
from .errors import Error

__all__ = ["Atlas", "Classification", "Error", "Plan", "Report", "Result", "Run", "Runs", "Scan",
           "Trace", "TraceInfo", "atlas", "explain", "info", "load", "plan", "prove", "replay", "report",
           "scan", "sweep"]
