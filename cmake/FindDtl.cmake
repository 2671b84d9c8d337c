# FindDtl: the header-only diff template library dtl (Debian's libdtl-dev), which core/common's
# line and character diff (LineDiff.cpp, TextDiff.cpp) compose their edit scripts with.
#   find_package(Dtl REQUIRED) -> Dtl_FOUND, Dtl_VERSION, Dtl_INCLUDE_DIR, imported target dtl::dtl
# The headers are included as SYSTEM so -Werror builds do not judge dtl's own code.
find_path(Dtl_INCLUDE_DIR dtl/dtl.hpp DOC "folder holding dtl/dtl.hpp (Debian: libdtl-dev)")
if(Dtl_INCLUDE_DIR AND EXISTS "${Dtl_INCLUDE_DIR}/dtl/variables.hpp")
    file(STRINGS "${Dtl_INCLUDE_DIR}/dtl/variables.hpp" _dtl_version_line REGEX "const string version = \"[0-9.]+\"")
    string(REGEX MATCH "[0-9]+(\\.[0-9]+)*" Dtl_VERSION "${_dtl_version_line}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Dtl
    REQUIRED_VARS Dtl_INCLUDE_DIR
    VERSION_VAR Dtl_VERSION
    REASON_FAILURE_MESSAGE "dtl/dtl.hpp was not found: install Debian's libdtl-dev (scripts/setup.sh does), or pass -DDtl_INCLUDE_DIR=<folder holding dtl/>")
if(Dtl_FOUND AND NOT TARGET dtl::dtl)
    add_library(dtl::dtl INTERFACE IMPORTED)
    set_target_properties(dtl::dtl PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Dtl_INCLUDE_DIR}"
                                              INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${Dtl_INCLUDE_DIR}")
endif()
mark_as_advanced(Dtl_INCLUDE_DIR)
