#!/bin/sh
# Checks that two dtrcheck binaries replay the public traces to the same
# results: every field of `sweep --json` over a grid of ratios, for the
# heuristics that read evicted regions (DTR, MSPS, AbE, AbESize) and one
# that reads equivalence classes, on both optimized runtimes, plus
# `replay --json` (per-storage eviction counts) at the slow cases. Used
# before and after each speed change in checker/. Takes minutes per trace
# with an old binary (LSTM and TreeLSTM low ratios are slow).
#
#   bench/same_results.sh OLD_DTRCHECK NEW_DTRCHECK [TRACES_DIR]
#
# Prints one line per comparison and exits 1 on the first difference.
set -eu
old=$1
new=$2
traces=${3:-$(dirname "$0")/../../shared/traces}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
compare() {  # name, then the arguments of both runs
  name=$1
  shift
  "$old" "$@" >"$tmp/old" 2>&1 || true
  "$new" "$@" >"$tmp/new" 2>&1 || true
  if cmp -s "$tmp/old" "$tmp/new"; then
    echo "same  $name ($(wc -l <"$tmp/new") lines)"
  else
    echo "DIFF  $name"
    diff "$tmp/old" "$tmp/new" | head -5
    status=1
  fi
}
for t in resnet32 unet lstm transformer tv_densenet121 unroll_gan treelstm inceptionv4; do
  f=$(ls "$traces"/$t-*.log)
  case $t in
    treelstm | inceptionv4 | lstm) grid=0.4:1.0:0.2 ;;
    *) grid=0.2:1.0:0.1 ;;
  esac
  for rt in RuntimeV2EagerOptimized RuntimeV2Optimized; do
    compare "$t $rt $grid" sweep "$f" --ratios $grid --runtime $rt -j 1 --json \
      --heuristic DTR,MSPS,AbE,AbESize,DTREqClass
  done
done
for c in "lstm 0.266" "resnet32 0.1" "unet 0.42" "transformer 0.2" "unroll_gan 0.3"; do
  set -- $c
  compare "replay $1 $2" replay "$(ls "$traces"/$1-*.log)" --ratio $2 --json
done
exit $status
