#!/usr/bin/env bash
# Run 21, call 1 (session 19; device tool, no carry): Nsight Compute on what the model and the
# generator leave unexplained.
#  - Issue 5: five generated FP32 GEMM 4096^3 programs (programs/*/matmul.cu, `stitchcuda generate
#    examples/matmul.te --size M=4096 --size N=4096 --size K=4096 --schedule S`): 128x128 tiles,
#    block_k 16, min_blocks 2, data-parallel (dp) against stream-K (sk) with the same k-loop. Run 16
#    measured dp store=vector stages=3 3.28 ms, sk 2.96; sk store=scalar stages=4 2.78; the model
#    ranks sk slower. Timed by their own launchers, then one launch each under ncu.
#  - Issue 4: the generated layer norm 256 x 262144 (programs/layernorm.cu, today's generator) and a
#    hand-edited variant whose clusters take rows c, c + 7, c + 14 (programs/layernorm_spread.cu: the
#    last round's four rows on four clusters instead of two), each beside the prototype (mode lngen
#    of bench/tools/long_row_l2.cu), then the generated kernel and the prototype under ncu.
# Issue 34: the record keeps programs/layernorm_spread.cu as a diff against the generated layernorm.cu,
# which it does not keep either (git show 6c4069f:bench/results/2026-12-01/run21-ncu/programs/layernorm.cu);
# first, from the repository root: bench/tools/restore_twins.sh bench/results/2026-12-01/run21-ncu/programs
# (writes both). The matmul.cu programs: the README's "Generated programs not kept".
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
R=bench/results/2026-12-01/run21-ncu
NCU="ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
 --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
GEMMS="dp_v_s3 sk_v_s3 sk_s_s4 dp_s_s4 dp_s_s2"
for n in $GEMMS; do
    nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v -DPROGRAM="\"../results/2026-12-01/run21-ncu/programs/$n/matmul.cu\"" \
        -o /tmp/drv_$n bench/tools/gemm_program_driver.cu > "$OUT/ptxas-$n.txt" 2>&1 &
done
nvcc -O3 -std=c++17 -arch=sm_90 -DGENERATED_PROGRAM='"../results/2026-12-01/run21-ncu/programs/layernorm.cu"' \
    -o /tmp/lrl2g bench/tools/long_row_l2.cu > "$OUT/ptxas-ln.txt" 2>&1 &
nvcc -O3 -std=c++17 -arch=sm_90 -DGENERATED_PROGRAM='"../results/2026-12-01/run21-ncu/programs/layernorm_spread.cu"' \
    -o /tmp/lrl2s bench/tools/long_row_l2.cu > "$OUT/ptxas-lns.txt" 2>&1 &
wait
ls -la /tmp/drv_* /tmp/lrl2g /tmp/lrl2s || { tail -5 "$OUT"/ptxas-*.txt; exit 1; }
for round in 1 2; do
    for n in $GEMMS; do /tmp/drv_$n 40; done
done 2>&1 | tee "$OUT/gemm-times.txt"
for round in 1 2; do
    /tmp/lrl2g lngen 2>&1 | grep -v " x256 \| x3 " | sed 's/^/plain   /'
    /tmp/lrl2s lngen 2>&1 | grep -v " x256 \| x3 " | sed 's/^/spread  /'
done 2>&1 | tee "$OUT/lngen.txt"
for n in $GEMMS; do
    timeout 120 $NCU --kernel-name C --launch-skip 1 --launch-count 1 /tmp/drv_$n 2 > "$OUT/ncu-$n.txt" 2>&1
    echo "ncu $n rc=$? $(grep -m1 'Duration' "$OUT/ncu-$n.txt")"
done
timeout 150 $NCU --kernel-name mean_Y --launch-skip 2 --launch-count 1 /tmp/lrl2g lngen > "$OUT/ncu-ln-generated.txt" 2>&1
echo "ncu ln generated rc=$? $(grep -m1 'Duration' "$OUT/ncu-ln-generated.txt")"
timeout 150 $NCU --kernel-name regex:lnGroups --launch-skip 2 --launch-count 1 /tmp/lrl2g lngen > "$OUT/ncu-ln-prototype.txt" 2>&1
echo "ncu ln prototype rc=$? $(grep -m1 'Duration' "$OUT/ncu-ln-prototype.txt")"
exit 0
