#include "core/storage/TextFile.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace stitch {

Result<std::string> readTextFile(const std::string &path)
{
    // gzread passes plain files through unchanged, so one reader serves both.
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
        return Error{ErrorKind::Io, std::string("cannot open the file: ") + std::strerror(errno), SourceLocation{path, 0, 0}, {}};
    std::string text;
    char buffer[1 << 16];
    for (;;) {
        const int n = gzread(f, buffer, sizeof buffer);
        if (n < 0) {
            int code = 0;
            const std::string why = gzerror(f, &code);
            gzclose(f);
            return Error{ErrorKind::Parse, "damaged compressed data: " + why, SourceLocation{path, 0, 0}, {}};
        }
        if (n == 0)
            break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    int code = 0;
    const std::string why = gzerror(f, &code);
    gzclose(f);
    if (code != Z_OK && code != Z_BUF_ERROR) // Z_BUF_ERROR: a truncated stream, reported below
        return Error{ErrorKind::Parse, "damaged compressed data: " + why, SourceLocation{path, 0, 0}, {}};
    if (code == Z_BUF_ERROR)
        return Error{ErrorKind::Parse, "the compressed data ends early (a truncated file)", SourceLocation{path, 0, 0}, {}};
    return text;
}

bool isCsvPath(const std::string &path)
{
    auto endsWith = [&](const char *suffix) {
        const std::size_t n = std::strlen(suffix);
        return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
    };
    return endsWith(".csv") || endsWith(".csv.gz");
}

} // namespace stitch
