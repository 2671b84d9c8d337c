// Long-row decisions without a GPU: combine=online (softmax's maximum and sum in one exchange),
// exp=fast and min_blocks for row kernels: the pattern and legality rules, the kernel's structure,
// NVRTC compiles. test_codegen_gpu.cpp's CodegenGpuRowCombine runs the answers on the GPU.
#include "CodegenFixtures.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

schedule::Problem problemFor(const Case &c) { return {c.graph, c.sizes, sm90(), schedule::Precision::FP32}; }

/// softmax or layer norm over 256 rows of 262144: clusters of 16 blocks of 128 threads, 32 float4
/// per thread, with the given combine, exp and min_blocks.
struct LongRows {
    Case c;
    schedule::Problem problem;
    schedule::Schedule s;
    LongRows(bool softmax, int online, int fastExp, int minBlocks)
        : c{softmax ? "softmax_rows" : "layernorm_rows", softmax ? ir::makeSoftmaxRows() : ir::makeLayerNormRows(),
            {{"M", 256}, {"N", 262144}}},
          problem(problemFor(c))
    {
        auto d = schedule::defaultSchedule(problem);
        EXPECT_TRUE(d.ok());
        s = *d;
        auto &g = s.groups.front();
        setLongRowDecisions(g, {.threadsPerRow = 128,
                                .cluster = 16,
                                .rowSteps = 1,
                                .prefetch = 0,
                                .minBlocks = minBlocks,
                                .combine = online,
                                .fastExp = fastExp});
        g.set("reduce", 0);
    }
    std::vector<schedule::Violation> check() const
    {
        auto a = schedule::analyzeGroup(c.graph, s.groups.front().ops, s.groups.front().strategy);
        EXPECT_TRUE(a.ok());
        return schedule::checkGroup(*a, s.groups.front(), problem);
    }
};

} // namespace

TEST(RowCombine, OnlineNeedsTheSoftmaxPattern)
{
    const ir::Graph softmax = ir::makeSoftmaxRows(), layerNorm = ir::makeLayerNormRows();
    auto analysis = [](const ir::Graph &g) {
        std::vector<std::string> ops;
        for (const auto &op : g.ops())
            ops.push_back(op.name);
        auto a = schedule::analyzeGroup(g, ops, schedule::Strategy::RowReduction);
        EXPECT_TRUE(a.ok()) << a.error().toString();
        return *a;
    };
    EXPECT_TRUE(schedule::hasOnlineSoftmaxPair(analysis(softmax)));
    EXPECT_FALSE(schedule::hasOnlineSoftmaxPair(analysis(layerNorm))) << "mean then variance: two sums";
    EXPECT_TRUE(schedule::computesFloatExp(analysis(softmax)));
    EXPECT_FALSE(schedule::computesFloatExp(analysis(layerNorm)));

    // The sum must shift by the maximum of the same values: exp(2 X - max(X)) is not softmax's.
    ir::GraphBuilder b("shifted");
    const ir::Expr M = ir::sizeVar("M"), N = ir::sizeVar("N");
    const ir::Tensor X = b.input("X", ir::DType::F32, {M, N});
    const ir::Tensor m = b.intermediate("m", ir::DType::F32, {M});
    const ir::Tensor s = b.intermediate("s", ir::DType::F32, {M});
    const ir::Tensor Y = b.output("Y", ir::DType::F32, {M, N});
    const ir::Expr i = ir::var("i"), j = ir::var("j");
    b.compute(m, {i}, ir::reduceMax({{"j", N}}), X(i, j));
    b.compute(s, {i}, ir::reduceSum({{"j", N}}), ir::exp(X(i, j) * ir::floatConst(2.0) - m(i)));
    b.compute(Y, {i, j}, ir::exp(X(i, j) - m(i)) / s(i));
    EXPECT_FALSE(schedule::hasOnlineSoftmaxPair(analysis(b.finish())));

    // Refusals name the decision and why.
    LongRows ln(false, 1, 1, 1);
    const auto v = ln.check();
    EXPECT_TRUE(names(v, "combine", "needs the softmax pattern")) << schedule::describe(ln.s.groups.front());
    EXPECT_TRUE(names(v, "exp", "computes none"));
    LongRows shared(true, 1, 0, 1);
    shared.s.groups.front().set("reduce", 1);
    EXPECT_TRUE(names(shared.check(), "reduce", "needs reduce=shuffle"));
    EXPECT_TRUE(LongRows(true, 1, 1, 3).check().empty());
}

TEST(RowCombine, MinBlocksBoundsTheRegistersForTheRow)
{
    // 128 floats per thread: 3 blocks of 128 threads leave 170 registers each (128 + ~40 fit);
    // 4 leave 128, and the row is refused there, naming min_blocks.
    EXPECT_TRUE(LongRows(true, 0, 0, 3).check().empty());
    const auto four = LongRows(true, 0, 0, 4).check();
    EXPECT_TRUE(names(four, "min_blocks", "keeping the row in registers needs 128 registers")) << four.size();
    // More threads than an SM holds.
    LongRows big(true, 0, 0, 3);
    big.s.groups.front().set("threads_per_row", 1024);
    big.s.groups.front().set("cluster", 8);
    EXPECT_TRUE(names(big.check(), "min_blocks", "threads an SM of sm_90 holds"));
}

TEST(RowCombine, OnlineSoftmaxExchangesPairsOnce)
{
    LongRows rows(true, 1, 1, 3);
    ASSERT_TRUE(schedule::validateSchedule(rows.s, rows.problem).ok());
    auto p = codegen::generateProgram(rows.problem, rows.s);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    const std::string &src = p->source;
    EXPECT_NE(src.find("__launch_bounds__(128, 3) __cluster_dims__(16, 1, 1)"), std::string::npos) << src;
    EXPECT_EQ(count(src, "cluster_.sync();"), 1u) << "one exchange per row, not one per reduction";
    EXPECT_NE(src.find("static __device__ __forceinline__ void rowMax_Y_online(float &m, float &s, float om, float os)"),
              std::string::npos);
    // The sum pass shifts by the thread's own maximum (0 for -inf) and keeps exp in the cache.
    EXPECT_NE(src.find("const float h_rowMax_ = m_rowMax_ == __int_as_float(0xff800000) ? 0.0f : m_rowMax_;"),
              std::string::npos);
    EXPECT_NE(src.find("x_X_[it_ * 4 + 0] = stitch_ex2_ftz_(fmaf(x_X_[it_ * 4 + 0], 1.44269504f, h_rowMax_ * -1.44269504f));"),
              std::string::npos)
        << "exp=fast: one FMA and ex2.approx.ftz";
    EXPECT_EQ(count(src, "static __device__ __forceinline__ float stitch_ex2_ftz_(float x)"), 1u);
    EXPECT_EQ(src.find("if (active_"), std::string::npos) << "one row per cluster: every block has its row";
    EXPECT_EQ(src.find("c0_ < end_"), std::string::npos) << "the row splits exactly into the threads' elements";
    EXPECT_NE(src.find("const float rc0_0_ = 1.0f / s_rowSum_;"), std::string::npos) << "one reciprocal per row";
    // The output pass rescales the kept values to the row's maximum.
    EXPECT_NE(src.find("const float c_rowSum_ = m_rowMax_ == __int_as_float(0xff800000) ? 0.0f : stitch_ex2_ftz_("),
              std::string::npos);
    EXPECT_NE(src.find("x_X_[it_ * 4 + 0] * c_rowSum_"), std::string::npos);
    EXPECT_EQ(src.find("expf("), std::string::npos) << "no precise exp left";
    auto compiled = compileProgram(*p, "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    const auto *k = compiled->kernel(rows.s.groups.front().name);
    ASSERT_NE(k, nullptr);
    EXPECT_LE(k->registers, 170) << "three blocks of 128 threads per SM";
    EXPECT_EQ(k->spillStoreBytes, 0);

    // combine=rounds keeps two exchanges; exp=precise keeps expf.
    LongRows rounds(true, 0, 0, 3);
    auto q = codegen::generateProgram(rounds.problem, rounds.s);
    ASSERT_TRUE(q.ok());
    EXPECT_EQ(count(q->source, "cluster_.sync();"), 2u);
    EXPECT_NE(q->source.find("expf((x_X_[it_ * 4 + 0] - s_rowMax_))"), std::string::npos);
    EXPECT_EQ(q->source.find("_online("), std::string::npos);
}

TEST(RowCombine, OnlineWithoutClusterOrCacheCompiles)
{
    // Every legal shape of the online exchange compiles: one warp per row (no shared memory),
    // several warps, several rows per block, the row re-read from memory, several row steps.
    const Case c{"softmax_odd", ir::makeSoftmaxRows(), {{"M", 37}, {"N", 301}}};
    auto problem = problemFor(c);
    for (const auto &[tpr, rpb, cache, steps] : std::vector<std::tuple<int, int, int, int>>{
             {32, 4, 1, 1}, {256, 1, 1, 1}, {64, 2, 0, 1}, {128, 1, 1, 2}}) {
        auto s = schedule::defaultSchedule(problem);
        ASSERT_TRUE(s.ok());
        auto &g = s->groups.front();
        g.set("threads_per_row", tpr);
        g.set("rows_per_block", rpb);
        g.set("cluster", 1);
        g.set("cache", cache);
        g.set("row_steps", steps);
        g.set("vector", 1);
        g.set("combine", 1);
        g.set("exp", 1);
        const std::string what = schedule::describe(g);
        ASSERT_TRUE(schedule::validateSchedule(*s, problem).ok()) << what;
        auto p = codegen::generateProgram(problem, *s);
        ASSERT_TRUE(p.ok()) << what << ": " << p.error().toString();
        auto compiled = compileProgram(*p, "sm_90");
        ASSERT_TRUE(compiled.ok()) << what << ": " << compiled.error().toString();
    }
}
