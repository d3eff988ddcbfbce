#!/bin/bash
# The fault matrix of issue 51: every path that writes a file on request,
#   report --out DIR, atlas/sweep --checkpoint FILE, bounds/prove --store DIR,
#   prove --save-script FILE, replay --emit-script FILE,
# under each fault:
#   - killed (SIGKILL) at several moments of the run;
#   - disk full: a file size limit (prlimit --fsize), under which the write
#     fails or the process is stopped by SIGXFSZ;
#   - no permission: a path the process cannot write even as root (a regular
#     file where a directory should be, a directory under /proc);
#   - a second writer of the same file at the same time.
# After any of them the output is the complete old or the complete new content
# (or absent when there was none), a checkpoint resumes to the output of an
# uninterrupted run, a store still reads, and the exit status is non-zero
# whenever the output is not complete. Hidden ".NAME.tmp-*" leftovers of killed
# runs are allowed (the next writer removes them: docs/output_files.md).
#
# usage: fault_matrix_test.sh DTRCHECK_BINARY WORK_DIR
set -u
D=$1
WORK=$2
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
fail=0
FAIL() { echo "FAIL: $*"; fail=1; }
command -v prlimit > /dev/null || { echo "prlimit is missing"; exit 1; }

"$D" gen demo -o demo.log || exit 1
"$D" gen resnet --blocks 60 --stages 3 -o mid.log || exit 1
echo "not a directory" > afile
DELAYS="0.002 0.01 0.03 0.06 0.1 0.2"

# Runs "$@" in the background, SIGKILLs it after $DELAY seconds; sets $status.
killed_run() {
  "$@" > /dev/null 2>&1 &
  local pid=$!
  sleep "$DELAY"
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  status=$?
}
# Runs "$@" under a file size limit of $1 bytes, its standard output through a
# pipe (which no file size limit cuts) into limited.out; sets $status. The
# shell's own "File size limit exceeded" notice is kept out of the log.
limited_run() {
  local bytes=$1
  shift
  status=$( (prlimit --fsize="$bytes" -- "$@" 2> limited.err | cat > limited.out; echo "${PIPESTATUS[0]}") 2> /dev/null)
}
# same_file A B: A and B have the same bytes (both absent counts as same).
same_file() { [ ! -e "$1" ] && [ ! -e "$2" ] && return 0; cmp -s "$1" "$2"; }
same_dir() { diff -r "$1" "$2" > /dev/null 2>&1; }

# --- report --out DIR -------------------------------------------------------
"$D" report demo.log --ratios 0.5,0.6 --out ref_old > /dev/null || exit 1
"$D" report mid.log --ratios 0.3:1.0:0.05 -j 1 --out ref_new > /dev/null || exit 1
for DELAY in $DELAYS; do
  rm -rf out && cp -r ref_old out
  killed_run "$D" report mid.log --ratios 0.3:1.0:0.05 -j 1 --out out
  if same_dir out ref_new; then [ "$status" -eq 0 ] || FAIL "report: new report but status $status"
  elif same_dir out ref_old; then [ "$status" -ne 0 ] || FAIL "report: old report left, status 0"
  else FAIL "report killed after $DELAY s: out is neither the old nor the new report"; fi
done
rm -rf out && cp -r ref_old out
limited_run 20000 "$D" report mid.log --ratios 0.3:1.0:0.05 -j 1 --out out
[ "$status" -ne 0 ] || FAIL "report under a 20 kB file size limit: status 0"
same_dir out ref_old || FAIL "report under a file size limit: out is not the old report"
"$D" report demo.log --ratios 0.5 --out afile/out > /dev/null 2> err
status=$?
[ "$status" -eq 3 ] || FAIL "report --out under a regular file: status $status"
rm -rf out && cp -r ref_old out
"$D" report mid.log --ratios 0.3:1.0:0.05 -j 1 --out out > /dev/null 2>&1 & first=$!
"$D" report mid.log --ratios 0.3:1.0:0.05 -j 1 --out out > /dev/null 2>&1 & second=$!
wait $first; s1=$?; wait $second; s2=$?
same_dir out ref_new || FAIL "two reports into one --out: out is not the new report (status $s1, $s2)"
[ "$s1" -eq 0 ] || [ "$s2" -eq 0 ] || FAIL "two reports into one --out: both failed ($s1, $s2)"

# --- atlas / sweep --checkpoint FILE ----------------------------------------
"$D" atlas mid.log --ratios 0.2:1.0 -j 1 --csv > ref_atlas.csv || exit 1
"$D" sweep mid.log --ratios 0.05:1.0:0.002 -j 1 --csv > ref_sweep.csv || exit 1
# resumes CMD... : the command run to its end with ck.jsonl equals the reference.
resumes() {
  local ref=$1
  shift
  "$@" --checkpoint ck.jsonl > resumed.csv 2> resumed.err || { FAIL "resume of '$*' failed: $(cat resumed.err)"; return; }
  cmp -s resumed.csv "$ref" || FAIL "resume of '$*' differs from the uninterrupted run"
}
for cmd in "atlas mid.log --ratios 0.2:1.0 -j 1 --csv" "sweep mid.log --ratios 0.05:1.0:0.002 -j 1 --csv"; do
  ref=ref_${cmd%% *}.csv
  for DELAY in $DELAYS; do
    rm -f ck.jsonl
    # shellcheck disable=SC2086
    killed_run "$D" $cmd --checkpoint ck.jsonl
    # shellcheck disable=SC2086
    resumes "$ref" "$D" $cmd
  done
  rm -f ck.jsonl
  # shellcheck disable=SC2086
  limited_run 3000 "$D" $cmd --checkpoint ck.jsonl
  [ "$status" -ne 0 ] || FAIL "${cmd%% *} under a 3 kB file size limit: status 0"
  # shellcheck disable=SC2086
  resumes "$ref" "$D" $cmd
  # shellcheck disable=SC2086
  "$D" $cmd --checkpoint afile/ck.jsonl > /dev/null 2> err
  status=$?
  [ "$status" -eq 3 ] || FAIL "${cmd%% *} --checkpoint under a regular file: status $status"
  grep -q "afile/ck.jsonl: " err || FAIL "${cmd%% *} --checkpoint under a regular file: $(cat err)"
  # A second writer while the first is stopped with the file open: refused.
  rm -f ck.jsonl
  # shellcheck disable=SC2086
  "$D" $cmd --checkpoint ck.jsonl > first.csv 2> /dev/null & first=$!
  for _ in $(seq 200); do [ -s ck.jsonl ] && break; sleep 0.01; done
  kill -STOP $first
  # shellcheck disable=SC2086
  "$D" $cmd --checkpoint ck.jsonl > second.csv 2> err
  status=$?
  kill -CONT $first
  wait $first || FAIL "${cmd%% *}: the first writer of the checkpoint failed"
  cmp -s first.csv "$ref" || FAIL "${cmd%% *}: the first writer's output differs"
  [ "$status" -eq 3 ] || FAIL "${cmd%% *}: a second writer of the checkpoint: status $status"
  [ "$(cat err)" = "dtrcheck: ck.jsonl: in use by another dtrcheck run (pid $first)" ] ||
    FAIL "${cmd%% *}: a second writer of the checkpoint says: $(cat err)"
  [ -s second.csv ] && FAIL "${cmd%% *}: the refused writer printed output"
  # shellcheck disable=SC2086
  resumes "$ref" "$D" $cmd
done

# --- bounds / prove --store DIR ---------------------------------------------
BOUNDS="bounds mid.log --search-seconds 0 --plan-seconds 0 --windows 0"
store_file() { ls "$1"/*.json 2> /dev/null | head -1; }
rm -rf S_old && "$D" prove mid.log --ratio 0.9 --no-z3 --store S_old > /dev/null 2>&1 || exit 1
rm -rf S_new && cp -r S_old S_new
# shellcheck disable=SC2086
"$D" $BOUNDS --store S_new > bounds.out 2> /dev/null || exit 1
old=$(store_file S_old) new=$(store_file S_new)
cmp -s "$old" "$new" && { echo "bounds did not change the store: nothing to test"; exit 1; }
for DELAY in $DELAYS; do
  rm -rf S && cp -r S_old S
  # shellcheck disable=SC2086
  killed_run "$D" $BOUNDS --store S
  f=S/$(basename "$old")
  if cmp -s "$f" "$new"; then :
  elif cmp -s "$f" "$old"; then [ "$status" -ne 0 ] || FAIL "bounds --store: old store left, status 0"
  else FAIL "bounds killed after $DELAY s: the store is neither the old nor the new file"; fi
  "$D" prove mid.log --ratio 0.9 --no-z3 --store S > /dev/null 2> err || FAIL "the store after a kill: $(cat err)"
done
rm -rf S && cp -r S_old S
# shellcheck disable=SC2086
limited_run "$(($(stat -c %s "$old") + 10))" "$D" $BOUNDS --store S
[ "$status" -ne 0 ] || FAIL "bounds --store under a file size limit: status 0"
cmp -s "S/$(basename "$old")" "$old" || FAIL "bounds --store under a file size limit: the store changed"
cmp -s limited.out bounds.out || FAIL "bounds --store under a file size limit: the answer was not printed whole"
# A store no one can write: the answer, then one line, status 3.
# shellcheck disable=SC2086
"$D" $BOUNDS --store /proc/self > proc.out 2> err
status=$?
[ "$status" -eq 3 ] || FAIL "bounds --store /proc/self: status $status"
cmp -s proc.out bounds.out || FAIL "bounds --store /proc/self: the answer differs"
grep -q "^dtrcheck: /proc/self/.*\.json: cannot write (" err || FAIL "bounds --store /proc/self says: $(cat err)"
"$D" prove mid.log --ratio 0.9 --no-z3 --store afile/S > /dev/null 2> err
status=$?
[ "$status" -eq 3 ] || FAIL "prove --store under a regular file: status $status ($(cat err))"
# Writers at once: the store ends with the highest bound any of them proved.
rm -rf S
pids=()
for budget in 5242000 5242100 5242200 5242300 5242400 5242500 5242600 5242700; do
  "$D" prove mid.log --budget $budget --no-z3 --store S > /dev/null 2>&1 & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || FAIL "a concurrent prove --store failed"; done
grep -q '"bytes": 5242701' "$(store_file S)" || FAIL "concurrent proves: the store lost the highest bound"

# --- prove --save-script FILE, replay --emit-script FILE --------------------
"$D" prove mid.log --ratio 0.3 --no-z3 --save-script ref_save.script > /dev/null || exit 1
"$D" replay mid.log --ratio 0.3 --emit-script ref_emit.script > /dev/null || exit 1
for kind in save emit; do
  if [ $kind = save ]; then run=("$D" prove mid.log --ratio 0.3 --no-z3 --save-script); else
    run=("$D" replay mid.log --ratio 0.3 --emit-script); fi
  for DELAY in 0.001 0.005 0.01 0.02; do
    echo old > x.script
    killed_run "${run[@]}" x.script
    if cmp -s x.script "ref_$kind.script"; then :
    elif [ "$(cat x.script)" = old ]; then [ "$status" -ne 0 ] || FAIL "--$kind-script: old file left, status 0"
    else FAIL "--$kind-script killed after $DELAY s: neither the old nor the new file"; fi
  done
  echo old > x.script
  limited_run 100 "${run[@]}" x.script
  [ "$status" -ne 0 ] || FAIL "--$kind-script under a file size limit: status 0"
  [ "$(cat x.script)" = old ] || FAIL "--$kind-script under a file size limit: the file changed"
  "${run[@]}" afile/x.script > /dev/null 2> err
  status=$?
  [ "$status" -eq 3 ] || FAIL "--$kind-script under a regular file: status $status"
  echo old > x.script
  "${run[@]}" x.script > /dev/null 2>&1 & first=$!
  "${run[@]}" x.script > /dev/null 2>&1 & second=$!
  wait $first; s1=$?; wait $second; s2=$?
  cmp -s x.script "ref_$kind.script" || FAIL "two writers of --$kind-script: not the new file ($s1, $s2)"
done

# Leftovers: only hidden temporaries of killed runs, and only of dead processes
# once a later writer of the same name has run.
for entry in $(ls -A); do
  case "$entry" in
    .*.tmp-*) FAIL "a temporary outlived the next writer of its name: $entry" ;;
  esac
done
[ $fail -eq 0 ] && echo "fault matrix: all outputs whole"
exit $fail
