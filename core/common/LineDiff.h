#pragma once
// A line diff for side-by-side views: two texts' lines aligned row by row.
//   previous lines + current lines -> diffLines -> rows (same, changed, removed, added) -> studio diff view
// The longest common subsequence of the lines between the common prefix and suffix; a removed run
// followed by an added run pairs up row by row as changed lines.

#include <cstddef>
#include <string>
#include <vector>

namespace stitch {

struct DiffRow {
    enum class Kind { Same, Changed, Removed, Added };
    Kind kind = Kind::Same;
    int left = -1;  ///< 0-based line of the first text (-1: none on this row)
    int right = -1; ///< 0-based line of the second text (-1: none on this row)
};

/// The rows of a side-by-side diff. Where the lines between the common prefix and suffix would need
/// more than `maxCells` table cells, they are all shown as changed (the rows still align).
std::vector<DiffRow> diffLines(const std::vector<std::string> &left, const std::vector<std::string> &right,
                               std::size_t maxCells = 4'000'000);

/// The lines of a text ("\n" separated; a last line without one counts; none for empty text).
std::vector<std::string> splitLines(const std::string &text);

} // namespace stitch
