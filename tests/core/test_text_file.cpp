// Whole text files, plain or gzip-compressed (core/storage/TextFile.h): the stored measurements'
// large CSVs are kept as NAME.csv.gz, and the calibration reader and the measured sets read both.
#include "core/rubric/Calibration.h"
#include "core/storage/TextFile.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace stitch;
namespace fs = std::filesystem;

namespace {

class TextFiles : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_dir = fs::path(::testing::TempDir()) / ("stitch-textfile-" + std::to_string(::getpid()));
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }
    std::string path(const std::string &name) const { return (m_dir / name).string(); }
    void writePlain(const std::string &name, const std::string &text) const { std::ofstream(path(name)) << text; }
    void writeGzip(const std::string &name, const std::string &text) const
    {
        gzFile f = gzopen(path(name).c_str(), "wb");
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
        gzclose(f);
    }
    fs::path m_dir;
};

std::string calibrationCsv()
{
    std::ostringstream out;
    out << "case,shape,candidate,measured_ms,predicted_ms,schedule\n";
    rubric::writeCalibrationRow(out, {"gemm", "1024x1024x1024", 0, 0.25, 0.3, "gemm [gemm] block_m=128", {}});
    rubric::writeCalibrationRow(out, {"gemm", "1024x1024x1024", 1, 0.5, 0.4, "gemm [gemm] block_m=64", {}});
    return out.str();
}

} // namespace

TEST_F(TextFiles, PlainAndCompressedFilesReadTheSame)
{
    const std::string text = "line one\nline two, with, commas\n" + std::string(100000, 'x') + "\n";
    writePlain("a.txt", text);
    writeGzip("a.txt.gz", text);
    auto plain = readTextFile(path("a.txt"));
    auto packed = readTextFile(path("a.txt.gz"));
    ASSERT_TRUE(plain.ok()) << plain.error().message;
    ASSERT_TRUE(packed.ok()) << packed.error().message;
    EXPECT_EQ(*plain, text);
    EXPECT_EQ(*packed, text);
    EXPECT_GT(fs::file_size(path("a.txt")), fs::file_size(path("a.txt.gz")) * 10) << "the test's data compresses";
}

TEST_F(TextFiles, AMissingFileIsAnIoErrorNamingIt)
{
    auto r = readTextFile(path("nope.csv.gz"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Io);
    ASSERT_TRUE(r.error().location);
    EXPECT_EQ(r.error().location->file, path("nope.csv.gz"));
}

TEST_F(TextFiles, ATruncatedCompressedFileIsAParseErrorNotAShortText)
{
    std::string text;
    for (int i = 0; i < 20000; ++i)
        text += "row " + std::to_string(i * 7919 % 100003) + "\n";
    writeGzip("t.csv.gz", text);
    fs::resize_file(path("t.csv.gz"), fs::file_size(path("t.csv.gz")) / 2);
    auto r = readTextFile(path("t.csv.gz"));
    ASSERT_FALSE(r.ok()) << "read " << r->size() << " of " << text.size() << " bytes without a word";
    EXPECT_EQ(r.error().kind, ErrorKind::Parse);
    EXPECT_NE(r.error().message.find("ends early"), std::string::npos) << r.error().message;
}

TEST_F(TextFiles, CalibrationCsvsAreReadCompressed)
{
    writeGzip("run.csv.gz", calibrationCsv());
    writePlain("notes.txt", "not a csv");
    auto rows = rubric::readCalibration(path("run.csv.gz"));
    ASSERT_TRUE(rows.ok()) << rows.error().message;
    ASSERT_EQ(rows->size(), 2u);
    EXPECT_EQ((*rows)[1].schedule, "gemm [gemm] block_m=64");
    EXPECT_DOUBLE_EQ((*rows)[1].measuredMs, 0.5);
    EXPECT_TRUE(isCsvPath("a/b.csv"));
    EXPECT_TRUE(isCsvPath("a/b.csv.gz"));
    EXPECT_FALSE(isCsvPath("a/b.log.gz"));
    EXPECT_FALSE(isCsvPath("a/csv"));
}
