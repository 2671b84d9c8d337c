// Row kernels on a resident grid (grid=resident: as many blocks or clusters as the target's GPU
// holds, walking the rows) and with the outputs written by the copy engine (bulk_store=on), without
// a GPU: the grid size, the legality rules, the kernel's structure, NVRTC compiles.
// test_codegen_gpu.cpp's CodegenGpuRowBulk runs the answers on the GPU.
#include "CodegenFixtures.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

/// A row program, its default schedule and the analysis of its one group.
using Rows = RowProgram;

} // namespace

TEST(RowBulk, ResidentGridIsWhatTheTargetsGpuHolds)
{
    // The H200 (sm_90's GPU in the arch database) holds 7 clusters of 16 per block layer: 21 at
    // three blocks per SM; without clusters, one block per SM and block layer.
    schedule::KernelGroup g;
    g.strategy = schedule::Strategy::RowReduction;
    g.set("cluster", 16);
    g.set("min_blocks", 3);
    g.set("rows_per_block", 1);
    EXPECT_EQ(schedule::rowResidentGroups(sm90(), g, 256), 21);
    EXPECT_EQ(schedule::rowResidentGroups(sm90(), g, 19), 19) << "at most one cluster per row";
    g.set("cluster", 1);
    g.set("min_blocks", 2);
    g.set("rows_per_block", 4);
    EXPECT_EQ(schedule::rowResidentGroups(sm90(), g, 100000), 264);
    EXPECT_EQ(schedule::rowResidentGroups(sm90(), g, 37), 10) << "37 rows in blocks of 4";
}

TEST(RowBulk, LongSoftmaxRowsOnAResidentGridWithBulkStores)
{
    // The fastest softmax over 256 x 262144 of run 19 (0.150 ms): clusters of 16 x 128, three per SM,
    // one exchange, the FMA exp, a resident grid and bulk stores. (The default takes no bulk
    // stores: with expf they are slower; it holds three rows per block since run 20.)
    Rows r(true, 256, 262144);
    auto &g = r.group();
    EXPECT_EQ(g.value("bulk_store"), 0) << schedule::describe(g);
    setLongRowDecisions(g, {.threadsPerRow = 128, .cluster = 16, .minBlocks = 3, .combine = 1, .fastExp = 1, .grid = 1,
                            .bulkStore = 1});
    ASSERT_TRUE(r.check().empty());
    auto p = codegen::generateProgram(r.problem, r.s);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    const std::string &src = p->source;
    // 21 clusters of 16, each walking every 21st row.
    EXPECT_NE(src.find("const long long grid0_[3] = {(21 * 16), 1, 1};"), std::string::npos) << src;
    EXPECT_NE(src.find("const long long stride_ = (long long)(gridDim.x / 16) * 1;"), std::string::npos);
    EXPECT_NE(src.find("for (int step_ = 0; step_ < steps_; ++step_)"), std::string::npos);
    EXPECT_EQ(src.find("if (active_)"), std::string::npos) << "steps_ stops at the last row: no row test";
    EXPECT_NE(src.find("if (step_ == steps_ - 1)\n            cluster_.barrier_arrive();"), std::string::npos)
        << "the early arrive at the block's own last row, not the first";
    // The outputs: 64 KiB of shared memory per block, 16 pieces of 4 KiB by the copy engine.
    EXPECT_NE(src.find("extern __shared__ __align__(128) float out_[];"), std::string::npos);
    EXPECT_NE(src.find("*reinterpret_cast<float4 *>(out_ + 0 + (it_ * 128 + lane_) * 4) = o_Y_;"), std::string::npos);
    EXPECT_EQ(src.find("*reinterpret_cast<float4 *>(Y + rowBase_ + c0_)"), std::string::npos) << "no direct stores";
    EXPECT_NE(src.find("for (int pc_ = 0; pc_ < 16; ++pc_)"), std::string::npos);
    EXPECT_EQ(count(src, "cp.async.bulk.global.shared::cta.bulk_group"), 1u);
    EXPECT_NE(src.find("\"l\"(Y + rowBase_ + begin_ + pc_ * 1024)"), std::string::npos);
    EXPECT_NE(src.find("\"n\"(4096)"), std::string::npos);
    // The previous row's copies have read the stage before it is written again (a wait after the
    // row's loads, ordered by the exchange's barriers: no barrier of its own), and at the end.
    EXPECT_EQ(count(src, "cp.async.bulk.wait_group.read 0;"), 2u);
    EXPECT_EQ(count(src, "__syncthreads();"), 2u) << "the warps' partials and one per piece";
    EXPECT_EQ(count(src, "fence.proxy.async.shared::cta;"), 1u);
    EXPECT_NE(src.find("cudaFuncSetAttribute(::rowMax_Y, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536)"),
              std::string::npos);
    auto compiled = compileProgram(*p, "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    const auto *k = compiled->kernel(g.name);
    ASSERT_NE(k, nullptr);
    EXPECT_LE(k->registers, 170) << "three blocks of 128 threads per SM";
    EXPECT_EQ(k->spillStoreBytes, 0);
    ASSERT_EQ(p->kernels.size(), 1u);
    EXPECT_EQ(p->kernels.front().code.dynamicSharedBytes, 65536);
}

TEST(RowBulk, LegalityNamesTheRule)
{
    Rows r(true, 256, 262144);
    auto &g = r.group();
    setLongRowDecisions(g, {.threadsPerRow = 128, .cluster = 16, .minBlocks = 3, .combine = 1, .grid = 1, .bulkStore = 1});
    ASSERT_TRUE(r.check().empty());
    g.set("row_steps", 2);
    EXPECT_TRUE(names(r.check(), "grid", "leave it at 1"));
    g.set("row_steps", 1);
    g.set("vector", 2);
    EXPECT_TRUE(names(r.check(), "bulk_store", "it needs vector=4"));
    g.set("vector", 4);
    g.set("cache", 0);
    EXPECT_TRUE(names(r.check(), "bulk_store", "it needs cache=registers"));
    g.set("cache", 1);

    // Rows that do not split evenly over the threads' vectors: no whole pieces.
    Rows odd(true, 64, 262144 + 512);
    auto &h = odd.group();
    setLongRowDecisions(h, {.threadsPerRow = 128, .cluster = 16, .minBlocks = 3, .combine = 1, .bulkStore = 1});
    EXPECT_TRUE(names(odd.check(), "bulk_store", "do not split evenly"));

    // A block's part of the row too large for shared memory.
    Rows big(true, 64, 262144);
    auto &b = big.group();
    setLongRowDecisions(b, {.threadsPerRow = 512, .cluster = 2, .bulkStore = 1});
    EXPECT_TRUE(names(big.check(), "bulk_store", "B of outputs per block"));

    // sm_80 has no bulk copies.
    Rows ampere(true, 4096, 1024, *ArchDatabase::builtin().arch("sm_80"));
    auto &am = ampere.group();
    am.set("bulk_store", 1);
    EXPECT_TRUE(names(ampere.check(), "bulk_store", "needs sm_90 or newer"));
}

TEST(RowBulk, EveryShapeCompiles)
{
    // Layer norm (gamma and beta read at the output), several rows per block on a resident grid,
    // no cluster, the row re-read from memory, prefetch=next_row on a resident grid.
    struct Shape {
        bool softmax;
        long long rows, cols;
        int tpr, rpb, cluster, cache, prefetch, bulk, minBlocks;
    };
    for (const Shape &sh : std::vector<Shape>{{false, 256, 262144, 128, 1, 16, 1, 0, 1, 2},
                                              {true, 37, 304, 32, 4, 1, 1, 0, 0, 1},
                                              {true, 1000, 4096, 256, 1, 1, 1, 0, 1, 2},
                                              {true, 300, 2048, 128, 1, 1, 0, 0, 0, 1},
                                              {false, 300, 16384, 256, 1, 4, 1, 1, 0, 1}}) {
        Rows r(sh.softmax, sh.rows, sh.cols);
        auto &g = r.group();
        setLongRowDecisions(g, {.threadsPerRow = sh.tpr,
                                .cluster = sh.cluster,
                                .prefetch = sh.prefetch,
                                .minBlocks = sh.minBlocks,
                                .grid = 1,
                                .bulkStore = sh.bulk});
        g.set("rows_per_block", sh.rpb);
        g.set("cache", sh.cache);
        g.set("reduce", 0);
        const std::string what = r.c.name + " " + std::to_string(sh.rows) + "x" + std::to_string(sh.cols) + " " +
                                 schedule::describe(g);
        const auto v = r.check();
        ASSERT_TRUE(v.empty()) << what << ": " << v.front().message;
        auto p = codegen::generateProgram(r.problem, r.s);
        ASSERT_TRUE(p.ok()) << what << ": " << p.error().toString();
        auto compiled = compileProgram(*p, "sm_90");
        ASSERT_TRUE(compiled.ok()) << what << ": " << compiled.error().toString();
        const auto *k = compiled->kernel(g.name);
        ASSERT_NE(k, nullptr);
        EXPECT_EQ(k->spillStoreBytes, 0) << what;
    }
}
