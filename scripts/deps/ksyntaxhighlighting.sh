#!/usr/bin/env bash
# Builds KSyntaxHighlighting 5.116 for Qt 6 (static) into the project's dependency cache.
#   Debian pool tarball -> sha256 check -> patched CMake -> static Qt 6 build -> $DEPS/ksyntaxhighlighting
# Debian 12 packages only the Qt 5 build, and the studio links Qt 6. The mirror comes from this
# machine's own apt configuration so the repository names no host. Safe to run again: a stamp file
# records what was installed, and the tarball is kept in the cache.
set -euo pipefail

VERSION=5.116.0
TARBALL="ksyntax-highlighting_${VERSION}.orig.tar.xz"
SHA256=6f8ccacebd0dc9ce050b2b23b715750c97938b3336fbbb80967920cb8c1dfaa7
POOL_PATH="pool/main/k/ksyntax-highlighting/${TARBALL}"
# Debian 12 ships extra-cmake-modules 5.103; everything this version uses exists there.
ECM_MIN=5.103.0

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
deps_dir="${STITCHCUDA_DEPS_DIR:-${repo_root}/.deps}"
prefix="${deps_dir}/ksyntaxhighlighting"
work="${deps_dir}/build/ksyntaxhighlighting-${VERSION}"
cache="${deps_dir}/downloads"
stamp="${prefix}/.stitchcuda-stamp"
jobs="${STITCHCUDA_JOBS:-2}"
want_stamp="${VERSION} ${SHA256} qt6 static"

log() { printf 'ksyntaxhighlighting: %s\n' "$*" >&2; }

if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want_stamp}" ]] \
    && [[ -f "${prefix}/lib/cmake/KF5SyntaxHighlighting/KF5SyntaxHighlightingConfig.cmake" ]]; then
    log "already installed in ${prefix}"
    exit 0
fi

for tool in cmake ninja curl sha256sum tar perl; do
    command -v "${tool}" >/dev/null || { log "missing tool: ${tool}"; exit 1; }
done
[[ -d /usr/share/ECM ]] || { log "missing extra-cmake-modules (apt-get install extra-cmake-modules)"; exit 1; }
[[ -f /usr/lib/x86_64-linux-gnu/cmake/Qt6Gui/Qt6GuiConfig.cmake || -n "$(find /usr/lib -path '*cmake/Qt6Gui/Qt6GuiConfig.cmake' -print -quit 2>/dev/null)" ]] \
    || { log "missing Qt 6 development files (apt-get install qt6-base-dev)"; exit 1; }

# Debian archive URIs from apt's configuration (deb822 .sources first, then one-line lists).
apt_mirrors() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f "${f}" ]] || continue
        awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' "${f}"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f "${f}" ]] || continue
        awk '$1 == "deb" || $1 == "deb-src" {
                 i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                 print $i }' "${f}"
    done
}

mkdir -p "${cache}"
archive="${cache}/${TARBALL}"
if [[ -f "${archive}" ]] && ! echo "${SHA256}  ${archive}" | sha256sum -c --status; then
    log "cached tarball has the wrong checksum, fetching again"
    rm -f "${archive}"
fi
if [[ ! -f "${archive}" ]]; then
    mirrors="${STITCHCUDA_DEBIAN_MIRROR:-}"
    [[ -n "${mirrors}" ]] || mirrors="$(apt_mirrors | grep -E '^(https?|ftp)://' | grep -v -- '-security' | awk '!seen[$0]++')"
    [[ -n "${mirrors}" ]] || { log "no Debian mirror in the apt configuration; set STITCHCUDA_DEBIAN_MIRROR"; exit 1; }
    for mirror in ${mirrors}; do
        url="${mirror%/}/${POOL_PATH}"
        log "fetching ${url}"
        if curl -fsSL --retry 3 -o "${archive}.part" "${url}" \
            && echo "${SHA256}  ${archive}.part" | sha256sum -c --status; then
            mv "${archive}.part" "${archive}"
            break
        fi
        log "failed or checksum mismatch from ${mirror}"
        rm -f "${archive}.part"
    done
    [[ -f "${archive}" ]] || { log "could not download ${TARBALL}"; exit 1; }
fi

rm -rf "${work}"
mkdir -p "${work}"
tar -C "${work}" --strip-components=1 -xf "${archive}"
src="${work}"
# Translations need gettext tools and are of no use to a static library inside the studio.
rm -rf "${src}/poqm"
sed -i -E "s/find_package\(ECM [0-9.]+ /find_package(ECM ${ECM_MIN} /" "${src}/CMakeLists.txt"
grep -q "find_package(ECM ${ECM_MIN} " "${src}/CMakeLists.txt" || { log "could not patch the ECM version"; exit 1; }

start=$(date +%s)
cmake -S "${src}" -B "${work}/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="${prefix}" \
    -DCMAKE_INSTALL_LIBDIR=lib \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DBUILD_WITH_QT6=ON \
    -DBUILD_TESTING=OFF \
    -DBUILD_SHARED_LIBS=OFF \
    -DBUILD_QCH=OFF \
    -DBUILD_codeeditor=OFF -DBUILD_codepdfprinter=OFF -DBUILD_minimaltest=OFF \
    -DKDE_SKIP_TEST_SETTINGS=ON \
    >"${work}/configure.log" 2>&1 || { tail -n 40 "${work}/configure.log" >&2; exit 1; }
cmake --build "${work}/build" -j "${jobs}" >"${work}/build.log" 2>&1 || { tail -n 40 "${work}/build.log" >&2; exit 1; }
rm -rf "${prefix}"
cmake --install "${work}/build" >"${work}/install.log" 2>&1 || { tail -n 40 "${work}/install.log" >&2; exit 1; }
echo "${want_stamp}" >"${stamp}"
log "installed into ${prefix} in $(( $(date +%s) - start )) s"
# The build tree is large and can be rebuilt from the cached tarball.
rm -rf "${work}"
rmdir "${deps_dir}/build" 2>/dev/null || true
