#!/bin/bash
# Regenerates what the docs show from the program: every example block in
# README.md and docs/ (docs/examples/examples.py), slow ones included, and the
# README's picture of the demo report (docs/images/demo-report.png, from
# headless Chromium when /usr/bin/chromium is there).
#
# usage: docs/examples/regenerate.sh [--fast] [FILE.md...]
#   --fast   skip the blocks marked slow (they take minutes together)
# Builds dtrcheck in build/ first. Traces are read from ../shared (or
# $DTRCHECK_SHARED_DIR). Review the diff before committing: a changed number
# is a changed behaviour.
set -euo pipefail
cd "$(dirname "$0")/../.."
SHARED=${DTRCHECK_SHARED_DIR:-../shared}

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build dtrcheck
python3 docs/examples/examples.py --update --dtrcheck build/dtrcheck --shared "$SHARED" "$@"

# The picture: the top of the demo report (summary and budget curve).
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "regenerate: $CHROMIUM not found, docs/images/demo-report.png left as it is" >&2
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
./build/dtrcheck demo --out "$TMP/report" >/dev/null
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$TMP/profile" --hide-scrollbars --window-size=1200,1150 \
  --screenshot="$TMP/shot.png" "file://$TMP/report/report.html" >/dev/null 2>&1
cp "$TMP/shot.png" docs/images/demo-report.png
echo "updated docs/images/demo-report.png"
