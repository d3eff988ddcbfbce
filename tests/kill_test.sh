#!/bin/bash
# SIGKILLs dtrcheck at random moments while it writes its outputs, then checks
# that every output under its final name is complete (model/output_file.h):
#   - a report directory holds exactly the old report or exactly the new one
#     (or is absent if there was none), never a mix, a prefix or an empty file;
#   - `gen -o`, `replay --emit-script` and `replay --record` files are absent
#     or byte-identical to an uninterrupted run's.
# Leftover temporaries of killed runs are hidden ".NAME.tmp-*" entries beside
# the target; they are allowed, anything else is not.
#
# usage: kill_test.sh DTRCHECK_BINARY WORK_DIR [KILLS]
set -u
DTRCHECK=$1
WORK=$2
KILLS=${3:-25}
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
fail=0
FAIL() { echo "FAIL: $*"; fail=1; }

"$DTRCHECK" gen demo -o demo.log || exit 1
# The reference outputs, uninterrupted: the "old" report (another grid) and the new one.
"$DTRCHECK" report demo.log --ratios 0.5,0.6 --out ref_old > /dev/null || exit 1
start=$(date +%s%N)
"$DTRCHECK" report demo.log -j 2 --out ref_new > /dev/null || exit 1
report_ns=$(( $(date +%s%N) - start ))
"$DTRCHECK" gen chain --layers 20000 -o ref_chain.log || exit 1
"$DTRCHECK" replay demo.log --ratio 0.5 --emit-script ref.script --record ref.log.gz > /dev/null || exit 1
start=$(date +%s%N)
"$DTRCHECK" gen chain --layers 20000 -o /dev/null
gen_ns=$(( $(date +%s%N) - start ))

# Sleeps a random time in [0, 1.2 * NS] nanoseconds.
random_sleep() { sleep "$(awk -v ns="$1" -v r="$RANDOM" 'BEGIN { printf "%.6f", ns * 1.2 * r / 32767 / 1e9 }')"; }

# Runs "$@" in the background and SIGKILLs it after a random time up to NS.
kill_during() {
  local ns=$1
  shift
  "$@" > /dev/null 2>&1 &
  local pid=$!
  random_sleep "$ns"
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
}

# Nothing but NAME and hidden temporaries of NAME in the current directory's PARENT listing.
only_target_and_temps() {  # only_target_and_temps DIR NAME
  local entry
  for entry in $(ls -A "$1"); do
    case "$entry" in
      "$2" | ".$2.tmp-"*) ;;
      *) FAIL "$1 holds an unexpected entry '$entry'" ;;
    esac
  done
}

kinds=(new_report old_report)
report_killed=0; report_old=0; report_new=0; report_absent=0
for i in $(seq 1 "$KILLS"); do
  kind=${kinds[$((i % 2))]}
  dir="r$i"
  mkdir "$dir"
  [ "$kind" = old_report ] && cp -r ref_old "$dir/out"
  kill_during "$report_ns" "$DTRCHECK" report demo.log -j 2 --out "$dir/out"
  report_killed=$((report_killed + 1))
  if [ ! -e "$dir/out" ]; then
    [ "$kind" = old_report ] && FAIL "run $i: the old report disappeared"
    report_absent=$((report_absent + 1))
  elif diff -r -q "$dir/out" ref_new > /dev/null; then
    report_new=$((report_new + 1))
  elif diff -r -q "$dir/out" ref_old > /dev/null; then
    [ "$kind" = new_report ] && FAIL "run $i: an old report appeared from nowhere"
    report_old=$((report_old + 1))
  else
    FAIL "run $i ($kind): $dir/out is neither the old nor the new report:"
    diff -r -q "$dir/out" ref_new
  fi
  only_target_and_temps "$dir" out
done
echo "report: $report_killed kills: $report_new complete new, $report_old untouched old, $report_absent absent"

files_ok=0; files_absent=0
for i in $(seq 1 "$KILLS"); do
  dir="f$i"
  mkdir "$dir"
  kill_during "$gen_ns" "$DTRCHECK" gen chain --layers 20000 -o "$dir/chain.log"
  kill_during 20000000 "$DTRCHECK" replay demo.log --ratio 0.5 --emit-script "$dir/run.script" --record "$dir/run.log.gz"
  for pair in chain.log:ref_chain.log run.script:ref.script run.log.gz:ref.log.gz; do
    got="$dir/${pair%%:*}"
    want=${pair##*:}
    if [ ! -e "$got" ]; then
      files_absent=$((files_absent + 1))
    elif cmp -s "$got" "$want"; then
      files_ok=$((files_ok + 1))
    else
      FAIL "$got is not the complete file ($(stat -c %s "$got") bytes, complete: $(stat -c %s "$want"))"
    fi
  done
  for entry in $(ls -A "$dir"); do
    case "$entry" in
      chain.log | run.script | run.log.gz | .chain.log.tmp-* | .run.script.tmp-* | .run.log.gz.tmp-*) ;;
      *) FAIL "$dir holds an unexpected entry '$entry'" ;;
    esac
  done
done
echo "files: $files_ok complete, $files_absent absent"

if [ "$fail" -ne 0 ]; then exit 1; fi
echo "ok: every output present after $((2 * KILLS)) kills is complete"
