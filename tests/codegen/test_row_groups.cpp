// Row kernels whose blocks hold several rows of a cluster's rows (rows_per_block > 1 with a
// cluster), meeting by pushes (exchange=push), with the per-column vectors in shared memory
// (column_inputs=shared) and a quarter of the next row by cp.async.bulk (prefetch=bulk), without a
// GPU: the default for long layer-norm rows, the legality rules, the kernel's structure, NVRTC
// compiles. test_codegen_gpu.cpp's CodegenGpuRowGroups runs the answers on the GPU.
#include "CodegenFixtures.h"

#include <gtest/gtest.h>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

using Rows = RowProgram;

/// Run 20's layer norm: three rows per block of a resident cluster of 16 x 128 threads.
LongRowDecisions rowGroups(int prefetch = 3, int columns = 1)
{
    return {.threadsPerRow = 128, .cluster = 16, .prefetch = prefetch, .grid = 1, .rowsPerBlock = 3, .exchange = 1,
            .columnInputs = columns};
}

} // namespace

TEST(RowGroups, LongLayerNormRowsDefaultToRowGroups)
{
    Rows r(false, 256, 262144);
    const auto &g = r.group();
    EXPECT_EQ(g.value("threads_per_row"), 128) << schedule::describe(g);
    EXPECT_EQ(g.value("rows_per_block"), 3);
    EXPECT_EQ(g.value("cluster"), 16);
    EXPECT_EQ(g.value("grid"), 1);
    EXPECT_EQ(g.value("exchange"), 1);
    EXPECT_EQ(g.value("column_inputs"), 1);
    EXPECT_EQ(g.value("prefetch"), 3);
    EXPECT_EQ(g.value("min_blocks"), 1);
    // Softmax too, without column inputs (with expf: 0.149-0.151 ms against 0.155-0.161 for the
    // clusters of three blocks per SM, run 20 calls 8-9); shorter rows keep the earlier defaults;
    // sm_80 has no clusters.
    Rows softmax(true, 256, 262144);
    EXPECT_EQ(softmax.group().value("exchange"), 1);
    EXPECT_EQ(softmax.group().value("rows_per_block"), 3);
    EXPECT_EQ(softmax.group().value("prefetch"), 3);
    EXPECT_EQ(softmax.group().value("column_inputs"), 0);
    EXPECT_EQ(softmax.group().value("combine"), 0);
    Rows shorter(false, 32768, 8192);
    EXPECT_EQ(shorter.group().value("column_inputs"), 0);
    Rows ampere(false, 256, 262144, *ArchDatabase::builtin().arch("sm_80"));
    EXPECT_EQ(ampere.group().value("cluster"), 1);
    EXPECT_EQ(ampere.group().value("prefetch"), 0);
}

TEST(RowGroups, TheKernelPushesCopiesOnceAndPrefetchesAQuarter)
{
    Rows r(false, 256, 262144);
    auto p = codegen::generateProgram(r.problem, r.s);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    const std::string &src = p->source;
    // 7 clusters of 16 blocks of 3 x 128 threads, each block walking rows 3b..3b+2, then 21 further.
    EXPECT_NE(src.find("const long long grid0_[3] = {(7 * 16), 1, 1};"), std::string::npos) << src;
    EXPECT_NE(src.find("__launch_bounds__(384)"), std::string::npos);
    EXPECT_NE(src.find("const long long stride_ = (long long)(gridDim.x / 16) * 3;"), std::string::npos);
    // gamma and beta: this block's 16384 columns copied once, read from shared memory.
    EXPECT_NE(src.find("float *const cs_gamma_ = sm_ + 0;"), std::string::npos);
    EXPECT_NE(src.find("float *const cs_beta_ = sm_ + 16384;"), std::string::npos);
    EXPECT_NE(src.find("*reinterpret_cast<const float4 *>(cs_gamma_ + (c0_ - begin_))"), std::string::npos);
    EXPECT_EQ(src.find("(gamma + c0_)"), std::string::npos) << "no reads of gamma from global memory per row";
    // The exchanges: no cluster barrier per row, one push and one wait per reduction; named
    // barriers per row of the block.
    EXPECT_EQ(count(src, "cluster_.sync();"), 2u) << "after the mbarriers' set-up and at the end";
    EXPECT_EQ(count(src, "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32"), 2u);
    EXPECT_EQ(count(src, "bar.sync %0, %1;"), 4u) << "the warps' partials and the wait for warp 0's push, per reduction";
    EXPECT_EQ(src.find("__syncthreads();"), std::string::npos) << "the rows of a block never wait for each other";
    EXPECT_EQ(src.find("map_shared_rank"), std::string::npos);
    // prefetch=bulk: the last 8 of 32 items by the copy engine (8 x 128 x 16 B = 16 KiB per row),
    // issued for the first row and after the first reduction's barrier; the rest in the output loop.
    EXPECT_EQ(count(src, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"), 2u);
    EXPECT_NE(src.find("X + (next_) * (long long)cols_ + begin_ + 12288), \"n\"(16384)"), std::string::npos);
    EXPECT_NE(src.find("if (it_ < 24 && more_)"), std::string::npos);
    // The host launcher opts into clusters of 16 (non-portable) and the shared memory.
    EXPECT_NE(src.find("cudaFuncSetAttribute(::mean_Y, cudaFuncAttributeNonPortableClusterSizeAllowed, 1)"),
              std::string::npos);
    EXPECT_NE(src.find("cudaFuncSetAttribute(::mean_Y, cudaFuncAttributeMaxDynamicSharedMemorySize, 180224)"),
              std::string::npos);
    // Shared memory: gamma and beta (2 x 64 KiB) and three rows' slots (3 x 16 KiB).
    ASSERT_EQ(p->kernels.size(), 1u);
    EXPECT_EQ(p->kernels.front().code.dynamicSharedBytes, 2 * 65536 + 3 * 16384);
    auto compiled = compileProgram(*p, "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    const auto *k = compiled->kernel(r.group().name);
    ASSERT_NE(k, nullptr);
    EXPECT_LE(k->registers, 168) << "384 threads per SM";
    EXPECT_EQ(k->spillStoreBytes, 0);
}

TEST(RowGroups, LegalityNamesTheRule)
{
    Rows r(false, 256, 262144);
    auto &g = r.group();
    setLongRowDecisions(g, rowGroups());
    ASSERT_TRUE(r.check().empty());
    g.set("exchange", 0);
    EXPECT_TRUE(names(r.check(), "exchange", "needs exchange=push"));
    g.set("exchange", 1);
    g.set("grid", 0);
    g.set("row_steps", 2);
    EXPECT_TRUE(names(r.check(), "column_inputs", "it needs grid=resident"));
    g.set("grid", 1);
    g.set("row_steps", 1);
    g.set("bulk_store", 1);
    EXPECT_TRUE(names(r.check(), "prefetch", "use one of them"));
    g.set("bulk_store", 0);
    g.set("reduce", 1);
    EXPECT_TRUE(names(r.check(), "exchange", "reduce=shuffle"));
    g.set("reduce", 0);
    g.set("threads_per_row", 256);
    EXPECT_TRUE(names(r.check(), "threads_per_row", "does not fit one GPC"));
    g.set("threads_per_row", 128);
    g.set("cluster", 1);
    EXPECT_TRUE(names(r.check(), "exchange", "it needs cluster > 1"));

    // Softmax: no per-column vector; combine=online exchanges pairs.
    Rows sm(true, 256, 262144);
    auto &h = sm.group();
    setLongRowDecisions(h, rowGroups());
    EXPECT_TRUE(names(sm.check(), "column_inputs", "reads no per-column vector"));
    setLongRowDecisions(h, rowGroups(3, 0));
    ASSERT_TRUE(sm.check().empty());
    h.set("combine", 1);
    EXPECT_TRUE(names(sm.check(), "combine", "combine=rounds"));

    // Clusters of 4: gamma and beta's spans (2 x 256 KiB) do not fit.
    Rows wide(false, 256, 262144);
    auto &w = wide.group();
    setLongRowDecisions(w, {.threadsPerRow = 512, .cluster = 4, .prefetch = 0, .grid = 1, .rowsPerBlock = 1,
                            .exchange = 1, .columnInputs = 1});
    EXPECT_TRUE(names(wide.check(), "column_inputs", "B per block in shared memory"));
    // A quarter of an odd number of items is not a whole block of slots.
    Rows odd(false, 64, 262144 + 2048);
    auto &o = odd.group();
    setLongRowDecisions(o, {.threadsPerRow = 128, .cluster = 16, .prefetch = 3, .grid = 1, .rowsPerBlock = 1,
                            .exchange = 1});
    EXPECT_TRUE(names(odd.check(), "prefetch", "a multiple of 4 per thread"));
}

TEST(RowGroups, EveryShapeCompiles)
{
    // Two rows per block, one row per block with pushes, softmax with pushes and prefetch=bulk,
    // clusters of 4, rows that leave the last round partial.
    struct Shape {
        bool softmax;
        long long rows, cols;
        int tpr, rpb, cluster, prefetch, columns;
    };
    for (const Shape &sh : std::vector<Shape>{{false, 256, 262144, 256, 2, 16, 3, 1},
                                              {false, 50, 262144, 128, 1, 16, 3, 1},
                                              {true, 50, 262144, 128, 3, 16, 3, 0},
                                              {false, 301, 16384, 128, 2, 4, 3, 1},
                                              {false, 301, 16384, 128, 3, 4, 0, 1},
                                              {true, 37, 8192, 64, 4, 2, 0, 0}}) {
        Rows r(sh.softmax, sh.rows, sh.cols);
        auto &g = r.group();
        setLongRowDecisions(g, {.threadsPerRow = sh.tpr, .cluster = sh.cluster, .prefetch = sh.prefetch, .grid = 1,
                                .rowsPerBlock = sh.rpb, .exchange = 1, .columnInputs = sh.columns});
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
        // The legality rules' shared memory (schedule::groupResources, which restates the kernel's
        // static arrays) covers what the kernel asks for, ptxas's static bytes plus the dynamic ones,
        // and by no more than a few of its small arrays (40-208 bytes over on these shapes): a rule
        // under the real figure would pass a schedule that cannot launch, one far over would refuse
        // ones that can.
        auto a = schedule::analyzeGroup(r.c.graph, g.ops, g.strategy);
        ASSERT_TRUE(a.ok());
        auto res = schedule::groupResources(*a, g, r.problem);
        ASSERT_TRUE(res.ok()) << what;
        const std::int64_t asked = k->sharedBytes + p->kernels.front().code.dynamicSharedBytes;
        EXPECT_GE(res->sharedBytes, asked) << what;
        EXPECT_LE(res->sharedBytes, asked + 256) << what;
    }
}
