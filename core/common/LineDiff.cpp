#include "core/common/LineDiff.h"

#include <algorithm>
#include <cstdint>

namespace stitch {

std::vector<std::string> splitLines(const std::string &text)
{
    std::vector<std::string> lines;
    std::size_t begin = 0;
    while (begin < text.size()) {
        const std::size_t end = text.find('\n', begin);
        if (end == std::string::npos) {
            lines.push_back(text.substr(begin));
            break;
        }
        lines.push_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    return lines;
}

std::vector<DiffRow> diffLines(const std::vector<std::string> &a, const std::vector<std::string> &b, std::size_t maxCells)
{
    using Kind = DiffRow::Kind;
    const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
    int prefix = 0;
    while (prefix < n && prefix < m && a[prefix] == b[prefix])
        ++prefix;
    int suffix = 0;
    while (suffix < n - prefix && suffix < m - prefix && a[n - 1 - suffix] == b[m - 1 - suffix])
        ++suffix;
    const int rn = n - prefix - suffix, rm = m - prefix - suffix; // the middle parts

    // The middle as a sequence of single-line operations, in order.
    std::vector<DiffRow> ops;
    if (std::size_t(rn + 1) * std::size_t(rm + 1) > maxCells) {
        for (int i = 0; i < rn; ++i)
            ops.push_back({Kind::Removed, prefix + i, -1});
        for (int j = 0; j < rm; ++j)
            ops.push_back({Kind::Added, -1, prefix + j});
    } else {
        // lcs[i][j]: the longest common subsequence of a's middle from i and b's middle from j.
        const std::size_t width = std::size_t(rm) + 1;
        std::vector<std::uint32_t> lcs((std::size_t(rn) + 1) * width, 0);
        auto at = [&](int i, int j) -> std::uint32_t & { return lcs[std::size_t(i) * width + std::size_t(j)]; };
        for (int i = rn - 1; i >= 0; --i)
            for (int j = rm - 1; j >= 0; --j)
                at(i, j) = a[prefix + i] == b[prefix + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
        int i = 0, j = 0;
        while (i < rn || j < rm) {
            if (i < rn && j < rm && a[prefix + i] == b[prefix + j]) {
                ops.push_back({Kind::Same, prefix + i++, prefix + j++});
            } else if (j < rm && (i == rn || at(i, j + 1) >= at(i + 1, j))) {
                ops.push_back({Kind::Added, -1, prefix + j++});
            } else {
                ops.push_back({Kind::Removed, prefix + i++, -1});
            }
        }
    }

    std::vector<DiffRow> rows;
    rows.reserve(std::size_t(std::max(n, m)));
    for (int k = 0; k < prefix; ++k)
        rows.push_back({Kind::Same, k, k});
    // A run of removals and additions (in any order) pairs up row by row as changed lines.
    for (std::size_t k = 0; k < ops.size();) {
        if (ops[k].kind == Kind::Same) {
            rows.push_back(ops[k++]);
            continue;
        }
        std::vector<int> removed, added;
        for (; k < ops.size() && ops[k].kind != Kind::Same; ++k) {
            if (ops[k].kind == Kind::Removed)
                removed.push_back(ops[k].left);
            else
                added.push_back(ops[k].right);
        }
        const std::size_t pairs = std::min(removed.size(), added.size());
        for (std::size_t p = 0; p < std::max(removed.size(), added.size()); ++p) {
            if (p < pairs)
                rows.push_back({Kind::Changed, removed[p], added[p]});
            else if (p < removed.size())
                rows.push_back({Kind::Removed, removed[p], -1});
            else
                rows.push_back({Kind::Added, -1, added[p]});
        }
    }
    for (int k = 0; k < suffix; ++k)
        rows.push_back({Kind::Same, n - suffix + k, m - suffix + k});
    return rows;
}

} // namespace stitch
