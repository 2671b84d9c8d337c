#!/usr/bin/env bash
# Run 22, call 3 (session 20; device tool, no carry): what orders the stream-K FP32 GEMMs at
# 1000x3000x700, the shape the model ranks at 0.844 (call 1). Four generated programs, 128x128
# tiles of 16x8 per thread, stream-K, cp.async (programs/*: `stitchcuda generate examples/matmul.te
# --size M=1000 --size N=3000 --size K=700 --schedule programs/NAME/matmul.schedule.json --out
# programs/NAME`), which call 1 timed at 0.283 (a: block_k 32, 3 stages, 1 block/SM), 0.131 (b:
# 8, 2, 1), 0.214 (c: 16, 3, 1) and 0.109 ms (d: 8, 4, 2 blocks/SM, the default). Each built by
# nvcc and by NVRTC as the bench builds it and timed (warm L2: no flush between runs), then its
# NVRTC launch under ncu: cycles per issued instruction, warps, the stall reasons.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
R=bench/results/2026-12-01/run22-replay
P="a_bk32_s3_mb1 b_bk8_s2_mb1 c_bk16_s3_mb1 d_bk8_s4_mb2"
for n in $P; do
    nvcc -O3 -std=c++17 -arch=sm_90 -DGEMM_M=1000 -DGEMM_N=3000 -DGEMM_K=700 \
        -DPROGRAM="\"../results/2026-12-01/run22-replay/programs/$n/matmul.cu\"" \
        -o /tmp/drv_$n bench/tools/gemm_program_driver.cu -lnvrtc -lcuda > /tmp/build-$n.txt 2>&1 &
done
wait
cfg() { python3 bench/tools/launch_config.py $R/programs/$1/matmul.cu M=1000 N=3000 K=700; }
for n in $P; do /tmp/drv_$n $R/programs/$n/matmul.cu 40 $(cfg $n) 2>&1 | grep -v "^nvcc "; done | tee "$OUT/times.txt"
M="gpu__time_duration.sum,sm__cycles_active.avg,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,smsp__average_warp_latency_per_inst_issued.ratio,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for n in $P; do
    echo "==== $n"
    timeout 90 ncu --clock-control none --metrics "$M" --kernel-name C --launch-skip 3 --launch-count 1 \
        /tmp/drv_$n $R/programs/$n/matmul.cu 2 $(cfg $n) 2>&1 | grep -E "^\s+(gpu__|smsp__|sm__)" | awk '$NF+0 > 0.05 || /gpu__|sm__|inst_exec|warps_active|issue_active|latency/'
done | tee "$OUT/ncu.txt"
