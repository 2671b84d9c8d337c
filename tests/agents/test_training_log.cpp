// Training curves for the studio's Training dock: the CSV train and retrain write, read back
// (TrainingLog.h), and retraining's progress, cancel and pinned probabilities (Retraining.h).
#include "AgentsTestSupport.h"
#include "core/agents/Features.h"
#include "core/agents/Optimizer.h"
#include "core/agents/Retraining.h"
#include "core/agents/TrainingLog.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace stitch;
using namespace stitch::agents;
using namespace stitch::agents::testing;

TEST(TrainingLog, ReadsTheShippedRunsCurves)
{
    auto log = readTrainingLog(STITCHCUDA_SOURCE_DIR "/docs/agents/training-sm_90.csv.gz");
    ASSERT_TRUE(log.ok()) << log.error().toString();
    ASSERT_EQ(log->rows.size(), 1500u);
    EXPECT_TRUE(log->hasHeldOut);
    const TrainProgress &first = log->rows.front();
    EXPECT_EQ(first.update, 1);
    EXPECT_EQ(first.episode, 16);
    EXPECT_EQ(first.episodes, 24000);
    EXPECT_DOUBLE_EQ(first.meanFinalReward, 0.511293);
    EXPECT_DOUBLE_EQ(first.stats.valueLoss, 1.575406);
    EXPECT_FALSE(first.heldOut);
    int heldOut = 0;
    for (const auto &r : log->rows)
        heldOut += r.heldOut ? 1 : 0;
    EXPECT_EQ(heldOut, 30); // every 50 updates
    ASSERT_TRUE(log->rows.back().heldOut);
    EXPECT_GT(log->rows.back().heldOut->geomean, 0.5);
}

TEST(TrainingLog, ARowWrittenByTrainingReadsBack)
{
    TrainProgress p;
    p.update = 3;
    p.episode = 48;
    p.meanFinalReward = 1.25;
    p.meanReturn = -0.5;
    p.stats.policyLoss = -0.0125;
    p.stats.valueLoss = 0.75;
    p.stats.entropy = 1.0;
    p.stats.samples = 200;
    p.heldOut = HeldOutFigure{0.9, 0.8, 15};
    const std::string text = std::string(trainingCsvHeader()) + "\n" + trainingCsvRow(p) + "\n";
    auto log = parseTrainingLog(text, "x.csv");
    ASSERT_TRUE(log.ok()) << log.error().toString();
    ASSERT_EQ(log->rows.size(), 1u);
    EXPECT_EQ(log->rows[0].update, 3);
    EXPECT_DOUBLE_EQ(log->rows[0].stats.policyLoss, -0.0125);
    EXPECT_EQ(log->rows[0].stats.samples, 200);
    ASSERT_TRUE(log->rows[0].heldOut);
    EXPECT_DOUBLE_EQ(log->rows[0].heldOut->lowest, 0.8);
}

TEST(TrainingLog, ADamagedFileIsALocatedError)
{
    const std::string header = trainingCsvHeader();
    const std::string row = "1,16,0.5,0.1,-0.01,1.5,0.98,0.0005,0.0,0.1,200,0.5,,";
    struct Case {
        std::string text, expect;
        int line, column;
    };
    const std::vector<Case> cases{
        {"", "empty", 1, 1},
        {"a,b,c\n1,2,3\n", "no column 'update'", 1, 1},
        {header + "\n" + row + "\n1,16,0.5", "truncated", 3, 9},
        {header + "\n" + row + "\n2,32,0.5,x,-0.01,1.5,0.98,0.0005,0.0,0.1,200,0.5,,\n", "mean_return: expected a number, found 'x'", 3, 10},
        {header + "\n" + row + "\n" + row + "\n", "out of order", 3, 1},
        {std::string("PK\x03\x04\0\0binary", 12), "binary", 1, 1},
    };
    for (const Case &c : cases) {
        auto log = parseTrainingLog(c.text, "run.csv");
        ASSERT_FALSE(log.ok()) << c.expect;
        EXPECT_EQ(log.error().kind, ErrorKind::Parse);
        EXPECT_NE(log.error().message.find(c.expect), std::string::npos) << log.error().message;
        ASSERT_TRUE(log.error().location);
        EXPECT_EQ(log.error().location->file, "run.csv");
        EXPECT_EQ(log.error().location->line, c.line) << log.error().toString();
        EXPECT_EQ(log.error().location->column, c.column) << log.error().toString();
    }
    auto missing = readTrainingLog("/nonexistent/run.csv");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().kind, ErrorKind::Io);
}

namespace {

/// A user's trace: the heuristics decide GEMM 1024^3 with the strategy pinned to gemm (as
/// AgentsRetraining.AnOverrideThatWonGainsProbability makes it).
Trace pinnedTrace()
{
    auto spec = parseProblemSpec("gemm:1024x1024x1024");
    EXPECT_TRUE(spec.ok());
    auto p = makeProblem(*spec, sm90());
    const schedule::Problem prob = (*p)->problem();
    Fixture f;
    OptimizeOptions options;
    options.pins = {*parsePin("parallel_mapping.strategy=gemm")};
    options.confirmTop = 0;
    const HeuristicPolicy heuristics;
    Optimizer opt(prob, f.evaluator, heuristics, options);
    auto trace = opt.run();
    EXPECT_TRUE(trace.ok());
    trace->source = "gemm.te";
    trace->sourceText = teSource(*spec);
    for (const auto &[n, v] : prob.sizes)
        trace->sizes[n] = v;
    return *trace;
}

} // namespace

TEST(AgentsRetraining, ReportsEachUpdateWritesItsCurvesAndCanBeCancelled)
{
    const fs::path dir = fs::temp_directory_path() / ("stitch-retrain-progress-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string checkpoint = (dir / "start.agents").string();
    {
        auto nets = AgentNetworks::create({observationSize(), 32, 3});
        nets->setMetadata("{}");
        ASSERT_TRUE(nets->save(checkpoint).ok());
    }
    const Trace trace = pinnedTrace();
    RetrainOptions r;
    r.loaded = {{"my-gemm", trace}};
    r.checkpoint = checkpoint;
    r.out = (dir / "after.agents").string();
    r.csv = (dir / "after.csv").string();
    r.updates = 3;
    r.episodesPerUpdate = 4;
    r.heldOut = false;
    std::vector<RetrainStage> stages;
    std::vector<TrainProgress> rows;
    auto report = retrain(r, [&](const RetrainProgress &p) {
        stages.push_back(p.stage);
        EXPECT_EQ(p.updates, 3);
        if (p.stage == RetrainStage::Update)
            rows.push_back(p.row);
    });
    ASSERT_TRUE(report.ok()) << report.error().toString();
    const std::vector<RetrainStage> expected{RetrainStage::Replay, RetrainStage::Update, RetrainStage::Update,
                                             RetrainStage::Update, RetrainStage::Saving};
    EXPECT_EQ(stages, expected);
    ASSERT_EQ(rows.size(), 3u);
    for (int u = 0; u < 3; ++u) {
        EXPECT_EQ(rows[static_cast<std::size_t>(u)].update, u + 1);
        EXPECT_EQ(rows[static_cast<std::size_t>(u)].episode, 4 * (u + 1));
        EXPECT_GT(rows[static_cast<std::size_t>(u)].stats.samples, 0);
    }
    // The CSV is train's format, row for row what progress said.
    auto log = readTrainingLog(r.csv);
    ASSERT_TRUE(log.ok()) << log.error().toString();
    ASSERT_EQ(log->rows.size(), 3u);
    EXPECT_NEAR(log->rows[2].meanFinalReward, rows[2].meanFinalReward, 1e-6);
    EXPECT_NEAR(log->rows[2].stats.valueLoss, rows[2].stats.valueLoss, 1e-6);

    // The report's probabilities are the networks' before and after, at the replayed pinned decision.
    ASSERT_EQ(report->pins.size(), 1u);
    EXPECT_EQ(report->pins[0].trace, "my-gemm");
    auto before = AgentNetworks::load(checkpoint, observationSize());
    auto after = AgentNetworks::load(r.out, observationSize());
    ASSERT_TRUE(before.ok() && after.ok());
    auto pBefore = pinnedProbabilities(trace, **before), pAfter = pinnedProbabilities(trace, **after);
    ASSERT_TRUE(pBefore.ok()) << pBefore.error().toString();
    ASSERT_TRUE(pAfter.ok());
    ASSERT_EQ(pBefore->size(), 1u);
    EXPECT_EQ((*pBefore)[0].decision, report->pins[0].decision);
    EXPECT_EQ((*pBefore)[0].value, "gemm");
    EXPECT_DOUBLE_EQ((*pBefore)[0].probability, report->pins[0].before);
    EXPECT_DOUBLE_EQ((*pAfter)[0].probability, report->pins[0].after);

    // The same seed gives the same weights: the same probability after.
    r.out = (dir / "again.agents").string();
    r.csv.clear();
    auto again = retrain(r);
    ASSERT_TRUE(again.ok());
    EXPECT_DOUBLE_EQ(again->pins[0].after, report->pins[0].after);

    // Cancelled after the first update: Cancelled, no checkpoint.
    std::atomic<bool> cancel{false};
    r.out = (dir / "never.agents").string();
    r.updates = 50;
    int updates = 0;
    auto stopped = retrain(
        r,
        [&](const RetrainProgress &p) {
            if (p.stage == RetrainStage::Update && ++updates == 1)
                cancel = true;
        },
        &cancel);
    ASSERT_FALSE(stopped.ok());
    EXPECT_EQ(stopped.error().kind, ErrorKind::Cancelled);
    EXPECT_EQ(updates, 1);
    EXPECT_FALSE(fs::exists(r.out));
    fs::remove_all(dir);
}
