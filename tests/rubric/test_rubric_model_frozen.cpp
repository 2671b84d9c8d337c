// The performance model's predictions, frozen: the held-out problems' default schedules and legal
// schedules drawn around them (FP32 and TF32), each predicted as `stitchcuda optimize` estimates it
// (PerfModel::predictSchedule: generated program, estimated registers). The parameters moved from
// code to resources/model/perfmodel-sm_90.json without changing any figure; this keeps it so.
// A deliberate model or code-generation change re-records the file (STITCHCUDA_UPDATE_GOLDEN=1) and
// reviews the diff like a golden file's.
#include "core/agents/Problems.h"
#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/rubric/PerfModel.h"
#include "core/rubric/Rubric.h"
#include "core/schedule/Space.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace stitch;

namespace {

const std::string kFrozen = std::string(STITCHCUDA_SOURCE_DIR) + "/tests/rubric/data/perfmodel-frozen-sm_90.json";

/// Every held-out problem's default schedule and, per kernel, six legal variants of it.
nlohmann::json drawCases()
{
    const ArchLimits &arch = *ArchDatabase::builtin().arch("sm_90");
    nlohmann::json cases = nlohmann::json::array();
    for (const auto &spec : agents::heldOutSpecs())
        for (auto precision : {schedule::Precision::FP32, schedule::Precision::TF32}) {
            if (precision == schedule::Precision::TF32 && spec.family.rfind("gemm", 0) != 0)
                continue;
            auto made = agents::makeProblem(spec, arch);
            if (!made.ok())
                continue;
            (*made)->precision = precision;
            const schedule::Problem problem = (*made)->problem();
            auto base = schedule::defaultSchedule(problem);
            if (!base.ok())
                continue;
            std::vector<schedule::Schedule> drawn{*base};
            for (std::size_t g = 0; g < base->groups.size(); ++g) {
                auto a = schedule::analyzeGroup(problem.graph, base->groups[g].ops, base->groups[g].strategy);
                if (!a.ok())
                    continue;
                for (const auto &variant : schedule::sampleLegal(*a, base->groups[g], problem, 6, 17 + 31 * std::uint32_t(g))) {
                    schedule::Schedule s = *base;
                    s.groups[g] = variant;
                    drawn.push_back(s);
                }
            }
            for (const auto &s : drawn)
                cases.push_back({{"problem", spec.text()},
                                 {"precision", schedule::precisionName(precision)},
                                 {"schedule", nlohmann::json::parse(schedule::toJson(s))}});
        }
    return cases;
}

} // namespace

TEST(PerfModelFrozen, EveryRecordedScheduleIsPredictedAsRecorded)
{
    const ArchLimits &arch = *ArchDatabase::builtin().arch("sm_90");
    const rubric::PerfModel model;
    if (std::getenv("STITCHCUDA_UPDATE_GOLDEN")) {
        nlohmann::json cases = drawCases();
        for (auto &c : cases) {
            auto made = agents::makeProblem(*agents::parseProblemSpec(c["problem"].get<std::string>()), arch);
            ASSERT_TRUE(made.ok());
            if (c["precision"] == "tf32")
                (*made)->precision = schedule::Precision::TF32;
            auto s = schedule::parseSchedule(c["schedule"].dump(), "recorded");
            ASSERT_TRUE(s.ok()) << s.error().toString();
            auto ms = model.predictSchedule((*made)->problem(), *s);
            c["predicted_ms"] = ms.ok() ? *ms : -1.0;
        }
        std::ofstream(kFrozen) << cases.dump(1) << "\n";
        GTEST_SKIP() << "recorded " << cases.size() << " predictions in " << kFrozen;
    }
    std::ifstream in(kFrozen);
    ASSERT_TRUE(in.good()) << "missing " << kFrozen << " (record it with STITCHCUDA_UPDATE_GOLDEN=1)";
    const auto cases = nlohmann::json::parse(in);
    ASSERT_GE(cases.size(), 100u);
    int predicted = 0;
    for (const auto &c : cases) {
        auto made = agents::makeProblem(*agents::parseProblemSpec(c["problem"].get<std::string>()), arch);
        ASSERT_TRUE(made.ok());
        if (c["precision"] == "tf32")
            (*made)->precision = schedule::Precision::TF32;
        auto s = schedule::parseSchedule(c["schedule"].dump(), "recorded");
        ASSERT_TRUE(s.ok()) << s.error().toString();
        const double recorded = c["predicted_ms"].get<double>();
        auto ms = model.predictSchedule((*made)->problem(), *s);
        if (recorded < 0) {
            EXPECT_FALSE(ms.ok()) << c["problem"] << ": predicted now, not when recorded";
            continue;
        }
        ASSERT_TRUE(ms.ok()) << c["problem"] << ": " << ms.error().toString();
        EXPECT_NEAR(*ms, recorded, 1e-9 * recorded) << c["problem"] << " " << c["precision"] << "\n" << c["schedule"].dump();
        ++predicted;
    }
    EXPECT_GE(predicted, 100);
}

TEST(PerfModelParams, TheShippedFileHoldsEveryParameterWithItsProvenance)
{
    const auto &models = rubric::calibratedModels();
    ASSERT_FALSE(models.empty());
    EXPECT_EQ(models.front().arch, "sm_90");
    EXPECT_EQ(models.front().gpu, "NVIDIA H200");
    std::ifstream in(std::string(STITCHCUDA_SOURCE_DIR) + "/resources/model/perfmodel-sm_90.json");
    const auto file = nlohmann::json::parse(in);
    const auto names = rubric::PerfModel::Params::names();
    EXPECT_EQ(file["parameters"].size(), names.size());
    const rubric::PerfModel::Params shipped;
    for (const auto &name : names) {
        ASSERT_TRUE(file["parameters"].contains(name)) << name;
        EXPECT_DOUBLE_EQ(*shipped.get(name), file["parameters"][name]["value"].get<double>()) << name;
        EXPECT_GT(file["parameters"][name]["provenance"].get<std::string>().size(), 10u) << name;
    }
    EXPECT_FALSE(shipped.get("noSuchParameter"));
    const rubric::IssueReplayParams replay;
    EXPECT_DOUBLE_EQ(replay.globalLatencyCycles, file["issue_replay"]["globalLatencyCycles"]["value"].get<double>());
}

TEST(PerfModelParams, ABrokenFileNamesWhatIsWrong)
{
    std::ifstream in(std::string(STITCHCUDA_SOURCE_DIR) + "/resources/model/perfmodel-sm_90.json");
    const auto good = nlohmann::json::parse(in);
    auto expectError = [](const nlohmann::json &j, const std::string &words) {
        auto m = rubric::parsePerfModel(j.dump());
        ASSERT_FALSE(m.ok()) << words;
        EXPECT_NE(m.error().message.find(words), std::string::npos) << m.error().message;
    };
    auto missing = good;
    missing["parameters"].erase("asyncLevel");
    expectError(missing, "parameters.asyncLevel is missing");
    auto unknown = good;
    unknown["issue_replay"]["warpSpeed"] = {{"value", 1}, {"provenance", "made up"}};
    expectError(unknown, "issue_replay.warpSpeed is not a parameter");
    auto unsourced = good;
    unsourced["parameters"]["launchUs"]["provenance"] = "";
    expectError(unsourced, "launchUs.provenance");
    auto wrongSchema = good;
    wrongSchema["schema"] = "stitchcuda-perf-model/2";
    expectError(wrongSchema, "schema");
    EXPECT_FALSE(rubric::parsePerfModel("{not json").ok());
    ASSERT_TRUE(rubric::parsePerfModel(good.dump()).ok());
}

TEST(PerfModelParams, AnUncalibratedArchitectureUsesTheNearestAndSaysSo)
{
    std::string note = "stale";
    const auto &h200 = rubric::calibratedModelFor(*ArchDatabase::builtin().arch("sm_90"), &note);
    EXPECT_EQ(h200.arch, "sm_90");
    EXPECT_TRUE(note.empty()) << note;
    const auto &ampere = rubric::calibratedModelFor(*ArchDatabase::builtin().arch("sm_80"), &note);
    EXPECT_EQ(ampere.arch, "sm_90");
    EXPECT_NE(note.find("uncalibrated for sm_80"), std::string::npos) << note;
    EXPECT_NE(note.find("sm_90's (NVIDIA H200)"), std::string::npos) << note;

    // Every figure predicted for it says so: the program's prediction and the final-performance evidence.
    const ArchLimits &sm80 = *ArchDatabase::builtin().arch("sm_80");
    auto made = agents::makeProblem(*agents::parseProblemSpec("softmax:4096x1024"), sm80);
    ASSERT_TRUE(made.ok());
    const auto problem = (*made)->problem();
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    auto program = codegen::generateProgram(problem, *s);
    ASSERT_TRUE(program.ok());
    rubric::Rubric rubric;
    auto report = rubric.scoreProgram(problem, *program, nullptr);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    EXPECT_NE(report->calibration.find("uncalibrated for sm_80"), std::string::npos) << report->calibration;
    const auto *final = report->programScore("final_performance");
    ASSERT_NE(final, nullptr);
    EXPECT_NE(final->evidence.find("uncalibrated for sm_80"), std::string::npos) << final->evidence;
}
