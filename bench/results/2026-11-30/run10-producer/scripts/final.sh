#!/usr/bin/env bash
cd "$(dirname "$0")/.."
prefix=/tmp/stitch-prefix; mkdir -p $prefix
for f in .devcarry/debs/*.deb; do dpkg -x "$f" "$prefix"; done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
[ -d build-gpu ] || cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTITCHCUDA_BUILD_STUDIO=OFF -DCUDAToolkit_ROOT=/usr/local/cuda \
  -DCMAKE_PREFIX_PATH="$prefix/usr" -DSTITCHCUDA_DEPS_DIR="$PWD/.devcarry" > /tmp/conf.log 2>&1
ninja -C build-gpu -j16 stitchcuda stitchcuda-worker test_codegen_gpu > /tmp/build.log 2>&1 || grep error /tmp/build.log | head
S=./build-gpu/app/cli/stitchcuda
timeout 200 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*Wgmma*:-*1000x3000x700*' 2>&1 | tee $OUT/wgmma-gpu-tests.log | grep -E "^\[ +(OK|FAILED)|PASSED|FAILED" | tail -12
timeout 200 $S bench --verbose --settle-ms 2000 --out $OUT/ours.json --only gemm_tf32 --where math=tf32_wgmma --where block_k=32 --where stages=4 --where block_m=256 --where block_n=128 > /dev/null 2> $OUT/bench.log
echo "bench exit $?"; grep -E "copy=|candidates" $OUT/bench.log | sed 's/thread_m=8 thread_n=16 //; s/split_k=1 block_k=32 vector=4 smem_pad=0 //' | tail -14
