#!/usr/bin/env bash
# Run 21, call 2 (session 19; device tool, no carry). Call 1 found (a) the nvcc build of the data-parallel
# GEMM dp_v_s3 at 3.03 ms where the bench measured 3.28 for its NVRTC build, and (b) the generated layer
# norm at 144.8 us under ncu against 150.3 us by events after an L2 flush by cudaMemsetAsync (which
# leaves L2 full of dirty lines for the timed kernel to write back). So:
#  - each GEMM program built by nvcc and by NVRTC as the bench builds it, timed alternately in one
#    process (bench/tools/gemm_program_driver.cu), then both builds under ncu;
#  - the harness's copy, prototype and generated layer norm timed after a flush by writes and after a
#    flush by reads (long_row_proto.cu timeIt, g_flushMode), alternately.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
R=bench/results/2026-12-01/run21-ncu
NCU="ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
 --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats"
GEMMS="dp_v_s3 sk_v_s3 sk_s_s4 dp_s_s4 dp_s_s2"
for n in $GEMMS; do
    nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v -DPROGRAM="\"../results/2026-12-01/run21-ncu/programs/$n/matmul.cu\"" \
        -o /tmp/drv_$n bench/tools/gemm_program_driver.cu -lnvrtc -lcuda > /tmp/ptxas-$n.txt 2>&1 &
done
nvcc -O3 -std=c++17 -arch=sm_90 -DGENERATED_PROGRAM='"../results/2026-12-01/run21-ncu/programs/layernorm.cu"' \
    -o /tmp/lrl2g bench/tools/long_row_l2.cu > /tmp/ptxas-ln.txt 2>&1 &
wait
for n in $GEMMS; do echo "== $n"; grep -E "registers|spill" /tmp/ptxas-$n.txt; done > "$OUT/ptxas.txt"
cat "$OUT/ptxas.txt"
ls /tmp/drv_* /tmp/lrl2g > /dev/null || { tail -5 /tmp/ptxas-*.txt; exit 1; }
/tmp/lrl2g lngen 2>&1 | grep -v " x256 \| x3 " | tee "$OUT/lngen-flush.txt"
for n in $GEMMS; do /tmp/drv_$n $R/programs/$n/matmul.cu 40; done 2>&1 | tee "$OUT/gemm-builds.txt"
for n in $GEMMS; do
    echo "==== $n"
    timeout 100 $NCU --kernel-name C --launch-skip 2 --launch-count 2 /tmp/drv_$n $R/programs/$n/matmul.cu 2 2>&1
done > "$OUT/ncu-gemm.txt"
grep -E "^====|Duration|Executed Instructions  |Registers Per|Local Memory|Issue Slots Busy|No Eligible" "$OUT/ncu-gemm.txt"
exit 0
