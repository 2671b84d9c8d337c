#!/usr/bin/env bash
# The studio's responsiveness benchmark (issue 32): walks the main flow (tests/views/tst_walk.cpp:
# open, Optimize, step, override, retrain, Run, save, reopen) offscreen and reports the startup time
# and the GUI thread's longest stall per phase, measured by an event-loop watchdog (views/StallMonitor).
#   bash scripts/bench/studio_walk.sh [BUILD_DIR] [RUNS]     # figures: docs/PERFORMANCE.md
set -euo pipefail
BUILD=${1:-build/dev}
RUNS=${2:-3}
for i in $(seq "$RUNS"); do
    out=$(mktemp)
    QT_QPA_PLATFORM=offscreen STITCHCUDA_WALK_REPORT="$out" "$BUILD/bin/tst_walk" > /dev/null 2>&1 ||
        { echo "run $i: the walk failed (run $BUILD/bin/tst_walk for the reason)"; exit 1; }
    echo "run $i: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); p=r["stall_ms_by_phase"]; print("startup %.0f ms, longest stall %.0f ms; " % (r["startup_ms"], r["longest_stall_ms"]) + ", ".join("%s %.0f" % (k, v) for k, v in p.items()))' "$out")"
    rm -f "$out"
done
