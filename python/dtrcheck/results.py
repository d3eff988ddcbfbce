"""Results of dtrcheck as plain Python objects.

A Result holds one JSON object of a dtrcheck command (what ``--json``
prints): each field is an attribute of the same name (``run.overhead``,
``run.oom.request``), nested objects are Results, lists stay lists.
``to_dict()`` gives the JSON back; ``to_pandas()`` a pandas DataFrame of the
result's table (pandas is imported only then).
"""

from __future__ import annotations


def _wrap(value):
    if isinstance(value, dict):
        return Result(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _unwrap(value):
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


def _frame(rows: list):
    try:
        import pandas
    except ImportError as e:  # optional: only to_pandas needs it
        raise ImportError("to_pandas() needs pandas (Debian: python3-pandas)") from e
    frame = pandas.json_normalize([_unwrap(r) for r in rows], sep=".")
    # An OOM run's overhead is simrd's clock at the failure, not a result: a
    # pivot must not rank it among passing runs (the JSON keeps simrd's number).
    if {"result", "overhead"} <= set(frame.columns):
        frame.loc[frame["result"] == "oom", "overhead"] = float("nan")
    return frame


class Result:
    """One JSON object as attributes. ``table`` names the list ``to_pandas`` shows."""

    table: str | None = None

    def __init__(self, fields: dict):
        self._fields = list(fields)
        for key, value in fields.items():
            setattr(self, key, _wrap(value))

    def __getitem__(self, key: str):
        if key not in self._fields:
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key: str) -> bool:
        return key in self._fields

    def keys(self) -> list:
        return list(self._fields)

    def to_dict(self) -> dict:
        """The JSON object, as the CLI's --json prints it."""
        return {k: _unwrap(getattr(self, k)) for k in self._fields}

    def to_pandas(self, table: str | None = None):
        """A DataFrame of the list field `table` (default: this result's main table),
        one row per element, nested fields as dotted columns ("oom.request")."""
        name = table or self.table
        if name is None:
            return _frame([self])
        rows = self[name]
        if not isinstance(rows, list):
            raise ValueError(f"'{name}' is not a table of this result")
        return _frame(rows)

    def __repr__(self) -> str:
        shown = []
        for k in self._fields:
            v = getattr(self, k)
            if isinstance(v, list):
                shown.append(f"{k}=[{len(v)} items]")
            elif isinstance(v, Result):
                shown.append(f"{k}=...")
            else:
                shown.append(f"{k}={v!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


class Run(Result):
    """One replay: `dtrcheck replay --json` (simrd's reference field names)."""


class Runs(list):
    """Replays in the order asked: `dtrcheck sweep --json`, one Run per line."""

    def to_pandas(self):
        return _frame(list(self))


class TraceInfo(Result):
    """`dtrcheck info --json`."""


class Atlas(Result):
    """`dtrcheck atlas --json`; to_pandas() shows the intervals ("bands" on request)."""

    table = "intervals"


class Scan(Result):
    """`dtrcheck scan --json`; to_pandas() shows the grid points."""

    table = "points"


class Classification(Result):
    """`dtrcheck explain --json` or `dtrcheck prove --json`."""


class Plan(Result):
    """`dtrcheck plan --json`; to_pandas() shows the planned modules."""

    table = "modules"

    def module_paths(self) -> list:
        """The planned modules' paths, as capture's ``checkpoint=`` takes them."""
        return [m.module for m in self.modules]


class Report(Result):
    """`dtrcheck report`'s report.json; to_pandas() shows the runs of its first
    heuristic (``heuristic=k`` for the k-th of ``heuristics``).
    ``files`` lists the files written (report.json, report.md, report.html)."""

    def to_pandas(self, table: str | None = None, heuristic: int = 0):
        """A DataFrame of the list field `table` (default "runs") of one heuristic's part."""
        return self.heuristics[heuristic].to_pandas(table or "runs")
