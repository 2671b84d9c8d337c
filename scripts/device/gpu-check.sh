#!/usr/bin/env bash
# Runs on the GPU machine (Ubuntu 24.04, CUDA 13.0, no Qt, no network), in one call:
# builds core + CLI + tests, prints `stitchcuda info` and the example's compile report, runs the
# whole CTest suite (GPU tests included) and compute-sanitizer on the GPU tests.
# Logs go to $OUT when it is set. Prepare the carried files first: scripts/device/prepare-carry.sh.
# MODE=tests (default: build, info, ctest, GPU tests, sanitizers), MODE=bench (build, the issue-4
# benchmark `stitchcuda bench` with BENCH_ARGS and --metrics unless METRICS=0, the calibration
# tables, the PyTorch/cuBLAS baselines with BASE_ARGS, the report), MODE=all (both). CTEST_ARGS narrows ctest (e.g. "-L gpu").
set -uo pipefail
MODE=${MODE:-tests}
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/stitch-out}
mkdir -p "$OUT"
step() { echo; echo "=== $* ==="; }
step "configure + build (core, CLI, tests; no Qt here)"
# Keeps going past a broken target so the GPU tests that did build still run; the failures are printed.
BUILD_TARGETS="" source scripts/device/build-gpu.sh || exit 1

# Samples the SM clock, power and the clock-event reasons every 100 ms into $OUT/clocks-$1.csv while
# the command after it runs; clock_summary NAME prints the clock's range (throttling shows as the
# clock dropping).
with_clocks() {
    local name=$1; shift
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
        --format=csv,noheader,nounits -lms 100 > "$OUT/clocks-$name.csv" 2>/dev/null &
    local sampler=$!
    "$@"
    local rc=$?
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
    return $rc
}
clock_summary() {
    local name=$1
    awk -F', ' -v n="$name" 'NF >= 5 { c = $2 + 0; p = $3 + 0; s++; if (!lo || c < lo) lo = c; if (c > hi) hi = c; if (p > pm) pm = p; if (c < 1900) slow++ }
        END { if (s) printf "clocks during %s: SM %d-%d MHz, %d of %d samples under 1900 MHz, power up to %.0f W\n", n, lo, hi, slow, s, pm }' "$OUT/clocks-$name.csv"
}
run_bench() {
    step "stitchcuda bench ${BENCH_ARGS:-}"
    # METRICS=0 leaves out the CUPTI run per candidate (and the .dimensions.csv).
    metrics=--metrics; [ "${METRICS:-1}" = 1 ] || metrics=
    with_clocks bench timeout "${BENCH_TIMEOUT:-400}" ./build-gpu/app/cli/stitchcuda bench --verbose --out "$OUT/ours.json" --calibration "$OUT/calibration.csv" $metrics ${BENCH_ARGS:-} > /dev/null 2> "$OUT/bench.log"
    echo "bench exit $?"; grep -v "^  " "$OUT/bench.log" | tail -30; clock_summary bench
    [ -s "$OUT/calibration.csv" ] && ./build-gpu/app/cli/stitchcuda calibrate --summary "$OUT/calibration.csv"
    if [ -s "$OUT/calibration.dimensions.csv" ]; then
        step "static dimensions against CUPTI counters"
        ./build-gpu/app/cli/stitchcuda calibrate --dimensions "$OUT/calibration.dimensions.csv" | tee "$OUT/dimensions.md"
    fi
    if [ "${BASELINES:-1}" = 1 ]; then
        step "PyTorch / cuBLAS baselines ${BASE_ARGS:-}"
        with_clocks baselines timeout "${BASE_TIMEOUT:-400}" python3 bench/torch_baselines.py ${BASE_ARGS:-} > "$OUT/baselines.json" 2> "$OUT/baselines.log"
        echo "baselines exit $?"; tail -5 "$OUT/baselines.log"; clock_summary baselines
        step "report"
        python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
        cat "$OUT/report.md"
    fi
}
run_sanitizers() {
    # Every generated kernel of the optimized lifting corpus, and a spread of schedules of the
    # canonical programs, under memcheck and racecheck (the worker is a child process).
    step "compute-sanitizer on generated kernels"
    for tool in memcheck racecheck; do
        for t in "test_corpus_gpu" "test_codegen_gpu --gtest_filter=*odd*"; do
            set -- $t
            timeout "${SAN_TIMEOUT:-400}" compute-sanitizer --tool "$tool" --target-processes all --error-exitcode 3 \
                ./build-gpu/tests/codegen/$1 ${2:-} > "$OUT/sanitizer-$tool-$1.log" 2>&1
            echo "$tool $t: exit $?, $(grep -c '^\[       OK' "$OUT/sanitizer-$tool-$1.log") tests OK, $(grep -h 'ERROR SUMMARY' "$OUT/sanitizer-$tool-$1.log" | sort | uniq -c | tr '\n' ' ')"
        done
    done
}
if [ "$MODE" = sanitize ]; then
    step "ctest -L gpu"
    ctest --test-dir build-gpu -j8 -L gpu --timeout 300 --output-on-failure > "$OUT/ctest.log" 2>&1
    grep -E "tests passed|tests failed|Failed|\*\*\*" "$OUT/ctest.log" | tail -20
    ./build-gpu/tests/codegen/test_corpus_gpu 2>&1 | grep -E "verified|FAILED" | tail -25
    run_sanitizers
    exit 0
fi
if [ "$MODE" = baselines ]; then
    step "PyTorch / cuBLAS baselines ${BASE_ARGS:-}"
    timeout "${BASE_TIMEOUT:-500}" python3 bench/torch_baselines.py ${BASE_ARGS:-} > "$OUT/baselines.json" 2> "$OUT/baselines.log"
    echo "baselines exit $?"; tail -40 "$OUT/baselines.log"
    exit 0
fi
if [ "$MODE" = bench ]; then run_bench; exit 0; fi

step "nvidia-smi"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv

step "stitchcuda info"
./build-gpu/app/cli/stitchcuda info
step "stitchcuda compile examples/matmul_naive.cu --arch sm_90"
./build-gpu/app/cli/stitchcuda compile examples/matmul_naive.cu --arch sm_90

step "ctest (all labels)"
ctest --test-dir build-gpu -j8 -LE fuzz --timeout 300 --output-on-failure ${CTEST_ARGS:-} > "$OUT/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed|Failed|\*\*\*|Skipped|Not Run" "$OUT/ctest.log" | tail -40

if [ "${VERBOSE_GPU:-1}" = 1 ]; then
step "GPU tests verbose (they must run, not skip, here)"
./build-gpu/tests/gpu/test_gpu 2>&1 | tee "$OUT/test_gpu.log" | grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED"

step "other GPU test executables, verbose"
for t in build-gpu/tests/runner/test_runner_gpu build-gpu/tests/*/test_*gpu*; do
    [ -x "$t" ] && [ "$t" != build-gpu/tests/gpu/test_gpu ] || continue
    echo "--- $t"; "$t" 2>&1 | tee "$OUT/$(basename "$t").log" | grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED"
done
for b in build-gpu/bench/* build-gpu/tests/bench/*; do
    [ -x "$b" ] && [ -f "$b" ] || continue
    echo "--- benchmark $b"; "$b" 2>&1 | tee "$OUT/$(basename "$b").log" | tail -15
done

step "compute-sanitizer memcheck + racecheck on the example kernel"
for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 3 ./build-gpu/tests/gpu/test_gpu \
        --gtest_filter='Gpu.NaiveMatmulExampleRunsCorrectly' > "$OUT/sanitizer-$tool.log" 2>&1
    echo "$tool: exit $? ($(grep -c 'ERROR SUMMARY: 0 errors' "$OUT/sanitizer-$tool.log") clean summary line)"
done
fi
if [ "$MODE" = all ]; then run_bench; fi
exit $rc
