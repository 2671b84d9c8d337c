#!/usr/bin/env bash
# Run 12, call 5 (device tool, carry [".devcarry"]): the shared-memory prefetch GPU tests again,
# now that their fixture resets min_blocks, combine and exp (call 4 stopped the softmax one on its
# schedule), with the row-decision tests.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
timeout 240 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*RowPrefetch*:*RowCombine*' > "$OUT/tests.log" 2>&1
echo "GPU tests: exit $?"; grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure|rel " "$OUT/tests.log" | head -30
rm -f "$OUT/build.log"
