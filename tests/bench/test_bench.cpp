// core/bench: the benchmark's cases and sweeps, and calibration against the stored H200 runs, as
// the CLI's bench and calibrate use them (their output is tested in tests/cli).
#include "core/arch/ArchDatabase.h"
#include "core/bench/Calibrate.h"
#include "core/bench/Candidate.h"
#include "core/bench/Cases.h"
#include "core/bench/Sweep.h"
#include "core/rubric/Calibration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace stitch;

namespace {

const ArchLimits &sm90() { return *ArchDatabase::builtin().arch("sm_90"); }

} // namespace

TEST(BenchCases, TheTableAndAnyShapeOfAFamily)
{
    const auto table = bench::allCases();
    ASSERT_EQ(table.size(), 16u);
    EXPECT_EQ(table.front().family + ":" + table.front().shape, "gemm:4096x4096x4096");
    auto c = bench::makeCase("gemm_bias_gelu", "2048x1024x96");
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->sizes.at("M"), 2048);
    EXPECT_EQ(c->sizes.at("K"), 96);
    EXPECT_DOUBLE_EQ(c->flops, 2.0 * 2048 * 1024 * 96);
    EXPECT_DOUBLE_EQ(c->bytes, 4.0 * (2048 * 96 + 96 * 1024 + 2048 * 1024) + 4.0 * 1024);
    auto rows = bench::makeCase("softmax", "4096x1000");
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(rows->flops, 0);
    EXPECT_DOUBLE_EQ(rows->bytes, 8.0 * 4096 * 1000);
    EXPECT_EQ(bench::makeCase("gemm_tf32", "64x64x64")->precision, schedule::Precision::TF32);

    auto bad = bench::makeCase("gemm", "4096x4096");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().kind, ErrorKind::InvalidArgument);
    EXPECT_EQ(bad.error().message, "bench shape '4096x4096' of gemm: expected MxNxK with positive sizes");
    EXPECT_NE(bench::makeCase("conv", "8x8").error().message.find("no bench family 'conv' (one of gemm, gemm_tf32"),
              std::string::npos);
}

TEST(BenchCases, SelectedByOnlyAndShape)
{
    auto softmax = bench::selectCases({"softmax"}, {});
    ASSERT_TRUE(softmax.ok());
    EXPECT_EQ(softmax->size(), 3u);
    auto shaped = bench::selectCases({}, {"softmax:4096x1000", "softmax:4096x1000"});
    ASSERT_TRUE(shaped.ok());
    ASSERT_EQ(shaped->size(), 1u) << "with --shape, table cases run only where --only names them; a case once";
    EXPECT_EQ(shaped->front().shape, "4096x1000");
    auto bad = bench::selectCases({}, {"gemm"});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message, "--shape gemm: expected FAMILY:SHAPE (gemm:2048x2048x512)");
}

TEST(BenchSweep, WhereNarrowsTheCandidatesAndNamesABadKey)
{
    auto c = bench::makeCase("gemm", "4096x4096x4096");
    ASSERT_TRUE(c.ok());
    const schedule::Problem problem{c->graph, c->sizes, sm90(), c->precision};
    auto all = bench::caseCandidates("gemm:4096x4096x4096", problem, {});
    ASSERT_TRUE(all.ok()) << all.error().message;
    bench::SweepOptions options;
    options.where = {"copy=async", "stages=4"};
    auto some = bench::caseCandidates("gemm:4096x4096x4096", problem, options);
    ASSERT_TRUE(some.ok()) << some.error().message;
    ASSERT_FALSE(some->empty());
    EXPECT_LT(some->size(), all->size());
    for (const auto &s : *some)
        EXPECT_EQ(s.groups.front().value("stages"), 4) << bench::scheduleText(s);
    options.maxCandidates = 2;
    EXPECT_EQ(bench::caseCandidates("gemm:4096x4096x4096", problem, options)->size(), 2u);
    options.where = {"stage=3"};
    auto bad = bench::caseCandidates("gemm:4096x4096x4096", problem, options);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().kind, ErrorKind::InvalidArgument);
    EXPECT_NE(bad.error().message.find("'stage' is not a decision of any strategy"), std::string::npos);
}

TEST(BenchCalibrate, ConstantsAndKeysAreParsed)
{
    auto v = bench::parseConstant("asyncLevel=0.7,0.35");
    ASSERT_TRUE(v.ok()) << v.error().message;
    EXPECT_EQ(v->name, "asyncLevel");
    EXPECT_EQ(v->values, (std::vector<double>{0.7, 0.35}));
    EXPECT_FALSE(bench::parseConstant("asyncLevle=1").ok()) << "not a constant of the model";
    EXPECT_EQ(bench::parseConstant("asyncLevel=x").error().message,
              "--vary asyncLevel=x: 'x' is not a number (expected NAME=V1,V2,...)");
    rubric::PerfModel::Params params;
    EXPECT_TRUE(bench::applySettings(params, {"asyncLevel=0.5"}).ok());
    EXPECT_EQ(bench::applySettings(params, {"asyncLevel=1,2"}).error().message,
              "--set asyncLevel=1,2: one value (NAME=V)");
    EXPECT_EQ(bench::splitKeys({"block_k,stages", "", "copy"}), (std::vector<std::string>{"block_k", "stages", "copy"}));
}

// A stored set (run 24 call 3, docs/RUBRIC.md: the 5-op chain's 36 candidates, 0.911 as run) read
// from its compressed CSV and re-predicted with the shipped parameter file, as `stitchcuda calibrate`
// does: the figures `calibrate` gave on this set before the bench moved into core (0.878; even
// 0.911, odd 0.826).
TEST(BenchCalibrate, AStoredSetIsReRankedAsCalibrateRanksIt)
{
    auto rows = rubric::readCalibration(std::string(STITCHCUDA_SOURCE_DIR) +
                                        "/bench/results/2026-12-01/run24-stores/call3/rows.csv.gz");
    ASSERT_TRUE(rows.ok()) << rows.error().toString();
    std::erase_if(*rows, [](const rubric::CalibrationRow &r) { return r.family != "chain5"; });
    ASSERT_EQ(rows->size(), 36u);
    const auto asRun = rubric::summarizeCalibration(*rows);
    ASSERT_EQ(asRun.size(), 1u);
    EXPECT_NEAR(asRun.front().rho, 0.911, 5e-4);

    rubric::CompileCache cache(std::nullopt);
    std::vector<rubric::CalibrationRow> repredicted;
    for (auto &r : bench::repredictRows(*rows, sm90(), rubric::PerfModel(), cache)) {
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_GT(r->predictedMs, 0);
        repredicted.push_back(std::move(*r));
    }
    const auto now = rubric::summarizeCalibration(repredicted);
    ASSERT_EQ(now.size(), 1u);
    EXPECT_EQ(now.front().schedules, 36);
    EXPECT_NEAR(now.front().rho, 0.878, 5e-4);
    EXPECT_NEAR(now.front().rhoEven, 0.911, 5e-4);
    EXPECT_NEAR(now.front().rhoOdd, 0.826, 5e-4);
}
