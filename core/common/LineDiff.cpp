#include "core/common/LineDiff.h"

#include <dtl/dtl.hpp>

#include <algorithm>
#include <string_view>

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

    // The middle as a sequence of single-line operations, in order: dtl's shortest edit script
    // (Wu, Manber and Myers' O(NP) algorithm).
    std::vector<DiffRow> ops;
    if (rn == 0 || rm == 0 || std::size_t(rn + 1) * std::size_t(rm + 1) > maxCells) {
        for (int i = 0; i < rn; ++i)
            ops.push_back({Kind::Removed, prefix + i, -1});
        for (int j = 0; j < rm; ++j)
            ops.push_back({Kind::Added, -1, prefix + j});
    } else {
        dtl::Diff<std::string_view> diff(std::vector<std::string_view>(a.begin() + prefix, a.begin() + prefix + rn),
                                          std::vector<std::string_view>(b.begin() + prefix, b.begin() + prefix + rm));
        diff.onHuge();
        diff.compose();
        for (const auto &[line, info] : diff.getSes().getSequence()) {
            // dtl's indices are 1-based within the middle.
            const int i = prefix + static_cast<int>(info.beforeIdx) - 1, j = prefix + static_cast<int>(info.afterIdx) - 1;
            if (info.type == dtl::SES_COMMON)
                ops.push_back({Kind::Same, i, j});
            else if (info.type == dtl::SES_DELETE)
                ops.push_back({Kind::Removed, i, -1});
            else
                ops.push_back({Kind::Added, -1, j});
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
