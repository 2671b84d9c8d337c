// The legal space's enumeration (schedule::enumerateLegal): the walk skips a subtree as soon as a rule
// broken by the decisions set so far stays broken, which holds only if every rule names each decision
// it reads in its Violation::keys. These tests hold the pruned walk to the full cartesian product.
#include "CodegenFixtures.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <random>
#include <set>

using namespace codegen_fixtures;

namespace {

/// The full product, each leaf checked: what enumerateLegal returned before it pruned.
std::vector<schedule::KernelGroup> fullProduct(const schedule::GroupAnalysis &analysis, const schedule::KernelGroup &group,
                                               const schedule::Problem &problem, std::size_t *leaves)
{
    std::vector<schedule::KernelGroup> out;
    const auto &defs = schedule::decisionDefs(group.strategy);
    schedule::KernelGroup g = group;
    std::function<void(std::size_t)> walk = [&](std::size_t d) {
        if (d == defs.size()) {
            ++*leaves;
            if (schedule::checkGroup(analysis, g, problem).empty())
                out.push_back(g);
            return;
        }
        for (int v : defs[d].candidates) {
            g.set(defs[d].key, v);
            walk(d + 1);
        }
    };
    walk(0);
    return out;
}

/// Each fixture program in FP32, and the GEMMs again in TF32 (where the tensor-core values are legal).
/// (A Problem refers to its graph: `fixtures` must outlive the result.)
std::vector<std::pair<std::string, schedule::Problem>> problems(const std::vector<Case> &fixtures)
{
    std::vector<std::pair<std::string, schedule::Problem>> out;
    for (const Case &c : fixtures) {
        out.push_back({c.name, {c.graph, c.sizes, sm90(), schedule::Precision::FP32}});
        if (c.name.starts_with("matmul") || c.name.starts_with("gemm"))
            out.push_back({c.name + " (tf32)", {c.graph, c.sizes, sm90(), schedule::Precision::TF32}});
    }
    return out;
}

/// A schedule's place in the walk's order: each decision's candidate index, in declaration order.
std::vector<std::size_t> walkPosition(const schedule::KernelGroup &g)
{
    std::vector<std::size_t> out;
    for (const auto &d : schedule::decisionDefs(g.strategy))
        out.push_back(static_cast<std::size_t>(
            std::find(d.candidates.begin(), d.candidates.end(), g.value(d.key)) - d.candidates.begin()));
    return out;
}

/// A fixture program's first group, analysed, under fp32 (`c` must outlive it: the problem refers to
/// its graph).
struct MainGroup {
    schedule::Problem problem;
    schedule::KernelGroup group;
    schedule::GroupAnalysis analysis;
};

std::optional<MainGroup> mainGroup(const Case &c)
{
    const schedule::Problem problem{c.graph, c.sizes, sm90(), schedule::Precision::FP32};
    auto base = schedule::defaultSchedule(problem);
    if (!base.ok())
        return std::nullopt;
    const auto &group = base->groups.front();
    auto analysis = schedule::analyzeGroup(problem.graph, group.ops, group.strategy);
    if (!analysis.ok())
        return std::nullopt;
    return MainGroup{problem, group, std::move(*analysis)};
}


} // namespace

TEST(SpaceEnumeration, PrunedWalkKeepsEveryLegalSchedule)
{
    // Every group of every fixture program. Where the product is small enough to walk (the row and
    // element-wise strategies), the pruned walk returns exactly its legal leaves, in its order. The
    // GEMM product (hundreds of millions of leaves, millions of them legal) is checked at the
    // boundary of the legal space instead: every schedule one decision away from a returned one is
    // returned exactly when it is legal and comes no later in the walk's order than the last one
    // returned (the walk stops at its limit, 100000), so a wrongly skipped subtree next to a legal
    // schedule shows.
    std::mt19937 rng(7);
    const auto fixtures = cases();
    for (const auto &[name, problem] : problems(fixtures)) {
        auto base = schedule::defaultSchedule(problem);
        ASSERT_TRUE(base.ok()) << name;
        for (const auto &group : base->groups) {
            auto analysis = schedule::analyzeGroup(problem.graph, group.ops, group.strategy);
            ASSERT_TRUE(analysis.ok()) << name;
            const auto pruned = schedule::enumerateLegal(*analysis, group, problem);
            ASSERT_FALSE(pruned.empty()) << name << " " << group.name;
            if (schedule::candidateCombinations(group.strategy) <= 2'000'000) {
                std::size_t leaves = 0;
                const auto full = fullProduct(*analysis, group, problem, &leaves);
                EXPECT_EQ(pruned, full) << name << " " << group.name << ": " << pruned.size() << " against " << full.size()
                                        << " legal of " << leaves;
                continue;
            }
            const bool complete = pruned.size() < 100000;
            const auto last = walkPosition(pruned.back());
            std::set<std::string> found;
            for (const auto &g : pruned)
                found.insert(schedule::describe(g));
            ASSERT_EQ(found.size(), pruned.size()) << "no schedule twice";
            const auto &defs = schedule::decisionDefs(group.strategy);
            int neighbours = 0, legalNeighbours = 0;
            std::uniform_int_distribution<std::size_t> pick(0, pruned.size() - 1);
            for (int trial = 0; trial < 300; ++trial) {
                const schedule::KernelGroup &from = pruned[pick(rng)];
                for (const auto &d : defs)
                    for (int v : d.candidates) {
                        if (v == from.value(d.key))
                            continue;
                        schedule::KernelGroup g = from;
                        g.set(d.key, v);
                        const bool legal = schedule::checkGroup(*analysis, g, problem).empty();
                        const bool reached = complete || walkPosition(g) <= last;
                        ++neighbours;
                        legalNeighbours += legal && reached;
                        EXPECT_EQ(legal && reached, found.contains(schedule::describe(g)))
                            << name << ": " << schedule::describe(g) << (legal ? " is legal and was skipped" : " is not legal");
                    }
            }
            EXPECT_GT(legalNeighbours, 0) << name;
            EXPECT_GT(neighbours, legalNeighbours) << name << ": the boundary was crossed";
        }
    }
}

TEST(SpaceEnumeration, DrawsComeFromTheWholeLegalSpace)
{
    // matmul_odd has about 390000 legal schedules; the walk's first 100000 never reach block_m=64.
    // Draws are legal, distinct, the same for a seed, and reach the large tiles; a fixed decision
    // keeps the group's value.
    const auto fixtures = cases();
    ASSERT_EQ(fixtures.front().name, "matmul_odd");
    const auto matmul = mainGroup(fixtures.front());
    ASSERT_TRUE(matmul.has_value());
    const auto &[problem, group, analysis] = *matmul;
    const auto walked = schedule::enumerateLegal(analysis, group, problem, 100000);
    ASSERT_EQ(walked.size(), 100000u);
    EXPECT_LE(walked.back().value("block_m"), 32) << "the walk's limit is reached before block_m=64";

    const auto drawn = schedule::sampleLegal(analysis, group, problem, 40, 11);
    ASSERT_EQ(drawn.size(), 40u);
    std::set<std::string> distinct;
    std::set<int> blockM;
    for (const auto &g : drawn) {
        EXPECT_TRUE(schedule::checkGroup(analysis, g, problem).empty()) << schedule::describe(g);
        distinct.insert(schedule::describe(g));
        blockM.insert(g.value("block_m"));
    }
    EXPECT_EQ(distinct.size(), drawn.size());
    EXPECT_GE(blockM.size(), 4u) << "draws spread over block_m";
    EXPECT_EQ(schedule::sampleLegal(analysis, group, problem, 40, 11), drawn) << "the same seed, the same draws";
    EXPECT_NE(schedule::sampleLegal(analysis, group, problem, 40, 12), drawn);

    schedule::KernelGroup big = group;
    big.set("block_m", 256);
    const auto fixed = schedule::sampleLegal(analysis, big, problem, 5, 3, {"block_m"});
    ASSERT_FALSE(fixed.empty());
    for (const auto &g : fixed)
        EXPECT_EQ(g.value("block_m"), 256);

    // A space smaller than the request: every legal schedule once, then it stops.
    ASSERT_EQ(fixtures[5].name, "chain_odd");
    const auto chain = mainGroup(fixtures[5]);
    ASSERT_TRUE(chain.has_value());
    const auto all = schedule::enumerateLegal(chain->analysis, chain->group, chain->problem);
    const auto many = schedule::sampleLegal(chain->analysis, chain->group, chain->problem, 1000, 5);
    EXPECT_LE(many.size(), all.size());
    EXPECT_GE(many.size(), all.size() / 2) << "most of a small space in a few draws";
}
