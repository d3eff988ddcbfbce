#!/bin/bash
# Opens the demo's report.html in headless Chromium (Debian package
# `chromium`), checks that the rendered page has its plots and no error, and
# saves a screenshot. Skips (exit 77, CTest SKIP_RETURN_CODE) without Chromium.
#
# usage: browser_check.sh DTRCHECK_BINARY OUTPUT_DIR
set -u
DTRCHECK=$1
OUT=$2
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "SKIP: $CHROMIUM not found (apt-get install chromium to run the browser check)"
  exit 77
fi
rm -rf "$OUT"
mkdir -p "$OUT"
"$DTRCHECK" report --out "$OUT/report" -j 2 > "$OUT/report.log" || { echo "FAIL: dtrcheck report failed"; cat "$OUT/report.log"; exit 1; }
PROFILE=$(mktemp -d)
trap 'rm -rf "$PROFILE"' EXIT
# No network: the page must render from the file alone.
FLAGS=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$PROFILE" --window-size=1400,2400)
URL="file://$(cd "$OUT/report" && pwd)/report.html"
timeout 120 "$CHROMIUM" "${FLAGS[@]}" --dump-dom "$URL" > "$OUT/dom.html" 2> "$OUT/chromium-dom.log"
timeout 120 "$CHROMIUM" "${FLAGS[@]}" --screenshot="$OUT/report.png" "$URL" > /dev/null 2> "$OUT/chromium-shot.log"

fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}
count() { grep -o "$1" "$OUT/dom.html" | wc -l; }
check "the DOM was dumped" test -s "$OUT/dom.html"
check "three plots or more (curve, timeline, frontiers)" test "$(count '<svg')" -ge 3
check "the budget curve has its line and OOM bands" test "$(count 'class="curve"')" -ge 1 -a "$(count 'class="band-exact"')" -ge 1
check "the inversion is marked" grep -q 'inversion</text>' "$OUT/dom.html"
check "the timeline has its memory line and budget" test "$(count 'class="mem"')" -eq 1 -a "$(count 'class="budget"')" -ge 1
check "the frontier bars are drawn" test "$(count 'class="bar-locked"')" -ge 1
check "every section is there" test "$(count '<section id=')" -eq 7
check "no script in the page" test "$(count '<script')" -eq 0
check "no browser error page" bash -c "! grep -qiE 'ERR_|is not available|This page|can.t be reached' '$OUT/dom.html'"
check "the screenshot was saved" test -s "$OUT/report.png"
check "it is a PNG" bash -c "head -c 8 '$OUT/report.png' | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'"
[ $fail -eq 0 ] && echo "browser check passed; screenshot: $OUT/report.png"
exit $fail
