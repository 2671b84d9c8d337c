#!/usr/bin/env bash
# Installs what StitchCUDA needs on Debian 12 (as root, or with sudo), then configures and builds.
#   scripts/setup.sh            -> packages + KSyntaxHighlighting + cmake --preset dev + build
#   STITCHCUDA_NO_STUDIO=1 ...  -> core + CLI only (no Qt)
#   STITCHCUDA_REQUIRE_FUZZERS=1 -> fail unless the libFuzzer targets build (CI)
# Idempotent: packages already installed are not asked for again, dependency builds are cached in
# .deps/ and the CMake build is incremental, so a second run takes seconds.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

log() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

core_pkgs=(cmake ninja-build g++ pkg-config curl ca-certificates xz-utils perl npm
           nlohmann-json3-dev libcli11-dev libdtl-dev libgtest-dev libgmock-dev
           libsqlite3-dev libbenchmark-dev libtorch-dev zlib1g-dev)
# clang and its libFuzzer/sanitizer runtimes build the fuzz targets (tests/fuzz, CTest fuzz.frontends).
fuzz_pkgs=(clang-14 libclang-rt-14-dev)
# Debian 12's qt6-charts-dev does not pull in libqt6opengl6-dev, which its CMake package needs.
studio_pkgs=(qt6-base-dev qt6-svg-dev qt6-charts-dev libqt6opengl6-dev libgraphviz-dev libxkbcommon-dev extra-cmake-modules xvfb xauth fonts-dejavu-core)
pkgs=("${core_pkgs[@]}" "${fuzz_pkgs[@]}")
[ "${STITCHCUDA_NO_STUDIO:-0}" = 1 ] || pkgs+=("${studio_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
    # npm from NodeSource ships inside its nodejs package; accept any working npm.
    if [ "$p" = npm ] && command -v npm >/dev/null; then continue; fi
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA toolkit is not a Debian package in the version we need (NVRTC 12+); it is expected at
# /usr/local/cuda, as NVIDIA's installer puts it.
if [ ! -e /usr/local/cuda/include/nvrtc.h ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
    log "the CUDA toolkit (12 or newer, with NVRTC) is missing: install it to /usr/local/cuda or set CUDAToolkit_ROOT"
    exit 1
fi

preset=${STITCHCUDA_PRESET:-dev}
extra=()
# CI sets STITCHCUDA_REQUIRE_FUZZERS=1 so that fuzz.frontends runs there instead of skipping.
if [ "${STITCHCUDA_REQUIRE_FUZZERS:-0}" = 1 ]; then
    extra+=(-DSTITCHCUDA_REQUIRE_FUZZERS=ON)
fi
if [ "${STITCHCUDA_NO_STUDIO:-0}" = 1 ]; then
    extra+=(-DSTITCHCUDA_BUILD_STUDIO=OFF)
else
    STITCHCUDA_JOBS=${STITCHCUDA_JOBS:-$(nproc)} bash scripts/deps/ksyntaxhighlighting.sh
fi

log "configuring (preset $preset)"
cmake --preset "$preset" "${extra[@]}" > /dev/null
log "building"
cmake --build --preset "$preset" -j "${STITCHCUDA_JOBS:-$(nproc)}"
