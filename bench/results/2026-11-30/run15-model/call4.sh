#!/usr/bin/env bash
# Run 15, call 4: call 3 again after the runner fix (the launch stream waits for the buffers' uploads
# and fills). Call 3 (session 13; device tool, carry [".devcarry"]) ran the GPU tests call 2 did not reach
# in its 520 s (the stream-K shapes and the optimized lifting corpus) and the eight sampled programs
# of test_codegen_gpu (Programs/CodegenGpu.*, each a spread of legal schedules verified against the
# interpreter on the GPU), each group in its own process, all at once (NVRTC and the CPU
# interpreter are the slow parts, one core each).
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda-worker test_codegen_gpu test_corpus_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
run() { # name, binary, filter
    timeout 460 "./build-gpu/tests/codegen/$2" --gtest_filter="$3" > "$OUT/t-$1.log" 2>&1
    echo "$1: exit $?, $(grep -cE '^\[ +OK +\]' "$OUT/t-$1.log") OK, $(grep -cE '^\[ +FAILED +\]' "$OUT/t-$1.log") FAILED $(grep -E '^\[ +FAILED +\]' "$OUT/t-$1.log" | head -3 | tr '\n' ' ')"
}
names=$(./build-gpu/tests/codegen/test_codegen_gpu --gtest_list_tests --gtest_filter='Programs/*' | grep '^  ' | awk '{print $1}')
for n in $names; do run "${n##*/}" test_codegen_gpu "Programs/CodegenGpu.$n" & done
run streamk test_codegen_gpu 'StreamK/*' &
run corpus test_corpus_gpu '*' &
wait
echo "all in $((SECONDS - t0)) s"
tar czf "$OUT/tests.tgz" -C "$OUT" $(cd "$OUT" && ls t-*.log) && rm -f "$OUT"/t-*.log "$OUT/build.log"
