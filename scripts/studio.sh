#!/usr/bin/env bash
# Sets up, builds and opens the studio on the bundled example. Without a display it runs the CLI
# on the same file instead and prints the report.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
bash scripts/setup.sh
bin=build/dev/bin
example=examples/matmul_naive.cu
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$bin/stitchcuda-studio" ]; then
    exec "$bin/stitchcuda-studio" "$example" "$@"
fi
echo "No display: running the command line on $example"
echo
"$bin/stitchcuda" info
echo
"$bin/stitchcuda" outline "$example"
echo
exec "$bin/stitchcuda" compile "$example" --arch sm_90
