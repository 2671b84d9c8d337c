#include "core/storage/JsonLocations.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <vector>

namespace stitch::storage {

namespace {

/// A read-only cursor over the text that publishes how far the parser has read: nlohmann's lexer
/// reads one character at a time through it, so at each SAX event the shared position is the end
/// of the token just read (one past it for a number, which the lexer ends by reading ahead).
struct CountingCursor {
    using iterator_category = std::forward_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char *;
    using reference = const char &;

    const char *at = nullptr;
    const char **furthest = nullptr;

    reference operator*() const { return *at; }
    CountingCursor &operator++()
    {
        ++at;
        if (furthest && at > *furthest)
            *furthest = at;
        return *this;
    }
    CountingCursor operator++(int)
    {
        CountingCursor before = *this;
        ++*this;
        return before;
    }
    bool operator==(const CountingCursor &other) const { return at == other.at; }
};

bool isNumberChar(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/// The opening quote of the string whose closing quote is at `close` (escaped quotes skipped).
std::size_t stringStart(const std::string &text, std::size_t close)
{
    for (std::size_t i = close; i-- > 0;) {
        if (text[i] != '"')
            continue;
        std::size_t backslashes = 0;
        while (backslashes < i && text[i - 1 - backslashes] == '\\')
            ++backslashes;
        if (backslashes % 2 == 0)
            return i;
    }
    return 0;
}

class Recorder final : public nlohmann::json_sax<nlohmann::json> {
public:
    Recorder(const std::string &text, const char *const *furthest, std::map<std::string, std::size_t> &offsets)
        : m_text(text), m_furthest(furthest), m_offsets(offsets)
    {
    }

    bool null() override { return scalar(4); }
    bool boolean(bool value) override { return scalar(value ? 4 : 5); }
    bool number_integer(number_integer_t) override { return number(); }
    bool number_unsigned(number_unsigned_t) override { return number(); }
    bool number_float(number_float_t, const string_t &) override { return number(); }
    bool string(string_t &) override
    {
        const std::size_t end = position();
        element(end > 0 ? stringStart(m_text, end - 1) : 0);
        return true;
    }
    bool binary(binary_t &) override { return true; }
    bool start_object(std::size_t) override { return open(false); }
    bool start_array(std::size_t) override { return open(true); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t &name) override
    {
        if (m_frames.empty())
            return true;
        Frame &f = m_frames.back();
        f.member = f.path.empty() ? name : f.path + "." + name;
        const std::size_t end = position();
        m_offsets.emplace(f.member, end > 0 ? stringStart(m_text, end - 1) : 0);
        return true;
    }
    bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &) override { return false; }

private:
    struct Frame {
        bool array = false;
        std::size_t index = 0;
        std::string path;
        std::string member; ///< an object's member being read: its path
    };

    std::size_t position() const { return static_cast<std::size_t>(*m_furthest - m_text.data()); }

    /// The path of the value starting now, recorded at `offset` when it is an array's element.
    std::string element(std::size_t offset)
    {
        if (m_frames.empty())
            return {};
        Frame &f = m_frames.back();
        if (!f.array)
            return f.member;
        std::string path = f.path + "[" + std::to_string(f.index++) + "]";
        m_offsets.emplace(path, offset);
        return path;
    }
    bool scalar(std::size_t length)
    {
        const std::size_t end = position();
        element(end >= length ? end - length : 0);
        return true;
    }
    bool number()
    {
        std::size_t p = position();
        if (p > 0 && !isNumberChar(m_text[p - 1]))
            --p; // the character the lexer read to see the number end
        while (p > 0 && isNumberChar(m_text[p - 1]))
            --p;
        element(p);
        return true;
    }
    bool open(bool array)
    {
        const std::size_t at = position() > 0 ? position() - 1 : 0;
        std::string path = element(at);
        if (m_frames.empty())
            m_offsets.emplace(std::string(), at);
        m_frames.push_back(Frame{array, 0, std::move(path), {}});
        return true;
    }
    bool close()
    {
        if (!m_frames.empty())
            m_frames.pop_back();
        return true;
    }

    const std::string &m_text;
    const char *const *m_furthest;
    std::map<std::string, std::size_t> &m_offsets;
    std::vector<Frame> m_frames;
};

/// "a.b[2].c" -> "a.b[2]" -> "a.b" -> "a" -> "": the path one step up.
std::string parentPath(const std::string &path)
{
    const std::size_t cut = path.find_last_of(".[");
    return cut == std::string::npos ? std::string() : path.substr(0, cut);
}

} // namespace

SourceLocation locationAt(const std::string &text, std::size_t offset, const std::string &file)
{
    offset = std::min(offset, text.size());
    SourceLocation where{file, 1, 1};
    for (std::size_t i = 0; i < offset; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            ++where.line;
            where.column = 1;
        } else if ((c & 0xC0) != 0x80) { // UTF-8 continuation bytes are part of one character
            ++where.column;
        }
    }
    return where;
}

JsonLocations JsonLocations::index(const std::string &text)
{
    JsonLocations out;
    out.m_text = text;
    const char *furthest = out.m_text.data();
    Recorder recorder(out.m_text, &furthest, out.m_offsets);
    const char *begin = out.m_text.data();
    CountingCursor first{begin, &furthest};
    CountingCursor last{begin + out.m_text.size(), nullptr};
    try {
        nlohmann::json::sax_parse(first, last, &recorder);
    } catch (const nlohmann::json::exception &) { // what was recorded before it stands
    }
    return out;
}

SourceLocation JsonLocations::find(const std::string &path, const std::string &file) const
{
    for (std::string p = path;; p = parentPath(p)) {
        if (auto it = m_offsets.find(p); it != m_offsets.end())
            return locationAt(m_text, it->second, file);
        if (p.empty())
            return SourceLocation{file, 0, 0};
    }
}

Error jsonSyntaxError(const std::string &text, std::size_t byte, const std::string &what, const std::string &file)
{
    // nlohmann's byte is 1-based: the character it stopped at.
    const std::size_t offset = byte > 0 ? byte - 1 : 0;
    const SourceLocation where = locationAt(text, offset, file);
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error while parsing
    // object - unexpected '}'; expected string literal": the location is ours, the rest is the why.
    std::string why = what;
    if (const std::size_t at = why.find("parse error"); at != std::string::npos) {
        if (const std::size_t colon = why.find(": ", at); colon != std::string::npos)
            why = why.substr(colon + 2);
    }
    std::string message = "invalid JSON: " + why;
    if (byte > text.size()) // it read past the last character: the end of input
        message += " (the file ends before the document does: truncated, perhaps by an interrupted write)";
    Error error = makeError(ErrorKind::Parse, message, where);
    error.diagnostics.push_back(Diagnostic{Severity::Error, where, message});
    return error;
}

} // namespace stitch::storage
