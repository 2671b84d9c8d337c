#include "core/frontend/DeviceCode.h"

#include <array>
#include <string_view>

namespace stitch::frontend {

bool isHostOnlyHeader(const std::string &path)
{
    static constexpr std::array<std::string_view, 52> kHeaders = {
        "assert.h", "ctype.h", "errno.h", "float.h", "limits.h", "math.h", "stdint.h", "stdio.h",
        "stdlib.h", "string.h", "time.h", "stddef.h", "stdbool.h", "sys/time.h", "unistd.h",
        "cassert", "cctype", "cerrno", "cfloat", "climits", "cmath", "cstdint", "cstdio", "cstdlib",
        "cstring", "ctime", "cstddef", "algorithm", "array", "chrono", "functional", "iomanip",
        "iostream", "fstream", "sstream", "string", "vector", "map", "memory", "numeric", "random",
        "utility", "limits", "stdexcept", "thread", "tuple", "type_traits", "unordered_map",
        "cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "device_launch_parameters.h"};
    for (auto h : kHeaders)
        if (path == h)
            return true;
    return path.rfind("cublas", 0) == 0 || path.rfind("thrust/", 0) == 0 || path.rfind("helper_", 0) == 0;
}

namespace {

void blank(std::string &s, unsigned begin, unsigned end)
{
    for (unsigned i = begin; i < end && i < s.size(); ++i)
        if (s[i] != '\n')
            s[i] = ' ';
}

} // namespace

DeviceTranslationUnit deviceTranslationUnit(const std::string &source, const SourceIndex &index)
{
    DeviceTranslationUnit tu{source, {}};
    for (const auto &inc : index.includes) {
        if (!inc.system || !isHostOnlyHeader(inc.path))
            continue;
        blank(tu.source, inc.range.beginByte, inc.range.endByte);
        tu.notes.push_back({Severity::Note, inc.range.begin,
                            "host header <" + inc.path + "> left out of the device compilation (NVRTC)"});
    }
    for (const auto &fn : index.hostFunctions) {
        blank(tu.source, fn.beginByte, fn.endByte);
        tu.notes.push_back({Severity::Note, fn.begin, "host function left out of the device compilation (NVRTC)"});
    }
    return tu;
}

} // namespace stitch::frontend
