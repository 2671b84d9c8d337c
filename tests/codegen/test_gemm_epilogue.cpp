// The GEMM epilogue without a GPU: erf=erfc (1 + erf(z) by erfc, GELU's form; element-wise and row
// kernels too) and the loads that use no row (a bias[j]) read once per column before the row loop.
// test_codegen_gpu.cpp's CodegenGpuErf runs the answers and the device function's accuracy on the GPU.
#include "CodegenFixtures.h"


#include <gtest/gtest.h>

#include <algorithm>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

/// Y = (A W) * rs[i] + bias[j]: one read per row, one per column.
ir::Graph makeGemmRowColumnScale()
{
    ir::GraphBuilder b("gemm_row_column");
    const ir::Expr M = ir::sizeVar("M"), N = ir::sizeVar("N"), K = ir::sizeVar("K");
    const ir::Tensor A = b.input("A", ir::DType::F32, {M, K});
    const ir::Tensor W = b.input("W", ir::DType::F32, {K, N});
    const ir::Tensor rs = b.input("rs", ir::DType::F32, {M});
    const ir::Tensor bias = b.input("bias", ir::DType::F32, {N});
    const ir::Tensor G = b.intermediate("G", ir::DType::F32, {M, N});
    const ir::Tensor Y = b.output("Y", ir::DType::F32, {M, N});
    const ir::Expr i = ir::var("i"), j = ir::var("j"), k = ir::var("k");
    b.compute(G, {i, j}, ir::reduceSum({{"k", K}}), A(i, k) * W(k, j));
    b.compute(Y, {i, j}, G(i, j) * rs(i) + bias(j));
    return b.finish();
}

struct Generated {
    schedule::Problem problem;
    schedule::Schedule schedule;
    codegen::GeneratedProgram program;
};

Generated generate(const ir::Graph &graph, const ir::SizeBindings &sizes, const DecisionChanges &changes,
                   schedule::Precision precision = schedule::Precision::FP32)
{
    Generated g{{graph, sizes, sm90(), precision}, {}, {}};
    auto s = schedule::defaultSchedule(g.problem);
    EXPECT_TRUE(s.ok()) << s.error().toString();
    g.schedule = *s;
    for (const auto &[key, value] : changes)
        g.schedule.groups.front().set(key, value);
    EXPECT_TRUE(schedule::validateSchedule(g.schedule, g.problem).ok()) << schedule::describe(g.schedule.groups.front());
    auto p = codegen::generateProgram(g.problem, g.schedule);
    EXPECT_TRUE(p.ok()) << p.error().toString();
    if (p)
        g.program = *p;
    return g;
}

} // namespace

TEST(GemmEpilogue, ErfcIsTheDefaultForGeluAndIllegalWithoutIt)
{
    const ir::SizeBindings sizes{{"M", 512}, {"N", 512}, {"K", 128}};
    const schedule::Problem gelu{ir::makeGemmBiasGelu(), sizes, sm90(), schedule::Precision::FP32};
    const schedule::Problem plain{ir::makeMatmul(), sizes, sm90(), schedule::Precision::FP32};
    auto g = schedule::defaultSchedule(gelu), m = schedule::defaultSchedule(plain);
    ASSERT_TRUE(g.ok() && m.ok());
    EXPECT_EQ(g->groups.front().value("erf"), 1);
    EXPECT_EQ(m->groups.front().value("erf"), 0);
    auto s = *m;
    s.groups.front().set("erf", 1);
    auto a = schedule::analyzeGroup(plain.graph, s.groups.front().ops, s.groups.front().strategy);
    ASSERT_TRUE(a.ok());
    const auto v = schedule::checkGroup(*a, s.groups.front(), plain);
    EXPECT_TRUE(std::any_of(v.begin(), v.end(), [](const schedule::Violation &x) {
        return x.keys == std::vector<std::string>{"erf"} && x.message.find("computes neither") != std::string::npos;
    }));
}

TEST(GemmEpilogue, ErfcCallsTheDeviceFunctionInEveryKernelKind)
{
    const ir::Graph graph = ir::makeGemmBiasGelu();
    const ir::SizeBindings sizes{{"M", 257}, {"N", 515}, {"K", 128}};
    struct Variant {
        const char *what;
        DecisionChanges changes;
        schedule::Precision precision = schedule::Precision::FP32;
    };
    const std::vector<Variant> variants = {
        {"simt", {}},
        {"split_k", {{"split_k", 2}}},
        {"stream_k", {{"stream_k", 1}}},
        {"tf32_mma", {{"math", 1}}, schedule::Precision::TF32},
        {"tf32_wgmma", {}, schedule::Precision::TF32},
    };
    for (const Variant &v : variants)
        for (int erfc : {0, 1}) {
            DecisionChanges changes = v.changes;
            changes.push_back({"erf", erfc});
            const Generated g = generate(graph, sizes, changes, v.precision);
            const std::string what = std::string(v.what) + " erf=" + (erfc ? "erfc" : "library");
            const std::string &src = g.program.source;
            EXPECT_EQ(count(src, "stitch_erf1p_((v_H_ * 0.707106781f))"), erfc ? count(src, "const float v_Y_") : 0u) << what;
            EXPECT_EQ(count(src, "erff("), erfc ? 0u : count(src, "const float v_Y_")) << what;
            auto compiled = compileProgram(g.program, g.schedule.groups.front().value("math") == 2 ? "sm_90a" : "sm_90");
            ASSERT_TRUE(compiled.ok()) << what << ": " << compiled.error().toString();
            expectCompiledClean(g.program, *compiled);
        }
}

TEST(GemmEpilogue, ColumnLoadsHappenOncePerColumn)
{
    const Generated g = generate(makeGemmRowColumnScale(), {{"M", 257}, {"N", 515}, {"K", 64}}, {});
    const std::string &src = g.program.source;
    // bias[j] is loaded before the row loop, into col0_, and each result reads col0_; rs[i] stays
    // in the row loop.
    EXPECT_EQ(count(src, "col0_[h_][q_] = gj_ < N_ ? bias[((gj_))] : float(0);"), 1u) << src;
    EXPECT_EQ(count(src, "float col1_"), 0u) << "rs[i] uses the row";
    EXPECT_GT(count(src, "* rs[((gi_))]) + col0_[h_]["), 0u) << src;
    EXPECT_EQ(count(src, "+ bias[(("), 0u) << src;
    auto compiled = compileProgram(g.program, "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    expectCompiledClean(g.program, *compiled);

    // Split K: the second kernel applies the epilogue one result per thread and loads in place.
    const Generated split = generate(makeGemmRowColumnScale(), {{"M", 257}, {"N", 515}, {"K", 64}}, {{"split_k", 2}});
    EXPECT_EQ(count(split.program.source, "col0_"), 0u);
    EXPECT_GT(count(split.program.source, "+ bias[((gj_))]"), 0u);
}

TEST(ErfDecision, ErfcInElementwiseAndRowKernels)
{
    for (bool rows : {false, true}) {
        const ir::Graph graph = geluGraph(rows);
        for (int erfc : {0, 1}) {
            const Generated g = generate(graph, {{"M", 37}, {"N", 1000}}, {{"erf", erfc}});
            const auto &group = g.schedule.groups.front();
            EXPECT_EQ(group.strategy, rows ? schedule::Strategy::RowReduction : schedule::Strategy::Elementwise);
            const std::string what = graph.name() + " " + schedule::describe(group);
            const std::string &src = g.program.source;
            EXPECT_EQ(src.find("stitch_erf1p_((") != std::string::npos, erfc == 1) << what;
            EXPECT_EQ(src.find("erff(") != std::string::npos, erfc == 0) << what;
            auto compiled = compileProgram(g.program, "sm_90");
            ASSERT_TRUE(compiled.ok()) << what << ": " << compiled.error().toString();
            expectCompiledClean(g.program, *compiled);
        }
        schedule::Problem p{graph, {{"M", 37}, {"N", 1000}}, sm90(), schedule::Precision::FP32};
        auto d = schedule::defaultSchedule(p);
        ASSERT_TRUE(d.ok());
        EXPECT_EQ(d->groups.front().value("erf"), 1) << graph.name();
    }
    // Softmax has no 1 + erf: erf=erfc is refused for its row kernel.
    schedule::Problem softmax{ir::makeSoftmaxRows(), {{"M", 37}, {"N", 1000}}, sm90(), schedule::Precision::FP32};
    auto s = schedule::defaultSchedule(softmax);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->groups.front().value("erf"), 0);
    s->groups.front().set("erf", 1);
    EXPECT_FALSE(schedule::validateSchedule(*s, softmax).ok());
}

namespace {

/// 128x128 tiles of 8x8 results per thread: 4 adjacent columns, one float4 store each.
const DecisionChanges kWideTile = {{"block_m", 128}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8}, {"min_blocks", 1}};

std::vector<schedule::Violation> violations(const schedule::Problem &problem, const DecisionChanges &changes)
{
    auto s = schedule::defaultSchedule(problem);
    EXPECT_TRUE(s.ok());
    auto &g = s->groups.front();
    for (const auto &[key, value] : kWideTile)
        g.set(key, value);
    for (const auto &[key, value] : changes)
        g.set(key, value);
    auto a = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
    EXPECT_TRUE(a.ok());
    return schedule::checkGroup(*a, g, problem);
}

bool namesExactly(const std::vector<schedule::Violation> &v, const std::vector<std::string> &keys, const std::string &text)
{
    return std::any_of(v.begin(), v.end(), [&](const schedule::Violation &x) {
        return x.keys == keys && x.message.find(text) != std::string::npos;
    });
}

} // namespace

TEST(GemmStore, IllegalValuesNameTheirReason)
{
    const ir::SizeBindings sizes{{"M", 257}, {"N", 512}, {"K", 64}};
    const schedule::Problem plain{ir::makeMatmul(), sizes, sm90(), schedule::Precision::FP32};
    const schedule::Problem tf32{ir::makeMatmul(), sizes, sm90(), schedule::Precision::TF32};
    const schedule::Problem gelu{ir::makeGemmBiasGelu(), sizes, sm90(), schedule::Precision::FP32};
    const schedule::Problem odd{ir::makeMatmul(), {{"M", 257}, {"N", 515}, {"K", 64}}, sm90(), schedule::Precision::FP32};
    EXPECT_TRUE(violations(plain, {{"store", 1}}).empty());
    EXPECT_TRUE(violations(plain, {{"store", 2}}).empty());
    EXPECT_TRUE(namesExactly(violations(tf32, {{"store", 1}, {"math", 1}}), {"store", "math"}, "math must be simt"));
    EXPECT_TRUE(namesExactly(violations(plain, {{"store", 1}, {"thread_n", 2}, {"block_n", 32}, {"thread_m", 2}, {"block_m", 32}}),
                      {"store", "thread_n", "math"},
                      "columns are single"));
    EXPECT_TRUE(namesExactly(violations(odd, {{"store", 2}}), {"store", "thread_n", "math"}, "515 elements, not a multiple of 4"));
    EXPECT_TRUE(namesExactly(violations(gelu, {{"store", 2}}), {"store", "split_k", "math"}, "fused epilogue ops already store"));
    EXPECT_TRUE(violations(gelu, {{"store", 1}}).empty()) << "GELU's results stored one by one";
    EXPECT_TRUE(violations(gelu, {{"store", 2}, {"split_k", 2}}).empty()) << "split K stores the raw sums";
}

TEST(GemmStore, TheEpilogueStoresAsDecided)
{
    const ir::SizeBindings sizes{{"M", 257}, {"N", 512}, {"K", 64}};
    const std::string wide = "*reinterpret_cast<float4 *>(&C[((gi_) * (N) + (gj0_))]) = make_float4(";
    for (int split : {1, 2})
        for (int store : {0, 1, 2}) {
            DecisionChanges changes = kWideTile;
            changes.insert(changes.end(), {{"store", store}, {"split_k", split}});
            const Generated g = generate(ir::makeMatmul(), sizes, changes);
            const std::string &src = g.program.source;
            const std::string what = "store=" + std::to_string(store) + " split_k=" + std::to_string(split);
            const std::string scalarStore = split == 1 ? ")] = o_C_[3];" : " + 3] = o_partials_[3];";
            EXPECT_EQ(count(src, "make_float4("), store == 1 ? 0u : 1u) << what;
            EXPECT_EQ(count(src, " + 0.0f;"), store == 2 ? 4u : 0u) << what;
            EXPECT_EQ(count(src, scalarStore), store == 1 ? 1u : 0u) << what << "\n" << src;
            if (split == 1) {
                EXPECT_EQ(count(src, wide), store == 1 ? 0u : 1u) << what;
            }
            auto compiled = compileProgram(g.program, "sm_90");
            ASSERT_TRUE(compiled.ok()) << what << ": " << compiled.error().toString();
            expectCompiledClean(g.program, *compiled);
        }
}
