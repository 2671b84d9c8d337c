#!/usr/bin/env bash
# Sets up, builds and opens the studio on the bundled example, where the agents optimize it
# (--optimize; the Agents dock shows their decisions). Without a display the agents
# optimize the same file on the command line (`stitchcuda optimize`) and print their report.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
bash scripts/setup.sh
bin=build/dev/bin
example=examples/matmul_naive.cu
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$bin/stitchcuda-studio" ]; then
    exec "$bin/stitchcuda-studio" "$example" --optimize "$@"
fi
echo "No display: the agents optimize $example on the command line"
echo
"$bin/stitchcuda" info
echo
exec "$bin/stitchcuda" optimize "$example" --arch sm_90 --budget 16 --out build/optimized --trace build/optimized/trace.json
