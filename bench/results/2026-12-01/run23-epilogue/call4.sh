#!/usr/bin/env bash
# Run 23, call 4 (session 21; device tool, no carry): the 1000x3000x700 lead. Three generated FP32
# GEMMs (programs-1000/: 128x128 tiles of 16x8, 3 stages, store=scalar, min_blocks=2), stream-K at
# block_k 32 and 16 and data-parallel at block_k 32 (run 15/22: 0.190-0.197, 0.117-0.119 and
# 0.171 ms), built by bench/tools/gemm_program_driver.cu -DGEMM_M=1000 -DGEMM_N=3000 -DGEMM_K=700
# at the launcher's grid (bench/tools/launch_config.py), timed, then NVRTC's launch under ncu with
# source counters: is the block_k 32 stream-K loop waiting for instructions where the
# data-parallel one is not?
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
HERE=bench/results/2026-12-01/run23-epilogue
W=$(mktemp -d)
t0=$SECONDS
for p in g_skon_bk32_mb2 h_skon_bk16_mb2 i_skoff_bk32_mb2; do
    nvcc -O3 -std=c++17 -arch=sm_90 -DGEMM_M=1000 -DGEMM_N=3000 -DGEMM_K=700 \
        -DPROGRAM="\"$PWD/$HERE/programs-1000/$p/matmul.cu\"" -o "$W/$p" bench/tools/gemm_program_driver.cu \
        -lnvrtc -lcuda > "$W/$p.build.log" 2>&1 || echo "build $p failed" &
done
wait
mkdir -p "$W/rep"
for p in g_skon_bk32_mb2 h_skon_bk16_mb2 i_skoff_bk32_mb2; do
    cfg=$(python3 bench/tools/launch_config.py "$HERE/programs-1000/$p/matmul.cu" M=1000 N=3000 K=700)
    "$W/$p" "$HERE/programs-1000/$p/matmul.cu" 30 $cfg 2>&1 | sed "s|^|$p |" | tee -a "$W/rep/times.txt"
    timeout 100 ncu --clock-control none -k C --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section InstructionStats \
        --section SourceCounters --section LaunchStats --section Occupancy \
        -o "$W/rep/$p" -f "$W/$p" "$HERE/programs-1000/$p/matmul.cu" 2 $cfg > "$W/rep/$p.ncu.log" 2>&1
    ncu -i "$W/rep/$p.ncu-rep" --page details --csv > "$W/rep/$p.details.csv" 2>&1
    ncu -i "$W/rep/$p.ncu-rep" --page source --csv --print-source sass > "$W/rep/$p.source.csv" 2>&1
    echo "$p profiled at $((SECONDS - t0)) s"
done
python3 bench/tools/ncu_regions.py "$W"/rep/*.source.csv | tee "$W/rep/regions.md"
rm -f "$W"/rep/*.ncu-rep
tar -C "$W/rep" -czf "$OUT/call4.tar.gz" .
cp "$W/rep/times.txt" "$W/rep/regions.md" "$OUT/"
echo "call done in $((SECONDS - t0)) s"
