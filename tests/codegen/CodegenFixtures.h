#pragma once
// Programs, sizes and schedule samples shared by the codegen tests (CPU and GPU).

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/frontend/Lift.h"
#include "core/ir/GraphBuilder.h"
#include "core/ir/Programs.h"
#include "core/schedule/Space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace codegen_fixtures {

using namespace stitch;

struct Case {
    std::string name;
    ir::Graph graph;
    ir::SizeBindings sizes;
};

/// Odd sizes (no tile, warp or vector divides them) and friendly ones.
inline std::vector<Case> cases()
{
    return {
        {"matmul_odd", ir::makeMatmul(), {{"M", 67}, {"N", 45}, {"K", 33}}},
        {"matmul_aligned", ir::makeMatmul(), {{"M", 128}, {"N", 96}, {"K", 64}}},
        {"softmax_odd", ir::makeSoftmaxRows(), {{"M", 37}, {"N", 301}}},
        {"softmax_long", ir::makeSoftmaxRows(), {{"M", 6}, {"N", 4096}}},
        {"layernorm_odd", ir::makeLayerNormRows(), {{"M", 19}, {"N", 130}}},
        {"chain_odd", ir::makeElementwiseChain(), {{"M", 33}, {"N", 47}}},
        {"chain_aligned", ir::makeElementwiseChain(), {{"M", 64}, {"N", 128}}},
        {"gemm_bias_gelu_odd", ir::makeGemmBiasGelu(), {{"M", 70}, {"N", 52}, {"K", 30}}},
    };
}

/// C = A^T B^T with A stored [K, M] and B stored [N, K]: both operands transposed (the tensor-core
/// path's other layouts; odd sizes give odd leading dimensions).
inline ir::Graph makeMatmulTransposed()
{
    ir::GraphBuilder b("matmul_tt");
    const ir::Expr M = ir::sizeVar("M"), N = ir::sizeVar("N"), K = ir::sizeVar("K");
    const ir::Tensor A = b.input("A", ir::DType::F32, {K, M});
    const ir::Tensor B = b.input("B", ir::DType::F32, {N, K});
    const ir::Tensor C = b.output("C", ir::DType::F32, {M, N});
    const ir::Expr i = ir::var("i"), j = ir::var("j"), k = ir::var("k");
    b.compute(C, {i, j}, ir::reduceSum({{"k", K}}), A(k, i) * B(j, k));
    return b.finish();
}

/// GEMMs for the TF32 tensor-core path (precision tf32): the shapes the GPU test runs, odd ones
/// (no tile divides them, odd leading dimensions) and aligned ones, both operand layouts, and the
/// fused bias + GELU epilogue.
inline std::vector<Case> tf32Cases()
{
    return {
        {"matmul_128", ir::makeMatmul(), {{"M", 128}, {"N", 128}, {"K", 128}}},
        {"matmul_257x131x77", ir::makeMatmul(), {{"M", 257}, {"N", 131}, {"K", 77}}},
        {"matmul_1000x3000x700", ir::makeMatmul(), {{"M", 1000}, {"N", 3000}, {"K", 700}}},
        {"matmul_4097x257x1031", ir::makeMatmul(), {{"M", 4097}, {"N", 257}, {"K", 1031}}},
        {"matmul_tt_odd", makeMatmulTransposed(), {{"M", 133}, {"N", 71}, {"K", 45}}},
        {"matmul_tt_aligned", makeMatmulTransposed(), {{"M", 256}, {"N", 128}, {"K", 96}}},
        {"gemm_bias_gelu_odd", ir::makeGemmBiasGelu(), {{"M", 70}, {"N", 52}, {"K", 30}}},
        {"gemm_bias_gelu_512", ir::makeGemmBiasGelu(), {{"M", 512}, {"N", 512}, {"K", 128}}},
    };
}

inline const ArchLimits &sm90() { return *ArchDatabase::builtin().arch("sm_90"); }

/// A long-row kernel's decisions: one row per block or per cluster of `cluster` blocks, walking
/// `rowSteps` rows in turn, the row's elements cached in registers 4 at a time; `prefetch` is how
/// the next row arrives (0 off, 1 next_row into registers, 2 shared by cp.async); one block per SM
/// at least (`min_blocks`), softmax's two exchanges (`combine=rounds`) and `expf`, whatever the
/// default schedule of the rows took.
struct LongRowDecisions {
    int threadsPerRow = 512;
    int cluster = 1;
    int rowSteps = 1;
    int prefetch = 0;
    int minBlocks = 1;
    int combine = 0;
    int fastExp = 0;
    int grid = 0;      ///< grid=rows (0) or resident (1)
    int bulkStore = 0; ///< bulk_store=off (0) or on (1)
    int rowsPerBlock = 1;
    int exchange = 0;     ///< exchange=barrier (0) or push (1)
    int columnInputs = 0; ///< column_inputs=global (0) or shared (1)
};

inline void setLongRowDecisions(schedule::KernelGroup &g, const LongRowDecisions &d)
{
    g.set("threads_per_row", d.threadsPerRow);
    g.set("rows_per_block", d.rowsPerBlock);
    g.set("cluster", d.cluster);
    g.set("vector", 4);
    g.set("cache", 1);
    g.set("row_steps", d.rowSteps);
    g.set("prefetch", d.prefetch);
    g.set("min_blocks", d.minBlocks);
    g.set("combine", d.combine);
    g.set("exp", d.fastExp);
    g.set("grid", d.grid);
    g.set("bulk_store", d.bulkStore);
    g.set("exchange", d.exchange);
    g.set("column_inputs", d.columnInputs);
}

/// A row program (softmax or layer norm over rows x cols), its default schedule for `arch` and
/// the legality rules its one group breaks.
struct RowProgram {
    Case c;
    schedule::Problem problem;
    schedule::Schedule s;
    RowProgram(bool softmax, long long rows, long long cols, const ArchLimits &arch = sm90())
        : c{softmax ? "softmax_rows" : "layernorm_rows", softmax ? ir::makeSoftmaxRows() : ir::makeLayerNormRows(),
            {{"M", rows}, {"N", cols}}},
          problem{c.graph, c.sizes, arch, schedule::Precision::FP32}
    {
        auto d = schedule::defaultSchedule(problem);
        EXPECT_TRUE(d.ok()) << d.error().toString();
        if (d.ok())
            s = *d;
    }
    schedule::KernelGroup &group() { return s.groups.front(); }
    std::vector<schedule::Violation> check() const
    {
        auto a = schedule::analyzeGroup(c.graph, s.groups.front().ops, s.groups.front().strategy);
        EXPECT_TRUE(a.ok());
        return schedule::checkGroup(*a, s.groups.front(), problem);
    }
};

/// Up to `count` legal schedules from the main group's whole legal space, plus the default, plus for
/// every legal value of every decision a schedule that takes it. A small space (row and element-wise
/// groups: at most kWholeWalk combinations) is walked whole and sampled evenly in its order; a larger
/// one (the GEMMs: hundreds of millions of combinations, 0.39-3.8 million legal, whose walk's first
/// 100000 never reach block_m=64) is drawn from by schedule::sampleLegal with a fixed seed, without
/// walking it.
inline std::vector<schedule::Schedule> sampleSchedules(const schedule::Problem &problem, std::size_t count)
{
    constexpr std::size_t kWalkLimit = 100000, kWholeWalk = 2'000'000;
    std::vector<schedule::Schedule> out;
    auto base = schedule::defaultSchedule(problem);
    if (!base.ok())
        return out;
    out.push_back(*base);
    for (std::size_t gi = 0; gi < base->groups.size(); ++gi) {
        const auto &g = base->groups[gi];
        auto analysis = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
        if (!analysis.ok())
            continue;
        const bool small = schedule::candidateCombinations(g.strategy) <= kWholeWalk;
        const auto legal = small ? schedule::enumerateLegal(*analysis, g, problem, kWalkLimit)
                                 : std::vector<schedule::KernelGroup>{};
        const bool whole = small && legal.size() < kWalkLimit;
        const std::uint32_t seed = 1 + static_cast<std::uint32_t>(gi);
        std::vector<schedule::KernelGroup> picked;
        if (whole) {
            const std::size_t step = std::max<std::size_t>(1, legal.size() / std::max<std::size_t>(count, 1));
            for (std::size_t i = 0; i < legal.size() && picked.size() < count; i += step)
                picked.push_back(legal[i]);
        } else {
            picked = schedule::sampleLegal(*analysis, g, problem, count, seed);
        }
        // Every legal value of every decision at least once (the even spread can step over the
        // values of a decision that varies fastest, e.g. row_steps): in a whole space the first
        // legal schedule with the value and the last (the other decisions at their largest legal
        // values), in a larger one a drawn schedule with the value.
        for (const auto &d : schedule::decisionDefs(g.strategy))
            for (int v : d.candidates) {
                auto has = [&](const schedule::KernelGroup &k) { return k.value(d.key) == v; };
                if (std::any_of(picked.begin(), picked.end(), has))
                    continue;
                if (!whole) {
                    schedule::KernelGroup with = g;
                    with.set(d.key, v);
                    for (auto &k : schedule::sampleLegal(*analysis, with, problem, 1, seed, {d.key}))
                        picked.push_back(std::move(k));
                    continue;
                }
                auto first = std::find_if(legal.begin(), legal.end(), has);
                if (first == legal.end())
                    continue;
                auto last = std::find_if(legal.rbegin(), legal.rend(), has);
                picked.push_back(*first);
                if (!(*last == *first))
                    picked.push_back(*last);
            }
        for (const auto &k : picked) {
            schedule::Schedule s = *base;
            s.groups[gi] = k;
            out.push_back(std::move(s));
        }
    }
    return out;
}

using DecisionChanges = std::vector<std::pair<std::string, int>>;

/// `base` with `common` and then each of `changes` applied to its first group, those that are legal.
inline std::vector<schedule::Schedule> legalVariants(const schedule::Problem &problem, const schedule::Schedule &base,
                                                     const std::vector<DecisionChanges> &changes,
                                                     const DecisionChanges &common = {})
{
    std::vector<schedule::Schedule> out;
    const auto &g0 = base.groups.front();
    auto analysis = schedule::analyzeGroup(problem.graph, g0.ops, g0.strategy);
    if (!analysis.ok())
        return out;
    for (const auto &change : changes) {
        schedule::Schedule s = base;
        for (const auto &[key, value] : common)
            s.groups.front().set(key, value);
        for (const auto &[key, value] : change)
            s.groups.front().set(key, value);
        if (schedule::checkGroup(*analysis, s.groups.front(), problem).empty())
            out.push_back(std::move(s));
    }
    return out;
}

/// Variants of a default tensor-core schedule that the tests run besides it, each kept when legal:
/// split K, 8 warps of 64x64, 32x32 warps in a 64x64 block with a 16-deep 4-stage ring, no padding
/// with a 2-stage ring, and small 16x16 warps with 8-deep tiles, row-major rasterization and 4 K slices.
inline std::vector<schedule::Schedule> tf32Variants(const schedule::Problem &problem, const schedule::Schedule &base)
{
    const std::vector<DecisionChanges> changes = {
        {{"split_k", 2}, {"block_k", 8}},
        {{"block_m", 128}, {"block_n", 256}, {"thread_m", 8}, {"thread_n", 16}, {"min_blocks", 1}},
        {{"block_m", 64}, {"block_n", 64}, {"thread_m", 4}, {"thread_n", 8}, {"block_k", 16}, {"stages", 4}},
        {{"smem_pad", 0}, {"stages", 2}},
        {{"block_m", 32}, {"block_n", 32}, {"thread_m", 2}, {"thread_n", 4}, {"block_k", 8}, {"swizzle", 1},
         {"split_k", 4}},
    };
    return legalVariants(problem, base, changes);
}

/// Legal math=tf32_wgmma variants of `base` (sm_90a warpgroup MMAs): both operand arrangements
/// (MMA rows along m or along n), the three swizzles (block_k 32, 16, 8), MMA widths 32 to 256,
/// rings of 3 and 4 stages, split K, and each of these but the last three again with copy=producer
/// (a producer warpgroup, mbarriers) right after it.
inline std::vector<schedule::Schedule> wgmmaVariants(const schedule::Problem &problem, const schedule::Schedule &base)
{
    const DecisionChanges common = {{"math", 2},       {"copy", 1},    {"smem_pad", 0},
                                    {"min_blocks", 1}, {"split_k", 1}, {"thread_m", 8}};
    const std::vector<DecisionChanges> changes = {
        {{"block_m", 256}, {"block_n", 128}, {"thread_n", 16}, {"block_k", 32}, {"stages", 4}},
        {{"block_m", 128}, {"block_n", 256}, {"thread_n", 16}, {"block_k", 32}, {"stages", 4}},
        {{"block_m", 128}, {"block_n", 128}, {"thread_n", 8}, {"block_k", 32}, {"stages", 3}},
        {{"block_m", 64}, {"block_n", 64}, {"thread_n", 4}, {"block_k", 16}, {"stages", 3}, {"swizzle", 1}},
        {{"block_m", 128}, {"block_n", 64}, {"thread_n", 8}, {"block_k", 8}, {"stages", 3}, {"split_k", 2}},
        {{"block_m", 64}, {"block_n", 128}, {"thread_n", 8}, {"block_k", 8}, {"stages", 3}, {"split_k", 2}},
        {{"block_m", 32}, {"block_n", 64}, {"thread_n", 2}, {"block_k", 32}, {"stages", 3}},
        {{"block_m", 64}, {"block_n", 32}, {"thread_n", 2}, {"block_k", 16}, {"stages", 4}},
    };
    // Each of the first five also with copy=producer and with transpose_b=on (B transposed by a kernel
    // first; legal where B is stored [k, j]), and a stream-K kernel with transpose_b=on.
    std::vector<DecisionChanges> variants;
    for (std::size_t i = 0; i < changes.size(); ++i) {
        variants.push_back(changes[i]);
        if (i + 3 < changes.size()) {
            variants.push_back(changes[i]);
            variants.back().push_back({"copy", 2});
            variants.push_back(changes[i]);
            variants.back().push_back({"transpose_b", 1});
        }
    }
    variants.push_back({{"block_m", 128}, {"block_n", 128}, {"thread_n", 8}, {"block_k", 32}, {"stages", 3}, {"stream_k", 1},
                        {"transpose_b", 1}});
    return legalVariants(problem, base, variants, common);
}

inline Result<cuda::CompileResult> compileProgram(const codegen::GeneratedProgram &p, const std::string &arch)
{
    return codegen::compileGenerated(p.source, p.name + ".cu", arch);
}

/// Every kernel of the program compiled without spills or local memory, and no wgmma serialized by
/// ptxas (C7513: "wgmma.mma_async instructions are serialized due to ..."; the log holds ptxas's
/// report here, NVRTC has been seen to leave it out on the GPU machine).
inline void expectCompiledClean(const codegen::GeneratedProgram &p, const cuda::CompileResult &compiled)
{
    EXPECT_EQ(compiled.log.find("serialized"), std::string::npos) << compiled.log;
    for (const auto &k : p.kernels) {
        const auto *r = compiled.kernel(k.code.name);
        ASSERT_NE(r, nullptr) << k.code.name;
        EXPECT_LE(r->spillStoreBytes, 0) << k.code.name << ": " << r->registers << " registers";
        EXPECT_EQ(r->localBytes, 0) << k.code.name;
    }
}

/// GELU alone (one element-wise kernel) and layer norm followed by GELU (one row kernel).
inline ir::Graph geluGraph(bool afterLayerNorm)
{
    const std::string gelu = "Y[i, j] = 0.5 * H[i, j] * (1.0 + erf(H[i, j] * 0.7071067811865476))\n";
    const std::string text =
        afterLayerNorm ? "graph layernorm_gelu\nsize M, N\ninput X: f32[M, N]\ninput gamma: f32[N]\ninput beta: f32[N]\n"
                         "tensor mean: f32[M]\ntensor var: f32[M]\ntensor H: f32[M, N]\noutput Y: f32[M, N]\n"
                         "mean[i] = sum(j) X[i, j] / N\n"
                         "var[i] = sum(j) (X[i, j] - mean[i]) * (X[i, j] - mean[i]) / N\n"
                         "H[i, j] = (X[i, j] - mean[i]) * rsqrt(var[i] + 1e-5) * gamma[j] + beta[j]\n" + gelu
                       : "graph gelu\nsize M, N\ninput H: f32[M, N]\noutput Y: f32[M, N]\n" + gelu;
    auto lifted = frontend::liftTensorExpressions(text, afterLayerNorm ? "layernorm_gelu.te" : "gelu.te");
    EXPECT_TRUE(lifted.ok()) << lifted.error().toString();
    return lifted.ok() ? lifted->graph : ir::Graph{};
}

/// A relative error as the GPU tests print it: 3 significant digits, so that 2e-7 does not read 0.000000.
inline std::string errorText(double relativeError)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", relativeError);
    return buf;
}

/// How often `what` occurs in `text` (generated source), without overlaps.
inline std::size_t count(const std::string &text, const std::string &what)
{
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
        ++n;
    return n;
}

/// Whether a violation names `key` and says `text`.
inline bool names(const std::vector<schedule::Violation> &v, const std::string &key, const std::string &text)
{
    return std::any_of(v.begin(), v.end(), [&](const schedule::Violation &x) {
        return std::find(x.keys.begin(), x.keys.end(), key) != x.keys.end() && x.message.find(text) != std::string::npos;
    });
}

} // namespace codegen_fixtures
