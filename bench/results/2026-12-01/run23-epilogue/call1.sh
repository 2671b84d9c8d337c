#!/usr/bin/env bash
# Run 23, call 1 (session 21; device tool, no carry): GEMM + bias + GELU at 8192x8192x128, short K,
# where the per-round intercept of run 22 call 4 (2 t(64) - t(128)) was read. Six generated programs
# (programs/, `stitchcuda generate examples/gemm_bias_gelu.te --size M=8192 --size N=8192 --size K=128
# --schedule ...`: 128x128 tiles, erf=erfc, stream-K off): thread tiles 16x8 / 8x16 at block_k 32
# and 8, 8x8 at block_k 16 (two blocks of 8 warps), 16x8 at block_k 32 with 4 stages (one warp per
# scheduler). Each built with bench/tools/gemm_program_driver.cu -DGEMM_BIAS_GELU (nvcc and, as the
# bench builds it, NVRTC), timed at K = 128 (and a, c at K = 1024), then NVRTC's launch under ncu:
# warp states, scheduler, instruction and source counters (per SASS instruction, to split the k-loop
# from the code run once per block).
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
HERE=bench/results/2026-12-01/run23-epilogue
W=$(mktemp -d)
t0=$SECONDS
build() { # name K
    nvcc -O3 -std=c++17 -arch=sm_90 -DGEMM_BIAS_GELU -DGEMM_M=8192 -DGEMM_N=8192 -DGEMM_K=$2 \
        -DPROGRAM="\"$PWD/$HERE/programs/$1/gemm_bias_gelu.cu\"" -o "$W/$1_k$2" bench/tools/gemm_program_driver.cu \
        -lnvrtc -lcuda > "$W/$1_k$2.build.log" 2>&1 || echo "build $1 K=$2 failed"
}
progs=$(ls $HERE/programs)
for p in $progs; do build $p 128 & done
for p in a_tt16x8_bk32_s3_mb1 c_tt16x8_bk8_s3_mb1; do build $p 1024 & done
wait
echo "built in $((SECONDS - t0)) s"
block() { case $1 in e_*) echo 256;; *) echo 128;; esac; }
mkdir -p "$W/rep"
for b in "$W"/*_k128 "$W"/*_k1024; do
    n=$(basename $b); p=${n%_k*}
    "$b" "$HERE/programs/$p/gemm_bias_gelu.cu" 30 4096 $(block $p) 2>&1 | sed "s|^|$n |" | tee -a "$W/rep/times.txt"
done
echo "timed at $((SECONDS - t0)) s"
for b in "$W"/*_k128; do
    n=$(basename $b); p=${n%_k*}
    timeout 120 ncu --clock-control none -k G_Y --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section InstructionStats \
        --section SourceCounters --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
        -o "$W/rep/$n" -f "$b" "$HERE/programs/$p/gemm_bias_gelu.cu" 2 4096 $(block $p) > "$W/rep/$n.ncu.log" 2>&1
    ncu -i "$W/rep/$n.ncu-rep" --page details --csv > "$W/rep/$n.details.csv" 2>&1
    ncu -i "$W/rep/$n.ncu-rep" --page raw --csv > "$W/rep/$n.raw.csv" 2>&1
    ncu -i "$W/rep/$n.ncu-rep" --page source --csv --print-source sass > "$W/rep/$n.source.csv" 2>&1
    echo "$n profiled at $((SECONDS - t0)) s: $(wc -c < "$W/rep/$n.source.csv") bytes of source page"
done
rm -f "$W"/rep/*.ncu-rep
tar -C "$W/rep" -czf "$OUT/call1.tar.gz" .
cp "$W/rep/times.txt" "$OUT/times.txt"
echo "call done in $((SECONDS - t0)) s"
