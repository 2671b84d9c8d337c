// The performance model's terms that the stored H200 measurements added (docs/RUBRIC.md,
// "Calibration on the GPU"): each test changes one fact or decision and checks the direction the
// H200 measured, without a GPU and without NVRTC.
// The GEMM terms of the cp.async ring, the tensor cores and stream-K: test_rubric_model_gemm.cpp.
#include "ModelTestSupport.h"

#include "core/rubric/Rubric.h"

#include <cmath>

using namespace model_test;

TEST(RubricModelTerms, GemmRegistersThatForceOneBlockPerSmPredictSlower)
{
    // 128x128 tiles of 256 threads: 128 registers leave room for 2 blocks per SM, 153 for one
    // (min_blocks=2 against 1 on the H200: 0.148 ms against 0.185 ms). With one block resident,
    // its k-tile barriers have no other block to fill them, and its 8 warps run in two rounds.
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemmH200);
    const auto base = predictDecisions(problem, kTile128x128);
    const auto &k = base.facts.kernels.front();
    const rubric::PerfModel model;
    const auto two = model.predictKernel(withRegisters(k, 128), base.facts);
    const auto one = model.predictKernel(withRegisters(k, 153), base.facts);
    ASSERT_EQ(withRegisters(k, 128).occupancy->activeBlocksPerSm, 2);
    ASSERT_EQ(withRegisters(k, 153).occupancy->activeBlocksPerSm, 1);
    EXPECT_GT(one.ms, 1.1 * two.ms) << "1 block/SM: " << one.ms << " ms, 2 blocks/SM: " << two.ms << " ms";
    EXPECT_GT(one.loopLatencyMs, two.loopLatencyMs) << "a lone block's barriers are not filled by another block";
}

TEST(RubricModelTerms, GemmIssueShareIsReadFromTheCompiledLoop)
{
    // The k-loop's shared-memory loads per FMA, from the PTX when compiled: twice the loads per FMA
    // leave fewer issue slots to the FMAs. Without a compiled loop the tile formula stays.
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemmH200);
    const auto base = predictDecisions(problem, kTile128x128);
    const rubric::PerfModel model;
    auto lean = base.facts.kernels.front();
    lean.ptxLoop.fma = 1024;
    lean.ptxLoop.sharedLoads = 64;
    auto heavy = lean;
    heavy.ptxLoop.sharedLoads = 256;
    const auto pl = model.predictKernel(lean, base.facts), ph = model.predictKernel(heavy, base.facts);
    EXPECT_GT(ph.computeMs, pl.computeMs * 1.1) << "64 loads per 1024 FMAs: " << pl.computeMs << " ms, 256: " << ph.computeMs;
    auto uncompiled = lean;
    uncompiled.ptxLoop.fma = 0;
    EXPECT_DOUBLE_EQ(model.predictKernel(uncompiled, base.facts).ms, base.main.ms) << "the tile formula without PTX";
}

TEST(RubricModelTerms, GemmSharedPipeNearSaturationSlowsTheRound)
{
    // thread_n=16 reads B fragments 32 B apart per lane (two wavefronts per phase), thread_m=16
    // reads them 16 B apart; the same FMAs. Below the FMA time the shared pipe still delays it
    // (H200, block_k=8: 0.177 ms against 0.153 ms).
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemmH200);
    auto wide = kTile128x128, tall = kTile128x128;
    wide["thread_n"] = 16;
    tall["thread_m"] = 16;
    wide["block_k"] = tall["block_k"] = 8;
    const auto w = predictDecisions(problem, wide), t = predictDecisions(problem, tall);
    ASSERT_GT(w.main.sharedMs, t.main.sharedMs);
    EXPECT_GT(w.main.ms, t.main.ms) << "thread_n=16: " << w.main.ms << " ms, thread_m=16: " << t.main.ms << " ms";
}

TEST(RubricModelTerms, SplitKPartialStoresCostEveryRound)
{
    // Split K multiplies the rounds and each round stores a tile of partial sums, which the sum
    // kernel reads back (H200: split_k=8 0.162 ms against split_k=4 0.145 ms).
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemmH200);
    auto four = kTile128x128, eight = kTile128x128;
    four["block_k"] = eight["block_k"] = 8;
    four["split_k"] = 4;
    eight["split_k"] = 8;
    const auto p4 = predictDecisions(problem, four), p8 = predictDecisions(problem, eight);
    EXPECT_GT(p8.main.epilogueMs, 1.5 * p4.main.epilogueMs) << "partial-sum stores: " << p4.main.epilogueMs << " ms, "
                                                             << p8.main.epilogueMs << " ms";
    EXPECT_GT(p8.ms, p4.ms) << "split_k=4: " << p4.ms << " ms, split_k=8: " << p8.ms << " ms";
}

TEST(RubricModelTerms, ElementwiseItemsAreRoundTripsOneAfterAnother)
{
    // The items loop returns early past the end, so one item's loads are in flight at a time
    // (H200: items=2 and 4 ran no faster than 1 at vector 4, 0.188-0.193 ms).
    const ir::Graph g = ir::makeElementwiseChain();
    const auto problem = problemOf(g, {{"M", 8192}, {"N", 8192}});
    const auto one = predictDecisions(problem, {{"threads", 256}, {"items", 1}, {"vector", 1}});
    const auto four = predictDecisions(problem, {{"threads", 256}, {"items", 4}, {"vector", 1}});
    const auto &k1 = one.facts.kernels.front(), &k4 = four.facts.kernels.front();
    EXPECT_DOUBLE_EQ(k1.bytesInFlightPerThread, k4.bytesInFlightPerThread);
    EXPECT_GE(k1.bytesInFlightPerThread, 8.0) << "every input tensor's load is in flight, vector or not";
    EXPECT_EQ(k1.memoryRounds, 1);
    EXPECT_EQ(k4.memoryRounds, 4);
    // Vector 1 keeps too few bytes in flight to cover DRAM latency; vector 4 does (H200: 0.221-0.320 ms
    // against 0.188-0.194 ms).
    const auto v4 = predictDecisions(problem, {{"threads", 256}, {"items", 1}, {"vector", 4}});
    EXPECT_GT(one.ms, 1.1 * v4.ms);
}

TEST(RubricModelTerms, RowReReadsBeyondL2ComeFromDram)
{
    // Rows of 262144 without a register cache read each row three times. The passes after the
    // first hit L2 only while the slices of the resident blocks fit in it.
    const ir::Graph g = ir::makeSoftmaxRows();
    const auto problem = problemOf(g, {{"M", 256}, {"N", 262144}});
    // (min_blocks and combine: the default for these rows takes 3 blocks per SM and one exchange)
    const std::map<std::string, int> decisions{{"threads_per_row", 256}, {"rows_per_block", 1}, {"cluster", 8},
                                               {"vector", 4},           {"cache", 0},          {"row_steps", 1},
                                               {"min_blocks", 1},       {"combine", 0},        {"grid", 0},
                                               {"bulk_store", 0},       {"exchange", 0},       {"prefetch", 0}};
    auto p = predictDecisions(problem, decisions);
    const auto &k = p.facts.kernels.front();
    ASSERT_GT(k.memoryRounds, 1);
    ASSERT_GT(k.trafficBytes, k.uniqueBytes);
    GpuSpec bigL2 = *p.facts.gpu;
    bigL2.l2CacheMiB = 4096; // every slice fits: re-reads come from L2
    rubric::ProgramFacts fits = p.facts;
    fits.gpu = &bigL2;
    const rubric::PerfModel model;
    const auto missed = model.predictKernel(k, p.facts), hit = model.predictKernel(k, fits);
    EXPECT_GT(missed.dramMs, 1.5 * hit.dramMs) << "60 MiB L2: " << missed.dramMs << " ms, 4 GiB: " << hit.dramMs << " ms";
    // A register cache reads each row once: no re-reads to charge.
    auto cached = decisions;
    cached["cache"] = 1;
    cached["threads_per_row"] = 512; // room in the registers for the row's slice
    const auto c = predictDecisions(problem, cached);
    rubric::ProgramFacts cachedFits = c.facts;
    cachedFits.gpu = &bigL2;
    EXPECT_DOUBLE_EQ(model.predictKernel(c.facts.kernels.front(), c.facts).dramMs,
                     model.predictKernel(c.facts.kernels.front(), cachedFits).dramMs);
}

TEST(RubricModelTerms, RowReReadsCountTheRowInputsNotTheColumnVectors)
{
    // Layer norm reads gamma and beta in its last pass for every row: the same 2 MiB for all 256
    // rows, kept in L2. Only x's passes after the first are re-reads whose slices must fit in the
    // L2's share (H200, cache=none clusters: layer norm measured no slower than softmax, 0.22-0.30 ms).
    const ir::Graph g = ir::makeLayerNormRows();
    const auto problem = problemOf(g, {{"M", 256}, {"N", 262144}});
    // (the default for these rows holds three rows per block of resident clusters of 16: run 20)
    const std::map<std::string, int> decisions{{"threads_per_row", 256}, {"rows_per_block", 1}, {"cluster", 8},
                                               {"vector", 4},           {"cache", 0},          {"row_steps", 1},
                                               {"grid", 0},             {"exchange", 0},       {"column_inputs", 0},
                                               {"prefetch", 0}};
    const auto p = predictDecisions(problem, decisions);
    const auto &k = p.facts.kernels.front();
    ASSERT_EQ(k.memoryRounds, 3);
    EXPECT_DOUBLE_EQ(k.rowRereadBytes, 2.0 * 256 * 262144 * 4);
    EXPECT_GT(k.trafficBytes - k.uniqueBytes, 1.4 * k.rowRereadBytes) << "gamma and beta per row are traffic, not re-reads";
}

TEST(RubricModelTerms, BlocksOfOneWaveCannotOverlapLoadsAndBarriers)
{
    // Clusters walking 8 rows each: 256 blocks in a wave or two whose load phases and cluster
    // barriers line up, against 2048 blocks of one row (H200 layer norm: 0.284 ms against 0.195 ms).
    const ir::Graph g = ir::makeLayerNormRows();
    const auto problem = problemOf(g, {{"M", 256}, {"N", 262144}});
    std::map<std::string, int> d{{"threads_per_row", 512}, {"rows_per_block", 1}, {"cluster", 8},
                                 {"vector", 4},            {"cache", 1},          {"row_steps", 1},
                                 {"grid", 0},              {"exchange", 0},       {"column_inputs", 0},
                                 {"prefetch", 0}};
    const auto steps1 = predictDecisions(problem, d);
    d["row_steps"] = 8;
    const auto steps8 = predictDecisions(problem, d);
    ASSERT_LT(4 * steps8.main.waves, steps1.main.waves);
    EXPECT_GT(steps8.main.overlapMs, steps1.main.overlapMs);
    EXPECT_GT(steps8.ms, steps1.ms) << "row_steps 1: " << steps1.ms << " ms, 8: " << steps8.ms << " ms";
}

TEST(RubricModelTerms, ClusterLaunchesKeepAtMostEightBlocksPerSm)
{
    // One-warp blocks of 512-column rows: 32 may be resident per SM; in clusters the H200 kept
    // 7.1-7.8 (CUPTI achieved occupancy 0.11-0.12), without clusters 28-30.
    const ir::Graph g = ir::makeSoftmaxRows();
    const auto problem = problemOf(g, {{"M", 65536}, {"N", 512}});
    std::map<std::string, int> d{{"threads_per_row", 32}, {"rows_per_block", 1}, {"vector", 4},
                                 {"cache", 1},            {"row_steps", 8},      {"cluster", 4}};
    const auto clustered = predictDecisions(problem, d);
    const auto &k = clustered.facts.kernels.front();
    ASSERT_EQ(k.occupancy->activeBlocksPerSm, 32);
    const double warps = 64; // per SM on sm_90
    EXPECT_LE(clustered.main.achievedOccupancy, 8.0 / warps + 1e-9);
    d["cluster"] = 1;
    const auto plain = predictDecisions(problem, d);
    EXPECT_GT(plain.main.achievedOccupancy, 2 * clustered.main.achievedOccupancy);
}

TEST(RubricModelTerms, ElementwiseWarpsWaitForTheBlocksSlowestWarp)
{
    // A block of independent warps keeps its slot until its slowest warp is done, so larger blocks
    // keep fewer bytes in flight (H200, 5-op chain 8192x8192, vector 1, items 1: 1024 threads
    // 0.280 ms, 512 0.258 ms, 256 0.242 ms). Where the bytes in flight are ample (vector 4) it costs
    // nothing (0.188-0.190 ms for 128-1024 threads).
    const ir::Graph g = ir::makeElementwiseChain();
    const auto problem = problemOf(g, {{"M", 8192}, {"N", 8192}});
    auto run = [&](int threads, int items, int vector) {
        return predictDecisions(problem, {{"threads", threads}, {"items", items}, {"vector", vector}});
    };
    const auto t256 = run(256, 1, 1), t1024 = run(1024, 1, 1);
    EXPECT_EQ(t1024.facts.kernels.front().blockBarriers, 0);
    EXPECT_LT(t1024.main.warpSlotUse, t256.main.warpSlotUse);
    EXPECT_LT(t256.main.warpSlotUse, 1.0);
    EXPECT_GT(t1024.ms, 1.05 * t256.ms) << "256 threads: " << t256.ms << " ms, 1024: " << t1024.ms << " ms";
    // Items are round trips one after another: their latencies average out, the latest warp is
    // relatively less late.
    EXPECT_GT(run(1024, 4, 1).main.warpSlotUse, t1024.main.warpSlotUse);
    const auto v256 = run(256, 1, 4), v1024 = run(1024, 1, 4);
    EXPECT_DOUBLE_EQ(v256.main.memoryHiding, 1.0);
    EXPECT_DOUBLE_EQ(v1024.main.memoryHiding, 1.0);
}

// Resident clusters (run 7, bench/results/2026-11-29/run7-prefetch-tf32/README.md) and TF32 tensor
// cores (math=tf32_mma, the same run's calls 2 and 3).

TEST(RubricModelTerms, ClusterLaunchNeedingMoreClustersThanResidentTakesTwoWaves)
{
    // 512-thread blocks with a staged row (prefetch=shared, 128 KiB of shared memory): one per SM.
    // The H200 keeps 15 clusters of 8 resident (cudaOccupancyMaxActiveClusters), so clusters walking
    // 16 rows (16 clusters, 128 blocks) need two waves although 128 blocks fit 132 SMs.
    const ir::Graph g = ir::makeSoftmaxRows();
    const auto problem = problemOf(g, {{"M", 256}, {"N", 262144}});
    std::map<std::string, int> d{{"threads_per_row", 512}, {"rows_per_block", 1}, {"cluster", 8}, {"vector", 4},
                                 {"cache", 1},             {"prefetch", 2},       {"row_steps", 16},
                                 {"min_blocks", 1},        {"combine", 0},        {"grid", 0},
                                 {"bulk_store", 0}};
    const auto sixteen = predictDecisions(problem, d);
    const auto &k = sixteen.facts.kernels.front();
    ASSERT_EQ(k.occupancy->activeBlocksPerSm, 1);
    ASSERT_EQ(k.blocks, 128);
    ASSERT_EQ(residentClusters(*sixteen.facts.gpu, 8, 1), 15);
    EXPECT_EQ(sixteen.main.waves, 2) << "16 clusters of 8 on 15 resident";
    // The same launch on a GPU whose every SM takes a cluster block: one wave, predicted faster.
    GpuSpec uniform = *sixteen.facts.gpu;
    uniform.measuredResidentClusters.clear();
    uniform.gpcs = 0;
    ASSERT_EQ(residentClusters(uniform, 8, 1), 16);
    rubric::ProgramFacts facts = sixteen.facts;
    facts.gpu = &uniform;
    const auto oneWave = rubric::PerfModel().predictKernel(k, facts);
    EXPECT_EQ(oneWave.waves, 1);
    EXPECT_GT(sixteen.main.ms, 1.2 * oneWave.ms) << "two waves " << sixteen.main.ms << " ms, one " << oneWave.ms;
    // 16 rows per cluster was the slowest step count the H200 measured (0.285 ms against 0.242 ms
    // for 8 rows: 256 blocks, 32 clusters in 3 waves of 15).
    d["row_steps"] = 8;
    const auto eight = predictDecisions(problem, d);
    EXPECT_EQ(eight.main.waves, 3);
    EXPECT_GT(sixteen.ms, eight.ms);
}

TEST(RubricModelTerms, PrefetchSharedStagesTheRowThroughSharedMemory)
{
    // prefetch=shared copies the next row into shared memory and reads it back: shared streams and a
    // barrier per row that prefetch=off does not have; on the H200 it was 3-7 % slower for softmax at
    // the same blocks per SM (9 of 9 pairs of call 1).
    const ir::Graph g = ir::makeSoftmaxRows();
    const auto problem = problemOf(g, {{"M", 256}, {"N", 262144}});
    std::map<std::string, int> d{{"threads_per_row", 512}, {"rows_per_block", 1}, {"cluster", 8}, {"vector", 4},
                                 {"cache", 1},             {"prefetch", 0},       {"row_steps", 2},
                                 {"min_blocks", 1},        {"combine", 0},        {"grid", 0},
                                 {"bulk_store", 0}};
    const auto off = predictDecisions(problem, d);
    d["prefetch"] = 2;
    const auto staged = predictDecisions(problem, d);
    const auto &k = staged.facts.kernels.front();
    ASSERT_NE(stream(k, "cp.async X (next row) to shared memory"), nullptr);
    ASSERT_NE(stream(k, "read X from shared memory"), nullptr);
    EXPECT_EQ(k.blockBarriers, off.facts.kernels.front().blockBarriers + 2);
    EXPECT_GT(k.sharedTrafficBytes, off.facts.kernels.front().sharedTrafficBytes + 2.0 * 256 * 262144 * 4 - 1);
    EXPECT_GE(staged.ms, off.ms);
}

TEST(RubricModelTerms, ResidentGridAndBulkStoresReplayTheKernel)
{
    // Softmax over 256 x 262144 on a resident grid with bulk stores (run 19's fastest): 21 clusters of 16
    // walking 13 rows at most; the outputs written to shared memory (16-byte lanes, conflict-free),
    // then by the copy engine; one barrier per 4 KiB piece and one per row more than bulk_store=off.
    const ir::Graph g = ir::makeSoftmaxRows();
    const auto problem = problemOf(g, {{"M", 256}, {"N", 262144}});
    std::map<std::string, int> d{{"threads_per_row", 128}, {"rows_per_block", 1}, {"cluster", 16}, {"vector", 4},
                                 {"cache", 1},             {"prefetch", 0},       {"row_steps", 1},
                                 {"min_blocks", 3},        {"combine", 1},        {"grid", 1},
                                 {"bulk_store", 1},        {"exchange", 0}};
    const auto bulk = predictDecisions(problem, d);
    const auto &k = bulk.facts.kernels.front();
    EXPECT_EQ(k.blocks, 21 * 16);
    EXPECT_EQ(k.rowSteps, 13) << "256 rows over 21 clusters";
    const auto *stage = stream(k, "write Y to shared memory");
    ASSERT_NE(stage, nullptr);
    EXPECT_TRUE(stage->shared);
    EXPECT_NE(stream(k, "store Y along the row by cp.async.bulk"), nullptr);
    d["bulk_store"] = 0;
    const auto direct = predictDecisions(problem, d);
    const auto &o = direct.facts.kernels.front();
    EXPECT_EQ(stream(o, "write Y to shared memory"), nullptr);
    EXPECT_EQ(k.blockBarriers, o.blockBarriers + 13 * (16 + 1));
    EXPECT_GT(k.sharedTrafficBytes, o.sharedTrafficBytes + 256.0 * 262144 * 4 - 1);
    // The first rows of a resident grid are its clusters' own: cluster 10 starts at row 10.
    d["grid"] = 0;
    const auto rows = predictDecisions(problem, d);
    EXPECT_EQ(rows.facts.kernels.front().blocks, 256 * 16);
    EXPECT_EQ(rows.facts.kernels.front().rowSteps, 1);
}

TEST(RubricModelTerms, RowGroupsReplayTheKernel)
{
    // Layer norm over 256 x 262144 in run 20's row groups: three rows per block of 7 resident
    // clusters of 16, gamma and beta copied once per block and read from shared memory, pushes
    // instead of cluster barriers per row, a quarter of each row through the prefetch slots.
    const ir::Graph g = ir::makeLayerNormRows();
    const auto problem = problemOf(g, {{"M", 256}, {"N", 262144}});
    std::map<std::string, int> d{{"threads_per_row", 128}, {"rows_per_block", 3}, {"cluster", 16}, {"vector", 4},
                                 {"cache", 1},             {"prefetch", 3},       {"row_steps", 1},
                                 {"min_blocks", 1},        {"grid", 1},           {"exchange", 1},
                                 {"column_inputs", 1}};
    const auto groups = predictDecisions(problem, d);
    const auto &k = groups.facts.kernels.front();
    EXPECT_EQ(k.blocks, 7 * 16);
    EXPECT_EQ(k.rowSteps, 13) << "86 sets of three rows over 7 clusters";
    EXPECT_EQ(k.clusterBarriers, 2) << "exchange=push: only the set-up and the end";
    const auto *copy = stream(k, "copy gamma's span to shared memory, once per block");
    ASSERT_NE(copy, nullptr);
    EXPECT_FALSE(copy->shared);
    const auto *read = stream(k, "read gamma from shared memory per column");
    ASSERT_NE(read, nullptr);
    EXPECT_TRUE(read->shared);
    EXPECT_EQ(stream(k, "load gamma per column"), nullptr);
    EXPECT_NE(stream(k, "read X from shared memory (prefetch=bulk"), nullptr);
    // The same rows with gamma and beta from global memory and cluster barriers.
    d["column_inputs"] = 0;
    d["exchange"] = 0;
    d["rows_per_block"] = 1;
    d["prefetch"] = 0;
    const auto plain = predictDecisions(problem, d);
    const auto &o = plain.facts.kernels.front();
    EXPECT_NE(stream(o, "load gamma per column"), nullptr);
    EXPECT_GT(o.clusterBarriers, 2);
}

TEST(RubricModelParams, EveryConstantIsSetByNameAndChangesThePrediction)
{
    // calibrate --vary and the parameter file set the model's parameters by name: the table must name
    // every one of them (Params holds those doubles and nothing else).
    using Params = rubric::PerfModel::Params;
    const auto names = Params::names();
    EXPECT_EQ(sizeof(Params), names.size() * sizeof(double)) << "a parameter is missing from the table in PerfModelParams.cpp";
    Params p;
    ASSERT_TRUE(p.set("asyncLevel", 0.35).ok());
    EXPECT_DOUBLE_EQ(p.asyncLevel, 0.35);
    const auto bad = p.set("asyncLevle", 1);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("unknown model constant 'asyncLevle'"), std::string::npos);
    EXPECT_NE(bad.error().message.find("asyncLevel"), std::string::npos) << "the known names are listed";

    // The cp.async ring's time scales with asyncLevel: half the level, half the kernel's compute time.
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemmH200);
    const auto base = predictDecisions(problem, kAsync128x128);
    Params half;
    ASSERT_TRUE(half.set("asyncLevel", rubric::PerfModel().params().asyncLevel / 2).ok());
    const auto k = base.facts.kernels.front();
    EXPECT_NEAR(rubric::PerfModel(half).predictKernel(k, base.facts).computeMs, base.main.computeMs / 2, 1e-9);
}
