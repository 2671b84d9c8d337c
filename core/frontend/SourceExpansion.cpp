// expandCudaSource: includes, conditionals and -D before the lifter parses (SourceExpansion.h).
// The #if arithmetic lives in PreprocessorConditions.cpp.
#include "core/frontend/SourceExpansion.h"

#include "core/common/Files.h"

#include "core/frontend/PreprocessorConditions.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace stitch::frontend {

namespace {

namespace fs = std::filesystem;

bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view trimLeft(std::string_view s)
{
    while (!s.empty() && isSpace(s.front()))
        s.remove_prefix(1);
    return s;
}

std::string_view trim(std::string_view s)
{
    s = trimLeft(s);
    while (!s.empty() && (isSpace(s.back()) || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

bool isIdentifierStart(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}

bool isIdentifierChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string_view identifierAt(std::string_view s)
{
    std::size_t n = 0;
    if (s.empty() || !isIdentifierStart(s[0]))
        return {};
    while (n < s.size() && isIdentifierChar(s[n]))
        ++n;
    return s.substr(0, n);
}

/// The text of a directive without comments; block comments become one space.
std::string stripComments(std::string_view s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '"' || s[i] == '\'') {
            const char q = s[i];
            out += s[i];
            for (++i; i < s.size(); ++i) {
                out += s[i];
                if (s[i] == '\\' && i + 1 < s.size())
                    out += s[++i];
                else if (s[i] == q)
                    break;
            }
        } else if (s.substr(i, 2) == "//") {
            break;
        } else if (s.substr(i, 2) == "/*") {
            const auto end = s.find("*/", i + 2);
            out += ' ';
            if (end == std::string_view::npos)
                break;
            i = end + 1;
        } else {
            out += s[i];
        }
    }
    return out;
}

/// Whether a physical line ends inside a block comment, given whether it started inside one.
bool endsInBlockComment(std::string_view line, bool inside)
{
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (inside) {
            if (line.substr(i, 2) == "*/") {
                inside = false;
                ++i;
            }
        } else if (line[i] == '"' || line[i] == '\'') {
            const char q = line[i];
            for (++i; i < line.size() && line[i] != q; ++i) {
                if (line[i] == '\\')
                    ++i;
            }
        } else if (line.substr(i, 2) == "//") {
            return false;
        } else if (line.substr(i, 2) == "/*") {
            inside = true;
            ++i;
        }
    }
    return inside;
}

/// Spaces for every byte but line ends: keeps byte offsets, rows and columns of what follows.
void appendBlank(std::string &out, std::string_view text)
{
    for (char c : text)
        out += (c == '\n' || c == '\r') ? c : ' ';
}

std::string quoted(const std::string &s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}


/// One #if group: whether it is decided, and which branch is live.
struct Frame {
    enum class Mode { Known, Open } mode = Mode::Known;
    bool parentLive = true; ///< every enclosing group emits its lines
    bool live = false;      ///< this branch's lines are emitted (Known)
    bool taken = false;     ///< a branch of this group was taken (Known)
};

class Expander {
public:
    explicit Expander(const SourceOptions &options) : m_options(options)
    {
        m_read = options.readFile ? options.readFile : readRegularFile;
        m_macros.define("__CUDACC__", "1");
        m_macros.define("__NVCC__", "1");
        for (const auto &[name, value] : options.defines)
            m_macros.define(name, value);
    }

    ExpandedSource run(const std::string &text, const std::string &fileName)
    {
        m_included.insert(canonical(fileName));
        expandFile(text, fileName, 0, m_out.text);
        if (!m_options.defines.empty()) {
            std::string tail = m_out.text.empty() || m_out.text.back() == '\n' ? "" : "\n";
            tail += "#line 1 \"<command line>\"\n";
            for (const auto &[name, value] : m_options.defines) {
                if (m_fileDefined.count(name))
                    continue;
                tail += "#define " + name + " " + value + "\n";
            }
            m_out.text += tail;
        }
        m_out.changed = m_out.text != text;
        return std::move(m_out);
    }

private:
    static std::string canonical(const std::string &path)
    {
        std::error_code ec;
        const fs::path p = fs::weakly_canonical(fs::path(path), ec);
        return ec ? fs::path(path).lexically_normal().string() : p.string();
    }

    bool live() const { return m_frames.empty() || frameEmits(m_frames.back()); }
    static bool frameEmits(const Frame &f) { return f.parentLive && (f.mode == Frame::Mode::Open || f.live); }
    bool insideOpen() const
    {
        return std::any_of(m_frames.begin(), m_frames.end(), [](const Frame &f) { return f.mode == Frame::Mode::Open; });
    }

    /// The header's path and text: beside the includer (quoted form), then in the -I folders.
    std::optional<std::pair<std::string, std::string>> findInclude(const std::string &name, bool quotedForm,
                                                                   const std::string &includer, std::string &searched)
    {
        std::vector<fs::path> dirs;
        if (quotedForm)
            dirs.push_back(fs::path(includer).parent_path());
        for (const std::string &d : m_options.includeDirectories)
            dirs.emplace_back(d);
        for (const fs::path &d : dirs) {
            const std::string candidate = (d / name).lexically_normal().string();
            searched += (searched.empty() ? "" : ", ") + (d.empty() ? std::string(".") : d.string());
            if (auto text = m_read(candidate))
                return std::pair{candidate, std::move(*text)};
        }
        return std::nullopt;
    }

    /// Handles `#include`; true when the line was replaced by the header's text.
    bool include(std::string_view rest, std::string_view line, const std::string &fileName, int nextLine,
                 SourceLocation where, int depth, std::string &out)
    {
        rest = trim(rest);
        if (rest.size() < 2)
            return false;
        const bool quotedForm = rest[0] == '"';
        if (!quotedForm && rest[0] != '<')
            return false;
        const auto close = rest.find(quotedForm ? '"' : '>', 1);
        if (close == std::string_view::npos)
            return false;
        const std::string name(rest.substr(1, close - 1));
        std::string searched;
        const auto found = findInclude(name, quotedForm, fileName, searched);
        if (!found) {
            if (quotedForm) {
                m_out.diagnostics.push_back({Severity::Warning, where,
                                             "cannot find the included file '" + name + "' (looked in " + searched +
                                                 "); what it defines is unknown to the lifter. Give its folder with -I"});
            }
            return false;
        }
        const auto &[path, text] = *found;
        if (!m_included.insert(canonical(path)).second) {
            appendBlank(out, line); // inlined once already, as include guards or #pragma once make it
            return true;
        }
        if (depth >= 32) {
            m_out.diagnostics.push_back({Severity::Warning, where, "includes nest deeper than 32; '" + name + "' is not followed"});
            return false;
        }
        m_out.includedFiles.push_back(path);
        out += "#line 1 " + quoted(path) + "\n";
        // A header's conditionals are its own: they cannot change the includer's open groups.
        std::vector<Frame> saved;
        saved.swap(m_frames);
        expandFile(text, path, depth + 1, out);
        m_frames.swap(saved);
        if (!out.empty() && out.back() != '\n')
            out += '\n';
        out += "#line " + std::to_string(nextLine) + " " + quoted(fileName) + "\n";
        return true;
    }

    /// Decides a condition; keeps Open when a name it needs is the compiler's or a system header's.
    void openGroup(std::optional<bool> value)
    {
        Frame f;
        f.parentLive = live();
        if (!f.parentLive) {
            f.taken = true; // nothing inside a dead branch is ever emitted
        } else if (!value) {
            f.mode = Frame::Mode::Open;
        } else {
            f.live = f.taken = *value;
        }
        m_frames.push_back(f);
    }

    void expandFile(const std::string &text, const std::string &fileName, int depth, std::string &out)
    {
        const std::size_t framesAtStart = m_frames.size();
        bool inComment = false;
        std::size_t pos = 0;
        int row = 0; // 0-based physical line of this file
        while (pos < text.size()) {
            // One logical line: physical lines joined by backslash-newline.
            std::size_t end = pos;
            int rows = 0;
            const bool startsInComment = inComment;
            while (true) {
                const auto nl = text.find('\n', end);
                const std::size_t lineEnd = nl == std::string::npos ? text.size() : nl;
                ++rows;
                std::string_view physical(text.data() + end, lineEnd - end);
                inComment = endsInBlockComment(physical, inComment);
                end = nl == std::string::npos ? text.size() : nl + 1;
                const auto body = trim(physical);
                if (nl == std::string::npos || body.empty() || body.back() != '\\' || inComment)
                    break;
            }
            const std::string_view line(text.data() + pos, end - pos);
            const SourceLocation where{fileName, row + 1, static_cast<int>(line.size() - trimLeft(line).size()) + 1};
            const int nextLine = row + rows + 1;
            row += rows;
            pos = end;

            const std::string_view head = trimLeft(line);
            if (startsInComment || head.empty() || head[0] != '#') {
                if (live())
                    out += line;
                else
                    appendBlank(out, line);
                continue;
            }
            std::string joined;
            for (std::size_t i = 0; i < head.size(); ++i) {
                if (head[i] == '\\' && i + 1 < head.size() && (head[i + 1] == '\n' || head[i + 1] == '\r')) {
                    while (i + 1 < head.size() && head[i + 1] != '\n')
                        ++i;
                    ++i;
                    joined += ' ';
                } else {
                    joined += head[i];
                }
            }
            const std::string directiveText = stripComments(std::string_view(joined).substr(1));
            std::string_view d = trimLeft(directiveText);
            const std::string keyword(identifierAt(d));
            d = trim(d.substr(keyword.size()));
            directive(keyword, d, line, fileName, where, nextLine, depth, out);
        }
        if (m_frames.size() > framesAtStart) {
            m_out.diagnostics.push_back({Severity::Warning, SourceLocation{fileName, row, 1},
                                         "an #if group is not closed before the end of the file"});
            m_frames.resize(framesAtStart);
        }
    }

    void directive(const std::string &keyword, std::string_view rest, std::string_view line, const std::string &fileName,
                   const SourceLocation &where, int nextLine, int depth, std::string &out)
    {
        const bool wasLive = live();
        if (keyword == "if" || keyword == "ifdef" || keyword == "ifndef") {
            std::optional<bool> value;
            if (keyword == "if") {
                value = evaluateCondition(rest, m_macros);
            } else {
                const auto status = m_macros.status(std::string(identifierAt(rest)));
                if (status != MacroTable::Status::Unknown)
                    value = (status == MacroTable::Status::Defined) == (keyword == "ifdef");
            }
            openGroup(wasLive ? value : std::optional<bool>(false));
            emitDirective(line, m_frames.back().mode == Frame::Mode::Open && wasLive, out);
            return;
        }
        if (keyword == "elif" || keyword == "else" || keyword == "endif") {
            if (m_frames.size() == 0) {
                out += line; // unbalanced: the compiler will say so
                return;
            }
            Frame &f = m_frames.back();
            if (keyword == "endif") {
                const bool keep = f.mode == Frame::Mode::Open && f.parentLive;
                m_frames.pop_back();
                emitDirective(line, keep, out);
                return;
            }
            if (f.mode == Frame::Mode::Open) {
                emitDirective(line, f.parentLive, out);
                return;
            }
            if (!f.parentLive || f.taken) {
                f.live = false;
                emitDirective(line, false, out);
                return;
            }
            const std::optional<bool> value = keyword == "else" ? std::optional<bool>(true) : evaluateCondition(rest, m_macros);
            if (value) {
                f.live = f.taken = *value;
                emitDirective(line, false, out);
                return;
            }
            // Earlier branches were decided false; this one cannot be: it opens the group anew,
            // written as an #if of the same length so the text stays balanced.
            f.mode = Frame::Mode::Open;
            std::string rewritten(line);
            const auto at = rewritten.find("elif");
            rewritten.replace(at, 4, "if  ");
            out += rewritten;
            return;
        }
        if (!wasLive) {
            appendBlank(out, line);
            return;
        }
        if (keyword == "define") {
            const std::string name(identifierAt(rest));
            const std::string_view after = rest.substr(name.size());
            const bool functionLike = !after.empty() && after[0] == '(';
            if (insideOpen())
                m_macros.setUnknown(name);
            else if (functionLike)
                m_macros.defineFunctionLike(name);
            else
                m_macros.define(name, std::string(trim(after)));
            if (!insideOpen()) {
                m_fileDefined.insert(name);
                for (const auto &[dname, dvalue] : m_options.defines) {
                    if (dname == name && m_warnedRedefinition.insert(name).second) {
                        m_out.diagnostics.push_back({Severity::Warning, where,
                                                     "'" + name + "' is defined here and with -D; this definition is used, as nvcc does"});
                    }
                }
            }
        } else if (keyword == "undef") {
            const std::string name(identifierAt(rest));
            if (insideOpen())
                m_macros.setUnknown(name);
            else
                m_macros.undefine(name);
        } else if (keyword == "include") {
            if (include(rest, line, fileName, nextLine, where, depth, out))
                return;
        }
        out += line;
    }

    static void emitDirective(std::string_view line, bool keep, std::string &out)
    {
        if (keep)
            out += line;
        else
            appendBlank(out, line);
    }

    const SourceOptions &m_options;
    std::function<std::optional<std::string>(const std::string &)> m_read;
    MacroTable m_macros;
    std::vector<Frame> m_frames;
    std::set<std::string> m_included;
    std::set<std::string> m_fileDefined, m_warnedRedefinition;
    ExpandedSource m_out;
};

} // namespace

LineMap::LineMap(std::string_view text)
{
    unsigned row = 0;
    std::string file;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos)
            nl = text.size();
        std::string_view l = trimLeft(text.substr(pos, nl - pos));
        if (!l.empty() && l[0] == '#') {
            l = trimLeft(l.substr(1));
            if (l.substr(0, 4) == "line" && l.size() > 4 && isSpace(l[4])) {
                l = trimLeft(l.substr(4));
                std::size_t n = 0;
                while (n < l.size() && std::isdigit(static_cast<unsigned char>(l[n])))
                    ++n;
                if (n > 0 && n < 10) {
                    Mark m;
                    m.row = row + 1;
                    m.line = std::stoi(std::string(l.substr(0, n)));
                    l = trimLeft(l.substr(n));
                    if (!l.empty() && l[0] == '"') {
                        std::string name;
                        for (std::size_t i = 1; i < l.size() && l[i] != '"'; ++i) {
                            if (l[i] == '\\' && i + 1 < l.size())
                                ++i;
                            name += l[i];
                        }
                        file = name;
                    }
                    m.file = file;
                    m_marks.push_back(std::move(m));
                }
            }
        }
        pos = nl + 1;
        ++row;
    }
}

SourceLocation LineMap::at(const std::string &fileName, unsigned row, unsigned column) const
{
    const auto it = std::upper_bound(m_marks.begin(), m_marks.end(), row,
                                     [](unsigned r, const Mark &m) { return r < m.row; });
    if (it == m_marks.begin())
        return {fileName, static_cast<int>(row) + 1, static_cast<int>(column) + 1};
    const Mark &m = *std::prev(it);
    return {m.file.empty() ? fileName : m.file, m.line + static_cast<int>(row - m.row), static_cast<int>(column) + 1};
}

Result<std::pair<std::string, std::string>> parseDefine(std::string_view text)
{
    std::string_view s = text;
    if (s.substr(0, 2) == "-D")
        s.remove_prefix(2);
    const auto eq = s.find('=');
    const std::string_view name = s.substr(0, eq);
    if (name.empty() || identifierAt(name).size() != name.size())
        return makeError(ErrorKind::InvalidArgument, "-D expects NAME or NAME=VALUE with NAME an identifier, got '" +
                                                         std::string(text) + "'");
    return std::pair{std::string(name), eq == std::string_view::npos ? std::string("1") : std::string(s.substr(eq + 1))};
}

ExpandedSource expandCudaSource(const std::string &text, const std::string &fileName, const SourceOptions &options)
{
    return Expander(options).run(text, fileName);
}

} // namespace stitch::frontend
