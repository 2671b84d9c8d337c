#!/usr/bin/env bash
# The README's gallery of the studio (docs/images/studio*.png): the walk test (tests/views/tst_walk.cpp:
# open from the welcome page, Optimize, step, override, retrain, Run, save, reopen) renders the window
# after the Run, each view (Agents, Decisions, Rubric, Graph, Run, Training, the Code tab; the side
# docks closed) and the welcome page at the end; offscreen, no GPU needed (the Run dock shows
# estimates). The window is 1280x800, or its minimum width where that is wider (about 1480 here).
# The PNGs are then made smaller: pngquant (256 colours, lossy but sharp for UI) when installed,
# then optipng (lossless) when installed.
#   bash scripts/docs/studio_screenshots.sh [BUILD_DIR] [OUT_DIR]   # defaults: build/dev docs/images
set -euo pipefail
BUILD=${1:-build/dev}
OUT=${2:-docs/images}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log=$(mktemp)
QT_QPA_PLATFORM=offscreen STITCHCUDA_WALK_SCREENSHOTS="$OUT" "$BUILD/bin/tst_walk" > "$log" 2>&1 ||
    { cat "$log"; echo "the walk failed: no screenshots"; exit 1; }
rm -f "$log"
shots=("$OUT"/studio.png "$OUT"/studio-*.png)
if command -v pngquant > /dev/null; then
    pngquant --force --skip-if-larger --strip --quality 80-100 --ext .png "${shots[@]}" || true
fi
if command -v optipng > /dev/null; then
    optipng -quiet -o2 -strip all "${shots[@]}"
fi
du -ch "${shots[@]}"
