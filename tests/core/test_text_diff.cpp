// The Code view's diff (core/common/TextDiff.h): hunks, rows aligned with nothing on the side a
// line is missing from, and the changed characters inside changed rows.
#include "core/common/TextDiff.h"

#include <gtest/gtest.h>

using namespace stitch;
using Kind = DiffRow::Kind;

namespace {

std::string cut(std::string_view line, const TextRange &r)
{
    return std::string(line.substr(std::size_t(r.begin), std::size_t(r.end - r.begin)));
}

std::vector<std::string> cuts(std::string_view line, const std::vector<TextRange> &ranges)
{
    std::vector<std::string> out;
    for (const TextRange &r : ranges)
        out.push_back(cut(line, r));
    return out;
}

using Strings = std::vector<std::string>;

} // namespace

TEST(TextDiff, ANumberChangedInsideALineIsTheRangeMarked)
{
    const LineChanges c = diffCharacters("    constexpr int BK = 8;", "    constexpr int BK = 16;");
    EXPECT_FALSE(c.rewritten);
    EXPECT_EQ(cuts("    constexpr int BK = 8;", c.left), Strings{"8"});
    EXPECT_EQ(cuts("    constexpr int BK = 16;", c.right), Strings{"16"});
}

TEST(TextDiff, ChangesSeparatedOnlyByBlanksAreOneRange)
{
    const std::string a = "c[i] = a[i] + b[i];", b = "c[i] = fmaf(a[i], s, b[i]);";
    const LineChanges c = diffCharacters(a, b);
    EXPECT_FALSE(c.rewritten);
    EXPECT_EQ(cuts(a, c.left), Strings{"+"});
    EXPECT_EQ(cuts(b, c.right), (Strings{"fmaf(", ", s,", ")"}));
}

TEST(TextDiff, UnrelatedLinesAreRewrittenWholeNotScattered)
{
    const std::string a = "  for (int k = 0; k < K; ++k)", b = "  __syncthreads();";
    const LineChanges c = diffCharacters(a, b);
    EXPECT_TRUE(c.rewritten);
    EXPECT_EQ(cuts(a, c.left), Strings{"for (int k = 0; k < K; ++k)"});
    EXPECT_EQ(cuts(b, c.right), Strings{"__syncthreads();"});
}

TEST(TextDiff, RangesNeverSplitAUtf8Character)
{
    const std::string a = "// tile \xc3\xa9t\xc3\xa9", b = "// tile \xc3\xa0t\xc3\xa9"; // été -> àté
    const LineChanges c = diffCharacters(a, b);
    ASSERT_EQ(c.left.size(), 1u);
    EXPECT_EQ(cut(a, c.left[0]), "\xc3\xa9");
    EXPECT_EQ(cut(b, c.right[0]), "\xc3\xa0");
}

TEST(TextDiff, BlankAndEmptyLines)
{
    EXPECT_TRUE(diffCharacters("", "").left.empty());
    const LineChanges added = diffCharacters("", "  x = 1;");
    EXPECT_TRUE(added.left.empty());
    EXPECT_EQ(cuts("  x = 1;", added.right), Strings{"x = 1;"});
    const LineChanges indent = diffCharacters("x", "  x"); // only blanks changed: still shown
    EXPECT_EQ(indent.right, (std::vector<TextRange>{{0, 2}}));
}

TEST(TextDiff, RowsAlignWithNothingOnTheMissingSideAndHunksSayWhere)
{
    const std::string a = "kernel\n  BK = 8;\n  loop\n  old\nend\n";
    const std::string b = "kernel\n  BK = 16;\n  prefetch\n  wait\n  loop\nend\n";
    const TextDiff d = diffTexts(a, b);
    ASSERT_EQ(d.left.size(), 5u);
    ASSERT_EQ(d.right.size(), 6u);
    ASSERT_EQ(d.rows.size(), 7u);
    const std::vector<Kind> kinds{Kind::Same, Kind::Changed, Kind::Added, Kind::Added, Kind::Same, Kind::Removed, Kind::Same};
    for (std::size_t r = 0; r < kinds.size(); ++r)
        EXPECT_EQ(d.rows[r].kind, kinds[r]) << "row " << r;
    EXPECT_EQ(d.rows[2].left, -1);
    EXPECT_EQ(d.rows[5].right, -1);
    EXPECT_EQ(d.rows[4].left, 2);
    EXPECT_EQ(d.rows[4].right, 4);
    EXPECT_EQ(d.changedRows, 1);
    EXPECT_EQ(d.addedRows, 2);
    EXPECT_EQ(d.removedRows, 1);
    EXPECT_EQ(cuts(d.left[1], d.changes[1].left), Strings{"8"});
    EXPECT_EQ(cuts(d.right[1], d.changes[1].right), Strings{"16"});
    EXPECT_TRUE(d.changes[2].left.empty() && d.changes[2].right.empty());

    ASSERT_EQ(d.hunks.size(), 2u);
    EXPECT_EQ(d.hunks[0].firstRow, 1);
    EXPECT_EQ(d.hunks[0].rowCount, 3);
    EXPECT_EQ(d.hunks[0].leftLine, 1);
    EXPECT_EQ(d.hunks[0].leftCount, 1);
    EXPECT_EQ(d.hunks[0].rightLine, 1);
    EXPECT_EQ(d.hunks[0].rightCount, 3);
    // A pure removal: the right side's place is the line it sits before.
    EXPECT_EQ(d.hunks[1].firstRow, 5);
    EXPECT_EQ(d.hunks[1].leftLine, 3);
    EXPECT_EQ(d.hunks[1].rightCount, 0);
    EXPECT_EQ(d.hunks[1].rightLine, 5);

    EXPECT_EQ(d.hunkAtOrAfter(0), 0);
    EXPECT_EQ(d.hunkAtOrAfter(3), 0);
    EXPECT_EQ(d.hunkAtOrAfter(4), 1);
    EXPECT_EQ(d.hunkAtOrAfter(6), -1);
    EXPECT_EQ(d.rowOfLeftLine(3), 5);
    EXPECT_EQ(d.rowOfRightLine(4), 4);
    EXPECT_EQ(d.rowOfLeftLine(99), -1);
}

TEST(TextDiff, IdenticalEmptyAndOneSidedTexts)
{
    EXPECT_TRUE(diffTexts("a\nb\n", "a\nb\n").identical());
    EXPECT_TRUE(diffTexts("", "").rows.empty());
    const TextDiff added = diffTexts("", "x\ny");
    ASSERT_EQ(added.hunks.size(), 1u);
    EXPECT_EQ(added.addedRows, 2);
    EXPECT_EQ(added.hunks[0].leftCount, 0);
    const TextDiff crlf = diffTexts("a\r\nb\r\n", "a\nb\n"); // line ends are not changes
    EXPECT_TRUE(crlf.identical());
}

TEST(TextDiff, MovedBlocksKeepEveryLineOnce)
{
    // dtl's edit script reorders nothing: each text's lines appear once, in order.
    const std::string a = "1\n2\n3\n4\n5\n6\n", b = "4\n5\n6\n1\n2\n3\n";
    const TextDiff d = diffTexts(a, b);
    int l = 0, r = 0;
    for (const DiffRow &row : d.rows) {
        if (row.left >= 0) {
            EXPECT_EQ(row.left, l++);
        }
        if (row.right >= 0) {
            EXPECT_EQ(row.right, r++);
        }
    }
    EXPECT_EQ(l, 6);
    EXPECT_EQ(r, 6);
}
