#!/bin/bash
# `sweep` and `scan --checkpoint FILE` in one process (checker/persist/grid_checkpoint.h,
# docs/checkpoint.md): a run interrupted by SIGINT, or one whose checkpoint
# ends in a torn line (as a crash mid-write leaves it), resumes with the same
# flags and prints output byte-identical to an uninterrupted run, each point
# written to the file once; a checkpoint of another grid or trace is refused
# with one line naming the file and the key that differs, exit status 3 and
# no output. (Under MPI: tests/mpi_test.sh, case fault_grid.)
#
# usage: checkpoint_test.sh DTRCHECK_BINARY WORK_DIR TRACES_DIR CASE
#   CASE sweep   ResNet-32, DTR and LRU over 0.05:1.0:0.002 (952 runs)
#        scan    U-Net 0.05:1.0:0.002 grid, then --refine from the same file;
#                ResNet-32 --exact over 0.100:0.104:0.002 (an atlas walk)
set -u
DTRCHECK=$1
WORK=$2/$4
TRACES=$3
CASE=$4
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
UNET=$(ls "$TRACES"/unet-*.log)
RESNET=$(ls "$TRACES"/resnet32-*.log)
fail=0
FAIL() { echo "FAIL: $*"; fail=1; }

# identical NAME REF OUT: OUT must equal REF byte for byte.
identical() {
  if cmp -s "$2" "$3"; then
    echo "ok: $1: identical to the uninterrupted run ($(wc -l < "$2") lines)"
  else
    FAIL "$1: the output differs from the uninterrupted run"
    diff "$2" "$3" | head -5
  fi
}

# torn NAME FILE KEEP: FILE's first KEEP lines and half of the next one, as a
# process killed in the middle of writing it leaves the file.
torn() {
  local whole=$2 keep=$3
  local bytes
  bytes=$(head -n "$keep" "$whole" | wc -c)
  local next
  next=$(sed -n "$((keep + 1))p" "$whole" | wc -c)
  head -c $((bytes + next / 2)) "$whole" > "$1"
}

# refused NAME EXPECTED ARGS...: `dtrcheck ARGS` must exit with status 3,
# print nothing on stdout and one stderr line containing EXPECTED.
refused() {
  local name=$1 expected=$2
  shift 2
  "$DTRCHECK" "$@" > "$name.out" 2> "$name.err"
  local status=$?
  if [ "$status" -ne 3 ]; then
    FAIL "$name: exit status $status, not 3"
  elif [ -s "$name.out" ]; then
    FAIL "$name: printed output"
  elif [ "$(wc -l < "$name.err")" -ne 1 ] || ! grep -qF -- "$expected" "$name.err"; then
    FAIL "$name: expected one line with '$expected', got:"
    cat "$name.err"
  else
    echo "ok: $name: $(cat "$name.err")"
  fi
}

case "$CASE" in
  sweep)
    GRID=(--ratios 0.05:1.0:0.002 --heuristic DTR,LRU --csv)
    "$DTRCHECK" sweep "$RESNET" "${GRID[@]}" > ref.csv || exit 1
    points=$(($(wc -l < ref.csv) - 1))
    "$DTRCHECK" sweep "$RESNET" "${GRID[@]}" --checkpoint whole.jsonl > whole.csv || FAIL "sweep with a checkpoint failed"
    identical "sweep --checkpoint (fresh)" ref.csv whole.csv
    [ "$(wc -l < whole.jsonl)" -eq $((points + 1)) ] || FAIL "whole.jsonl has $(wc -l < whole.jsonl) lines, not $((points + 1))"
    # Interrupted by SIGINT (Ctrl-C) once some points are in the file. (With
    # job control on: a non-interactive shell starts background jobs with
    # SIGINT ignored.)
    set -m
    "$DTRCHECK" sweep "$RESNET" "${GRID[@]}" --checkpoint int.jsonl > int.csv 2> int.err &
    job=$!
    set +m
    while kill -0 "$job" 2> /dev/null && { [ ! -f int.jsonl ] || [ "$(wc -l < int.jsonl)" -lt 100 ]; }; do
      sleep 0.05
    done
    kill -INT "$job" 2> /dev/null
    wait "$job"
    status=$?
    done_before=$(($(wc -l < int.jsonl) - 1))
    if [ "$status" -eq 0 ]; then
      FAIL "the sweep ended before the interrupt"
    elif [ -s int.csv ]; then
      FAIL "the interrupted sweep printed output"
    else
      echo "ok: interrupted (exit status $status) after $done_before of $points points"
    fi
    "$DTRCHECK" sweep "$RESNET" "${GRID[@]}" --checkpoint int.jsonl > resumed.csv || FAIL "the resumed sweep failed"
    identical "sweep resumed after SIGINT" ref.csv resumed.csv
    [ "$(wc -l < int.jsonl)" -eq $((points + 1)) ] || FAIL "int.jsonl has $(wc -l < int.jsonl) lines, not $((points + 1))"
    # A torn last line: dropped, that point redone, every point once in the end.
    torn tornfile.jsonl whole.jsonl 400
    "$DTRCHECK" sweep "$RESNET" "${GRID[@]}" --checkpoint tornfile.jsonl > torn.csv || FAIL "the sweep from a torn file failed"
    identical "sweep resumed from a torn checkpoint" ref.csv torn.csv
    [ "$(wc -l < tornfile.jsonl)" -eq $((points + 1)) ] ||
      FAIL "tornfile.jsonl has $(wc -l < tornfile.jsonl) lines, not $((points + 1))"
    # A complete checkpoint: nothing replayed, the same output.
    "$DTRCHECK" sweep "$RESNET" "${GRID[@]}" --checkpoint tornfile.jsonl > again.csv || FAIL "the rerun failed"
    identical "sweep rerun on a complete checkpoint" ref.csv again.csv
    # Another grid, heuristic set, runtime, or trace content under the same name.
    cp whole.jsonl other.jsonl
    refused "another heuristic set" 'other.jsonl: checkpoint of another grid: heuristics is ["DTR"] here, ["DTR","LRU"] in the file' \
      sweep "$RESNET" --ratios 0.05:1.0:0.002 --heuristic DTR --csv --checkpoint other.jsonl
    refused "another grid" 'other.jsonl: checkpoint of another grid: ratios is "0.05:1.0:0.001" here, "0.05:1.0:0.002" in the file' \
      sweep "$RESNET" --ratios 0.05:1.0:0.001 --heuristic DTR,LRU --csv --checkpoint other.jsonl
    refused "another runtime" 'other.jsonl: checkpoint of another grid: runtime is "RuntimeV2" here' \
      sweep "$RESNET" "${GRID[@]}" --runtime RuntimeV2 --checkpoint other.jsonl
    mkdir -p renamed
    cp "$UNET" "renamed/$(basename "$RESNET")"
    refused "another trace content" 'other.jsonl: checkpoint of another grid: trace_sha256 is "' \
      sweep "renamed/$(basename "$RESNET")" "${GRID[@]}" --checkpoint other.jsonl
    refused "a scan's file" 'other.jsonl: checkpoint of another grid: command is "scan" here, "sweep" in the file' \
      scan "$RESNET" --ratios 0.05:1.0:0.002 --checkpoint other.jsonl
    cmp -s whole.jsonl other.jsonl || FAIL "a refused checkpoint was changed"
    ;;
  scan)
    GRID=(--ratios 0.05:1.0:0.002 --json)
    "$DTRCHECK" scan "$UNET" "${GRID[@]}" > ref.json || exit 1
    "$DTRCHECK" scan "$UNET" "${GRID[@]}" --refine > ref_refine.json || exit 1
    "$DTRCHECK" scan "$UNET" "${GRID[@]}" --checkpoint whole.jsonl > whole.json || FAIL "scan with a checkpoint failed"
    identical "scan --checkpoint (fresh)" ref.json whole.json
    torn tornfile.jsonl whole.jsonl 200
    "$DTRCHECK" scan "$UNET" "${GRID[@]}" --checkpoint tornfile.jsonl > torn.json || FAIL "the scan from a torn file failed"
    identical "scan resumed from a torn checkpoint" ref.json torn.json
    [ "$(wc -l < tornfile.jsonl)" -eq "$(wc -l < whole.jsonl)" ] || FAIL "tornfile.jsonl has another number of lines"
    # The grid's checkpoint serves a refined scan of the same grid (refinement is redone).
    "$DTRCHECK" scan "$UNET" "${GRID[@]}" --refine --checkpoint tornfile.jsonl > refine.json || FAIL "scan --refine failed"
    identical "scan --refine from the grid's checkpoint" ref_refine.json refine.json
    refused "an exact scan on a grid's file" 'tornfile.jsonl: checkpoint of another walk: exact is true here, false in the file' \
      scan "$UNET" "${GRID[@]}" --exact --checkpoint tornfile.jsonl
    # An exact scan journals its atlas walk.
    EXACT=(--ratios 0.100:0.104:0.002 --exact)
    "$DTRCHECK" scan "$RESNET" "${EXACT[@]}" > ref_exact.txt || exit 1
    "$DTRCHECK" scan "$RESNET" "${EXACT[@]}" --checkpoint exact.jsonl > exact.txt || FAIL "scan --exact with a checkpoint failed"
    identical "scan --exact --checkpoint (fresh)" ref_exact.txt exact.txt
    torn torn_exact.jsonl exact.jsonl $(($(wc -l < exact.jsonl) / 2))
    "$DTRCHECK" scan "$RESNET" "${EXACT[@]}" --checkpoint torn_exact.jsonl > exact_resumed.txt ||
      FAIL "scan --exact from a torn file failed"
    identical "scan --exact resumed from a torn checkpoint" ref_exact.txt exact_resumed.txt
    ;;
  *)
    echo "unknown case '$CASE'"
    exit 2
    ;;
esac

if [ "$fail" -ne 0 ]; then exit 1; fi
echo "ok: $CASE"
