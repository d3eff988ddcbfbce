#!/bin/bash
# Instructions and simulated cache misses of whole dtrcheck replays, counted
# by valgrind's cachegrind, for one build or two side by side. On a shared
# machine CPU seconds move with the load (the same replay took 10 to 27 s
# within one hour on the 2-core machine of docs/speed.md); these counts are
# the same on every run, so they can judge a change that seconds cannot.
# They are not seconds: a miss that the hardware prefetches costs little, and
# cachegrind models two cache levels only (D1 and LL, sized from the host).
# Prints a markdown table: per case and build, instructions (I refs), D1 and
# LL data misses; with two builds, B's counts over A's. The two builds'
# `replay --json` outputs must be equal (else the script stops: the builds
# replay differently and the counts compare different work).
#
#   bench/counts.sh                                  # build/dtrcheck
#   A=/tmp/dtrcheck-old B=build/dtrcheck bench/counts.sh
#   CASES="gen:rnn:16667 0.5" A=... B=... bench/counts.sh
#
# Env: A (default build/dtrcheck), B (optional), TRACES (../shared/traces),
# CASES: "TRACE RATIO" pairs, one per line; TRACE is a public trace's name
# (lstm, resnet32, ...) or gen:KIND:SIZE, a `dtrcheck gen KIND` trace
# (chain: --layers, resnet: --blocks, rnn: --steps SIZE). The default cases
# take about 40 s per build on the machine of docs/speed.md; the rnn of 10^5
# operators at 0.5 took 4-7 minutes there without the cache model
# (--cache-sim=no, which this script does not use), longer with it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
a=${A:-$here/../build/dtrcheck}
b=${B:-}
traces=${TRACES:-$here/../../shared/traces}
cases=${CASES:-"lstm 0.266
resnet32 0.1
gen:rnn:1667 0.5
gen:resnet:1250 0.2"}
command -v valgrind >/dev/null || { echo "counts.sh: valgrind is not installed (apt-get install -y valgrind)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Copies, as in speed.sh: a rebuild during the runs would relink in place.
# The module beside a build comes along (`--version` loads it).
builds=(A)
[ -n "$b" ] && builds+=(B)
declare -A path_of=([A]=$a [B]=$b)
for x in "${builds[@]}"; do
  mkdir "$tmp/$x" && cp "${path_of[$x]}" "$tmp/$x/dtrcheck"
  ext=$(dirname "${path_of[$x]}")/dtrcheck-ext.so
  if [ -f "$ext" ]; then cp "$ext" "$tmp/$x/"; fi
done

trace_of() {
  case $1 in
    gen:*)
      IFS=: read -r _ kind size <<<"$1"
      case $kind in
        chain) flag=--layers ;;
        resnet) flag=--blocks ;;
        rnn) flag=--steps ;;
        *) echo "counts.sh: unknown generator '$kind' in case '$1'" >&2; exit 2 ;;
      esac
      "$tmp/A/dtrcheck" gen "$kind" "$flag" "$size" -o "$tmp/$kind-$size.log"
      echo "$tmp/$kind-$size.log" ;;
    *)
      local f
      f=$(ls "$traces"/"$1"-*.log 2>/dev/null | head -1)
      [ -n "$f" ] || { echo "counts.sh: no trace $1-*.log in $traces" >&2; exit 2; }
      echo "$f" ;;
  esac
}

# count BUILD TRACE RATIO: prints "instructions d1_misses ll_misses".
count() {
  if ! valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null --log-file="$tmp/vg" \
    "$tmp/$1/dtrcheck" replay "$2" --ratio "$3" --json >"$tmp/$1.json" 2>"$tmp/err"; then
    echo "counts.sh: build $1 failed on $2 at $3: $(tail -1 "$tmp/err")" >&2
    exit 1
  fi
  awk '/I *refs:/ { i = $4 } /D1 *misses:/ { d = $4 } /LL misses:/ { l = $4 }
       END { gsub(",", "", i); gsub(",", "", d); gsub(",", "", l); print i, d, l }' "$tmp/vg"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(valgrind --version)"
for x in "${builds[@]}"; do
  version=$("$tmp/$x/dtrcheck" --version 2>/dev/null | head -1 || true)  # needs the module
  echo "$x: ${path_of[$x]}${version:+ ($version)}"
done
echo
if [ -n "$b" ]; then
  echo "| case | ratio | A instructions | B instructions | B/A | A D1 misses | B D1 misses | B/A | A LL misses | B LL misses | B/A |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
else
  echo "| case | ratio | instructions | D1 misses | LL misses |"
  echo "|---|---|---|---|---|"
fi
while read -r name ratio; do
  [ -n "$name" ] || continue
  trace=$(trace_of "$name")
  count A "$trace" "$ratio" >"$tmp/A.counts"
  read -r ia da la <"$tmp/A.counts"
  if [ -z "$b" ]; then
    echo "| $name | $ratio | $ia | $da | $la |"
    continue
  fi
  count B "$trace" "$ratio" >"$tmp/B.counts"
  read -r ib db lb <"$tmp/B.counts"
  if ! cmp -s "$tmp/A.json" "$tmp/B.json"; then
    echo "counts.sh: A and B replay $name at $ratio differently (replay --json differs)" >&2
    exit 1
  fi
  awk -v n="$name" -v r="$ratio" -v ia="$ia" -v ib="$ib" -v da="$da" -v db="$db" -v la="$la" -v lb="$lb" \
    'function q(x, y) { return x > 0 ? sprintf("%.3f", y / x) : "-" }
     BEGIN { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
             n, r, ia, ib, q(ia, ib), da, db, q(da, db), la, lb, q(la, lb) }'
done <<<"$cases"
