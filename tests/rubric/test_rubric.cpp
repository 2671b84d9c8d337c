// The rubric without a GPU: each analyzer on schedules whose answer is known (vector width, shared
// padding, row tails, an oversized block, occupancy, the model's ranking and memory-bound time),
// and every codegen fixture program scored quickly.
#include "CodegenFixtures.h"

#include "core/rubric/Calibration.h"
#include "core/rubric/MeasuredDimensions.h"
#include "core/rubric/Rubric.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

struct Scored {
    ir::Graph graph;
    ir::SizeBindings sizes;
    codegen::GeneratedProgram program;
    rubric::ProgramFacts facts;
};

schedule::Problem problemOf(const ir::Graph &g, const ir::SizeBindings &sizes)
{
    return {g, sizes, sm90(), schedule::Precision::FP32};
}

/// The default schedule with the first group's decisions overridden.
schedule::Schedule scheduleWith(const schedule::Problem &problem, const std::map<std::string, int> &decisions)
{
    auto s = schedule::defaultSchedule(problem);
    EXPECT_TRUE(s.ok()) << s.error().toString();
    for (const auto &[k, v] : decisions)
        s->groups.front().set(k, v);
    return *s;
}

codegen::GeneratedProgram generate(const schedule::Problem &problem, const schedule::Schedule &s)
{
    auto p = codegen::generateProgram(problem, s);
    EXPECT_TRUE(p.ok()) << p.error().toString();
    return p.ok() ? *p : codegen::GeneratedProgram{};
}

const rubric::AccessStream *stream(const rubric::KernelFacts &k, const std::string &prefix)
{
    for (const auto &s : k.streams)
        if (s.what.rfind(prefix, 0) == 0)
            return &s;
    return nullptr;
}

rubric::KernelFacts factsOf(const schedule::Problem &problem, const codegen::GeneratedProgram &p,
                            const cuda::CompileResult *compiled = nullptr)
{
    auto f = rubric::analyzeProgram(problem, p, compiled);
    EXPECT_TRUE(f.ok()) << f.error().toString();
    return f.ok() ? f->kernels.front() : rubric::KernelFacts{};
}

const ir::SizeBindings kGemm1024{{"M", 1024}, {"N", 1024}, {"K", 1024}};
const std::map<std::string, int> kTile128{{"block_m", 128}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8},
                                          {"block_k", 8},   {"split_k", 1},   {"stages", 2}};

} // namespace

TEST(RubricCoalescing, VectorFourAndOneAreBothCoalescedWithFourTimesFewerRequests)
{
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemm1024);
    auto d4 = kTile128, d1 = kTile128;
    d4["vector"] = 4;
    d1["vector"] = 1;
    const auto p4 = generate(problem, scheduleWith(problem, d4)), p1 = generate(problem, scheduleWith(problem, d1));
    const auto k4 = factsOf(problem, p4), k1 = factsOf(problem, p1);
    const auto *a4 = stream(k4, "load A"), *a1 = stream(k1, "load A");
    ASSERT_TRUE(a4 && a1);
    const auto s4 = rubric::sectorsPerRequest(*a4), s1 = rubric::sectorsPerRequest(*a1);
    EXPECT_DOUBLE_EQ(s4.sectors, 16) << "32 lanes x 16 B = 512 B = 16 sectors";
    EXPECT_DOUBLE_EQ(s1.sectors, 4) << "32 lanes x 4 B = 128 B = 4 sectors";
    EXPECT_DOUBLE_EQ(s4.efficiency(), 1.0);
    EXPECT_DOUBLE_EQ(s1.efficiency(), 1.0);
    EXPECT_DOUBLE_EQ(a1->requests, 4 * a4->requests);

    rubric::Rubric r;
    auto rep = r.scoreProgram(problem, p4);
    ASSERT_TRUE(rep.ok());
    EXPECT_DOUBLE_EQ(rep->kernelScore(0, "coalescing")->score, 5.0);
    EXPECT_NE(rep->kernelScore(0, "coalescing")->sentence.find("fully coalesced"), std::string::npos);
}

TEST(RubricCoalescing, SixteenWideThreadTilesStoreHalfOfEverySector)
{
    // thread_n = 16: each lane stores two float4 32 bytes apart, so one store instruction uses half of each sector.
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemm1024);
    auto d = kTile128;
    d["thread_n"] = 16;
    d["thread_m"] = 4;
    const auto k = factsOf(problem, generate(problem, scheduleWith(problem, d)));
    const auto *c = stream(k, "store C");
    ASSERT_TRUE(c);
    EXPECT_DOUBLE_EQ(rubric::sectorsPerRequest(*c).efficiency(), 0.5);
}

TEST(RubricInstructionMix, VectorLoadsShowInThePtx)
{
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemm1024);
    auto d4 = kTile128, d1 = kTile128;
    d4["vector"] = 4;
    d1["vector"] = 1;
    const auto p4 = generate(problem, scheduleWith(problem, d4)), p1 = generate(problem, scheduleWith(problem, d1));
    rubric::CompileCache cache;
    auto c4 = cache.compile(p4.source, "sm_90"), c1 = cache.compile(p1.source, "sm_90");
    ASSERT_TRUE(c4.ok() && c1.ok());
    const auto m4 = rubric::countPtx(factsOf(problem, p4, c4->get()).ptxBody);
    const auto m1 = rubric::countPtx(factsOf(problem, p1, c1->get()).ptxBody);
    EXPECT_GT(m4.globalVector, 0);
    EXPECT_GT(double(m4.globalVector) / (m4.globalLoads + m4.globalStores),
              double(m1.globalVector) / (m1.globalLoads + m1.globalStores));
    EXPECT_GT(m4.fma, 0);
    const auto hot = rubric::hotLoopPtx(factsOf(problem, p4, c4->get()).ptxBody);
    EXPECT_GE(hot.fma, 8 * 8 * 8) << "the k loop holds BK x TM x TN FMAs";
    EXPECT_GT(double(hot.fma) / hot.total, 0.5);

    auto again = cache.compile(p4.source, "sm_90");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->get(), c4->get()) << "compile results are cached by source hash";
    EXPECT_EQ(cache.size(), 2u);
}

TEST(RubricInstructionMix, CountsPtxByKind)
{
    const std::string body = R"(
    .reg .f32 %f<4>;
    ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];
    ld.global.f32 %f1, [%rd2];
$L__BB0_1:
    ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%r1];
    fma.rn.f32 %f1, %f2, %f3, %f1;
    fma.rn.f32 %f2, %f2, %f3, %f2;
    add.s32 %r1, %r1, 16;
    setp.lt.s32 %p1, %r1, 64;
    @%p1 bra $L__BB0_1;
    ex2.approx.ftz.f32 %f1, %f1;
    st.global.f32 [%rd3], %f1;
    ret;
)";
    const auto m = rubric::countPtx(body);
    EXPECT_EQ(m.fma, 2);
    EXPECT_EQ(m.globalLoads, 2);
    EXPECT_EQ(m.globalStores, 1);
    EXPECT_EQ(m.globalVector, 1);
    EXPECT_EQ(m.sharedLoads, 1);
    EXPECT_EQ(m.special, 1);
    EXPECT_EQ(m.integer, 2);
    EXPECT_EQ(m.branches, 1);
    const auto hot = rubric::hotLoopPtx(body);
    EXPECT_EQ(hot.total, 6);
    EXPECT_EQ(hot.fma, 2);
}

TEST(RubricBankConflicts, PaddingTheTransposedATileRemovesConflicts)
{
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemm1024);
    auto ways = [&](int bk, int vec, int pad) {
        auto d = kTile128;
        d["block_k"] = bk;
        d["vector"] = vec;
        d["smem_pad"] = pad;
        const auto k = factsOf(problem, generate(problem, scheduleWith(problem, d)));
        const auto *s = stream(k, "store A tile");
        EXPECT_TRUE(s);
        return s ? rubric::bankWavefronts(*s, 32).maxWays : 0;
    };
    // Lanes v store column o = v / (BK / VEC) at row kk = (v % (BK / VEC)) * VEC of a [BK][BM + pad] tile.
    EXPECT_EQ(ways(8, 4, 0), 2) << "two lanes per column, rows 128 floats apart: same bank";
    EXPECT_EQ(ways(8, 4, 4), 1) << "rows 132 floats apart shift the second lane by 16 banks";
    EXPECT_EQ(ways(16, 1, 0), 16);
    EXPECT_EQ(ways(16, 1, 4), 2) << "padding 4 leaves rows kk and kk + 8 in the same bank";

    auto d0 = kTile128, d4 = kTile128;
    d0["block_k"] = d4["block_k"] = 16;
    d0["vector"] = d4["vector"] = 1;
    d0["smem_pad"] = 0;
    d4["smem_pad"] = 4;
    rubric::Rubric r;
    const auto p0 = generate(problem, scheduleWith(problem, d0)), p4 = generate(problem, scheduleWith(problem, d4));
    auto r0 = r.scoreProgram(problem, p0), r4 = r.scoreProgram(problem, p4);
    ASSERT_TRUE(r0.ok() && r4.ok());
    EXPECT_LT(r0->kernelScore(0, "bank_conflicts")->score, r4->kernelScore(0, "bank_conflicts")->score);
    EXPECT_NE(r0->kernelScore(0, "bank_conflicts")->sentence.find("16-way"), std::string::npos)
        << r0->kernelScore(0, "bank_conflicts")->sentence;
}

TEST(RubricBankConflicts, RowReductionsAreConflictFree)
{
    const ir::Graph g = ir::makeSoftmaxRows();
    const auto problem = problemOf(g, {{"M", 64}, {"N", 4096}});
    for (int reduce : {0, 1}) {
        const auto k =
            factsOf(problem, generate(problem, scheduleWith(problem, {{"threads_per_row", 256}, {"reduce", reduce}})));
        int shared = 0;
        for (const auto &s : k.streams)
            if (s.shared) {
                ++shared;
                EXPECT_EQ(rubric::bankWavefronts(s, 32).maxWays, 1) << s.what;
            }
        EXPECT_GT(shared, 0) << "256 threads per row meet in red_";
    }
}

TEST(RubricDivergence, RowTailsIdleLanesWhileTheChainHasNone)
{
    const ir::Graph softmax = ir::makeSoftmaxRows();
    const auto sp = problemOf(softmax, {{"M", 64}, {"N", 301}});
    const auto row =
        factsOf(sp, generate(sp, scheduleWith(sp, {{"threads_per_row", 32}, {"rows_per_block", 1}, {"vector", 1}})));
    // 301 columns on 32 lanes: 10 passes of 32 slots, 301 of 320 used by the element work; the
    // shuffles and row set-up run on every lane, so the instruction-weighted share lies above.
    bool tail = false;
    for (const auto &b : row.branches)
        if (b.what.find("c0_ < end_") != std::string::npos) {
            tail = true;
            EXPECT_NEAR(b.idleFraction, 19.0 / 320.0, 1e-9);
        }
    EXPECT_TRUE(tail);
    EXPECT_GT(row.usefulLaneFraction, 301.0 / 320.0);
    EXPECT_LT(row.usefulLaneFraction, 1.0);

    const ir::Graph chain = ir::makeElementwiseChain();
    const auto cp = problemOf(chain, {{"M", 64}, {"N", 128}});
    auto cs = schedule::defaultSchedule(cp);
    ASSERT_TRUE(cs.ok());
    ASSERT_EQ(cs->groups.size(), 1u) << "the 5-op chain is one kernel";
    ASSERT_EQ(cs->groups.front().ops.size(), 5u);
    const auto ew = factsOf(cp, generate(cp, *cs));
    EXPECT_DOUBLE_EQ(ew.usefulLaneFraction, 1.0);
    EXPECT_TRUE(ew.branches.empty());

    rubric::Rubric r;
    auto rr = r.scoreProgram(
        sp, generate(sp, scheduleWith(sp, {{"threads_per_row", 32}, {"rows_per_block", 1}, {"vector", 1}})));
    auto rc = r.scoreProgram(cp, generate(cp, *cs));
    ASSERT_TRUE(rr.ok() && rc.ok());
    EXPECT_DOUBLE_EQ(rc->kernelScore(0, "divergence")->score, 5.0);
    EXPECT_DOUBLE_EQ(rr->kernelScore(0, "divergence")->score, 4.8);
}

TEST(RubricHardLimits, ATwiceOversizedBlockIsRejected)
{
    const ir::Graph g = ir::makeElementwiseChain();
    const auto problem = problemOf(g, {{"M", 512}, {"N", 512}});
    auto program = generate(problem, scheduleWith(problem, {{"threads", 1024}}));
    rubric::Rubric r;
    auto ok = r.scoreProgram(problem, program);
    ASSERT_TRUE(ok.ok());
    EXPECT_FALSE(ok->hardViolation);
    EXPECT_DOUBLE_EQ(ok->programScore("hard_limits")->score, 5.0);

    program.kernels.front().code.block[0] *= 2; // 2048 threads: twice the limit
    auto bad = r.scoreProgram(problem, program);
    ASSERT_TRUE(bad.ok());
    EXPECT_TRUE(bad->hardViolation);
    const auto *h = bad->kernelScore(0, "hard_limits");
    EXPECT_DOUBLE_EQ(h->score, 0.0);
    EXPECT_TRUE(h->hardViolation);
    EXPECT_NE(h->sentence.find("2048 threads per block > sm_90 limit of 1024"), std::string::npos) << h->sentence;
    EXPECT_DOUBLE_EQ(bad->kernelScore(0, "occupancy")->score, 0.0) << "it cannot launch";
}

TEST(RubricOccupancy, EqualsTheCalculatorOnCompiledResources)
{
    for (const auto &c : cases()) {
        const auto problem = problemOf(c.graph, c.sizes);
        auto s = schedule::defaultSchedule(problem);
        ASSERT_TRUE(s.ok());
        const auto p = generate(problem, *s);
        auto compiled = compileProgram(p, "sm_90");
        ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
        auto facts = rubric::analyzeProgram(problem, p, &*compiled);
        ASSERT_TRUE(facts.ok());
        for (const auto &k : facts->kernels) {
            const auto *res = compiled->kernel(k.name);
            ASSERT_TRUE(res) << k.name;
            EXPECT_TRUE(k.compiled);
            auto occ = computeOccupancy(sm90(), k.threads, res->registers,
                                        res->sharedBytes + k.kernel->code.dynamicSharedBytes);
            ASSERT_TRUE(occ.ok() && k.occupancy);
            EXPECT_EQ(k.occupancy->activeBlocksPerSm, occ->activeBlocksPerSm) << c.name << " " << k.name;
            EXPECT_DOUBLE_EQ(k.occupancy->occupancy, occ->occupancy);
            EXPECT_EQ(k.occupancy->limiter, occ->limiter);
        }
    }
}

TEST(RubricModel, LargeGemmTilesBeatSmallOnesAt4096)
{
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, {{"M", 4096}, {"N", 4096}, {"K", 4096}});
    rubric::PerfModel model;
    auto big = model.predictSchedule(
        problem,
        scheduleWith(
            problem,
            {{"block_m", 128}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8}, {"block_k", 8}, {"vector", 4}}));
    auto small = model.predictSchedule(
        problem,
        scheduleWith(
            problem,
            {{"block_m", 16}, {"block_n", 16}, {"thread_m", 2}, {"thread_n", 2}, {"block_k", 8}, {"vector", 1}}));
    ASSERT_TRUE(big.ok()) << big.error().toString();
    ASSERT_TRUE(small.ok()) << small.error().toString();
    std::printf("4096^3 GEMM predicted: 128x128 tiles %.3f ms, 16x16 tiles %.3f ms\n", *big, *small);
    EXPECT_LT(*big * 2, *small) << "128x128: " << *big << " ms, 16x16: " << *small << " ms";
    // 137 GFLOP at 67 TFLOP/s is 2.05 ms: the big tiles are compute-bound near it.
    const double floorMs = 2.0 * 4096.0 * 4096.0 * 4096.0 / 67e12 * 1e3;
    EXPECT_GT(*big, floorMs);
    EXPECT_LT(*big, 2 * floorMs);
}

TEST(RubricModel, SoftmaxIsMemoryBoundNearBytesOverBandwidth)
{
    const ir::Graph g = ir::makeSoftmaxRows();
    const auto problem = problemOf(g, {{"M", 4096}, {"N", 4096}});
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    const auto p = generate(problem, *s);
    auto facts = rubric::analyzeProgram(problem, p, nullptr);
    ASSERT_TRUE(facts.ok());
    const auto pred = rubric::PerfModel().predict(*facts);
    const GpuSpec &gpu = *ArchDatabase::builtin().defaultGpuFor("sm_90");
    const double bytes = 2.0 * 4096 * 4096 * 4; // X read once, Y written once
    const double ideal = bytes / (gpu.memoryBandwidthGBs * 1e9) * 1e3;
    std::printf("softmax 4096x4096 predicted %.4f ms, bytes/bandwidth %.4f ms\n", pred.ms, ideal);
    EXPECT_DOUBLE_EQ(facts->kernels.front().uniqueBytes, bytes);
    EXPECT_EQ(pred.kernels.front().bound, "DRAM");
    EXPECT_GT(pred.ms, ideal);
    EXPECT_LT(pred.ms, 1.3 * ideal) << "predicted " << pred.ms << " ms, bytes/bandwidth " << ideal << " ms";
}

TEST(RubricFinalPerformance, IsAnEstimateOverTheGenericSchedule)
{
    const ir::Graph g = ir::makeGemmBiasGelu();
    const auto problem = problemOf(g, {{"M", 1024}, {"N", 1024}, {"K", 1024}});
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    rubric::Rubric r;
    auto fused = r.scoreProgram(problem, generate(problem, *s));
    auto generic = r.scoreProgram(problem, generate(problem, rubric::genericSchedule(problem)));
    ASSERT_TRUE(fused.ok() && generic.ok());
    const auto *f = fused->programScore("final_performance");
    ASSERT_TRUE(f);
    EXPECT_TRUE(f->estimated);
    EXPECT_GT(f->score, 3.0) << f->evidence;
    EXPECT_NE(f->sentence.find("Estimated"), std::string::npos);
    EXPECT_DOUBLE_EQ(generic->programScore("final_performance")->score, 0.0) << "the baseline itself";
    EXPECT_DOUBLE_EQ(generic->predictedMs, fused->baselinePredictedMs);

    rubric::ScoreOptions measured;
    measured.measuredMs = fused->predictedMs;
    measured.baselineMeasuredMs = fused->baselinePredictedMs;
    auto m = r.scoreProgram(problem, generate(problem, *s), nullptr, measured);
    ASSERT_TRUE(m.ok());
    EXPECT_FALSE(m->programScore("final_performance")->estimated);
}

TEST(RubricFixtures, EveryProgramScoresQuicklyOnEveryDimension)
{
    rubric::Rubric r;
    rubric::CompileCache cache;
    std::vector<double> times;
    std::size_t programs = 0;
    for (const auto &c : cases()) {
        const auto problem = problemOf(c.graph, c.sizes);
        const auto schedules = sampleSchedules(problem, 6);
        ASSERT_FALSE(schedules.empty()) << c.name;
        for (std::size_t i = 0; i < schedules.size(); ++i) {
            auto p = codegen::generateProgram(problem, schedules[i]);
            ASSERT_TRUE(p.ok()) << c.name << ": " << p.error().toString();
            std::shared_ptr<const cuda::CompileResult> compiled;
            if (i == 0) { // one NVRTC compile per case: the PTX mix and real registers
                auto cr = cache.compile(p->source, "sm_90", p->name + ".cu");
                ASSERT_TRUE(cr.ok()) << cr.error().toString();
                compiled = *cr;
            }
            auto rep = r.scoreProgram(problem, *p, compiled.get());
            ASSERT_TRUE(rep.ok()) << c.name << ": " << rep.error().toString();
            ++programs;
            times.push_back(rep->scoringMs);
            EXPECT_FALSE(rep->hardViolation) << c.name << " " << schedule::toJson(schedules[i]);
            EXPECT_EQ(rep->kernels.size(), p->kernels.size());
            EXPECT_GT(rep->predictedMs, 0);
            EXPECT_NE(rep->programScore("final_performance"), nullptr);
            EXPECT_EQ(rep->programScore("instruction_mix") != nullptr, compiled != nullptr) << c.name;
            for (const auto &k : rep->kernels) {
                EXPECT_GE(k.scores.size(), 5u) << k.kernel;
                for (const auto &sc : k.scores) {
                    EXPECT_GE(sc.score, 0.0) << c.name << " " << k.kernel << " " << sc.dimension;
                    EXPECT_LE(sc.score, 5.0) << c.name << " " << k.kernel << " " << sc.dimension;
                    EXPECT_FALSE(sc.evidence.empty()) << sc.dimension;
                    EXPECT_FALSE(sc.sentence.empty()) << sc.dimension;
                }
            }
        }
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    std::printf("scored %zu programs: median %.3f ms, max %.3f ms (excluding NVRTC)\n", programs, median, times.back());
    EXPECT_LT(median, 5.0);
}

// The model's terms that the H200 calibration (docs/RUBRIC.md) added: the per-SM tail of a tiled
// GEMM, and the issue/latency/cluster costs of short-lived row blocks.
TEST(RubricModel, GemmTilesThatLeaveSmsIdleArePredictedSlower)
{
    // 1000x3000x700 on 132 SMs: 64x128 tiles give 384 blocks (2.9 per SM), 128x256 tiles 96
    // blocks (36 SMs idle). Measured on the H200: 0.116 ms against 0.161 ms.
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, {{"M", 1000}, {"N", 3000}, {"K", 700}});
    rubric::PerfModel model;
    auto balanced = model.predictSchedule(problem, scheduleWith(problem, {{"block_m", 64}, {"block_n", 128}, {"thread_m", 8},
                                                                          {"thread_n", 8}, {"block_k", 16}, {"vector", 4}}));
    auto idle = model.predictSchedule(problem, scheduleWith(problem, {{"block_m", 128}, {"block_n", 256}, {"thread_m", 8},
                                                                      {"thread_n", 8}, {"block_k", 16}, {"vector", 4}}));
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
    EXPECT_EQ(rubric::countPtxInstructions(body), 4);
    EXPECT_TRUE(rubric::ptxHasBackwardBranch(body));
    EXPECT_FALSE(rubric::ptxHasBackwardBranch("\t@%p1 bra \t$L__BB0_2;\n$L__BB0_2:\n\tret;\n"));
}

TEST(RubricCalibration, SpearmanRanksWithTies)
{
    EXPECT_DOUBLE_EQ(rubric::spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    EXPECT_DOUBLE_EQ(rubric::spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    EXPECT_NEAR(rubric::spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 0.9487, 1e-4);
    EXPECT_TRUE(std::isnan(rubric::spearman({1, 2}, {1, 2})));
    EXPECT_TRUE(std::isnan(rubric::spearman({1, 1, 1}, {1, 2, 3})));
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
