// The agents' clock and search: a program that fails on the GPU never wins, confirmations side by
// side, the budget search's candidates, the search baseline (no GPU: a stand-in clock).
#include "AgentsTestSupport.h"

#include "core/agents/Optimizer.h"
#include "core/agents/Search.h"
#include "core/rubric/Rubric.h"
#include "core/schedule/Space.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <set>

namespace stitch::agents {
namespace {

using namespace stitch::agents::testing;

/// A stand-in for the GPU's clock (GpuTimes): the generic program runs in `inputMs`, every other
/// program fails (infinite time, like a kernel that faults), and the lookups are counted.
class FailingClock : public MeasuredTimes {
public:
    explicit FailingClock(double inputMs) : m_inputMs(inputMs) {}
    std::optional<double> lookup(const schedule::Problem &problem, const schedule::Schedule &s) const override
    {
        ++m_lookups;
        return s == rubric::genericSchedule(problem) ? m_inputMs : std::numeric_limits<double>::infinity();
    }
    std::string failure(const schedule::Problem &, const schedule::Schedule &) const override
    {
        return "did not run on the GPU: launch failed";
    }
    int lookups() const { return m_lookups; }

private:
    double m_inputMs;
    mutable std::atomic<int> m_lookups{0};
};

TEST(AgentsMeasure, AProgramThatFailsOnTheGpuIsNeverChosen)
{
    rubric::Rubric rubric;
    FailingClock clock(5.0);
    Evaluator evaluator(rubric, nullptr, &clock);
    auto p = problem("softmax:4096x1024");
    const schedule::Problem prob = p->problem();
    auto h = schedule::defaultSchedule(prob);
    ASSERT_TRUE(h.ok());
    const Score failed = evaluator.confirm(prob, *h);
    EXPECT_FALSE(failed.ok);
    EXPECT_TRUE(failed.measured);
    EXPECT_EQ(failed.error, "did not run on the GPU: launch failed");

    const HeuristicPolicy policy;
    OptimizeOptions options;
    options.budget = 4;
    Optimizer opt(prob, evaluator, policy, options);
    auto trace = opt.run();
    ASSERT_TRUE(trace.ok());
    EXPECT_TRUE(trace->keptInput);
    EXPECT_DOUBLE_EQ(trace->finalMs, 5.0);
    EXPECT_TRUE(trace->finalMeasured);
}

TEST(AgentsMeasure, ConfirmAllMatchesOneByOneAndLooksUpEachProgramOnce)
{
    rubric::Rubric rubric;
    FailingClock clock(1.0);
    Evaluator parallel(rubric, nullptr, &clock);
    Evaluator serial(rubric);
    auto p = problem("gemm:512x512x512");
    const schedule::Problem prob = p->problem();
    auto base = schedule::defaultSchedule(prob);
    ASSERT_TRUE(base.ok());
    std::vector<schedule::Schedule> schedules{*base, rubric::genericSchedule(prob)};
    auto a = schedule::analyzeGroup(prob.graph, base->groups[0].ops, base->groups[0].strategy);
    ASSERT_TRUE(a.ok());
    for (const auto &g : schedule::sampleLegal(*a, base->groups[0], prob, 6, 7)) {
        schedule::Schedule s = *base;
        s.groups[0] = g;
        schedules.push_back(s);
    }
    std::vector<const schedule::Schedule *> pointers;
    for (const auto &s : schedules)
        pointers.push_back(&s);
    parallel.confirmAll(prob, pointers, 4);
    const int looked = clock.lookups();
    EXPECT_LE(looked, static_cast<int>(schedules.size()));
    for (const auto &s : schedules) {
        const Score m = parallel.confirm(prob, s), e = serial.confirm(prob, s);
        EXPECT_TRUE(m.measured);
        EXPECT_EQ(m.ok, s == rubric::genericSchedule(prob));
        for (int d = 0; d < kStaticDimensionCount; ++d)
            EXPECT_DOUBLE_EQ(m.dimensions[d], e.dimensions[d]);
    }
    EXPECT_EQ(clock.lookups(), looked); // read back from the cache
}

TEST(AgentsOptimize, TheBudgetSearchHasTheHeuristicsAmongItsCandidatesUnlessPinned)
{
    Fixture f;
    auto p = problem("gemm:1000x3000x700");
    const schedule::Problem prob = p->problem();
    const UniformPolicy policy;
    auto origins = [&](OptimizeOptions options) {
        options.confirmTop = 0;
        Optimizer opt(prob, f.evaluator, policy, options);
        auto trace = opt.run();
        EXPECT_TRUE(trace.ok());
        std::set<std::string> out;
        if (trace.ok())
            for (const auto &c : trace->candidates)
                out.insert(c.origin);
        return out;
    };
    OptimizeOptions options;
    options.budget = 4;
    EXPECT_TRUE(origins(options).count("heuristics"));
    options.budget = 3;
    EXPECT_FALSE(origins(options).count("heuristics"));
    options.budget = 4;
    options.pins = {*parsePin("memory_access.block_k=32")};
    EXPECT_FALSE(origins(options).count("heuristics")) << "a pinned search keeps to the pins";
}

TEST(AgentsSearch, TheBaselineCountsItsEvaluationsAndBeatsTheHeuristicsOrTies)
{
    Fixture f;
    auto p = problem("gemm:1000x3000x700");
    const schedule::Problem prob = p->problem();
    const SearchResult r = searchBaseline(prob, f.evaluator, 300, 1);
    EXPECT_GE(r.evaluations, 300);
    ASSERT_TRUE(r.bestScore.ok);
    auto h = schedule::defaultSchedule(prob);
    ASSERT_TRUE(h.ok());
    EXPECT_LE(r.bestScore.ms, f.evaluator.estimate(prob, *h).ms * 1.0000001);
}


} // namespace
} // namespace stitch::agents
