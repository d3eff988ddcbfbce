#!/bin/bash
# Memory exhaustion is one clear line and exit status 4 (docs/cli.md), not an
# abort: dtrcheck runs under an address-space limit (ulimit -v) too small for
# the trace. (Where the allocation fails does not matter to main(): the
# parallel layer carries a worker's exception back to the caller.)
#
# usage: out_of_memory_test.sh DTRCHECK_BINARY WORK_DIR
set -u
DTRCHECK=$1
WORK=$2
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
fail=0
"$DTRCHECK" gen chain --layers 100000 -o chain.log || exit 1

# Runs dtrcheck ARGS... under `ulimit -v KB`; checks status 4, one stderr line
# naming the command, and nothing on stdout.
expect_out_of_memory() {
  local kb=$1
  shift
  bash -c "ulimit -v $kb; exec \"\$@\"" _ "$DTRCHECK" "$@" > out.txt 2> err.txt
  local status=$?
  if [ "$status" -ne 4 ]; then
    echo "FAIL: ulimit -v $kb; dtrcheck $*: exit $status, expected 4"; cat err.txt; fail=1; return
  fi
  if [ "$(wc -l < err.txt)" -ne 1 ] || ! grep -q "^dtrcheck: out of memory: .*'$*'" err.txt; then
    echo "FAIL: ulimit -v $kb; dtrcheck $*: stderr is not the one out-of-memory line:"; cat err.txt; fail=1
  fi
  if [ -s out.txt ]; then echo "FAIL: dtrcheck $*: printed a partial result"; fail=1; fi
}

# A tiny trace runs under the small limit, so the limit leaves room to start.
"$DTRCHECK" gen demo -o demo.log || exit 1
bash -c "ulimit -v 100000; exec \"\$@\"" _ "$DTRCHECK" replay demo.log --ratio 0.5 > /dev/null ||
  { echo "FAIL: the small limit does not even run the demo trace"; fail=1; }
# 100 MB of address space is too little to parse the 51 MB chain trace (200,002
# operators; the 10 MB one of 20,000 layers fits since the parser streams).
expect_out_of_memory 100000 replay chain.log --ratio 0.5
expect_out_of_memory 100000 sweep chain.log --ratios 0.5,0.6 -j 2
# Regression (issue 51, item 8): a trace that needs little memory runs under
# a generous address-space limit. The bitmap arena of wide evicted regions
# (checker/engine/storage_set.cc) used to reserve 32 GiB of address space up front,
# so this 24,005-operator resnet (26 MB resident) ended "out of memory" under
# 4 GiB; the arena now reserves a share of the limit.
"$DTRCHECK" gen resnet --blocks 3000 -o resnet.log || exit 1
"$DTRCHECK" replay resnet.log --ratio 0.5 > unlimited.txt || exit 1
bash -c "ulimit -v $((4 << 20)); exec \"\$@\"" _ "$DTRCHECK" replay resnet.log --ratio 0.5 > limited.txt 2> err.txt ||
  { echo "FAIL: ulimit -v 4 GiB: the 24,005-operator resnet does not replay:"; cat err.txt; fail=1; }
cmp -s unlimited.txt limited.txt || { echo "FAIL: the run under 4 GiB differs from the run without a limit"; fail=1; }
exit $fail
