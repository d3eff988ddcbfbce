#!/bin/bash
# Renders reports in headless Chromium (Debian package `chromium`) and checks
# what a reader sees, on screen and on paper:
#  - the page has its figures, every section, one inline script (zoom and
#    readout; nothing loaded) and no error page;
#  - the answer (headline and the zoomed budget curve) ends within the
#    first 1,000 px at 1400 px wide;
#  - every table row is on the page and fully visible: laid out with a size,
#    not hidden, not clipped by a scrolling or overflow-hidden box, no cell's
#    content wider than its cell, nothing wider than its section (measured by
#    tests/browser_layout_check.js, injected into a copy of the page);
#  - a full-page screenshot (the window as tall as the page) contains every
#    row, and each row's strip of the screenshot has ink on it (with
#    /usr/bin/python3 and PIL; else only the size is checked);
#  - the page prints: the print style sheet exists, the same layout checks
#    pass with it applied at the width of an A4 landscape page, and
#    --print-to-pdf writes a PDF of several pages.
# Reports checked: the demo's (`dtrcheck report`, always), a captured model's
# first screen (tests/e2e/data/attributed.log), and ResNet-32's with default
# flags when TRACES_DIR holds it, whose report.json must show
# the published 0.102-0.106 inversion and the 128-byte holes near 0.1063, and
# the first screen of the LSTM's with default flags.
# Skips (exit 77, CTest SKIP_RETURN_CODE) without Chromium.
#
# usage: browser_check.sh DTRCHECK_BINARY OUTPUT_DIR [TRACES_DIR]
set -u
DTRCHECK=$1
OUT=$2
TRACES=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
PYTHON=${PYTHON:-/usr/bin/python3}
if [ ! -x "$CHROMIUM" ]; then
  echo "SKIP: $CHROMIUM not found (apt-get install chromium to run the browser check)"
  exit 77
fi
rm -rf "$OUT"
mkdir -p "$OUT"
PROFILE=$(mktemp -d)
trap 'rm -rf "$PROFILE"' EXIT
# No network: the page must render from the file alone.
FLAGS=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --hide-scrollbars --force-device-scale-factor=1
       --user-data-dir="$PROFILE")

fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}

# The JSON the layout script left in a dumped DOM.
layout_json() { sed -n 's/.*<pre id="layout-check">\(.*\)<\/pre>.*/\1/p' "$1" | sed 's/&quot;/"/g; s/&amp;/\&/g'; }
# A field of that JSON.
field() { "$PYTHON" -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print(len(v) if isinstance(v, list) else v)' "$1" "$2"; }
# Lists of problems, one per line.
problems() { "$PYTHON" -c 'import json,sys; d=json.loads(sys.argv[1]); [print("   ", p) for p in d["hidden"] + d["wide"]]' "$1"; }

# check_page NAME DIR: every check of the page DIR/report.html.
check_page() {
  local name=$1 dir=$2
  local url="file://$dir/report.html"
  echo "== $name: $dir/report.html"
  timeout 120 "$CHROMIUM" "${FLAGS[@]}" --window-size=1400,1000 --dump-dom "$url" > "$OUT/$name-dom.html" 2> "$OUT/$name-chromium.log"
  local dom="$OUT/$name-dom.html"
  count() { grep -o "$1" "$dom" | wc -l; }
  check "$name: the DOM was dumped" test -s "$dom"
  check "$name: three plots or more (curve, timeline, frontiers)" test "$(count '<svg')" -ge 3
  check "$name: the budget curve draws the atlas and its failing bands" test "$(count 'class="atlas-line')" -ge 1 -a "$(count 'class="band-exact"')" -ge 1
  check "$name: the curve has a baseline line" test "$(count 'class="baseline"')" -ge 1
  check "$name: the inversion is marked" grep -q 'inversion</text>' "$dom"
  check "$name: the timeline overlays a passing and an OOM run, with the budget" test "$(count 'class="mem run-pass"')" -ge 1 -a "$(count 'class="mem run-oom"')" -ge 1 -a "$(count 'class="budget-label"')" -ge 1
  check "$name: the timeline marks evictions and rematerializations" test "$(count 'class="tick-heur')" -ge 1 -a "$(count 'class="tick-remat')" -ge 1
  check "$name: the frontier bars are drawn" test "$(count 'class="bar-locked"')" -ge 1
  check "$name: every section is there" test "$(count '<section id=')" -eq 8
  check "$name: the answer's headline names the smallest passing budget and the proven floor" \
    bash -c "grep -q '<dt>passes from</dt>' '$dom' && grep -q '<dt>proven floor</dt>' '$dom'"
  check "$name: one inline script and nothing loaded" test "$(count '<script')" -eq 1 -a "$(count '<script src')" -eq 0
  check "$name: no browser error page" bash -c "! grep -qiE 'ERR_|is not available|This page|can.t be reached' '$dom'"

  # The layout, on screen (1400 px wide) and as printed (A4 landscape less
  # 12 mm margins: 273 mm, 1032 px, with the print rules applied).
  local probe="$dir/.layout-screen.html" probe_print="$dir/.layout-print.html"
  "$PYTHON" - "$dir/report.html" "$HERE/browser_layout_check.js" "$probe" "$probe_print" <<'PY'
import sys
page, script = open(sys.argv[1]).read(), open(sys.argv[2]).read()
at = page.rindex("</body>")
probe = page[:at] + "<script>" + script + "</script>" + page[at:]
open(sys.argv[3], "w").write(probe)
open(sys.argv[4], "w").write(probe.replace("@media print {", "@media all {"))
PY
  timeout 120 "$CHROMIUM" "${FLAGS[@]}" --window-size=1400,1000 --dump-dom "file://$probe" > "$OUT/$name-layout.html" 2>> "$OUT/$name-chromium.log"
  timeout 120 "$CHROMIUM" "${FLAGS[@]}" --window-size=1032,800 --dump-dom "file://$probe_print" > "$OUT/$name-layout-print.html" 2>> "$OUT/$name-chromium.log"
  rm -f "$probe" "$probe_print"
  local screen print
  screen=$(layout_json "$OUT/$name-layout.html")
  print=$(layout_json "$OUT/$name-layout-print.html")
  if [ -z "$screen" ] || [ -z "$print" ]; then
    echo "FAIL: $name: the layout script left no result"; fail=1; return
  fi
  local rows height
  rows=$(field "$screen" rows)
  height=$(field "$screen" height)
  echo "   $rows table rows; page 1400 x $height px"
  check "$name: the page has table rows" test "$rows" -ge 5
  check "$name: on screen, every row is fully visible and nothing is wider than its section" \
    test "$(field "$screen" hidden)" -eq 0 -a "$(field "$screen" wide)" -eq 0
  [ "$(field "$screen" hidden)$(field "$screen" wide)" = "00" ] || problems "$screen"
  check "$name: no horizontal scrolling at 1400 px" test "$(field "$screen" width)" -le 1400
  local lead_bottom
  lead_bottom=$(field "$screen" lead_plot_bottom 2> /dev/null || echo 99999)
  echo "   the answer's figure ends at $lead_bottom px"
  check "$name: the headline and its figure within the first 1,000 px at 1400 px wide" \
    "$PYTHON" -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 1000 else 1)' "$lead_bottom"
  check "$name: a print style sheet" test "$(field "$screen" print_rules)" = True
  check "$name: printed (A4 landscape), every row is fully visible and nothing is wider than its section" \
    test "$(field "$print" hidden)" -eq 0 -a "$(field "$print" wide)" -eq 0 -a "$(field "$print" rows)" -eq "$rows"
  [ "$(field "$print" hidden)$(field "$print" wide)" = "00" ] || problems "$print"
  check "$name: printed, no horizontal overflow" test "$(field "$print" width)" -le 1032

  # The full-page screenshot: the window as tall as the page.
  timeout 180 "$CHROMIUM" "${FLAGS[@]}" --window-size=1400,"$height" --screenshot="$OUT/$name.png" "$url" > /dev/null 2>> "$OUT/$name-chromium.log"
  check "$name: the screenshot was saved" test -s "$OUT/$name.png"
  check "$name: it is a PNG" bash -c "head -c 8 '$OUT/$name.png' | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'"
  local shot_height
  shot_height=$(od -An -tu1 -j 20 -N 4 "$OUT/$name.png" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
  check "$name: the screenshot is the full page ($shot_height px tall)" test "$shot_height" -ge "$height"
  if "$PYTHON" -c 'import PIL' 2> /dev/null; then
    check "$name: every row of every table has ink in the full-page screenshot" "$PYTHON" - "$OUT/$name.png" "$screen" <<'EOF'
import json, sys
from PIL import Image
img = Image.open(sys.argv[1]).convert("L")
boxes = json.loads(sys.argv[2])["row_boxes"]
blank = []
for i, (top, bottom, left, right) in enumerate(boxes):
    box = (max(0, int(left)), max(0, int(top)), min(img.width, int(right)), min(img.height, int(bottom)))
    if box[2] <= box[0] or box[3] <= box[1]:
        blank.append(i)
        continue
    lo, hi = img.crop(box).getextrema()
    if hi - lo < 64:  # no text: uniform background
        blank.append(i)
if blank:
    print("    rows outside the screenshot or blank in it:", blank[:20])
sys.exit(1 if blank else 0)
EOF
  else
    echo "note: no PIL for $PYTHON; row pixels not checked"
  fi

  # Printing.
  timeout 180 "$CHROMIUM" "${FLAGS[@]}" --no-pdf-header-footer --print-to-pdf="$OUT/$name.pdf" "$url" > /dev/null 2>> "$OUT/$name-chromium.log"
  check "$name: the page prints to a PDF" bash -c "head -c 5 '$OUT/$name.pdf' | grep -q '%PDF-'"
  local pages
  pages=$(( $(grep -a -o '/Type */Page' "$OUT/$name.pdf" | wc -l) - $(grep -a -o '/Type */Pages' "$OUT/$name.pdf" | wc -l) ))
  echo "   printed on $pages pages"
  check "$name: the PDF has several pages" test "$pages" -ge 2
}

# check_answer NAME DIR: the first screen of DIR/report.html at 1400 px wide
# holds the answer (headline and its zoomed budget curve), with a screenshot
# of it (NAME-top.png).
check_answer() {
  local name=$1 dir=$2
  local probe="$dir/.layout-answer.html"
  "$PYTHON" - "$dir/report.html" "$HERE/browser_layout_check.js" "$probe" <<'PY'
import sys
page, script = open(sys.argv[1]).read(), open(sys.argv[2]).read()
at = page.rindex("</body>")
open(sys.argv[3], "w").write(page[:at] + "<script>" + script + "</script>" + page[at:])
PY
  timeout 120 "$CHROMIUM" "${FLAGS[@]}" --window-size=1400,1000 --dump-dom "file://$probe" > "$OUT/$name-answer.html" 2>> "$OUT/$name-chromium.log"
  rm -f "$probe"
  local screen
  screen=$(layout_json "$OUT/$name-answer.html")
  check "$name: the headline is there" grep -q '<dt>passes from</dt>' "$OUT/$name-answer.html"
  local bottom
  bottom=$(field "$screen" lead_plot_bottom 2> /dev/null || echo 99999)
  echo "   the answer's figure ends at $bottom px"
  check "$name: the headline and its figure within the first 1,000 px at 1400 px wide" \
    "$PYTHON" -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 1000 else 1)' "$bottom"
  timeout 120 "$CHROMIUM" "${FLAGS[@]}" --window-size=1400,1000 --screenshot="$OUT/$name-top.png" "file://$dir/report.html" > /dev/null 2>> "$OUT/$name-chromium.log"
  check "$name: the first screen's screenshot was saved" test -s "$OUT/$name-top.png"
}

# A captured model's report (module and source attribution on its operators).
"$DTRCHECK" report "$HERE/e2e/data/attributed.log" --out "$OUT/captured" -j 2 > "$OUT/captured.log" || { echo "FAIL: dtrcheck report attributed.log failed"; cat "$OUT/captured.log"; exit 1; }
check_answer captured "$(cd "$OUT/captured" && pwd)"

"$DTRCHECK" report --out "$OUT/demo" -j 2 > "$OUT/demo.log" || { echo "FAIL: dtrcheck report failed"; cat "$OUT/demo.log"; exit 1; }
check_page demo "$(cd "$OUT/demo" && pwd)"

RESNET=$(ls "$TRACES"/resnet32-*.log 2> /dev/null | head -1)
if [ -n "$TRACES" ] && [ -n "$RESNET" ]; then
  "$DTRCHECK" report "$RESNET" --out "$OUT/resnet32" -j 2 > "$OUT/resnet32.log" || { echo "FAIL: dtrcheck report $RESNET failed"; cat "$OUT/resnet32.log"; exit 1; }
  check "resnet32: the default report shows the 0.102-0.106 inversion and the 128-byte holes near 0.1063" \
    "$PYTHON" - "$OUT/resnet32/report.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["heuristics"][0]
runs = {x["ratio_text"]: x["result"] for x in r["runs"] if x["ratio_text"]}
ok = all(runs.get(t) == "oom" for t in ("0.102", "0.103", "0.104", "0.105", "0.106"))
ok &= runs.get("0.101") == "pass" and runs.get("0.107") == "pass"
exact = r["curve"]["exact_inversions"] or []
base = json.load(open(sys.argv[1]))["trace"]["baseline"]["memory"]
wide = [v for v in exact if v["oom_from"] <= 0.1019 and v["oom_to"] >= 0.1062]
holes = [v for v in exact if v["oom_width"] == 128 and 0.1063 <= v["oom_from"] <= 0.1064]
print("    inversion rows 0.102-0.106:", ok, "; wide exact inversion:", len(wide), "; 128-byte holes:", len(holes))
sys.exit(0 if ok and len(wide) == 1 and len(holes) >= 4 else 1)
EOF
  check "resnet32: the report states the atlas's cap" \
    grep -q "exact atlas within 1,000 replays or 200,000,000 heuristic evaluations" "$OUT/resnet32.log"
  check "resnet32: a zoom figure shows the holes narrower than a pixel" grep -q 'id="fig-zoom-' "$OUT/resnet32/report.html"
  check_page resnet32 "$(cd "$OUT/resnet32" && pwd)"
else
  echo "note: no ResNet-32 trace in '${TRACES}'; only the demo's report was checked"
fi

# The LSTM's default report: its first screen answers too.
LSTM=$(ls "$TRACES"/lstm-*.log 2> /dev/null | head -1)
if [ -n "$TRACES" ] && [ -n "$LSTM" ]; then
  "$DTRCHECK" report "$LSTM" --out "$OUT/lstm" -j 2 > "$OUT/lstm.log" || { echo "FAIL: dtrcheck report $LSTM failed"; cat "$OUT/lstm.log"; exit 1; }
  check_answer lstm "$(cd "$OUT/lstm" && pwd)"
fi

[ $fail -eq 0 ] && echo "browser check passed; screenshots: $OUT/*.png"
exit $fail
