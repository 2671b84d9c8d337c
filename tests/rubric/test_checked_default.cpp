// The default schedule checked by the model (core/rubric/CheckedDefault.h): a one-op group whose
// generic form (one thread per output) the model predicts faster takes that form, with a note;
// where the heuristics' kernel is predicted faster it stays. Never slower than either.
#include "core/arch/ArchDatabase.h"
#include "core/frontend/Lift.h"
#include "core/rubric/CheckedDefault.h"
#include "core/rubric/PerfModel.h"

#include <gtest/gtest.h>

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
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("one thread per output (generic) is predicted faster"), std::string::npos) << notes[0];
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

} // namespace
