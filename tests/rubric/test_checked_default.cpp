// The default schedule checked by the model (core/rubric/CheckedDefault.h): a one-op group whose
// generic form (one thread per output) the model predicts faster takes that form, with a note;
// where the heuristics' kernel is predicted faster it stays. Never slower than either.
#include "core/arch/ArchDatabase.h"
#include "core/frontend/Lift.h"
#include "core/rubric/CheckedDefault.h"
#include "core/rubric/PerfModel.h"
#include "core/schedule/Space.h"

#include <gtest/gtest.h>

#include <optional>

using namespace stitch;

namespace {

struct Checked {
    ir::Graph graph{"empty"};
    ir::SizeBindings sizes;
};

Checked liftTe(const std::string &text)
{
    auto lifted = frontend::liftTensorExpressions(text, "checked.te");
    if (!lifted)
        throw std::runtime_error(lifted.error().toString());
    return {lifted->graph, lifted->sizes};
}

// A three-point stencil over 100000 elements (the corpus' stencil_1d as a tensor expression).
constexpr const char *kStencil = R"(
size N = 100000
input x: f32[N]
output y: f32[N]
y[i] = 0.25 * select(i > 0, x[max(i - 1, 0)], 0.0) + 0.5 * x[i] + 0.25 * select(i < N - 1, x[min(i + 1, N - 1)], 0.0)
)";

// An element-wise op over 64 Mi elements: the vectorized kernel wins.
constexpr const char *kLarge = R"(
size N = 67108864
input a: f32[N]
input b: f32[N]
output c: f32[N]
c[i] = 2.0 * a[i] + b[i]
)";

TEST(CheckedDefault, AStencilTooSmallForTheVectorKernelTakesOneThreadPerOutput)
{
    const Checked c = liftTe(kStencil);
    const ArchLimits &arch = *ArchDatabase::builtin().arch("sm_90");
    const schedule::Problem problem{c.graph, c.sizes, arch, schedule::Precision::FP32};
    std::vector<std::string> notes;
    auto checked = rubric::modelCheckedDefault(problem, &notes);
    ASSERT_TRUE(checked.ok()) << checked.error().toString();
    auto heuristics = schedule::defaultSchedule(problem);
    ASSERT_TRUE(heuristics.ok());
    ASSERT_EQ(checked->groups.size(), 1u);
    const rubric::PerfModel model;
    const double chosen = *model.predictSchedule(problem, *checked);
    const double vector = *model.predictSchedule(problem, *heuristics);
    const double generic = *model.predictSchedule(problem, rubric::genericSchedule(problem));
    EXPECT_LE(chosen, vector);
    EXPECT_LE(chosen, generic);
    // The model's view at this size: the vector kernel's shifted reads and a grid under one wave.
    ASSERT_LT(generic, vector);
    EXPECT_EQ(checked->groups[0].strategy, schedule::Strategy::Generic);
    // The strategy's note, then (where the model prefers another block) the block's.
    ASSERT_GE(notes.size(), 1u);
    EXPECT_NE(notes[0].find("one thread per output (generic) is predicted faster"), std::string::npos) << notes[0];
    for (std::size_t i = 1; i < notes.size(); ++i)
        EXPECT_NE(notes[i].find("blocks of"), std::string::npos) << notes[i];
    EXPECT_EQ(checked->groups[0].name, heuristics->groups[0].name);
    EXPECT_TRUE(schedule::validateSchedule(*checked, problem).ok());
}

TEST(CheckedDefault, ALargeElementwiseOpKeepsTheVectorKernel)
{
    const Checked c = liftTe(kLarge);
    const ArchLimits &arch = *ArchDatabase::builtin().arch("sm_90");
    const schedule::Problem problem{c.graph, c.sizes, arch, schedule::Precision::FP32};
    std::vector<std::string> notes;
    auto checked = rubric::modelCheckedDefault(problem, &notes);
    ASSERT_TRUE(checked.ok()) << checked.error().toString();
    auto heuristics = schedule::defaultSchedule(problem);
    ASSERT_TRUE(heuristics.ok());
    EXPECT_EQ(*checked, *heuristics);
    EXPECT_TRUE(notes.empty());
    EXPECT_EQ(checked->groups[0].strategy, schedule::Strategy::Elementwise);
}

// A batched GEMM written one thread per output (the corpus' matmul_batched): flat blocks of 256
// threads span rows of 96 columns; the model prefers tiles along the columns, as the input's 16 x 16
// blocks are, and the default takes the fastest legal shape, with a note.
constexpr const char *kBatched = R"(
size B = 8
size M = 128
size N = 96
size K = 64
input a: f32[B, M, K]
input b: f32[B, K, N]
output c: f32[B, M, N]
c[z, i, j] = sum(k) a[z, i, k] * b[z, k, j]
)";

TEST(CheckedDefault, AGenericKernelTakesTheBlockShapeTheModelPredictsFastest)
{
    const Checked c = liftTe(kBatched);
    const ArchLimits &arch = *ArchDatabase::builtin().arch("sm_90");
    const schedule::Problem problem{c.graph, c.sizes, arch, schedule::Precision::FP32};
    std::vector<std::string> notes;
    auto checked = rubric::modelCheckedDefault(problem, &notes);
    ASSERT_TRUE(checked.ok()) << checked.error().toString();
    ASSERT_EQ(checked->groups.size(), 1u);
    const schedule::KernelGroup &g = checked->groups[0];
    ASSERT_EQ(g.strategy, schedule::Strategy::Generic);
    EXPECT_TRUE(schedule::validateSchedule(*checked, problem).ok());
    const rubric::PerfModel model;
    const double chosen = *model.predictSchedule(problem, *checked);
    auto predictShape = [&](int threads, int tpr) -> std::optional<double> {
        schedule::Schedule other = *checked;
        other.groups[0].set("threads", threads);
        other.groups[0].set("threads_per_row", tpr);
        if (!schedule::validateSchedule(other, problem).ok())
            return std::nullopt;
        return *model.predictSchedule(problem, other);
    };
    // Faster than flat blocks of 256 (the heuristics' shape), and than every other block size of
    // the shape chosen (the search's second pass: threads_per_row first, then threads).
    EXPECT_LT(chosen, *predictShape(256, 0));
    for (int threads : schedule::findDecision(schedule::Strategy::Generic, "threads")->candidates) {
        if (auto ms = predictShape(threads, g.value("threads_per_row"))) {
            EXPECT_LE(chosen, *ms) << threads << " threads";
        }
    }
    EXPECT_GT(g.value("threads_per_row"), 0);
    bool noted = false;
    for (const auto &n : notes)
        noted = noted || n.find("blocks of " + std::to_string(g.value("threads_per_row")) + " x ") != std::string::npos;
    EXPECT_TRUE(noted);
}

} // namespace
