#include "core/common/Files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace stitch {

std::optional<std::string> readRegularFile(const std::string &path)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad())
        return std::nullopt;
    return text.str();
}

} // namespace stitch
