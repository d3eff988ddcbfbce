"""Runs simrd (the DTR authors' simulator) once on one trace and ratio, for
bench/speed.sh: parse, the RuntimeV1 baseline at an infinite budget, then
one run of the heuristic at budget = int(baseline memory * ratio), as
simrd's pareto evaluation does. Prints one line: result, clock, evaluations.

  /usr/bin/python3 bench/simrd_run.py SIMRD_DIR TRACE RATIO [HEURISTIC] [RUNTIME]

SIMRD_DIR holds simrd's package directory `simrd/` (never part of this
repository). Needs the `attrs` package.
"""
import math
import sys


def main():
    simrd_dir, trace, ratio = sys.argv[1], sys.argv[2], float(sys.argv[3])
    heuristic_name = sys.argv[4] if len(sys.argv) > 4 else "DTR"
    runtime_name = sys.argv[5] if len(sys.argv) > 5 else "RuntimeV2EagerOptimized"
    sys.path.insert(0, simrd_dir)
    import simrd.heuristic as heuristics
    import simrd.runtime as runtimes
    from simrd.parse import parse_file

    with open(trace) as f:
        graph = parse_file(f, start=True)
    run = graph.get_closure()
    base = runtimes.RuntimeV1(math.inf, heuristics.Heuristic(), stats=False, trace=False)
    run(base)
    budget = int(base.telemetry.summary["max_memory"] * ratio)
    rt = getattr(runtimes, runtime_name)(budget, getattr(heuristics, heuristic_name)(), stats=False, trace=False)
    result = "pass"
    try:
        run(rt)
    except MemoryError:
        result = "oom"
    except runtimes.RematExceededError:
        result = "thrash"
    print(result, rt.clock, rt.telemetry.summary["heuristic_eval_count"])


if __name__ == "__main__":
    main()
