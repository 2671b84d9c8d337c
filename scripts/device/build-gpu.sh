#!/usr/bin/env bash
# Sourced by the GPU machine's scripts (gpu-check.sh, the bench/results call scripts), from the
# repository root: unpacks the carried Debian packages (.devcarry, scripts/device/prepare-carry.sh)
# into /tmp/stitch-prefix, takes the carried npm tarballs (tree-sitter runtime and CUDA grammar,
# tree-sitter-0.25.1.tgz and tree-sitter-cuda-0.21.1.tgz) from .devcarry as STITCHCUDA_DEPS_DIR, sets LD_LIBRARY_PATH, configures build-gpu (Release, core + CLI + tests,
# no Qt there) and builds the targets in BUILD_TARGETS (all when empty). Logs go to $OUT.
#   BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh
# Returns non-zero when configuring fails, or when a named target fails to build; with no targets
# it keeps going past broken ones (ninja -k 0) and prints the failures.
OUT=${OUT:-/tmp/stitch-out}
mkdir -p "$OUT"
stitch_prefix=/tmp/stitch-prefix
mkdir -p "$stitch_prefix"
for f in .devcarry/debs/*.deb; do dpkg -x "$f" "$stitch_prefix"; done
# zlib1g-dev's libz.so names Debian's libz.so.1.2.13 by absolute path; point it at this machine's.
libz=$stitch_prefix/usr/lib/x86_64-linux-gnu/libz.so
if [ -L "$libz" ] && [ ! -e "$libz" ]; then
    for z in /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1; do
        [ -e "$z" ] && { ln -sf "$z" "$libz"; break; }
    done
fi
export LD_LIBRARY_PATH="$stitch_prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}"
# The agents' networks (core/agents/learning) build against PyTorch's own LibTorch there.
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
stitch_build() {
    local t0=$SECONDS
    cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTITCHCUDA_BUILD_STUDIO=OFF \
        -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_PREFIX_PATH="$stitch_prefix/usr;$torch_prefix" \
        -DSTITCHCUDA_DEPS_DIR="$PWD/.devcarry" > "$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; return 1; }
    if [ -n "${BUILD_TARGETS:-}" ]; then
        # shellcheck disable=SC2086
        ninja -C build-gpu -j"$(nproc)" $BUILD_TARGETS > "$OUT/build.log" 2>&1 ||
            { grep -E "error|FAILED" "$OUT/build.log" | head -30; return 1; }
    elif ! ninja -C build-gpu -k 0 -j"$(nproc)" > "$OUT/build.log" 2>&1; then
        echo "BUILD FAILURES:"; grep -E "error|FAILED" "$OUT/build.log" | head -40
    fi
    rm -f "$OUT/configure.log"
    echo "built ${BUILD_TARGETS:-everything} in build-gpu in $((SECONDS - t0)) s"
}
stitch_build
