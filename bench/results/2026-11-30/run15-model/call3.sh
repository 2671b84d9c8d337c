#!/usr/bin/env bash
# Run 15, call 3 (session 13; device tool, carry [".devcarry"]): the eight sampled programs of
# test_codegen_gpu (Programs/CodegenGpu.*, each a spread of legal schedules verified against the
# interpreter on the GPU), one process per program, all at once (NVRTC is the slow part).
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
names=$(./build-gpu/tests/codegen/test_codegen_gpu --gtest_list_tests --gtest_filter='Programs/*' | grep '^  ' | awk '{print $1}')
for n in $names; do
    timeout 500 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter="Programs/CodegenGpu.$n" > "$OUT/programs-${n##*/}.log" 2>&1 &
done
wait
echo "all programs in $((SECONDS - t0)) s"
for n in $names; do
    echo "${n##*/}: $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/programs-${n##*/}.log" | tr '\n' ' ') $(grep -E '^\[ +(OK|FAILED) +\]' "$OUT/programs-${n##*/}.log" | tail -1)"
done
tar czf "$OUT/programs.tgz" -C "$OUT" $(cd "$OUT" && ls programs-*.log) && rm -f "$OUT"/programs-*.log "$OUT/build.log"
