#!/bin/bash
# Growth on generated traces (issue 12): chain, resnet and rnn traces of about
# 10^4, 10^5 and 10^6 operators (`dtrcheck gen`), DTR on
# RuntimeV2EagerOptimized at ratios 0.5 and 0.2, one process per point
# (bench_scale: parse, baseline, one run; what `dtrcheck replay` does), a run
# stopped once it has used LIMIT CPU seconds. Prints a markdown table:
#   parse s, parse MB    CPU seconds of parsing, peak RSS right after it
#   result               pass / oom, or "stopped" at the limit
#   run s                CPU seconds of the run (up to the stop)
#   computations, evaluations   done by the run (up to the stop)
#   us/comp, ns/eval     run CPU time per computation, per heuristic evaluation
#   exp                  growth exponent of the run's CPU time against the
#                        previous size: log(t / t') / log(n / n'), finished runs only
#   peak MB              peak RSS of the whole process (parse + baseline + run)
#
#   ninja -C build dtrcheck bench_scale && bench/growth.sh
#
# Env: DTRCHECK (default build/dtrcheck), BENCH_SCALE (build/bench_scale),
# SIZES ("4 5 6": powers of ten), RATIOS ("0.5 0.2"), GENS ("chain resnet rnn"),
# LIMIT (CPU seconds per run, 60).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dtrcheck=${DTRCHECK:-$here/../build/dtrcheck}
bench=${BENCH_SCALE:-$here/../build/bench_scale}
limit=${LIMIT:-60}
# A bench_scale older than the engine library measures an old engine
# (neither `ninja -C build` nor `ninja -C build dtrcheck` relinks it).
lib=$(dirname "$bench")/libdtr_checker.a
if [ -e "$lib" ] && [ "$bench" -ot "$lib" ]; then
  echo "growth.sh: $bench is older than $lib: run ninja -C $(dirname "$bench") bench_scale" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ { print $2 }') GB"
echo "dtrcheck: $(cd "$here" && git rev-parse --short HEAD 2>/dev/null); runs stopped after $limit CPU s"
echo "load before: $(uptime | sed 's/.*load average: //')"
echo
echo "| trace | ratio | operators | parse s | parse MB | result | run s | computations | us/comp | evaluations | ns/eval | exp | peak MB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for gen in ${GENS:-chain resnet rnn}; do
  declare -A prev_n=() prev_t=()
  for e in ${SIZES:-4 5 6}; do
    n=$((10 ** e))
    case $gen in  # operators: chain 2 per layer, resnet 8 per block, rnn 6 per step
      chain) args="--layers $((n / 2))" ;;
      resnet) args="--blocks $((n / 8))" ;;
      rnn) args="--steps $((n / 6))" ;;
    esac
    "$dtrcheck" gen $gen $args -o "$tmp/gen.log"
    for ratio in ${RATIOS:-0.5 0.2}; do
      "$bench" "$tmp/gen.log" --ratio "$ratio" --limit "$limit" >"$tmp/out"
      # parse 6.250 s, peak RSS 537.7 MB, RSS 537.7 MB, heap in use 373.9 MB, 1000002 operators
      read -r parse_s parse_mb ops < <(awk '/^parse/ { print $2, $6, $(NF - 1) }' "$tmp/out")
      # ratio 0.5 stopped 10.036 s, 254464 computations, 1115745537 evaluations, peak RSS 771.7 MB
      read -r result run_s comps evals peak < <(awk '/^ratio/ { print $3, $4, $6, $8, $12 }' "$tmp/out")
      comps=${comps%,}
      evals=${evals%,}
      per=$(awk -v t="$run_s" -v c="$comps" -v v="$evals" 'BEGIN { printf "%.1f %.0f", (c > 0 ? t * 1e6 / c : 0), (v > 0 ? t * 1e9 / v : 0) }')
      exp="-"
      if [ "$result" != stopped ]; then
        if [ -n "${prev_t[$ratio]:-}" ]; then
          exp=$(awk -v a="${prev_t[$ratio]}" -v b="$run_s" -v m="${prev_n[$ratio]}" -v n="$ops" \
            'BEGIN { if (a > 0.05) printf "%.2f", log(b / a) / log(n / m); else print "-" }')
        fi
        prev_t[$ratio]=$run_s
        prev_n[$ratio]=$ops
      else
        prev_t[$ratio]=""
      fi
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$gen" "$ratio" "$ops" \
        "$parse_s" "$parse_mb" "$result" "$run_s" "$comps" "${per% *}" "$evals" "${per#* }" "$exp" "$peak"
    done
  done
  unset prev_n prev_t
done
echo
echo "load after: $(uptime | sed 's/.*load average: //')"
