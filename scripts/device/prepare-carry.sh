#!/usr/bin/env bash
# Run here (Debian, with network) before a GPU-machine run: gathers into .devcarry/ (git-ignored)
# what the GPU machine lacks and cannot download: the Debian packages core + CLI + tests build
# against, and the pinned npm tarballs cmake/TreeSitterCuda.cmake builds from (the tree-sitter C
# runtime in tree-sitter@0.25.1, the tree-sitter-cuda@0.21.1 grammar). Then call the device tool
# with carry [".devcarry"] and the command `bash scripts/device/gpu-check.sh`.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .devcarry/debs
(cd .devcarry/debs && apt-get download nlohmann-json3-dev libcli11-dev libdtl-dev libgtest-dev libsqlite3-dev libsqlite3-0 zlib1g-dev 2>/dev/null)
deps=${STITCHCUDA_DEPS_DIR:-$PWD/.deps}
# Keep in step with STITCH_TS_RUNTIME_VERSION / STITCH_TS_CUDA_VERSION in cmake/TreeSitterCuda.cmake
# (which checks their SHA-256 on both machines).
for pkg in tree-sitter@0.25.1 tree-sitter-cuda@0.21.1; do
    tarball="${pkg%@*}-${pkg#*@}.tgz"
    if [ ! -f "$deps/$tarball" ]; then
        mkdir -p "$deps"
        npm pack "$pkg" --pack-destination "$deps" --silent >/dev/null
    fi
    cp "$deps/$tarball" .devcarry/
done
# Tarballs of earlier pins left from older runs only cost carry space.
rm -f .devcarry/tree-sitter-cuda-0.20.4.tgz .devcarry/debs/libtree-sitter*.deb
du -sh .devcarry
