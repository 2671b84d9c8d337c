#pragma once
// The side-by-side diff of two programs that the studio's Code view shows: the aligned rows of
// LineDiff.h, the changed characters inside each changed row, and the hunks to step between.
//   left text + right text -> splitLines -> diffLines (dtl) -> rows -> diffCharacters (dtl, on tokens)
//   -> TextDiff { rows, changed ranges per row, hunks }
// Plain C++ (no Qt): the Code view and any command-line report read the same result.

#include "core/common/LineDiff.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stitch {

/// A run of characters inside one line: UTF-8 byte offsets [begin, end), never inside a character.
struct TextRange {
    int begin = 0;
    int end = 0;
    bool operator==(const TextRange &) const = default;
};

/// What changed inside a line that stands beside another.
struct LineChanges {
    std::vector<TextRange> left;  ///< removed or replaced in the left line
    std::vector<TextRange> right; ///< added or replacing in the right line
    /// The two lines share too little for a character diff to read well (under a third of their
    /// visible characters): each side's whole text from its first non-blank character is one range.
    bool rewritten = false;
};

/// The changed characters of two lines. The lines are compared as tokens (identifiers and numbers,
/// runs of blanks, single other characters, each UTF-8 character whole), so `BK = 8` beside
/// `BK = 16` marks `8` and `16`, not a scatter of letters that happen to match.
LineChanges diffCharacters(std::string_view left, std::string_view right);

/// A run of rows that are not Same, with where it sits in each text.
struct DiffHunk {
    int firstRow = 0;
    int rowCount = 0;
    /// 0-based first line of each text in the hunk; where a side has none (a pure insertion or
    /// removal), the line the hunk sits before on that side (its line count at the end).
    int leftLine = 0;
    int leftCount = 0;
    int rightLine = 0;
    int rightCount = 0;
};

struct TextDiff {
    std::vector<std::string> left, right; ///< the two texts' lines
    std::vector<DiffRow> rows;            ///< aligned: -1 on the side a row has no line
    /// Per row: the changed characters of a Changed row (empty for the other kinds, whose whole
    /// line is what changed).
    std::vector<LineChanges> changes;
    std::vector<DiffHunk> hunks;
    int changedRows = 0, removedRows = 0, addedRows = 0;

    bool identical() const { return hunks.empty(); }
    /// The hunk holding `row`, or the first after it when `row` is Same; -1 when none is.
    int hunkAtOrAfter(int row) const;
    /// The row that shows line `line` (0-based) of the left (or right) text; -1 when out of range.
    int rowOfLeftLine(int line) const;
    int rowOfRightLine(int line) const;
};

/// The side-by-side diff of two texts ("\n"-separated; a "\r" before it is dropped). `maxCells`
/// as for diffLines.
TextDiff diffTexts(const std::string &left, const std::string &right, std::size_t maxCells = 4'000'000);

} // namespace stitch
