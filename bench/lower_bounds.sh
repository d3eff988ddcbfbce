#!/usr/bin/env bash
# The bounds on the public traces, measured: `dtrcheck bounds` with its
# defaults on each trace, one at a time and nice'd (a shared two-core
# machine), with a certificate store. Prints one Markdown row per trace, the
# columns of the README's table: DTR's smallest feasible grid ratio, the best
# verified schedule (its overhead from the checker's replay), the proven
# lower bound and the argument that gives it, the band's relative width, and
# the CPU (user + system) and wall time of `bounds`; and fails if a proven
# bound ever exceeds the best verified schedule. On standard error, per
# trace, what stopped each part (walk-down, checkpoint plans, cut).
# Nothing read from the store is trusted: the stored schedule is checked
# again (`dtrcheck check` at its peak) and the stored bound is proved again
# (`dtrcheck prove` one byte below it, which reruns its argument); a stored
# number that does not check is left out of the row and named.
#
#   bench/lower_bounds.sh [DTRCHECK] [STORE_DIR] [TRACE_NAME...]
#
# DTRCHECK defaults to build/dtrcheck, STORE_DIR to a temporary directory,
# the traces to all eight of ../shared/traces. Give a new STORE_DIR for a
# table: a reused store keeps its schedule unless one with a lower peak, or
# the same peak and less compute, comes, so the overhead column can be an
# older run's. Extra flags for `bounds` go in
# $BOUNDS_FLAGS (none: the defaults).
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
echo "| trace | DTR passes from | best verified schedule (overhead) | proven lower bound | band | \`bounds\` CPU / wall |"
echo "|---|---|---|---|---|---|"
status=0
for name in "${NAMES[@]}"; do
  trace=$(ls "$TRACES_DIR"/"$name"-*.log | head -1)
  flags=${BOUNDS_FLAGS:-}
  out=$(mktemp)
  times=$(mktemp)
  # shellcheck disable=SC2086
  nice /usr/bin/time -f "%U %S %e" -o "$times" "$DTRCHECK" bounds "$trace" --store "$STORE" --json $flags > "$out" 2>/dev/null
  read -r user sys wall < "$times"
  rm -f "$times"
  compute=$("$DTRCHECK" info "$trace" --json | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["baseline_compute"])')
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
  schedule_ok=-; bound_ok=-; clock=-
  if [ "$peak" != - ]; then
    checked=$(mktemp)
    nice "$DTRCHECK" check "$trace" --budget "$peak" --script "$script" --json > "$checked" 2>/dev/null && schedule_ok=yes || schedule_ok=no
    clock=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["clock"])' "$checked" 2>/dev/null) || clock=-
    rm -f "$checked"
  fi
  if [ "$bound" != - ]; then
    nice "$DTRCHECK" prove "$trace" --budget $((bound - 1)) --store "$STORE" --expect inherent > /dev/null 2>&1 &&
      bound_ok=yes || bound_ok=no
  fi
  rm -f "$script"
  "$PYTHON" - "$out" "$name" "$user" "$sys" "$wall" "$peak" "$bound" "$schedule_ok" "$bound_ok" "$clock" "$compute" <<'PY' || status=1
import json, sys
j = json.load(open(sys.argv[1]))
name, cpu, wall = sys.argv[2], float(sys.argv[3]) + float(sys.argv[4]), float(sys.argv[5])
stored_peak, stored_bound_text, schedule_ok, bound_ok, clock = sys.argv[6:11]
compute = int(sys.argv[11])
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
stored = None if stored_peak == "-" else int(stored_peak)
stored_bound = 0 if stored_bound_text == "-" else int(stored_bound_text)
if stored is not None and schedule_ok != "yes":
    print(f"NOT CONFIRMED: {name}: the stored schedule (peak {stored}) fails the checker; left out")
    stored = None
if stored_bound and bound_ok != "yes":
    print(f"NOT CONFIRMED: {name}: the stored lower bound {stored_bound} is not proved again; left out")
    stored_bound = 0
bound = max(lb["bytes"], stored_bound)
band = "-" if stored is None else f"{(stored - bound) / bound * 100:.1f}%"
dtr = next((h for h in j["heuristics"] if h["heuristic"] == "DTR"), None)
passes = "-" if dtr is None or dtr["smallest_feasible_ratio"] is None else f"{dtr['smallest_feasible_ratio']:g}"
overhead = "" if clock == "-" else f" ({int(clock) / compute:.3g}x)"
schedule = "-" if stored is None else r(stored) + overhead
proven = r(bound) + f" ({'static' if lb['argument'] == 'static' else lb['argument']})"
if bound > lb["bytes"]:
    proven = r(bound) + " (store)"
print(f"| {name} | {passes} | {schedule} | {proven} | {band} | {cpu:.0f} s / {wall:.0f} s |", flush=True)
walk, plans = j["walk"], j["plan_search"]
print(f"{name}: best from {'-' if best is None else best['source']}; walk-down {len(walk['steps'])} searches, "
      f"{sum(s['found'] for s in walk['steps'])} found, search_limited={walk['search_limited']}, "
      f"timed_out={walk['timed_out']}; plans {'-' if plans is None else plans['plans']} "
      f"(work {'-' if plans is None else plans['work']}, work_limited={None if plans is None else plans['work_limited']}); "
      f"cut {'-' if cut is None else cut['tests']} tests, timed_out={None if cut is None else cut['timed_out']}; "
      f"static {r(j['static_bound']['bytes'])}; argument: {arg}", file=sys.stderr)
for peak in (best["budget"] if best else None, stored):
    if peak is not None and bound > peak:
        print(f"UNSOUND: {name}: lower bound {bound} > verified schedule {peak}")
        sys.exit(1)
PY
  rm -f "$out"
done
exit $status
