#pragma once
// A line diff for side-by-side views: two texts' lines aligned row by row.
//   previous lines + current lines -> diffLines -> rows (same, changed, removed, added) -> studio diff view
// The shortest edit script (dtl, Debian's libdtl-dev) of the lines between the common prefix and
// suffix; a removed run next to an added run pairs up row by row as changed lines. TextDiff.h adds
// the changed characters inside those rows and the hunks.

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

/// The rows of a side-by-side diff. Where the lines between the common prefix and suffix span more
/// than `maxCells` (their counts plus one, multiplied), they are all shown as changed rather than
/// searched (the rows still align): a bound on the work for two unrelated long texts.
std::vector<DiffRow> diffLines(const std::vector<std::string> &left, const std::vector<std::string> &right,
                               std::size_t maxCells = 4'000'000);

/// The lines of a text ("\n" separated; a last line without one counts; none for empty text).
std::vector<std::string> splitLines(const std::string &text);

} // namespace stitch
