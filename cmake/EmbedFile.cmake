# stitch_embed_file(INPUT OUTPUT SYMBOL): writes a C++ source defining
# `const char *stitch::resources::SYMBOL()` that returns the file's text, so the binaries need no
# installed resource path. Runs at configure time; editing INPUT re-runs the configuration.
function(stitch_embed_file input output symbol)
    file(READ "${input}" content HEX)
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
    set(text "// Generated from ${input} by cmake/EmbedFile.cmake. Do not edit.\n")
    string(APPEND text "namespace stitch::resources {\n"
        "static const unsigned char kData[] = {${bytes} 0x00};\n"
        "const char *${symbol}() { return reinterpret_cast<const char *>(kData); }\n}\n")
    file(CONFIGURE OUTPUT "${output}" CONTENT "${text}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${input}")
endfunction()
