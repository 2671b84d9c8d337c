// The side-by-side line diff (core/common/LineDiff.h): rows align both texts, pair a removed run with
// the added run beside it, and keep every line of each text once, in order.
#include "core/common/LineDiff.h"

#include <gtest/gtest.h>

using namespace stitch;
using Kind = DiffRow::Kind;

namespace {

/// Each text's lines appear once, in order, on the rows that name them.
void expectCovers(const std::vector<DiffRow> &rows, std::size_t left, std::size_t right)
{
    int l = 0, r = 0;
    for (const auto &row : rows) {
        if (row.left >= 0) {
            EXPECT_EQ(row.left, l++);
        }
        if (row.right >= 0) {
            EXPECT_EQ(row.right, r++);
        }
        EXPECT_TRUE(row.left >= 0 || row.right >= 0);
    }
    EXPECT_EQ(std::size_t(l), left);
    EXPECT_EQ(std::size_t(r), right);
}

} // namespace

TEST(LineDiff, SplitsLinesLikeAnEditor)
{
    EXPECT_TRUE(splitLines("").empty());
    EXPECT_EQ(splitLines("a\nb"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(splitLines("a\n\nb\n"), (std::vector<std::string>{"a", "", "b"}));
}

TEST(LineDiff, IdenticalTextsAreAllSame)
{
    const std::vector<std::string> a{"x", "y", "z"};
    const auto rows = diffLines(a, a);
    ASSERT_EQ(rows.size(), 3u);
    for (const auto &row : rows)
        EXPECT_EQ(row.kind, Kind::Same);
    expectCovers(rows, 3, 3);
}

TEST(LineDiff, AChangedLinePairsUpAndInsertionsStandAlone)
{
    // block_k 8 -> 16 changes one line; the new program also gains two lines after it.
    const std::vector<std::string> a{"kernel", "  BK = 8;", "  loop", "end"};
    const std::vector<std::string> b{"kernel", "  BK = 16;", "  prefetch", "  wait", "  loop", "end"};
    const auto rows = diffLines(a, b);
    expectCovers(rows, a.size(), b.size());
    ASSERT_EQ(rows.size(), 6u);
    EXPECT_EQ(rows[0].kind, Kind::Same);
    EXPECT_EQ(rows[1].kind, Kind::Changed);
    EXPECT_EQ(rows[1].left, 1);
    EXPECT_EQ(rows[1].right, 1);
    EXPECT_EQ(rows[2].kind, Kind::Added);
    EXPECT_EQ(rows[3].kind, Kind::Added);
    EXPECT_EQ(rows[4].kind, Kind::Same);
    EXPECT_EQ(rows[4].left, 2);
    EXPECT_EQ(rows[4].right, 4);
}

TEST(LineDiff, RemovalsAndEmptySides)
{
    const std::vector<std::string> a{"a", "b", "c"};
    const auto removed = diffLines(a, {"a", "c"});
    expectCovers(removed, 3, 2);
    ASSERT_EQ(removed.size(), 3u);
    EXPECT_EQ(removed[1].kind, Kind::Removed);
    EXPECT_EQ(removed[1].left, 1);
    const auto toEmpty = diffLines(a, {});
    expectCovers(toEmpty, 3, 0);
    for (const auto &row : toEmpty)
        EXPECT_EQ(row.kind, Kind::Removed);
    expectCovers(diffLines({}, a), 0, 3);
}

TEST(LineDiff, TooLargeAMiddleIsShownChangedNotDropped)
{
    // Over the cell budget the middle is not searched: every line still shows, rows still align.
    const std::vector<std::string> a{"head", "1", "2", "3", "tail"};
    const std::vector<std::string> b{"head", "3", "4", "tail"};
    const auto rows = diffLines(a, b, 4);
    expectCovers(rows, a.size(), b.size());
    EXPECT_EQ(rows.front().kind, Kind::Same);
    EXPECT_EQ(rows.back().kind, Kind::Same);
    EXPECT_EQ(rows[1].kind, Kind::Changed);
    EXPECT_EQ(rows[3].kind, Kind::Removed);
}
