#!/bin/bash
# Run 20 call 1 (and 2, after the block size fix): layer norm row groups sharing gamma and beta in shared memory (prototype).
nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v -o /tmp/lrl2 bench/tools/long_row_l2.cu > $OUT/ptxas.txt 2>&1 || { tail -20 $OUT/ptxas.txt; exit 1; }
/tmp/lrl2 ln 2>&1 | tee $OUT/call${CALL:-1}-ln.txt
