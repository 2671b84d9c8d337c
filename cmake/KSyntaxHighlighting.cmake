# KSyntaxHighlighting for Qt 6, as the target stitch::ksyntaxhighlighting.
#   system KF6SyntaxHighlighting, else the static Qt 6 build of scripts/deps/ksyntaxhighlighting.sh
#   in ${STITCHCUDA_DEPS_DIR}/ksyntaxhighlighting (it keeps upstream's KF5 package names).
# Debian 12 packages only a Qt 5 build, which must never be picked up: it would load Qt 5 into a
# Qt 6 process. So the KF5-named package is searched in the dependency cache only.

if(TARGET stitch::ksyntaxhighlighting)
    return()
endif()

# The static package links Qt6::Network but its config finds only Core and Gui.
find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Network)

find_package(KF6SyntaxHighlighting QUIET CONFIG)
if(KF6SyntaxHighlighting_FOUND)
    set(_stitch_ksh_target KF6::SyntaxHighlighting)
    set(_stitch_ksh_where "system KF6SyntaxHighlighting ${KF6SyntaxHighlighting_VERSION}")
else()
    set(_stitch_ksh_prefix "${STITCHCUDA_DEPS_DIR}/ksyntaxhighlighting")
    find_package(KF5SyntaxHighlighting 5.116 QUIET CONFIG
        PATHS "${_stitch_ksh_prefix}" NO_DEFAULT_PATH)
    if(NOT KF5SyntaxHighlighting_FOUND)
        message(FATAL_ERROR
            "KSyntaxHighlighting for Qt 6 not found. Either install KF6SyntaxHighlighting, or build "
            "the pinned copy into the dependency cache:\n"
            "  STITCHCUDA_DEPS_DIR=${STITCHCUDA_DEPS_DIR} scripts/deps/ksyntaxhighlighting.sh\n"
            "(or configure with -DSTITCHCUDA_BUILD_STUDIO=OFF for the command line only)")
    endif()
    get_target_property(_stitch_ksh_links KF5::SyntaxHighlighting INTERFACE_LINK_LIBRARIES)
    if(NOT "${_stitch_ksh_links}" MATCHES "Qt6::")
        message(FATAL_ERROR "${_stitch_ksh_prefix} holds a KSyntaxHighlighting built against Qt 5 "
                            "(links ${_stitch_ksh_links}); delete it and rerun scripts/deps/ksyntaxhighlighting.sh")
    endif()
    set(_stitch_ksh_target KF5::SyntaxHighlighting)
    set(_stitch_ksh_where "Qt 6 build ${KF5SyntaxHighlighting_VERSION} in ${_stitch_ksh_prefix}")
endif()

add_library(stitch_ksyntaxhighlighting INTERFACE)
add_library(stitch::ksyntaxhighlighting ALIAS stitch_ksyntaxhighlighting)
target_link_libraries(stitch_ksyntaxhighlighting INTERFACE ${_stitch_ksh_target} Qt6::Network)

set(KSyntaxHighlighting_FOUND TRUE)
set_package_properties(KSyntaxHighlighting PROPERTIES TYPE REQUIRED
    URL "https://invent.kde.org/frameworks/syntax-highlighting"
    PURPOSE "syntax highlighting in the studio's editor and PTX view (${_stitch_ksh_where})")
add_feature_info(KSyntaxHighlighting KSyntaxHighlighting_FOUND "${_stitch_ksh_where}")
