# tree-sitter C runtime and the CUDA grammar, both from the npm registry and built here statically.
#
# - Runtime: the C library that the npm package tree-sitter@0.25.1 ships in vendor/tree-sitter/lib
#   (a single src/lib.c plus include/; loads grammar ABI 13-15). Debian 12's libtree-sitter 0.20.7
#   stops at ABI 14 and is no longer used.
# - Grammar: tree-sitter-cuda@0.21.1 (ABI 15). Compared with 0.20.4 it reads far more of the CUDA
#   that nvcc accepts (comparisons no longer misread as template arguments, and more; see issue 33).
#
# Each tarball is fetched once with `npm pack` into STITCHCUDA_DEPS_DIR and checked against a pinned
# SHA-256. Machines without network (the GPU machine) get the cached tarballs carried in that folder
# (scripts/device/prepare-carry.sh).

set(STITCH_TS_RUNTIME_VERSION 0.25.1)
set(STITCH_TS_RUNTIME_SHA256 07aeba8dd71630e7e72b2d4ca3bd2680c3471824100cc5ebff44e78a6ed0b6d3)
set(STITCH_TS_CUDA_VERSION 0.21.1)
set(STITCH_TS_CUDA_SHA256 53b5c000d5a61618a2ec614adcd94cfd9d5a2e8f6cf61258b623a130507542a4)

# stitch_npm_tarball(<package> <version> <sha256> <out-dir-var>): makes sure
# STITCHCUDA_DEPS_DIR/<package>-<version>.tgz is there with the pinned checksum (fetching it with
# `npm pack` when missing or wrong), extracts it under the build tree and returns that folder (the
# tarball's `package/` lies inside it).
function(stitch_npm_tarball package version sha256 outvar)
    set(tarball "${STITCHCUDA_DEPS_DIR}/${package}-${version}.tgz")
    if(EXISTS "${tarball}")
        file(SHA256 "${tarball}" sum)
        if(NOT sum STREQUAL sha256)
            message(STATUS "${package}: cached tarball has the wrong checksum, fetching again")
            file(REMOVE "${tarball}")
        endif()
    endif()
    if(NOT EXISTS "${tarball}")
        find_program(NPM_EXECUTABLE npm)
        if(NOT NPM_EXECUTABLE)
            message(FATAL_ERROR "${package}: ${tarball} is not cached and npm is not installed "
                                "(apt-get install npm, or copy the tarball there)")
        endif()
        file(MAKE_DIRECTORY "${STITCHCUDA_DEPS_DIR}")
        execute_process(
            COMMAND "${NPM_EXECUTABLE}" pack "${package}@${version}"
                    --pack-destination "${STITCHCUDA_DEPS_DIR}" --silent
            RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
        if(NOT rc EQUAL 0 OR NOT EXISTS "${tarball}")
            message(FATAL_ERROR "${package}: `npm pack` failed (${rc}): ${err}")
        endif()
        file(SHA256 "${tarball}" sum)
        if(NOT sum STREQUAL sha256)
            file(REMOVE "${tarball}")
            message(FATAL_ERROR "${package}: checksum mismatch: got ${sum}, expected ${sha256}")
        endif()
    endif()
    set(dir "${CMAKE_BINARY_DIR}/_deps/${package}-${version}")
    if(NOT EXISTS "${dir}/package/package.json")
        file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${dir}")
    endif()
    set(${outvar} "${dir}" PARENT_SCOPE)
endfunction()

# The runtime: one translation unit (lib.c includes the others), without the wasm store.
stitch_npm_tarball(tree-sitter ${STITCH_TS_RUNTIME_VERSION} ${STITCH_TS_RUNTIME_SHA256} _rt)
set(_rt_lib "${_rt}/package/vendor/tree-sitter/lib")
# Read by tests/fuzz, which builds the runtime again with clang.
set(STITCH_TS_RUNTIME_LIB_DIR "${_rt_lib}")
if(NOT EXISTS "${_rt_lib}/src/lib.c")
    message(FATAL_ERROR "tree-sitter ${STITCH_TS_RUNTIME_VERSION}: no vendor/tree-sitter/lib/src/lib.c")
endif()
add_library(stitch_tree_sitter STATIC "${_rt_lib}/src/lib.c")
target_include_directories(stitch_tree_sitter PRIVATE "${_rt_lib}/src")
target_include_directories(stitch_tree_sitter SYSTEM PUBLIC "${_rt_lib}/include")
target_compile_definitions(stitch_tree_sitter PRIVATE _POSIX_C_SOURCE=200112L _DEFAULT_SOURCE)
target_compile_options(stitch_tree_sitter PRIVATE -w)
set_target_properties(stitch_tree_sitter PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON
                                                    POSITION_INDEPENDENT_CODE ON)

# The grammar.
stitch_npm_tarball(tree-sitter-cuda ${STITCH_TS_CUDA_VERSION} ${STITCH_TS_CUDA_SHA256} _src)
set(STITCH_TS_CUDA_SRC_DIR "${_src}/package/src")
add_library(stitch_tree_sitter_cuda STATIC
    "${_src}/package/src/parser.c" "${_src}/package/src/scanner.c")
# The grammar's own tree_sitter/parser.h must win over the runtime's headers.
target_include_directories(stitch_tree_sitter_cuda BEFORE PRIVATE "${_src}/package/src")
target_link_libraries(stitch_tree_sitter_cuda PUBLIC stitch_tree_sitter)
# parser.c is 700k lines of tables: optimizing it costs minutes and buys nothing measurable.
set_source_files_properties("${_src}/package/src/parser.c" PROPERTIES COMPILE_OPTIONS "-O0;-g0;-w")
target_compile_options(stitch_tree_sitter_cuda PRIVATE -w)
set_target_properties(stitch_tree_sitter_cuda PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
add_feature_info(tree-sitter ON
    "tree-sitter runtime ${STITCH_TS_RUNTIME_VERSION} and CUDA grammar ${STITCH_TS_CUDA_VERSION} from npm, built statically")
