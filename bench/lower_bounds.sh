#!/usr/bin/env bash
# The lower bounds on the public traces, measured: `dtrcheck bounds` on each
# trace, one at a time and nice'd (a shared two-core machine), with a
# certificate store. Prints one Markdown row per trace: the static bound, the
# keep-or-recompute cut, the proven lower bound and the argument that gives
# it, the best verified schedule, the band's relative width, the wall time;
# and fails if a proven bound ever exceeds the best verified schedule.
# Nothing read from the store is trusted: the stored schedule is checked
# again (`dtrcheck check` at its peak) and the stored bound is proved again
# (`dtrcheck prove` one byte below it, which reruns its argument); a stored
# number that does not check is left out of the row and named.
#
#   bench/lower_bounds.sh [DTRCHECK] [STORE_DIR] [TRACE_NAME...]
#
# DTRCHECK defaults to build/dtrcheck, STORE_DIR to a temporary directory,
# the traces to all eight of ../shared/traces. Extra flags for `bounds` go in
# $BOUNDS_FLAGS. TreeLSTM runs with --ratios 0.2:1:0.01: below 0.2 its DTR
# runs are slow (see docs/readme/bounds.md).
set -euo pipefail
cd "$(dirname "$0")/.."
DTRCHECK=${1:-build/dtrcheck}
STORE=${2:-$(mktemp -d)}
shift $(( $# > 2 ? 2 : $# )) || true
TRACES_DIR=${TRACES_DIR:-../shared/traces}
NAMES=("$@")
[ ${#NAMES[@]} -eq 0 ] && NAMES=(resnet32 unet tv_densenet121 transformer unroll_gan inceptionv4 lstm treelstm)
PYTHON=/usr/bin/python3

echo "store: $STORE"
echo "| trace | static bound | cut | proven lower bound | argument | best verified schedule (this run) | best in the store | band (store) | cut tests | wall time |"
echo "|---|---|---|---|---|---|---|---|---|---|"
status=0
for name in "${NAMES[@]}"; do
  trace=$(ls "$TRACES_DIR"/"$name"-*.log | head -1)
  flags=${BOUNDS_FLAGS:-}
  [ "$name" = treelstm ] && flags="--ratios 0.2:1:0.01 $flags"
  out=$(mktemp)
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  nice "$DTRCHECK" bounds "$trace" --store "$STORE" --json $flags > "$out" 2>/dev/null
  end=$(date +%s.%N)
  stored="$STORE/$(sha256sum "$trace" | cut -d' ' -f1).json"
  # The stored numbers, checked again by dtrcheck itself.
  script=$(mktemp)
  read -r peak bound < <("$PYTHON" - "$stored" "$out" "$script" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[2]))
rt = json.load(open(sys.argv[1]))["runtimes"].get(j["runtime"], {}) if os.path.exists(sys.argv[1]) else {}
s, b = rt.get("schedule"), rt.get("lower_bound")
if s:
    open(sys.argv[3], "w").write(s["script"])
print(s["peak"] if s else "-", b["bytes"] if b else "-")
PY
) || { peak=-; bound=-; }
  schedule_ok=-; bound_ok=-
  if [ "$peak" != - ]; then
    nice "$DTRCHECK" check "$trace" --budget "$peak" --script "$script" > /dev/null 2>&1 && schedule_ok=yes || schedule_ok=no
  fi
  if [ "$bound" != - ]; then
    nice "$DTRCHECK" prove "$trace" --budget $((bound - 1)) --store "$STORE" --expect inherent > /dev/null 2>&1 &&
      bound_ok=yes || bound_ok=no
  fi
  rm -f "$script"
  "$PYTHON" - "$out" "$name" "$start" "$end" "$peak" "$bound" "$schedule_ok" "$bound_ok" <<'PY' || status=1
import json, sys
j = json.load(open(sys.argv[1]))
name, wall = sys.argv[2], float(sys.argv[4]) - float(sys.argv[3])
base = j["baseline_memory"]
r = lambda b: f"{b / base:.6f}"
lb, best, cut = j["lower_bound"], j["best_schedule"], j["cut"]
arg = lb["argument"]
if arg == "window":
    arg = f"Z3 window {lb['window']['first_op']}..{lb['window']['last_op']}"
elif arg == "cut" and cut and cut.get("argument"):
    a = cut["argument"]
    arg = f"cut ({a['argument']}) at {a['op']}"
# The stored numbers as read before they were checked (prove drops a bound it refutes).
stored = None if sys.argv[5] == "-" else int(sys.argv[5])
stored_bound = 0 if sys.argv[6] == "-" else int(sys.argv[6])
schedule_ok, bound_ok = sys.argv[7], sys.argv[8]
if stored is not None and schedule_ok != "yes":
    print(f"NOT CONFIRMED: {name}: the stored schedule (peak {stored}) fails the checker; left out")
    stored = None
if stored_bound and bound_ok != "yes":
    print(f"NOT CONFIRMED: {name}: the stored lower bound {stored_bound} is not proved again; left out")
    stored_bound = 0
bound = max(lb["bytes"], stored_bound)
band = "-" if stored is None else f"{(stored - bound) / bound * 100:.1f}%"
cut_text = "-" if cut is None else r(cut["bytes"]) + (" (timed out)" if cut["timed_out"] else "")
cut_tests = "-" if cut is None else str(cut["tests"])
print(f"| {name} | {r(j['static_bound']['bytes'])} | {cut_text} | {r(lb['bytes'])} | {arg} | "
      f"{'-' if best is None else r(best['budget'])} | {'-' if stored is None else r(stored)} | "
      f"{band} | {cut_tests} | {wall:.0f}s |")
for peak in (best["budget"] if best else None, stored):
    if peak is not None and bound > peak:
        print(f"UNSOUND: {name}: lower bound {bound} > verified schedule {peak}")
        sys.exit(1)
PY
  rm -f "$out"
done
exit $status
