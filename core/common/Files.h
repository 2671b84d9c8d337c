#pragma once
// Reading a whole file from disk, for callers that treat "not there" and "not readable" alike.

#include <optional>
#include <string>

namespace stitch {

/// The bytes of the regular file at `path`; nullopt when it is missing, not a regular file (a
/// folder, a device) or cannot be read.
std::optional<std::string> readRegularFile(const std::string &path);

} // namespace stitch
