#!/usr/bin/env bash
# Run 11, call 7 (device tool, carry [".devcarry"]): every codegen GPU test on main after this
# session's changes (scratch buffers typed and zeroed, GenContext's arch, stream-K), but the four
# large shapes' tensor-core tests (1000x3000x700 and 4097x257x1031 take 40-140 s each for the CPU
# reference; the stream-K tests on them ran in calls 2, 4 and 6).
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
mkdir -p "$OUT"
prefix=/tmp/stitch-prefix
mkdir -p "$prefix"
for f in .devcarry/debs/*.deb; do dpkg -x "$f" "$prefix"; done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTITCHCUDA_BUILD_STUDIO=OFF \
    -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_PREFIX_PATH="$prefix/usr" \
    -DSTITCHCUDA_DEPS_DIR="$PWD/.devcarry" > /tmp/configure.log 2>&1 || { tail -30 /tmp/configure.log; exit 1; }
ninja -C build-gpu -j16 stitchcuda-worker test_codegen_gpu > /tmp/build.log 2>&1 || { grep -E "error|FAILED" /tmp/build.log | head -30; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
timeout 330 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='-*1000x3000x700*:*4097x257x1031*' > "$OUT/codegen-gpu.log" 2>&1
echo "test_codegen_gpu: exit $?"
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED" "$OUT/codegen-gpu.log" | tail -45
echo "all done at $(( $(date +%s) - t0 )) s"
