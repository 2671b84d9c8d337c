#!/usr/bin/env bash
# Run 21, call 9 (session 19; device tool, no carry): call 8 again with each launcher's grid and block
# (call 8 launched every NVRTC build as 128 x 128 tiles of 256 threads). The issue replay's misses at few warps per
# scheduler. Six FP32 GEMM 4096^3 programs (programs/a_* .. f_*) with one to three warps per
# scheduler, among them a pair the replay ranks backwards (b: 8x16 per thread, 3.31 ms in run 15;
# c: 16x8, 2.91 ms). Each built by NVRTC as the bench builds it and timed, then its NVRTC launch
# under ncu: cycles per issued instruction, active and issuing warps, the stall reasons.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
R=bench/results/2026-12-01/run21-ncu
P="a_dp_8x8_mb1 b_sk_8x16_128t c_sk_16x8_mb2 d_dp_64x128_mb3 e_dp_128x256 f_sk_256x128"
for n in $P; do
    nvcc -O3 -std=c++17 -arch=sm_90 -DPROGRAM="\"../results/2026-12-01/run21-ncu/programs/$n/matmul.cu\"" \
        -o /tmp/drv_$n bench/tools/gemm_program_driver.cu -lnvrtc -lcuda > /tmp/build-$n.txt 2>&1 &
done
wait
cfg() { python3 bench/tools/launch_config.py $R/programs/$1/matmul.cu M=4096 N=4096 K=4096; }
for n in $P; do /tmp/drv_$n $R/programs/$n/matmul.cu 20 $(cfg $n) 2>&1 | grep -v "^nvcc "; done | tee "$OUT/times.txt"
M="gpu__time_duration.sum,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,smsp__average_warp_latency_per_inst_issued.ratio,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for n in $P; do
    echo "==== $n"
    timeout 90 ncu --clock-control none --metrics "$M" --kernel-name C --launch-skip 3 --launch-count 1 \
        /tmp/drv_$n $R/programs/$n/matmul.cu 2 $(cfg $n) 2>&1 | grep -E "^\s+(gpu__|smsp__)" | awk '$NF+0 > 0.05 || /gpu__|inst_exec|warps_active|issue_active|latency/'
done | tee "$OUT/ncu.txt"
