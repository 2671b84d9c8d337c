#!/usr/bin/env bash
# Run 13, call 2 (device tool): the SASS of the fused GEMM + bias + GELU variants (variants/):
# opcode histograms of the whole kernel and of its k-loop, to see which instructions besides the
# FFMAs take the issue slots (ncu in call 1: 77% of them busy, 46% of stalls "not selected").
# Issue 34: the record keeps variants/'s programs as diffs (the twins) and a commit (the generated
# fused_gelu.cu: git show 6e96cd5:bench/results/2026-11-30/run13-fused/variants/fused_gelu.cu).
# First, from the repository root: bench/tools/restore_twins.sh bench/results/2026-11-30/run13-fused/variants
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
mkdir -p "$OUT"
V=bench/results/2026-11-30/run13-fused/variants
for v in gelu nr none; do
  nvcc -cubin -arch=sm_90 -O3 -o /tmp/$v.cubin $V/fused_$v.cu 2> /tmp/$v.err || { cat /tmp/$v.err; continue; }
  cuobjdump -sass /tmp/$v.cubin > "$OUT/sass-$v.txt"
  echo "== $v: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$OUT/sass-$v.txt") instructions (static)"
  grep -E '^\s+/\*[0-9a-f]{4}\*/' "$OUT/sass-$v.txt" | sed -E 's#^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?##; s#[ ;].*##' \
      | sort | uniq -c | sort -rn | head -25
done
gzip -9 "$OUT"/sass-*.txt
