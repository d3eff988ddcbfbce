#!/usr/bin/env bash
# `explain` at evenly spread budgets over a ratio band, with a certificate
# store (written by an earlier `dtrcheck bounds TRACE --store DIR`): how many
# budgets get a decided verdict (policy-induced with a checked script, or
# inherent with its argument), and how long each takes. A budget where DTR
# does not run out of memory is asked with `prove` instead.
#
#   bench/band_verdicts.sh TRACE LO HI [COUNT] [STORE_DIR] [DTRCHECK]
#
# COUNT defaults to 20 (LO and HI included), STORE_DIR to $DTRCHECK_STORE,
# DTRCHECK to build/dtrcheck. Extra flags for explain go in $EXPLAIN_FLAGS;
# $EXPLAIN_TIMEOUT (seconds) stops a command that takes longer, and the budget
# counts as not decided ("timed out").
set -euo pipefail
cd "$(dirname "$0")/.."
TRACE=$1 LO=$2 HI=$3
COUNT=${4:-20}
STORE=${5:-${DTRCHECK_STORE:-}}
DTRCHECK=${6:-build/dtrcheck}
[ -n "$STORE" ] || { echo "band_verdicts.sh: no store (give STORE_DIR or set DTRCHECK_STORE)" >&2; exit 1; }
decided=0
json_file=$(mktemp)
trap 'rm -f "$json_file"' EXIT
echo "| ratio | command | verdict | certificate | seconds |"
echo "|---|---|---|---|---|"
for k in $(seq 0 $((COUNT - 1))); do
  ratio=$(/usr/bin/python3 -c "print(f'{$LO + ($HI - $LO) * $k / ($COUNT - 1):.6f}')")
  timed_out=0
  for cmd in explain prove; do
    start=$(date +%s.%N)
    status=0
    # shellcheck disable=SC2086
    out=$(${EXPLAIN_TIMEOUT:+timeout "$EXPLAIN_TIMEOUT"} nice "$DTRCHECK" "$cmd" "$TRACE" --ratio "$ratio" \
      --store "$STORE" --json ${EXPLAIN_FLAGS:-} 2>/dev/null) || status=$?
    [ "$status" -eq 124 ] && timed_out=1
    [ "$status" -eq 0 ] || [ "$status" -eq 124 ] && break
  done
  end=$(date +%s.%N)
  if [ "$timed_out" -eq 1 ]; then
    echo "| $ratio | $cmd | timed out after ${EXPLAIN_TIMEOUT} s | - | - |"
    continue
  fi
  # The JSON goes through a file: a verdict's script can be longer than the
  # longest command line.
  printf '%s' "$out" > "$json_file"
  line=$(/usr/bin/python3 - "$json_file" "$ratio" "$cmd" "$start" "$end" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c = j["certificate"]
cert = "-" if c is None else c["type"] + (" (" + c["source"] + ")" if c["type"] == "script" else "") + (", from the store" if c.get("from_store") else "")
print(f"| {sys.argv[2]} | {sys.argv[3]} | {j['verdict']} | {cert} | {float(sys.argv[5]) - float(sys.argv[4]):.1f} |")
PY
) || { echo "band_verdicts.sh: $cmd at ratio $ratio printed no verdict" >&2; exit 1; }
  echo "$line"
  case "$line" in *"| undetermined |"*) ;; *) decided=$((decided + 1)) ;; esac
done
echo "decided: $decided of $COUNT"
