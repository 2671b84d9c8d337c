// stream_k=on without a GPU: how the tiles are shared, the legality rules, the kernel's structure
// (segments, partial sums, flags), its launch plan and host launcher, and NVRTC compiles without
// spills. test_codegen_gpu.cpp's CodegenGpuStreamK runs the answers on the GPU.
#include "CodegenFixtures.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

schedule::Schedule streamKSchedule(const schedule::Problem &problem, const DecisionChanges &changes)
{
    auto s = schedule::defaultSchedule(problem);
    EXPECT_TRUE(s.ok());
    for (const auto &[key, value] : changes)
        s->groups.front().set(key, value);
    s->groups.front().set("stream_k", 1);
    return *s;
}

const DecisionChanges kTile256x128 = {{"block_m", 256}, {"block_n", 128}, {"thread_m", 16}, {"thread_n", 8},
                                      {"block_k", 16},  {"copy", 1},      {"stages", 4},    {"min_blocks", 1},
                                      {"split_k", 1},   {"smem_pad", 4},  {"vector", 4}};

bool hasViolation(const std::vector<schedule::Violation> &v, const std::string &a, const std::string &b)
{
    return std::any_of(v.begin(), v.end(), [&](const schedule::Violation &x) {
        return std::find(x.keys.begin(), x.keys.end(), a) != x.keys.end() &&
               std::find(x.keys.begin(), x.keys.end(), b) != x.keys.end();
    });
}

} // namespace

TEST(StreamK, SharesThePartialLastWavePlusOneWave)
{
    // 4096^2 in 256x128 tiles on 132 SMs: 3 whole waves and 116 tiles, more than half a wave: the shared
    // blocks take the 116 (0.88 tiles each), the other 396 run one tile per block.
    EXPECT_EQ(schedule::streamKTiles(512, 132), 116);
    // 4096^2 in 64x128 tiles, 3 per SM: 5 waves of 396 and 68 tiles, too few to share alone: with one
    // whole wave, 464 (1.17 each).
    EXPECT_EQ(schedule::streamKTiles(2048, 396), 464);
    EXPECT_EQ(schedule::streamKTiles(528, 132), 132); // whole waves: one tile per shared block, nothing split
    EXPECT_EQ(schedule::streamKTiles(64, 132), 64);   // less than a wave: every tile is split
    EXPECT_EQ(schedule::streamKTiles(132, 132), 132);
    EXPECT_EQ(schedule::streamKTiles(263, 132), 131);
    EXPECT_EQ(schedule::streamKTiles(197, 132), 197); // 65 left: fewer than 66
    EXPECT_EQ(schedule::streamKTiles(198, 132), 66);
    schedule::KernelGroup g;
    g.strategy = schedule::Strategy::Gemm;
    g.set("min_blocks", 2);
    EXPECT_EQ(schedule::streamKBlocks(sm90(), g), 264) << "132 SMs of the H200, 2 blocks each";
}

TEST(StreamK, GridAndKernelShareTheOneTileRule)
{
    // The launcher's grid (schedule::streamKGridExpr) must launch the shared blocks and one block per
    // tile they do not share, or tiles go uncomputed (too few blocks) or blocks index past the tiles
    // (too many); the kernel computes the shared tiles from the same expression the model evaluates.
    for (const int blocks : {1, 2, 7, 132, 133, 264, 396, 528}) {
        for (std::int64_t tiles = 1; tiles <= 3000; ++tiles) {
            const std::int64_t shared = schedule::streamKTiles(tiles, blocks);
            const std::int64_t rest = tiles % blocks;
            const std::int64_t expected = tiles < blocks ? tiles : rest >= (blocks + 1) / 2 ? rest : rest + blocks;
            ASSERT_EQ(shared, expected) << tiles << " tiles, " << blocks << " blocks";
            const auto grid = ir::evaluateSizeExpr(schedule::streamKGridExpr(ir::intConst(tiles, ir::DType::I64), blocks), {});
            ASSERT_TRUE(grid.ok()) << grid.error().toString();
            ASSERT_EQ(*grid, blocks + tiles - shared) << tiles << " tiles, " << blocks << " blocks";
        }
    }
}

TEST(StreamK, RefusesSplitKAndTheProducerWarpgroup)
{
    const Case c{"matmul", ir::makeMatmul(), {{"M", 1024}, {"N", 1024}, {"K", 1024}}};
    schedule::Problem problem{c.graph, c.sizes, sm90(), schedule::Precision::FP32};
    schedule::Schedule s = streamKSchedule(problem, kTile256x128);
    const auto &g = s.groups.front();
    auto analysis = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
    ASSERT_TRUE(analysis.ok());
    EXPECT_TRUE(schedule::checkGroup(*analysis, g, problem).empty());

    schedule::KernelGroup split = g;
    split.set("split_k", 2);
    EXPECT_TRUE(hasViolation(schedule::checkGroup(*analysis, split, problem), "stream_k", "split_k"));
    auto status = schedule::validateSchedule([&] {
        schedule::Schedule t = s;
        t.groups.front() = split;
        return t;
    }(), problem);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.error().message.find("stream_k=on"), std::string::npos) << status.error().message;

    schedule::Problem tf32{c.graph, c.sizes, sm90(), schedule::Precision::TF32};
    schedule::KernelGroup producer = g;
    for (const auto &[key, value] : DecisionChanges{{"math", 2}, {"copy", 2}, {"smem_pad", 0}, {"thread_m", 8},
                                                   {"thread_n", 16}, {"block_k", 32}, {"store", 0}})
        producer.set(key, value);
    EXPECT_TRUE(hasViolation(schedule::checkGroup(*analysis, producer, tf32), "stream_k", "copy"));
    producer.set("copy", 1);
    EXPECT_TRUE(schedule::checkGroup(*analysis, producer, tf32).empty()) << "wgmma with the cp.async ring is legal";
}

TEST(StreamK, SegmentsMeetThroughPartialsAndSelfResettingFlags)
{
    const Case c{"matmul", ir::makeMatmul(), {{"M", 4096}, {"N", 4096}, {"K", 4096}}};
    schedule::Problem problem{c.graph, c.sizes, sm90(), schedule::Precision::FP32};
    const schedule::Schedule s = streamKSchedule(problem, kTile256x128);
    ASSERT_TRUE(schedule::validateSchedule(s, problem).ok());
    auto p = codegen::generateProgram(problem, s);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    ASSERT_EQ(p->kernels.size(), 1u) << "one kernel: a shared tile's last block to arrive sums the partials";
    const auto &code = p->kernels.front().code;
    ASSERT_GE(code.params.size(), 2u);
    EXPECT_EQ(code.params[code.params.size() - 2].name, "partials_");
    EXPECT_EQ(code.params.back().name, "flags_");
    EXPECT_NE(code.source.find("int *__restrict__ flags_"), std::string::npos);
    EXPECT_NE(code.source.find("for (long long end_ = last_; end_ > first_; end_ = segBegin_)"), std::string::npos)
        << "segments from the last back to the first: every shared block starts at a tile's first k step";
    EXPECT_NE(code.source.find("atom.acq_rel.gpu.global.add.s32"), std::string::npos);
    EXPECT_EQ(code.source.find("ld.acquire"), std::string::npos) << "no block spins on another";
    EXPECT_NE(code.source.find("flags_[tile_] = 0;"), std::string::npos) << "the counter is ready for the next launch";
    EXPECT_NE(code.source.find("cp.async.wait_all"), std::string::npos) << "the ring drains between segments";

    auto plan = codegen::toLaunchPlan(*p, problem.graph, problem.sizes);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    ASSERT_EQ(plan->launches.size(), 1u);
    EXPECT_EQ(plan->launches.front().config.gridX, 132u * 4u) << "132 shared blocks + 396 one-tile blocks";
    const runner::BufferSpec *flags = plan->buffer(code.name + "_flags");
    ASSERT_NE(flags, nullptr);
    EXPECT_EQ(flags->dtype, ir::DType::I32);
    EXPECT_EQ(flags->count, 264u) << "a counter per shared tile, fewer than twice the shared blocks";
    EXPECT_EQ(flags->effectiveInit(), runner::BufferInit::Kind::Zero);
    const runner::BufferSpec *partials = plan->buffer(code.name + "_partials");
    ASSERT_NE(partials, nullptr);
    EXPECT_EQ(partials->count, 2u * 132u * 256u * 128u) << "two tiles of partial sums per shared block";
    EXPECT_NE(p->source.find("cudaMemsetAsync(" + code.name + "_flags, 0,"), std::string::npos)
        << "the host launcher zeroes the flags";

    // Fewer tiles than SMs (512^2 in 256x128: 8 tiles): every tile split, one shared block per SM.
    const Case small{"matmul", ir::makeMatmul(), {{"M", 512}, {"N", 512}, {"K", 4096}}};
    schedule::Problem smallProblem{small.graph, small.sizes, sm90(), schedule::Precision::FP32};
    auto ps = codegen::generateProgram(smallProblem, streamKSchedule(smallProblem, kTile256x128));
    ASSERT_TRUE(ps.ok()) << ps.error().toString();
    auto smallPlan = codegen::toLaunchPlan(*ps, smallProblem.graph, smallProblem.sizes);
    ASSERT_TRUE(smallPlan.ok());
    EXPECT_EQ(smallPlan->launches.front().config.gridX, 132u);
}

TEST(StreamK, KernelsCompileWithoutSpills)
{
    const Case c{"gemm_bias_gelu", ir::makeGemmBiasGelu(), {{"M", 4096}, {"N", 4096}, {"K", 4096}}};
    struct Variant {
        schedule::Precision precision;
        DecisionChanges changes;
    };
    const std::vector<Variant> variants = {
        {schedule::Precision::FP32, kTile256x128},
        {schedule::Precision::FP32,
         {{"block_m", 128}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8}, {"block_k", 8}, {"copy", 1},
          {"stages", 3}, {"min_blocks", 2}, {"split_k", 1}}},
        {schedule::Precision::TF32,
         {{"math", 2}, {"copy", 1}, {"smem_pad", 0}, {"block_m", 256}, {"block_n", 128}, {"thread_m", 8},
          {"thread_n", 16}, {"block_k", 32}, {"stages", 4}, {"min_blocks", 1}, {"split_k", 1}}},
    };
    for (const auto &v : variants) {
        schedule::Problem problem{c.graph, c.sizes, sm90(), v.precision};
        const schedule::Schedule s = streamKSchedule(problem, v.changes);
        SCOPED_TRACE(schedule::describe(s.groups.front()));
        ASSERT_TRUE(schedule::validateSchedule(s, problem).ok());
        auto p = codegen::generateProgram(problem, s);
        ASSERT_TRUE(p.ok()) << p.error().toString();
        auto compiled = compileProgram(*p, "sm_90");
        ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
        expectCompiledClean(*p, *compiled);
    }
}
