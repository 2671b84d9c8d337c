# tree-sitter runtime (Debian's libtree-sitter-dev 0.20.7, ABI 13-14) and the CUDA grammar.
# The grammar comes from the npm registry as tree-sitter-cuda@0.20.4 (ABI 14; 0.21+ is ABI 15 and is
# refused by this runtime). It is fetched once with `npm pack` into STITCHCUDA_DEPS_DIR, checked
# against a pinned SHA-256 and built here as a static library. Machines without network (the GPU
# machine) get the cached tarball carried in that folder.

find_path(TREE_SITTER_INCLUDE_DIR tree_sitter/api.h)
find_library(TREE_SITTER_LIBRARY NAMES libtree-sitter.a tree-sitter)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(TreeSitter REQUIRED_VARS TREE_SITTER_LIBRARY TREE_SITTER_INCLUDE_DIR)
set_package_properties(TreeSitter PROPERTIES TYPE REQUIRED
    DESCRIPTION "incremental parsing library (Debian: libtree-sitter-dev)"
    PURPOSE "parses CUDA source for the outline and the Parse agent")

set(STITCH_TS_CUDA_VERSION 0.20.4)
set(STITCH_TS_CUDA_SHA256 a366cadf11a663e6ade99338514ebc47b7081093474cd950fbeefa0a4726e763)
set(_tarball "${STITCHCUDA_DEPS_DIR}/tree-sitter-cuda-${STITCH_TS_CUDA_VERSION}.tgz")

if(EXISTS "${_tarball}")
    file(SHA256 "${_tarball}" _sum)
    if(NOT _sum STREQUAL STITCH_TS_CUDA_SHA256)
        message(STATUS "tree-sitter-cuda: cached tarball has the wrong checksum, fetching again")
        file(REMOVE "${_tarball}")
    endif()
endif()
if(NOT EXISTS "${_tarball}")
    find_program(NPM_EXECUTABLE npm)
    if(NOT NPM_EXECUTABLE)
        message(FATAL_ERROR "tree-sitter-cuda: ${_tarball} is not cached and npm is not installed "
                            "(apt-get install npm, or copy the tarball there)")
    endif()
    file(MAKE_DIRECTORY "${STITCHCUDA_DEPS_DIR}")
    execute_process(
        COMMAND "${NPM_EXECUTABLE}" pack "tree-sitter-cuda@${STITCH_TS_CUDA_VERSION}"
                --pack-destination "${STITCHCUDA_DEPS_DIR}" --silent
        RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0 OR NOT EXISTS "${_tarball}")
        message(FATAL_ERROR "tree-sitter-cuda: `npm pack` failed (${_rc}): ${_err}")
    endif()
    file(SHA256 "${_tarball}" _sum)
    if(NOT _sum STREQUAL STITCH_TS_CUDA_SHA256)
        file(REMOVE "${_tarball}")
        message(FATAL_ERROR "tree-sitter-cuda: checksum mismatch: got ${_sum}, "
                            "expected ${STITCH_TS_CUDA_SHA256}")
    endif()
endif()

set(_src "${CMAKE_BINARY_DIR}/_deps/tree-sitter-cuda-${STITCH_TS_CUDA_VERSION}")
if(NOT EXISTS "${_src}/package/src/parser.c")
    file(ARCHIVE_EXTRACT INPUT "${_tarball}" DESTINATION "${_src}")
endif()

add_library(stitch_tree_sitter_cuda STATIC
    "${_src}/package/src/parser.c" "${_src}/package/src/scanner.c")
# The grammar's own tree_sitter/parser.h must win over the runtime's copy.
target_include_directories(stitch_tree_sitter_cuda BEFORE PRIVATE "${_src}/package/src")
target_include_directories(stitch_tree_sitter_cuda SYSTEM PUBLIC "${TREE_SITTER_INCLUDE_DIR}")
target_link_libraries(stitch_tree_sitter_cuda PUBLIC "${TREE_SITTER_LIBRARY}")
# parser.c is 700k lines of tables: optimizing it costs minutes and buys nothing measurable.
set_source_files_properties("${_src}/package/src/parser.c" PROPERTIES COMPILE_OPTIONS "-O0;-g0;-w")
target_compile_options(stitch_tree_sitter_cuda PRIVATE -w)
set_target_properties(stitch_tree_sitter_cuda PROPERTIES C_STANDARD 11)
add_feature_info(tree-sitter-cuda ON "CUDA grammar ${STITCH_TS_CUDA_VERSION} from npm, built statically")
