# Warnings and sanitizers for every target of the project.
add_compile_options(-Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
if(STITCHCUDA_WARNINGS_AS_ERRORS)
    add_compile_options(-Werror)
endif()
if(STITCHCUDA_ENABLE_ASAN)
    add_compile_options(-fsanitize=address -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address)
endif()
if(STITCHCUDA_ENABLE_UBSAN)
    add_compile_options(-fsanitize=undefined -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=undefined)
endif()
# GCC's manual (Instrumentation Options): "sanitizers tend to increase the rate of false positive
# warnings, most notably those around -Wmaybe-uninitialized". With optimization on (the
# asan-ubsan-ci preset, -O1) g++ 12 prints dozens of them from libstdc++'s <regex> per file.
if((STITCHCUDA_ENABLE_ASAN OR STITCHCUDA_ENABLE_UBSAN) AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
endif()
