#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (CTest). GPU tests skip on machines without a
# GPU; run scripts/device/gpu-check.sh on the GPU machine for those.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
bash scripts/setup.sh
preset=${STITCHCUDA_PRESET:-dev}
ctest --preset "$preset" -j "$(nproc)" "$@"
