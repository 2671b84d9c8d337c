// The rubric's calibration against the H200 without a GPU: the model terms the measurements added,
// the calibration CSV and Spearman's rho, schedule descriptions, and static dimensions beside
// their CUPTI counterparts (MeasuredDimensions).
#include "RubricTestSupport.h"

#include "core/rubric/Calibration.h"
#include "core/rubric/CompileStore.h"
#include "core/rubric/Dimensions.h"
#include "core/rubric/MeasuredDimensions.h"
#include "core/rubric/Rubric.h"

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace rubric_test;

// GEMM, and the issue/latency/cluster costs of short-lived row blocks.
TEST(RubricModel, GemmTilesThatLeaveSmsIdleArePredictedSlower)
{
    // 1000x3000x700 on 132 SMs: 64x128 tiles give 384 blocks (2.9 per SM), 128x256 tiles 96
    // blocks (36 SMs idle). Measured on the H200: 0.116 ms against 0.161 ms.
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, {{"M", 1000}, {"N", 3000}, {"K", 700}});
    rubric::PerfModel model;
    // Register-staged tiles, as measured.
    auto balanced = model.predictSchedule(problem, scheduleWith(problem, {{"block_m", 64}, {"block_n", 128}, {"thread_m", 8},
                                                                          {"thread_n", 8}, {"block_k", 16}, {"vector", 4},
                                                                          {"copy", 0}, {"stages", 2}, {"min_blocks", 1}}));
    auto idle = model.predictSchedule(problem, scheduleWith(problem, {{"block_m", 128}, {"block_n", 256}, {"thread_m", 8},
                                                                      {"thread_n", 8}, {"block_k", 16}, {"vector", 4},
                                                                      {"copy", 0}, {"stages", 2}, {"min_blocks", 1}}));
    ASSERT_TRUE(balanced.ok()) << balanced.error().toString();
    ASSERT_TRUE(idle.ok()) << idle.error().toString();
    EXPECT_LT(*balanced * 1.15, *idle) << "64x128: " << *balanced << " ms, 128x256: " << *idle << " ms";
}

TEST(RubricModel, ClustersOnShortRowsCostTheirLaunchAndBarriers)
{
    // 65536 rows of 512: a cluster of 16 per row launches a million blocks that each wait on
    // cluster barriers (measured 3.0 ms against 0.068 ms without a cluster).
    const ir::Graph g = ir::makeSoftmaxRows();
    const auto problem = problemOf(g, {{"M", 65536}, {"N", 512}});
    rubric::PerfModel model;
    const std::map<std::string, int> base{{"threads_per_row", 32}, {"rows_per_block", 1}, {"vector", 4}, {"cache", 1}};
    auto plain = model.predictSchedule(problem, scheduleWith(problem, base));
    auto clustered = base;
    clustered["cluster"] = 16;
    auto cluster = model.predictSchedule(problem, scheduleWith(problem, clustered));
    ASSERT_TRUE(plain.ok()) << plain.error().toString();
    ASSERT_TRUE(cluster.ok()) << cluster.error().toString();
    EXPECT_GT(*cluster, 5 * *plain) << "no cluster: " << *plain << " ms, cluster 16: " << *cluster << " ms";
}

TEST(RubricModel, PtxCountsAndLoopsAreRead)
{
    const std::string body = "\n\t.reg .f32 \t%f<4>;\n\tld.global.f32 \t%f1, [%rd1];\n$L__BB0_1:\n"
                             "\tadd.f32 \t%f2, %f1, %f1;\n\t@%p1 bra \t$L__BB0_1;\n\tret;\n";
    EXPECT_EQ(rubric::countPtx(body).total, 4);
    EXPECT_GT(rubric::hotLoopPtx(body).total, 0) << "the loop is found";
    EXPECT_EQ(rubric::hotLoopPtx("\t@%p1 bra \t$L__BB0_2;\n$L__BB0_2:\n\tret;\n").total, 0) << "a forward branch is no loop";
}

TEST(RubricCalibration, SpearmanRanksWithTies)
{
    EXPECT_DOUBLE_EQ(rubric::spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    EXPECT_DOUBLE_EQ(rubric::spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    EXPECT_NEAR(rubric::spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 0.9487, 1e-4);
    EXPECT_TRUE(std::isnan(rubric::spearman({1, 2}, {1, 2})));
    EXPECT_TRUE(std::isnan(rubric::spearman({1, 1, 1}, {1, 2, 3})));
}

TEST(RubricCalibration, SummaryRanksEachHalfOfTheCandidates)
{
    // Even candidates predicted in order, odd ones in reverse: the halves show what the whole hides.
    std::vector<rubric::CalibrationRow> rows;
    for (int i = 0; i < 8; ++i) {
        rubric::CalibrationRow r;
        r.family = "gemm";
        r.shape = "1x1x1";
        r.candidate = i;
        r.measuredMs = 1 + i;
        r.predictedMs = i % 2 == 0 ? 1 + i : 10 - i;
        rows.push_back(r);
    }
    rows.push_back({"gemm", "2x2x2", 0, 1.0, 1.0, "", {}}); // another case, too small to rank
    const auto summary = rubric::summarizeCalibration(rows);
    ASSERT_EQ(summary.size(), 2u);
    EXPECT_EQ(summary[0].shape, "1x1x1");
    EXPECT_EQ(summary[0].schedules, 8);
    EXPECT_DOUBLE_EQ(summary[0].rhoEven, 1.0);
    EXPECT_DOUBLE_EQ(summary[0].rhoOdd, -1.0);
    EXPECT_DOUBLE_EQ(summary[0].rho, rubric::spearman({1, 9, 3, 7, 5, 5, 7, 3}, {1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_TRUE(std::isnan(summary[1].rho));
    EXPECT_TRUE(std::isnan(summary[1].rhoEven));
}

TEST(RubricCalibration, ResidualsGroupByDecisionsAndFacts)
{
    // Four block_k 8 candidates predicted right, two block_k 32 ones 2x fast: against the problem's
    // median (0) the block_k 32 group sits at ln(0.5); a fact column groups as well.
    std::vector<rubric::CalibrationRow> rows;
    for (int i = 0; i < 6; ++i) {
        const bool wide = i >= 4;
        rubric::CalibrationRow r{"gemm", "8x8x8", i, 1.0 + i, (1.0 + i) * (wide ? 0.5 : 1.0),
                                 std::string("C [gemm] block_m=128 thread_m=8 block_k=") + (wide ? "32" : "8") +
                                     " stages=3; D [row_reduction] block_k=4",
                                 {{"sass_replay_warps", i % 2 ? "2" : "1"}}};
        rows.push_back(r);
    }
    EXPECT_EQ(rubric::decisionValue(rows[0].schedule, "block_k"), "8");
    EXPECT_EQ(rubric::decisionValue(rows[0].schedule, "m"), "") << "not the tail of block_m";
    EXPECT_EQ(rubric::decisionValue(rows[0].schedule, "stages"), "3") << "up to the group's end";
    EXPECT_EQ(rubric::decisionValue(rows[0].schedule, "copy"), "");
    const auto g = rubric::groupResiduals(rows, {"block_k"});
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[0].values, "block_k=32");
    EXPECT_EQ(g[0].schedules, 2);
    EXPECT_NEAR(g[0].median, std::log(0.5), 1e-12);
    EXPECT_NEAR(g[0].spread, 0, 1e-12);
    EXPECT_EQ(g[1].values, "block_k=8");
    EXPECT_NEAR(g[1].median, 0, 1e-12);
    const auto f = rubric::groupResiduals(rows, {"sass_replay_warps", "copy"});
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].values, "sass_replay_warps=1 copy=-");
    EXPECT_EQ(f[0].schedules, 3);
}

TEST(RubricCalibration, CsvRoundTripsAndBadFilesAreLocated)
{
    const std::string path = ::testing::TempDir() + "/calibration.csv";
    {
        std::ofstream out(path);
        rubric::writeCalibrationHeader(out);
        rubric::CalibrationRow row{"softmax", "65536x512", 3, 0.0682, 0.0666,
                                   "rowMax_Y [row_reduction] threads_per_row=64 vector=4", {{"kernels", "1"}, {"bound", "DRAM"}}};
        rubric::writeCalibrationRow(out, row);
        row.candidate = 4;
        row.schedule = "quote \"inside\", comma";
        rubric::writeCalibrationRow(out, row);
    }
    auto rows = rubric::readCalibration(path);
    ASSERT_TRUE(rows.ok()) << rows.error().toString();
    ASSERT_EQ(rows->size(), 2u);
    EXPECT_EQ((*rows)[0].family, "softmax");
    EXPECT_EQ((*rows)[0].candidate, 3);
    EXPECT_DOUBLE_EQ((*rows)[0].measuredMs, 0.0682);
    EXPECT_EQ((*rows)[0].schedule, "rowMax_Y [row_reduction] threads_per_row=64 vector=4");
    EXPECT_EQ((*rows)[1].schedule, "quote \"inside\", comma");
    ASSERT_GE((*rows)[0].facts.size(), 2u);
    EXPECT_EQ((*rows)[0].facts[0], (std::pair<std::string, std::string>{"kernels", "1"}));

    std::ofstream(path) << "case,shape,candidate,measured_ms,predicted_ms,schedule\nsoftmax,1x1,two,0.1,0.1,\"s\"\n";
    auto bad = rubric::readCalibration(path);
    ASSERT_FALSE(bad.ok());
    ASSERT_TRUE(bad.error().location.has_value());
    EXPECT_EQ(bad.error().location->line, 2);
    std::ofstream(path) << "case,shape,measured_ms\n";
    EXPECT_FALSE(rubric::readCalibration(path).ok());
    EXPECT_FALSE(rubric::readCalibration(path + ".missing").ok());
}

TEST(RubricCalibration, CompileStoreKeepsWhatTheRubricReads)
{
    // calibrate --cache: PTX, per-kernel resources and the CUBIN (binary, any bytes) come back as
    // saved, for the same source and arch only; a damaged entry is a miss (compile again), never a
    // wrong result.
    const std::string dir = ::testing::TempDir() + "/compile-store";
    std::filesystem::remove_all(dir);
    const rubric::CompileStore store(dir);
    cuda::CompileResult r;
    r.ptx = ".visible .entry C(\n)\n{\n\tfma.rn.f32 %f1, %f2, %f3, %f1;\n}\n";
    cuda::KernelResources k;
    k.mangledName = k.name = "C";
    k.registers = 168;
    k.sharedBytes = 0;
    k.spillStoreBytes = 16;
    k.spillLoadBytes = 24;
    k.localBytes = 40;
    k.arch = "sm_90";
    r.kernels = {k};
    r.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\n', '\xff', 'c', 'u', 'b', 'i', 'n', ' ', '\n'};
    const std::string source = "extern \"C\" __global__ void C() {}";
    EXPECT_FALSE(store.load(source, "sm_90").has_value()) << "nothing saved yet";
    ASSERT_TRUE(store.save(source, "sm_90", r).ok());
    const auto back = store.load(source, "sm_90");
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->ptx, r.ptx);
    EXPECT_EQ(back->cubin, r.cubin);
    ASSERT_EQ(back->kernels.size(), 1u);
    const auto *kb = back->kernel("C");
    ASSERT_NE(kb, nullptr);
    EXPECT_EQ(kb->registers, 168);
    EXPECT_EQ(kb->spillStoreBytes, 16);
    EXPECT_EQ(kb->spillLoadBytes, 24);
    EXPECT_EQ(kb->localBytes, 40);
    EXPECT_FALSE(store.load(source, "sm_80").has_value()) << "another arch is another entry";
    EXPECT_FALSE(store.load(source + " ", "sm_90").has_value()) << "another source is another entry";

    // Cut short (a run killed while writing outside the rename, a full disk): a miss.
    const std::string path = store.entryPath(source, "sm_90");
    std::string text;
    {
        std::ifstream in(path, std::ios::binary);
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text.substr(0, text.size() - 5);
    EXPECT_FALSE(store.load(source, "sm_90").has_value());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text + "x";
    EXPECT_FALSE(store.load(source, "sm_90").has_value()) << "bytes after the CUBIN";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << "stitchcuda-compile-store/1\n";
    EXPECT_FALSE(store.load(source, "sm_90").has_value()) << "another format (/1 kept no CUBIN)";
}

TEST(RubricCalibration, CompileCacheReadsItsStoreBeforeCompiling)
{
    // The rubric and calibrate compile through CompileCache: memory, then the store, then the
    // compiler (whose result is saved). A second cache on the same store (the next run) compiles
    // nothing; a damaged or unreadable entry is compiled again, never an error or a wrong result.
    const std::string dir = ::testing::TempDir() + "/compile-cache";
    std::filesystem::remove_all(dir);
    int compiles = 0;
    const rubric::CompileCache::Compiler counting = [&compiles](const std::string &source, const std::string &,
                                                                const std::string &arch) -> Result<cuda::CompileResult> {
        if (source.find("broken") != std::string::npos)
            return Error{ErrorKind::Compile, "broken"};
        ++compiles;
        cuda::CompileResult r;
        r.ptx = "// " + source + "\n";
        cuda::KernelResources k;
        k.mangledName = k.name = "K";
        k.registers = 40 + compiles; // which compile a result came from
        k.arch = arch;
        r.kernels = {k};
        return r;
    };
    const std::string source = "extern \"C\" __global__ void K() {}";
    {
        rubric::CompileCache first(rubric::CompileStore(dir), counting);
        auto a = first.compile(source, "sm_90");
        ASSERT_TRUE(a.ok()) << a.error().toString();
        auto again = first.compile(source, "sm_90");
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(again->get(), a->get()) << "memory first";
        EXPECT_EQ(compiles, 1);
        EXPECT_EQ(first.stats().memoryHits, 1);
        EXPECT_EQ(first.stats().compiled, 1);
        EXPECT_FALSE(first.compile("broken", "sm_90").ok()) << "a failed compile is returned as is";
        EXPECT_EQ(first.size(), 1u) << "and not kept";
    }
    rubric::CompileCache second(rubric::CompileStore(dir), counting);
    auto b = second.compile(source, "sm_90");
    ASSERT_TRUE(b.ok()) << b.error().toString();
    EXPECT_EQ(compiles, 1) << "the next run reads the store";
    EXPECT_EQ(second.stats().storeHits, 1);
    EXPECT_EQ(second.stats().compiled, 0);
    EXPECT_EQ((*b)->ptx, "// " + source + "\n");
    ASSERT_NE((*b)->kernel("K"), nullptr);
    EXPECT_EQ((*b)->kernel("K")->registers, 41);
    ASSERT_TRUE(second.compile(source, "sm_80").ok());
    EXPECT_EQ(compiles, 2) << "another arch is compiled";

    // Damaged entry: compiled again, and the entry is written anew.
    const rubric::CompileStore store(dir);
    const std::string path = store.entryPath(source, "sm_90");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << "stitchcuda-compile-store/1\nkernel K \x01\x02\n";
    rubric::CompileCache third(store, counting);
    auto c = third.compile(source, "sm_90");
    ASSERT_TRUE(c.ok()) << c.error().toString();
    EXPECT_EQ(compiles, 3);
    EXPECT_EQ((*c)->kernel("K")->registers, 43);
    EXPECT_FALSE(third.storeError().has_value());
    const auto rewritten = store.load(source, "sm_90");
    ASSERT_TRUE(rewritten.has_value());
    EXPECT_EQ(rewritten->kernels.front().registers, 43);

    // Unreadable entry (a folder in its place, which the save cannot replace either): compiled,
    // and the failed save is reported beside the result.
    std::filesystem::remove(path);
    std::filesystem::create_directories(path + "/in-the-way");
    rubric::CompileCache fourth(store, counting);
    auto d = fourth.compile(source, "sm_90");
    ASSERT_TRUE(d.ok()) << d.error().toString();
    EXPECT_EQ(compiles, 4);
    EXPECT_EQ((*d)->kernel("K")->registers, 44);
    EXPECT_EQ(fourth.stats().storeFailures, 1);
    EXPECT_TRUE(fourth.storeError().has_value());
    std::filesystem::remove_all(dir);
}

TEST(RubricCalibration, CompileCacheKeepsTheMostRecentResultsInMemory)
{
    // calibrate reads thousands of programs: memory keeps the most recently used results, the rest
    // come back from the store (or are compiled again without one), and a caller's result stays
    // valid after it leaves memory.
    const std::string dir = ::testing::TempDir() + "/compile-cache-lru";
    std::filesystem::remove_all(dir);
    int compiles = 0;
    const rubric::CompileCache::Compiler counting = [&compiles](const std::string &source, const std::string &,
                                                                const std::string &) -> Result<cuda::CompileResult> {
        ++compiles;
        cuda::CompileResult r;
        r.ptx = source;
        return r;
    };
    rubric::CompileCache cache(rubric::CompileStore(dir), counting, 2);
    auto a = cache.compile("a", "sm_90");
    ASSERT_TRUE(a.ok());
    const std::shared_ptr<const cuda::CompileResult> kept = *a;
    ASSERT_TRUE(cache.compile("b", "sm_90").ok());
    ASSERT_TRUE(cache.compile("a", "sm_90").ok()); // a is now the most recent
    ASSERT_TRUE(cache.compile("c", "sm_90").ok()); // b leaves memory
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(compiles, 3);
    EXPECT_EQ(cache.stats().memoryHits, 1);
    ASSERT_TRUE(cache.compile("a", "sm_90").ok());
    EXPECT_EQ(cache.stats().memoryHits, 2) << "a stayed";
    auto b = cache.compile("b", "sm_90");
    ASSERT_TRUE(b.ok());
    EXPECT_EQ((*b)->ptx, "b");
    EXPECT_EQ(cache.stats().storeHits, 1) << "b came back from the store";
    EXPECT_EQ(compiles, 3);
    EXPECT_EQ(kept->ptx, "a");

    rubric::CompileCache noStore(std::nullopt, counting, 1);
    ASSERT_TRUE(noStore.compile("x", "sm_90").ok());
    ASSERT_TRUE(noStore.compile("y", "sm_90").ok());
    ASSERT_TRUE(noStore.compile("x", "sm_90").ok());
    EXPECT_EQ(compiles, 6) << "without a store, a result that left memory is compiled again";
    EXPECT_EQ(noStore.size(), 1u);
    std::filesystem::remove_all(dir);
}

TEST(RubricCalibration, DescriptionsSetTheDecisionsBack)
{
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemm1024);
    auto base = schedule::defaultSchedule(problem);
    ASSERT_TRUE(base.ok());
    schedule::Schedule want = *base;
    want.groups.front().set("block_m", 64);
    want.groups.front().set("block_k", 16);
    auto back = schedule::applyDescriptions(*base, schedule::describe(want.groups.front()));
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->groups.front().value("block_m"), 64);
    EXPECT_EQ(back->groups.front().value("block_k"), 16);
    // A line recorded before `copy` existed: register staging, although the sm_90 default is cp.async.
    ASSERT_EQ(base->groups.front().value("copy"), 1);
    auto old = schedule::applyDescriptions(*base, base->groups.front().name + " [gemm] block_m=64 stages=2");
    ASSERT_TRUE(old.ok()) << old.error().toString();
    EXPECT_EQ(old->groups.front().value("copy"), 0);
    EXPECT_FALSE(schedule::applyDescriptions(*base, "nosuch [gemm] block_m=64").ok());
    EXPECT_FALSE(schedule::applyDescriptions(*base, base->groups.front().name + " [gemm] block_m=96").ok());
    EXPECT_FALSE(schedule::applyDescriptions(*base, base->groups.front().name + " [row_reduction] block_m=64").ok());
}

namespace {

/// A global stream of 32 lanes, `stride` floats apart, executed `requests` times.
rubric::AccessStream floatStream(bool store, int strideFloats, double requests, std::int64_t base)
{
    rubric::AccessStream s;
    s.what = store ? "store" : "load";
    s.store = store;
    s.bytesPerLane = 4;
    s.requests = requests;
    std::vector<std::int64_t> lanes;
    for (int l = 0; l < 32; ++l)
        lanes.push_back(base + std::int64_t(l) * strideFloats * 4);
    s.warps = {lanes};
    return s;
}

const rubric::DimensionComparison *row(const std::vector<rubric::DimensionComparison> &rows, const std::string &name)
{
    for (const auto &r : rows)
        if (r.dimension == name)
            return &r;
    return nullptr;
}

/// The counters a kernel would show if the hardware did exactly what the static analysis says.
std::map<std::string, double> countersOfStatic(const rubric::KernelFacts &k, const rubric::ProgramFacts &p)
{
    namespace m = rubric::metric;
    const auto g = rubric::globalSectorTotals(k);
    const auto sh = rubric::sharedWavefrontTotals(k, p.arch->sharedMemoryBanks);
    // Warp instructions and FFMAs (warp equivalents) that give the PTX's FMA share and shared loads per FMA.
    double instructions = 1000, ffma = 0;
    if (!k.ptxBody.empty()) {
        const auto f = rubric::instructionMixFigures(k, p);
        ffma = f.ldsPerFma > 0 && sh.loadRequests > 0 ? sh.loadRequests / f.ldsPerFma : 1000 * f.fmaShare;
        if (f.fmaShare > 0)
            instructions = ffma / f.fmaShare;
    }
    std::map<std::string, double> v = {
        {m::kLoadSectors, g.loadSectors},       {m::kLoadRequests, g.loadRequests},
        {m::kStoreSectors, g.storeSectors},     {m::kStoreRequests, g.storeRequests},
        {m::kSharedLoadWavefronts, sh.loadWavefronts}, {m::kSharedLoadInstructions, sh.loadRequests},
        {m::kSharedStoreWavefronts, sh.storeWavefronts}, {m::kSharedStoreInstructions, sh.storeRequests},
        {m::kInstructions, instructions},       {m::kThreadInstructions, 32 * instructions * k.usefulLaneFraction},
        {m::kFfmaThreadInstructions, 32 * ffma},
        {m::kBranchEfficiency, 100 * k.usefulLaneFraction},
        {m::kDramRead, k.uniqueBytes},          {m::kDramWrite, 0},
    };
    if (k.occupancy) {
        v[m::kAchievedOccupancy] = 100 * rubric::occupancyFigure(k);
    }
    return v;
}

} // namespace

TEST(RubricMeasured, CoalescedAndStridedLoadsScoreTheSameBothWays)
{
    const ir::Graph g = ir::makeElementwiseChain();
    const auto problem = problemOf(g, {{"M", 64}, {"N", 128}});
    const auto program = generate(problem, *schedule::defaultSchedule(problem));
    auto facts = rubric::analyzeProgram(problem, program, nullptr);
    ASSERT_TRUE(facts.ok()) << facts.error().toString();
    namespace m = rubric::metric;

    // A fully coalesced float copy: 4 sectors per request, the ideal, on both sides.
    rubric::KernelFacts copy = facts->kernels.front();
    copy.streams = {floatStream(false, 1, 1000, 0), floatStream(true, 1, 1000, 1 << 20)};
    std::map<std::string, double> v = {{m::kLoadSectors, 4000}, {m::kLoadRequests, 1000},
                                       {m::kStoreSectors, 4000}, {m::kStoreRequests, 1000}};
    auto rows = rubric::compareWithMetrics(copy, *facts, v);
    const auto *c = row(rows, "coalescing");
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->comparable) << c->note;
    EXPECT_DOUBLE_EQ(c->staticScore, 5.0);
    EXPECT_DOUBLE_EQ(c->measuredScore, 5.0);
    EXPECT_DOUBLE_EQ(c->staticValue, 4.0);
    EXPECT_DOUBLE_EQ(c->measuredValue, 4.0);

    // A stride-32 load: every lane its own sector, 32 per request where 4 would hold the data.
    rubric::KernelFacts strided = copy;
    strided.streams = {floatStream(false, 32, 1000, 0)};
    v = {{m::kLoadSectors, 32000}, {m::kLoadRequests, 1000}, {m::kStoreSectors, 0}, {m::kStoreRequests, 0}};
    rows = rubric::compareWithMetrics(strided, *facts, v);
    c = row(rows, "coalescing");
    ASSERT_TRUE(c && c->comparable);
    EXPECT_DOUBLE_EQ(c->staticScore, 0.6) << "5 x 4 / 32 = 0.625";
    EXPECT_DOUBLE_EQ(c->measuredScore, 0.6);
    EXPECT_DOUBLE_EQ(c->measuredValue, 32.0);

    // Measured half as wasteful as the static replay says: the measured score follows the counters.
    v[m::kLoadSectors] = 16000;
    c = row(rows = rubric::compareWithMetrics(strided, *facts, v), "coalescing");
    ASSERT_TRUE(c && c->comparable);
    EXPECT_DOUBLE_EQ(c->measuredScore, 1.3) << "5 x 4 / 16 = 1.25";

    // Missing counters and requests the static analysis has no stream for are not comparable.
    v.erase(m::kStoreRequests);
    c = row(rows = rubric::compareWithMetrics(strided, *facts, v), "coalescing");
    ASSERT_TRUE(c);
    EXPECT_FALSE(c->comparable);
    EXPECT_NE(c->note.find(m::kStoreRequests), std::string::npos) << c->note;
    v[m::kStoreRequests] = 10;
    v[m::kStoreSectors] = 40;
    c = row(rows = rubric::compareWithMetrics(strided, *facts, v), "coalescing");
    ASSERT_TRUE(c);
    EXPECT_FALSE(c->comparable);
    EXPECT_TRUE(std::isnan(c->measuredScore));
}

TEST(RubricMeasured, CountersThatMatchTheStaticAnalysisScoreAlike)
{
    // Every fixture program, compiled: feeding back the static quantities as counters must give
    // each dimension's own score, which is also what the rubric prints for the kernel.
    rubric::Rubric rubric;
    std::map<std::string, int> comparedRows;
    for (const auto &cs : cases()) {
        const auto problem = problemOf(cs.graph, cs.sizes);
        auto s = schedule::defaultSchedule(problem);
        ASSERT_TRUE(s.ok());
        const auto p = generate(problem, *s);
        auto compiled = compileProgram(p, "sm_90");
        ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
        auto facts = rubric::analyzeProgram(problem, p, &*compiled);
        ASSERT_TRUE(facts.ok());
        rubric::PerfModel().predict(*facts); // as the rubric does: the expected achieved occupancy
        auto report = rubric.scoreProgram(problem, p, &*compiled);
        ASSERT_TRUE(report.ok()) << report.error().toString();
        for (std::size_t i = 0; i < facts->kernels.size(); ++i) {
            const auto &k = facts->kernels[i];
            const auto rows = rubric::compareWithMetrics(k, *facts, countersOfStatic(k, *facts));
            for (const auto &r : rows) {
                const std::string where = cs.name + " " + k.name + " " + r.dimension;
                const std::string base = r.dimension.substr(0, r.dimension.find(':'));
                if (const auto *score = report->kernelScore(i, base))
                    EXPECT_DOUBLE_EQ(r.staticScore, score->score) << where;
                else
                    ADD_FAILURE() << where << ": the rubric has no such kernel score";
                if (r.dimension == "instruction_mix" && !r.comparable) {
                    EXPECT_NE(r.note.find("memory-bound"), std::string::npos) << where;
                    continue;
                }
                ASSERT_TRUE(r.comparable) << where << ": " << r.note;
                ++comparedRows[r.dimension];
                if (r.dimension == "arithmetic_intensity:dram")
                    continue; // unique bytes against sectors: a different quantity on purpose
                if (r.dimension == "arithmetic_intensity" && k.trafficBytes > 32 * (rubric::globalSectorTotals(k).sectors()) + 1)
                    continue; // the static side is floored at the unique bytes
                EXPECT_NEAR(r.measuredScore, r.staticScore, 0.1 + 1e-9) << where << " (" << r.quantity << ")";
            }
            EXPECT_TRUE(row(rows, "coalescing") && row(rows, "divergence") && row(rows, "occupancy") &&
                        row(rows, "arithmetic_intensity"))
                << cs.name;
            EXPECT_EQ(row(rows, "bank_conflicts") != nullptr, rubric::hasSharedStreams(k)) << cs.name;
        }
    }
    for (const char *d : {"coalescing", "bank_conflicts", "divergence", "divergence:branch_efficiency", "occupancy",
                          "instruction_mix", "arithmetic_intensity"})
        EXPECT_GT(comparedRows[d], 0) << d << " was never compared";
}

TEST(RubricMeasured, AgreementPerDimensionFromTheCsv)
{
    EXPECT_EQ(rubric::dimensionsPathFor("out/cal.csv"), "out/cal.dimensions.csv");
    EXPECT_EQ(rubric::dimensionsPathFor("cal"), "cal.dimensions.csv");

    const std::string path = ::testing::TempDir() + "/cal.dimensions.csv";
    {
        std::ofstream out(path);
        rubric::writeDimensionHeader(out);
        auto add = [&](int candidate, const std::string &dim, double st, double me) {
            rubric::DimensionComparison c;
            c.dimension = dim;
            c.quantity = "q, with \"quotes\"";
            c.comparable = !std::isnan(me);
            c.staticScore = st;
            c.measuredScore = me;
            c.staticValue = 4;
            c.measuredValue = 4.5;
            c.note = c.comparable ? "" : "metric x not collected";
            rubric::writeDimensionRow(out, {"softmax", "65536x512", candidate, "rowMax_Y", c});
        };
        add(0, "coalescing", 5, 5);
        add(1, "coalescing", 5, 4);      // exactly one point: within
        add(2, "coalescing", 5, 3.9);    // outside
        add(3, "coalescing", 2.5, 2.0);
        add(0, "occupancy", 5, rubric::DimensionComparison::kNone);
        add(1, "occupancy", 4, 4.5);
    }
    auto rows = rubric::readDimensions(path);
    ASSERT_TRUE(rows.ok()) << rows.error().toString();
    ASSERT_EQ(rows->size(), 6u);
    EXPECT_EQ((*rows)[0].comparison.quantity, "q, with \"quotes\"");
    EXPECT_EQ((*rows)[2].candidate, 2);
    EXPECT_TRUE(std::isnan((*rows)[4].comparison.measuredScore));
    const auto summary = rubric::summarizeDimensions(*rows, 2);
    ASSERT_EQ(summary.size(), 2u);
    const auto &co = summary[0];
    EXPECT_EQ(co.dimension, "coalescing");
    EXPECT_EQ(co.compared, 4);
    EXPECT_EQ(co.withinOnePoint, 3);
    EXPECT_DOUBLE_EQ(co.share(), 0.75);
    EXPECT_NEAR(co.meanAbsDifference, (0 + 1 + 1.1 + 0.5) / 4, 1e-12);
    ASSERT_EQ(co.worst.size(), 2u);
    EXPECT_EQ(co.worst[0].candidate, 2);
    EXPECT_EQ(co.worst[1].candidate, 1);
    const auto &oc = summary[1];
    EXPECT_EQ(oc.compared, 1);
    EXPECT_EQ(oc.notComparable, 1);
    EXPECT_EQ(oc.firstReason, "metric x not collected");

    // Bad files name the line and what is wrong.
    std::ofstream(path) << "case,shape,candidate\n";
    auto bad = rubric::readDimensions(path);
    ASSERT_FALSE(bad.ok());
    ASSERT_TRUE(bad.error().location.has_value());
    EXPECT_EQ(bad.error().location->line, 1);
    {
        std::ofstream out(path);
        rubric::writeDimensionHeader(out);
        out << "gemm,1x1x1,0,k,coalescing,1,5,4,4,4,q,\n";
        out << "gemm,1x1x1,1,k,coalescing,1,five,4,4,4,q,\n";
    }
    bad = rubric::readDimensions(path);
    ASSERT_FALSE(bad.ok());
    ASSERT_TRUE(bad.error().location.has_value());
    EXPECT_EQ(bad.error().location->line, 3);
    EXPECT_NE(bad.error().message.find("static_score"), std::string::npos) << bad.error().message;
    {
        std::ofstream out(path);
        rubric::writeDimensionHeader(out);
        out << "gemm,1x1x1,0,k,coalescing,1,5,,4,4,q,\n";
    }
    bad = rubric::readDimensions(path);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().location->line, 2);
    std::ofstream(path) << "";
    EXPECT_FALSE(rubric::readDimensions(path).ok());
    EXPECT_FALSE(rubric::readDimensions(path + ".missing").ok());
}
