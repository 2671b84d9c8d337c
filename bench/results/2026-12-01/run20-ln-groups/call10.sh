#!/usr/bin/env bash
# Run 20, call 10 (session 18; device tool): the generated layer-norm program of call 9's code
# (call10/generated_layernorm.cu, from `stitchcuda generate examples/layernorm.te --size M=256
# --size N=262144 --out DIR`), launched by its own host launcher inside the prototype harness,
# alternating with the prototype it was built from (calls 5-6): is the bench's 0.150 ms against the
# prototype's 0.148 the code or the measurement? (Call 10 found the generated launcher without the
# opt-in to clusters of 16: "cluster misconfiguration"; call 11 reruns this script after the fix.)
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v \
    -DGENERATED_PROGRAM='"../results/2026-12-01/run20-ln-groups/call10/generated_layernorm.cu"' \
    -o /tmp/lrl2g bench/tools/long_row_l2.cu > "$OUT/ptxas.txt" 2>&1 || { tail -20 "$OUT/ptxas.txt"; exit 1; }
grep -A2 "mean_Y" "$OUT/ptxas.txt" | grep -E "registers|spill" | head -4
/tmp/lrl2g lngen 2>&1 | grep -v " x256 \| x3 " | tee "$OUT/call${CALL:-10}-lngen.txt"
