#pragma once
// Where things are in a JSON text, so an error about a member can point at its line and column.
//   text -> JsonLocations::index (SAX pass over a counting cursor) -> "a.b[2].c" -> file:line:col
//   nlohmann::json::parse_error -> jsonSyntaxError (file:line:col, what, and a hint)
// nlohmann's DOM keeps no positions; this second, cheap pass records them for the paths a reader
// names in its errors ("agents.trace.decisions[3].chosen").

#include "core/common/Result.h"

#include <cstddef>
#include <map>
#include <string>

namespace stitch::storage {

/// 1-based line and column (in characters, not bytes) of byte `offset` in `text`.
SourceLocation locationAt(const std::string &text, std::size_t offset, const std::string &file);

class JsonLocations {
public:
    /// Records where each object member (its key) and array element begins. Invalid JSON records
    /// what came before the error; parse the text first to report the error itself.
    static JsonLocations index(const std::string &text);

    /// Where `path` ("", "a", "a.b[2].c") begins; for a path that is not there (a missing member),
    /// its nearest recorded ancestor. An unknown location (line 0) only when nothing was recorded.
    SourceLocation find(const std::string &path, const std::string &file) const;

private:
    std::string m_text;
    std::map<std::string, std::size_t> m_offsets;
};

/// The Parse error for text nlohmann could not read: located at the byte it stopped at, with what it
/// expected and, when the text ended first, that the file looks truncated.
Error jsonSyntaxError(const std::string &text, std::size_t byte, const std::string &what, const std::string &file);

} // namespace stitch::storage
