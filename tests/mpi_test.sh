#!/bin/bash
# dtrcheck under mpirun (checker/farm/mpi_farm.h, docs/mpi.md): every output must be
# byte-identical to the single-process output, and a rank that dies or hangs
# must end the job with a line naming it, after which a rerun with the same
# checkpoint and another number of ranks finishes with the identical output.
#
# usage: mpi_test.sh DTRCHECK_BINARY WORK_DIR TRACES_DIR CASE
#   CASE atlas_unet     atlas of U-Net over 0.40:0.45 (--csv), 3 ranks
#        atlas_resnet   atlas of ResNet-32 over 0.085:0.125 (--csv), 3 ranks
#        commands       sweep, scan (grid, --refine, --exact), bounds and report
#                       (with an atlas cap) on ResNet-32, 2 and 3 ranks
#        fault          a rank killed mid-walk, a rank stopped mid-walk, then
#                       resumes from the checkpoint with other numbers of ranks
#        fault_grid     a rank killed mid-sweep and mid-scan, then each resumed
#                       from its checkpoint with another number of ranks
# Exits 77 (skipped) when mpirun is missing or dtrcheck has no MPI backend.
set -u
DTRCHECK=$1
WORK=$2/$4
TRACES=$3
CASE=$4
if ! command -v mpirun > /dev/null; then
  echo "SKIP: mpirun not found (Debian: openmpi-bin)"
  exit 77
fi
if "$DTRCHECK" --version | grep -q "^MPI backend: none"; then
  echo "SKIP: $DTRCHECK was built without MPI (-DDTRCHECK_MPI=OFF or no libopenmpi-dev)"
  exit 77
fi
MPIRUN=(mpirun --oversubscribe)
# CI runs as root, which Open MPI refuses unless told.
[ "$(id -u)" -eq 0 ] && MPIRUN+=(--allow-run-as-root)
# Ranks on one machine: no network interfaces to probe.
export OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
UNET=$(ls "$TRACES"/unet-*.log)
RESNET=$(ls "$TRACES"/resnet32-*.log)
fail=0
FAIL() { echo "FAIL: $*"; fail=1; }

# same NAME NP ARGS...: the output and exit status of `dtrcheck ARGS` alone and
# under `mpirun -np NP` must be equal, byte for byte.
same() {
  local name=$1 np=$2
  shift 2
  "$DTRCHECK" "$@" > "$name.one" 2> "$name.one.err"
  local one=$?
  "${MPIRUN[@]}" -np "$np" "$DTRCHECK" "$@" > "$name.np$np" 2> "$name.np$np.err"
  local many=$?
  if [ "$one" -ne "$many" ]; then
    FAIL "$name: exit status $one alone, $many with $np ranks"
    cat "$name.np$np.err"
  elif ! cmp -s "$name.one" "$name.np$np"; then
    FAIL "$name: the output with $np ranks differs from the single-process output"
    diff "$name.one" "$name.np$np" | head -5
  elif [ ! -s "$name.one" ]; then
    FAIL "$name: no output"
  else
    echo "ok: $name: $(wc -l < "$name.one") lines, identical with $np ranks"
  fi
}

# The pid of rank R of the dtrcheck job (of subcommand CMD, default atlas)
# started from this directory.
rank_pid() {
  local p
  for p in $(pgrep -f "$DTRCHECK ${2:-atlas}"); do
    [ "$(readlink "/proc/$p/cwd")" = "$PWD" ] || continue
    tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && echo "$p"
  done
}

# Waits until FILE has at least N lines (or the job ended); 0 if it has.
wait_lines() {
  local file=$1 n=$2 job=$3
  while kill -0 "$job" 2> /dev/null; do
    [ -f "$file" ] && [ "$(wc -l < "$file")" -ge "$n" ] && return 0
    sleep 0.2
  done
  return 1
}

case "$CASE" in
  atlas_unet)
    same unet 3 atlas "$UNET" --ratios 0.40:0.45 --csv
    ;;
  atlas_resnet)
    same resnet 3 atlas "$RESNET" --ratios 0.085:0.125 --csv
    ;;
  commands)
    same sweep 3 sweep "$RESNET" --ratios 0.095:0.110:0.001 --heuristic DTR,LRU --json
    same scan 2 scan "$RESNET" --ratios 0.095:0.110:0.001 --json
    same refine 3 scan "$RESNET" --ratios 0.095:0.110:0.001 --refine --json
    same exact 3 scan "$RESNET" --ratios 0.100:0.104:0.002 --exact
    same bounds 3 bounds "$RESNET" --ratios 0.05:0.3:0.01 --heuristic DTR,LRU --search-seconds 0 \
      --plan-seconds 0 --windows 0 --json
    # A report whose atlas stops at its cap: the same files, the same page.
    mkdir -p one many
    (cd one && "$DTRCHECK" report "$RESNET" --ratios 0.100:0.108:0.002 --atlas-max-runs 300 --out rep > out.txt) ||
      FAIL "report alone failed"
    (cd many && "${MPIRUN[@]}" -np 3 "$DTRCHECK" report "$RESNET" --ratios 0.100:0.108:0.002 --atlas-max-runs 300 \
      --out rep > out.txt) || FAIL "report with 3 ranks failed"
    if ! grep -q "The atlas reached its cap of 300 replays or [0-9,]* heuristic evaluations (--atlas-max-runs, --atlas-max-evals) after 300 replays" one/out.txt; then
      FAIL "report: the atlas cap was not reached"
    elif diff -r one many > /dev/null; then
      echo "ok: report: stdout and every file identical with 3 ranks, atlas capped at 300 replays"
    else
      FAIL "report: the outputs with 3 ranks differ"
      diff -r one many | head -5
    fi
    ;;
  fault)
    "$DTRCHECK" atlas "$RESNET" --ratios 0.100:0.108 --csv > ref.csv || exit 1
    # A worker rank killed mid-walk: the job ends, mpirun names the rank.
    "${MPIRUN[@]}" -np 3 "$DTRCHECK" atlas "$RESNET" --ratios 0.100:0.108 --csv --checkpoint walk.jsonl \
      > killed.out 2> killed.err &
    job=$!
    # Parts walked on ranks 1 and 2 reach the file whole when they arrive, so
    # the count jumps: kill as soon as some of the walk is checkpointed.
    wait_lines walk.jsonl 5 "$job" || FAIL "the walk ended before the kill"
    kill -9 "$(rank_pid 2)"
    wait "$job"
    status=$?
    lines=$(wc -l < walk.jsonl)
    if [ "$status" -eq 0 ]; then
      FAIL "killing rank 2 did not fail the job"
    elif ! grep -q "process rank 2 .*exited on signal 9" killed.err; then
      FAIL "no line names rank 2:"
      cat killed.err
    elif [ -s killed.out ]; then
      FAIL "the killed job printed output"
    else
      echo "ok: rank 2 killed: exit status $status, $lines checkpoint lines; the job said:"
      grep -E "rank 2|dtrcheck" killed.err | sed 's/^/    /'
    fi
    # A rank that stops answering: rank 0 names it after DTRCHECK_MPI_TIMEOUT
    # seconds, while it runs a task or, if it had none, when the rest is done.
    DTRCHECK_MPI_TIMEOUT=5 "${MPIRUN[@]}" -x DTRCHECK_MPI_TIMEOUT -np 4 "$DTRCHECK" atlas "$RESNET" \
      --ratios 0.100:0.108 --csv --checkpoint walk.jsonl > stopped.out 2> stopped.err &
    job=$!
    wait_lines walk.jsonl $((lines + 1)) "$job" || FAIL "the walk ended before the stop"
    stopped=$(rank_pid 1)
    kill -STOP "$stopped"
    wait "$job"
    status=$?
    kill -9 "$stopped" 2> /dev/null
    if [ "$status" -ne 4 ]; then
      FAIL "stopping rank 1: exit status $status, not 4"
      cat stopped.err
    elif ! grep -q "^dtrcheck: MPI rank 1 \(has \)\?sent nothing for 5 s" stopped.err; then
      FAIL "rank 0 did not name rank 1:"
      cat stopped.err
    else
      echo "ok: rank 1 stopped: exit status 4; rank 0 said:"
      grep "^dtrcheck:" stopped.err | sed 's/^/    /'
    fi
    # Resumed with 2 ranks: the same CSV as the uninterrupted single process.
    before=$(wc -l < walk.jsonl)
    "${MPIRUN[@]}" -np 2 "$DTRCHECK" atlas "$RESNET" --ratios 0.100:0.108 --csv --checkpoint walk.jsonl \
      > resumed.csv 2> resumed.err || FAIL "the resumed walk failed: $(cat resumed.err)"
    if cmp -s ref.csv resumed.csv; then
      echo "ok: resumed with 2 ranks from $before checkpoint lines: the CSV is identical ($(wc -l < ref.csv) lines)"
    else
      FAIL "the resumed CSV differs from the uninterrupted one"
      diff ref.csv resumed.csv | head -5
    fi
    ;;
  fault_grid)
    # kill_and_resume NAME NP_KILLED NP_RESUMED ARGS...: `dtrcheck ARGS
    # --checkpoint NAME.jsonl` under NP_KILLED ranks loses rank 1 to SIGKILL
    # once some points are in the file; the rerun under NP_RESUMED ranks (0:
    # no mpirun) prints what the uninterrupted single process prints.
    kill_and_resume() {
      local name=$1 np_killed=$2 np_resumed=$3
      shift 3
      "$DTRCHECK" "$@" > "$name.ref" || { FAIL "$name: the single-process run failed"; return; }
      "${MPIRUN[@]}" -np "$np_killed" "$DTRCHECK" "$@" --checkpoint "$name.jsonl" > "$name.killed" 2> "$name.err" &
      local job=$!
      wait_lines "$name.jsonl" 100 "$job" || FAIL "$name: the run ended before the kill"
      kill -9 "$(rank_pid 1 "$1")"
      wait "$job"
      local status=$? lines
      lines=$(($(wc -l < "$name.jsonl") - 1))
      if [ "$status" -eq 0 ]; then
        FAIL "$name: killing rank 1 did not fail the job"
      elif ! grep -q "process rank 1 .*exited on signal 9" "$name.err"; then
        FAIL "$name: no line names rank 1:"
        cat "$name.err"
      elif [ -s "$name.killed" ]; then
        FAIL "$name: the killed job printed output"
      else
        echo "ok: $name: rank 1 of $np_killed killed: exit status $status, $lines points checkpointed"
      fi
      local resume=("$DTRCHECK")
      [ "$np_resumed" -gt 0 ] && resume=("${MPIRUN[@]}" -np "$np_resumed" "$DTRCHECK")
      "${resume[@]}" "$@" --checkpoint "$name.jsonl" > "$name.resumed" 2> "$name.resumed.err" ||
        FAIL "$name: the resumed run failed: $(cat "$name.resumed.err")"
      if cmp -s "$name.ref" "$name.resumed"; then
        echo "ok: $name: resumed $([ "$np_resumed" -gt 0 ] && echo "with $np_resumed ranks" || echo "without mpirun")" \
          "from $lines points: identical ($(wc -l < "$name.ref") lines)"
      else
        FAIL "$name: the resumed output differs from the uninterrupted one"
        diff "$name.ref" "$name.resumed" | head -5
      fi
    }
    kill_and_resume sweep 3 2 sweep "$RESNET" --ratios 0.05:1.0:0.001 --heuristic DTR,LRU --csv
    kill_and_resume scan 2 4 scan "$RESNET" --ratios 0.05:1.0:0.001 --json
    kill_and_resume scan_alone 3 0 scan "$RESNET" --ratios 0.05:1.0:0.001 --refine --json
    ;;
  *)
    echo "unknown case '$CASE'"
    exit 2
    ;;
esac

if [ "$fail" -ne 0 ]; then exit 1; fi
echo "ok: $CASE"
