#!/usr/bin/env bash
# Run 7, call 5 (GPU machine): does rounding the TF32 operands (cvt.rna, as generated) cost time,
# and what error does passing the FP32 bits unrounded (the tensor core reads their TF32 part) give?
# The default tf32 schedule at 1024^3 (verified against the CPU interpreter) and 4096^3 (timed only),
# each as generated and with the cvt.rna line replaced by the raw bits.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-/tmp/stitch-out}
prefix=/tmp/stitch-prefix; mkdir -p "$prefix"
for f in .devcarry/debs/*.deb; do dpkg -x "$f" "$prefix"; done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTITCHCUDA_BUILD_STUDIO=OFF -DCUDAToolkit_ROOT=/usr/local/cuda \
    -DCMAKE_PREFIX_PATH="$prefix/usr" -DSTITCHCUDA_DEPS_DIR="$PWD/.devcarry" > "$OUT/configure.log" 2>&1 || exit 1
ninja -C build-gpu -j"$(nproc)" stitchcuda stitchcuda-worker > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
S=bench/profiles/gemm-tf32-4096-default.schedule.json
for n in 1024 4096; do
    d="$OUT/r$n"
    ./build-gpu/app/cli/stitchcuda generate examples/matmul.te --schedule $S --size M=$n --size N=$n --size K=$n --out "$d/cvt" > /dev/null
    mkdir -p "$d/raw"; cp "$d/cvt/"* "$d/raw/"
    sed -i 's|asm("cvt.rna.tf32.f32 %0, %1;\\n" : "=r"(u) : "f"(x));|u = __float_as_uint(x);|' "$d/raw/matmul.cu"
    grep -c "cvt.rna" "$d/raw/matmul.cu"
    for v in cvt raw; do
        [ $n = 4096 ] && python3 -c "import json,sys; p=sys.argv[1]; d=json.load(open(p)); d.pop('reference',None); json.dump(d,open(p,'w'))" "$d/$v/matmul.plan.json"
        echo "--- $n $v"; ./build-gpu/app/cli/stitchcuda run --no-cache "$d/$v/matmul.plan.json" 2>&1 | grep -E "verify|time|rel|error" | head -4
    done
done
