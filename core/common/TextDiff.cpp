#include "core/common/TextDiff.h"

#include <dtl/dtl.hpp>

#include <algorithm>

namespace stitch {

namespace {

struct Token {
    std::string_view text;
    int begin = 0;
    bool blank = false;
    int end() const { return begin + static_cast<int>(text.size()); }
};

bool isWordByte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool isBlank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/// Identifiers and numbers (`0x1f`, `1.5f` split at the dot), runs of blanks, and any other
/// character alone (a UTF-8 sequence whole, so no range ends inside a character).
std::vector<Token> tokenize(std::string_view s)
{
    std::vector<Token> tokens;
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t j = i + 1;
        if (isWordByte(c)) {
            while (j < s.size() && isWordByte(static_cast<unsigned char>(s[j])))
                ++j;
        } else if (isBlank(c)) {
            while (j < s.size() && isBlank(static_cast<unsigned char>(s[j])))
                ++j;
        } else if (c >= 0xC0) {
            while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80)
                ++j;
        }
        tokens.push_back({s.substr(i, j - i), static_cast<int>(i), isBlank(c)});
        i = j;
    }
    return tokens;
}

int visibleBytes(const std::vector<Token> &tokens)
{
    int n = 0;
    for (const Token &t : tokens)
        n += t.blank ? 0 : static_cast<int>(t.text.size());
    return n;
}

/// The line from its first to its last non-blank character; empty for a blank line.
std::vector<TextRange> wholeLine(std::string_view s)
{
    int begin = 0, end = static_cast<int>(s.size());
    while (begin < end && isBlank(static_cast<unsigned char>(s[std::size_t(begin)])))
        ++begin;
    while (end > begin && isBlank(static_cast<unsigned char>(s[std::size_t(end - 1)])))
        --end;
    if (begin == end)
        return {};
    return {{begin, end}};
}

/// The changed tokens as ranges; two ranges with only unchanged blanks between them become one.
std::vector<TextRange> rangesOf(const std::vector<Token> &tokens, const std::vector<bool> &changed)
{
    std::vector<TextRange> ranges;
    std::size_t k = 0;
    while (k < tokens.size()) {
        if (!changed[k]) {
            ++k;
            continue;
        }
        TextRange r{tokens[k].begin, tokens[k].end()};
        ++k;
        while (k < tokens.size()) {
            if (changed[k]) {
                r.end = tokens[k++].end();
                continue;
            }
            std::size_t next = k;
            while (next < tokens.size() && !changed[next] && tokens[next].blank)
                ++next;
            if (next == k || next == tokens.size() || !changed[next])
                break;
            k = next; // blanks between two changes: one range
        }
        ranges.push_back(r);
    }
    return ranges;
}

std::string_view trimCarriageReturn(const std::string &line)
{
    std::string_view v(line);
    if (!v.empty() && v.back() == '\r')
        v.remove_suffix(1);
    return v;
}

/// More token pairs than this and the lines count as rewritten (no character diff).
constexpr std::size_t kMaxTokenCells = 1'000'000;

} // namespace

LineChanges diffCharacters(std::string_view left, std::string_view right)
{
    LineChanges out;
    const std::vector<Token> a = tokenize(left), b = tokenize(right);
    const int visible = visibleBytes(a) + visibleBytes(b);
    const auto rewrite = [&] {
        out.left = wholeLine(left);
        out.right = wholeLine(right);
        out.rewritten = true;
        return out;
    };
    if (a.empty() || b.empty() || (a.size() + 1) * (b.size() + 1) > kMaxTokenCells)
        return visible > 0 ? rewrite() : out;

    std::vector<std::string_view> ta, tb;
    for (const Token &t : a)
        ta.push_back(t.text);
    for (const Token &t : b)
        tb.push_back(t.text);
    dtl::Diff<std::string_view> diff(ta, tb);
    diff.compose();
    std::vector<bool> changedA(a.size(), false), changedB(b.size(), false);
    int common = 0;
    for (const auto &[text, info] : diff.getSes().getSequence()) {
        if (info.type == dtl::SES_DELETE) {
            changedA[std::size_t(info.beforeIdx - 1)] = true;
        } else if (info.type == dtl::SES_ADD) {
            changedB[std::size_t(info.afterIdx - 1)] = true;
        } else if (!a[std::size_t(info.beforeIdx - 1)].blank) {
            common += static_cast<int>(text.size());
        }
    }
    // Under a third of the visible characters in common: marking what matched by chance would
    // only scatter marks over two unrelated lines.
    if (visible > 0 && 6 * common < visible)
        return rewrite();
    out.left = rangesOf(a, changedA);
    out.right = rangesOf(b, changedB);
    return out;
}

TextDiff diffTexts(const std::string &left, const std::string &right, std::size_t maxCells)
{
    TextDiff d;
    d.left = splitLines(left);
    d.right = splitLines(right);
    for (auto *lines : {&d.left, &d.right})
        for (std::string &line : *lines)
            line.resize(trimCarriageReturn(line).size());
    d.rows = diffLines(d.left, d.right, maxCells);
    d.changes.resize(d.rows.size());

    using Kind = DiffRow::Kind;
    int leftSeen = 0, rightSeen = 0;
    for (std::size_t r = 0; r < d.rows.size(); ++r) {
        const DiffRow &row = d.rows[r];
        const bool inHunk = !d.hunks.empty() && d.hunks.back().firstRow + d.hunks.back().rowCount == int(r);
        if (row.kind != Kind::Same) {
            if (!inHunk)
                d.hunks.push_back({int(r), 0, leftSeen, 0, rightSeen, 0});
            DiffHunk &h = d.hunks.back();
            ++h.rowCount;
            h.leftCount += row.left >= 0 ? 1 : 0;
            h.rightCount += row.right >= 0 ? 1 : 0;
        }
        switch (row.kind) {
        case Kind::Same: break;
        case Kind::Changed:
            ++d.changedRows;
            d.changes[r] = diffCharacters(d.left[std::size_t(row.left)], d.right[std::size_t(row.right)]);
            break;
        case Kind::Removed: ++d.removedRows; break;
        case Kind::Added: ++d.addedRows; break;
        }
        leftSeen += row.left >= 0 ? 1 : 0;
        rightSeen += row.right >= 0 ? 1 : 0;
    }
    return d;
}

int TextDiff::hunkAtOrAfter(int row) const
{
    for (std::size_t h = 0; h < hunks.size(); ++h)
        if (hunks[h].firstRow + hunks[h].rowCount > row)
            return static_cast<int>(h);
    return -1;
}

int TextDiff::rowOfLeftLine(int line) const
{
    for (std::size_t r = 0; r < rows.size(); ++r)
        if (rows[r].left == line)
            return static_cast<int>(r);
    return -1;
}

int TextDiff::rowOfRightLine(int line) const
{
    for (std::size_t r = 0; r < rows.size(); ++r)
        if (rows[r].right == line)
            return static_cast<int>(r);
    return -1;
}

} // namespace stitch
