#!/usr/bin/env bash
# How long each command takes with its defaults on the public traces: the
# table of docs/default_times.md. One command at a time, each stopped after
# $LIMIT seconds (default 150). Prints one Markdown row per command: wall
# seconds (CPU seconds in parentheses), "> LIMIT" when stopped, and the load
# average before and after.
#
# Commands that need a budget get a typical one: the highest ratio of the grid
# 0.1:1.0:0.05 at which DTR runs out of memory below its first pass (the
# failing band; when the grid's first ratio passes, 0.09); commands that need
# a grid get 0.1:1.0:0.05; `atlas` walks from the failing ratio to the first
# pass, `diff` compares the two.
#
#   bench/default_times.sh [DTRCHECK] [COMMAND...]
#
# DTRCHECK defaults to build/dtrcheck; the commands to all of them. The traces
# come from $TRACES_DIR (default ../shared/traces), all eight unless $TRACES
# names some.
set -uo pipefail
cd "$(dirname "$0")/.."
DTRCHECK=${1:-build/dtrcheck}
shift $(($# > 0 ? 1 : 0))
COMMANDS=("$@")
[ ${#COMMANDS[@]} -eq 0 ] && COMMANDS=(info replay sweep frontier diff scan ablate atlas explain prove blame report bounds)
TRACES_DIR=${TRACES_DIR:-../shared/traces}
read -r -a NAMES <<< "${TRACES:-resnet32 unet inceptionv4 tv_densenet121 transformer unroll_gan treelstm lstm}"
LIMIT=${LIMIT:-150}
GRID=0.1:1.0:0.05
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The failing ratio and the first passing ratio of the grid, "FAIL PASS".
band() {
  "$DTRCHECK" sweep "$1" --ratios "$GRID" --csv 2>/dev/null | /usr/bin/python3 -c '
import csv, sys
rows = sorted(csv.DictReader(sys.stdin), key=lambda r: float(r["ratio"]))
first = next((r for r in rows if r["result"] == "pass"), None)
below = [r for r in rows if first and float(r["ratio"]) < float(first["ratio"])]
print(below[-1]["ratio"] if below else "0.09", first["ratio"] if first else "1.0")'
}

# One cell: wall (CPU) seconds, or "> LIMIT".
cell() {
  local out="$WORK/time"
  timeout "$LIMIT" /usr/bin/time -f "%e %U %S" -o "$out" "$@" > /dev/null 2> "$WORK/err"
  local status=$?
  if [ $status -eq 124 ]; then
    echo "> $LIMIT"
  elif [ -s "$out" ]; then
    awk -v s=$status 'END { printf "%.1f (%.1f)%s", $1, $2 + $3, (s > 1 ? " exit " s : "") }' "$out"
  else
    echo "failed"
  fi
}

declare -A FAIL PASS
header="| command |"
rule="|---|"
for name in "${NAMES[@]}"; do
  trace=$(ls "$TRACES_DIR"/"$name"-*.log | head -1)
  read -r FAIL[$name] PASS[$name] <<< "$(band "$trace")"
  header+=" $name (${FAIL[$name]}) |"
  rule+="---:|"
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$header"
echo "$rule"
for command in "${COMMANDS[@]}"; do
  row="| $command |"
  for name in "${NAMES[@]}"; do
    trace=$(ls "$TRACES_DIR"/"$name"-*.log | head -1)
    f=${FAIL[$name]} p=${PASS[$name]}
    case $command in
      info) args=(info "$trace") ;;
      replay | frontier | explain | prove | blame) args=("$command" "$trace" --ratio "$f") ;;
      sweep | scan | ablate) args=("$command" "$trace" --ratios "$GRID") ;;
      diff) args=(diff "$trace" --ratios "$f,$p") ;;
      atlas) args=(atlas "$trace" --ratios "$f:$p") ;;
      report) args=(report "$trace" --out "$WORK/report") ;;
      bounds) args=(bounds "$trace") ;;
      *) echo "unknown command $command" >&2; exit 2 ;;
    esac
    row+=" $(cell "$DTRCHECK" "${args[@]}") |"
  done
  echo "$row"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
