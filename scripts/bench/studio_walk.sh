#!/usr/bin/env bash
# The studio's responsiveness benchmark (issue 32): walks the main flow (tests/views/tst_walk.cpp:
# open from the welcome page, Optimize, step, override, retrain, Run, save, reopen) offscreen and
# reports the startup time and the GUI thread's longest stall per phase, measured by an event-loop
# watchdog (views/StallMonitor), with the GUI thread's own CPU time in that stall in brackets (the
# rest it waited: on a machine shared with builds, mostly for a core).
#   bash scripts/bench/studio_walk.sh [BUILD_DIR] [RUNS]     # figures: docs/PERFORMANCE.md
#   STITCHCUDA_STALL_LOG=1 ... prints every stall past 50 ms and the event it was spent in
set -euo pipefail
BUILD=${1:-build/dev}
RUNS=${2:-3}
for i in $(seq "$RUNS"); do
    out=$(mktemp)
    QT_QPA_PLATFORM=offscreen STITCHCUDA_WALK_REPORT="$out" "$BUILD/bin/tst_walk" > /dev/null 2>&1 ||
        { echo "run $i: the walk failed (run $BUILD/bin/tst_walk for the reason)"; exit 1; }
    echo "run $i: $(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
d = r.get("longest_stall_by_phase", {})
def phase(k, v):
    cpu = d.get(k, {}).get("cpu_ms")
    return "%s %.0f" % (k, v) + (" (%.0f)" % cpu if cpu is not None else "")
print("startup %.0f ms, longest stall %.0f ms; " % (r["startup_ms"], r["longest_stall_ms"])
      + ", ".join(phase(k, v) for k, v in r["stall_ms_by_phase"].items()))' "$out")"
    rm -f "$out"
done
