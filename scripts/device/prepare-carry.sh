#!/usr/bin/env bash
# Run here (Debian, with network) before a GPU-machine run: gathers into .devcarry/ (git-ignored)
# what the GPU machine lacks and cannot download: the Debian packages core + CLI + tests build
# against, and the pinned tree-sitter-cuda tarball. Then call the device tool with
# carry [".devcarry"] and the command `bash scripts/device/gpu-check.sh`.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .devcarry/debs
(cd .devcarry/debs && apt-get download libtree-sitter-dev libtree-sitter0 nlohmann-json3-dev libcli11-dev libgtest-dev libsqlite3-dev libsqlite3-0 zlib1g-dev 2>/dev/null)
deps=${STITCHCUDA_DEPS_DIR:-$PWD/.deps}
if [ ! -f "$deps/tree-sitter-cuda-0.20.4.tgz" ]; then
    mkdir -p "$deps"
    npm pack tree-sitter-cuda@0.20.4 --pack-destination "$deps" --silent >/dev/null
fi
cp "$deps/tree-sitter-cuda-0.20.4.tgz" .devcarry/
du -sh .devcarry
