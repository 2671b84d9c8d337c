// instruction_mix for tensor-core kernels: the PTX counts of MMAs (shapes, FLOPs), shared loads,
// conversions and waits; the tensor loop's common path; the score on real generated wgmma and
// mma.sync kernels (NVRTC, no GPU) beside an FP32 GEMM; and the measured counterpart on the
// executed-instruction counts of the stored Nsight Compute reports of runs 7 and 8.
#include "RubricTestSupport.h"

#include "core/rubric/Dimensions.h"
#include "core/rubric/MeasuredDimensions.h"

#include <cmath>

using namespace rubric_test;

namespace {

const GpuSpec &h200()
{
    return *ArchDatabase::builtin().gpu("NVIDIA H200");
}

/// The program of the 4096^3 GEMM under `decisions` (empty: the tf32 default of sm_90, wgmma),
/// compiled by NVRTC, and its facts.
struct Compiled {
    schedule::Problem problem;
    codegen::GeneratedProgram program;
    std::shared_ptr<const cuda::CompileResult> compiled;
    rubric::ProgramFacts facts;
};

/// `decisions` over the mma.sync default (scheduleWith), or with none the sm_90 default with `onDefault` set.
Compiled compileGemm4096(const ir::Graph &g, schedule::Precision precision, const std::map<std::string, int> &decisions,
                         rubric::CompileCache &cache, const std::map<std::string, int> &onDefault = {})
{
    Compiled c{{g, {{"M", 4096}, {"N", 4096}, {"K", 4096}}, sm90(), precision}, {}, nullptr, {}};
    schedule::Schedule s;
    if (decisions.empty()) {
        auto d = schedule::defaultSchedule(c.problem);
        EXPECT_TRUE(d.ok()) << d.error().toString();
        if (!d.ok())
            return c;
        s = *d;
        for (const auto &[k, v] : onDefault)
            s.groups.front().set(k, v);
    } else {
        s = scheduleWith(c.problem, decisions);
    }
    c.program = generate(c.problem, s);
    auto cr = cache.compile(c.program.source, "sm_90");
    EXPECT_TRUE(cr.ok()) << cr.error().toString();
    if (!cr.ok())
        return c;
    c.compiled = *cr;
    auto f = rubric::analyzeProgram(c.problem, c.program, c.compiled.get());
    EXPECT_TRUE(f.ok()) << f.error().toString();
    if (f.ok())
        c.facts = std::move(*f);
    return c;
}

/// bench/profiles/gemm-tf32-4096-default.schedule.json: run 7's mma.sync default (ncu report).
const std::map<std::string, int> kMmaSync4096{{"block_m", 128}, {"block_n", 128}, {"block_k", 32}, {"thread_m", 8},
                                             {"thread_n", 16},  {"vector", 4},    {"smem_pad", 4}, {"copy", 1},
                                             {"stages", 3},     {"min_blocks", 2}, {"split_k", 1}, {"swizzle", 8},
                                             {"math", 1}};

const rubric::RubricScore *mixOf(const Compiled &c, std::optional<rubric::RubricReport> &storage)
{
    rubric::Rubric r;
    auto rep = r.scoreProgram(c.problem, c.program, c.compiled.get());
    EXPECT_TRUE(rep.ok()) << rep.error().toString();
    if (!rep.ok())
        return nullptr;
    storage = std::move(*rep);
    return storage->kernelScore(0, "instruction_mix");
}

/// A generated kernel's tensor loop: its MMAs, their shape, its shared loads and TF32 roundings.
void expectTensorLoop(const rubric::PtxMix &t, int mma, const std::string &shape, int sharedLoads, int conversions)
{
    EXPECT_EQ(t.mma, mma);
    EXPECT_EQ(t.mmaShape, shape);
    EXPECT_EQ(t.sharedLoads, sharedLoads);
    EXPECT_EQ(t.tf32Conversions, conversions);
}

const rubric::DimensionComparison *mixRow(const std::vector<rubric::DimensionComparison> &rows)
{
    for (const auto &r : rows)
        if (r.dimension == "instruction_mix")
            return &r;
    return nullptr;
}

} // namespace

TEST(RubricTensorMix, CountsMmaShapesFlopsSharedLoadsAndWaits)
{
    const std::string body = R"(
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r9];
    ld.shared.v2.f32 {%f1, %f2}, [%r10];
    ld.shared.f32 %f3, [%r11];
    cvt.rna.tf32.f32 %r5, %f3;
    mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f4, %f5, %f6, %f7}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f4, %f5, %f6, %f7};
    @%p1 mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f4, %f5, %f6, %f7}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f4, %f5, %f6, %f7};
    wgmma.fence.sync.aligned;
    wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%f8, %f9}, {%r1, %r2, %r3, %r4}, %rd1, p, 1, 1;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
    cp.async.wait_group 1;
    bar.sync 0;
    add.f32 %f1, %f1, %f2;
)";
    const auto m = rubric::countPtx(body);
    EXPECT_EQ(m.total, 13);
    EXPECT_EQ(m.mma, 3);
    EXPECT_DOUBLE_EQ(m.mmaFlops, 2 * (2.0 * 16 * 8 * 8) + 2.0 * 64 * 256 * 8 / 4)
        << "m16n8k8: 2048 per warp; m64n256k8: a quarter of the warpgroup's 262144";
    EXPECT_EQ(m.mmaShape, "mma.sync m16n8k8");
    EXPECT_EQ(m.sharedLoads, 3) << "ldmatrix is a shared load";
    EXPECT_DOUBLE_EQ(m.sharedLoadWavefronts, 4 + 2 + 1) << "x4: 512 B, v2.f32: 256 B, f32: 128 B per warp";
    EXPECT_EQ(m.tf32Conversions, 1);
    EXPECT_EQ(m.syncs, 5);
    EXPECT_EQ(m.floatOther, 1) << "MMAs are no longer other float arithmetic";
    EXPECT_EQ(m.fma, 0);
    EXPECT_EQ(rubric::countPtx("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%f1}, %rd1, %rd2, p, 1, 1, 1, 1;\n")
                  .mmaShape,
              "wgmma.mma_async m64n8k8");
}

TEST(RubricTensorMix, TensorLoopTakesTheShorterArmOfEachIfElse)
{
    // NVRTC's layout of `if (interior tile) unguarded copy; else guarded copy;` inside a k-loop,
    // after an FMA-only loop with more FMAs.
    const std::string body = R"(
$L__BB0_1:
    fma.rn.f32 %f1, %f2, %f3, %f1;
    fma.rn.f32 %f2, %f2, %f3, %f2;
    @%p1 bra $L__BB0_1;
$L__BB0_2:
    ld.shared.f32 %f3, [%r11];
    cvt.rna.tf32.f32 %r5, %f3;
    mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f4, %f5, %f6, %f7}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f4, %f5, %f6, %f7};
    @%p2 bra $L__BB0_4;
    bra.uni $L__BB0_3;
$L__BB0_4:
    cp.async.cg.shared.global [%r1], [%rd1], 16;
    bra.uni $L__BB0_5;
$L__BB0_3:
    setp.lt.s32 %p3, %r1, %r2;
    selp.b32 %r3, 16, 0, %p3;
    add.s32 %r4, %r4, 1;
    cp.async.cg.shared.global [%r1], [%rd1], 16, %r3;
$L__BB0_5:
    add.s32 %r7, %r7, 1;
    setp.lt.s32 %p4, %r7, 8;
    @%p4 bra $L__BB0_2;
)";
    const auto hot = rubric::hotLoopPtx(body);
    EXPECT_EQ(hot.fma, 2) << "the FMA loop stays the FMA formula's hot loop";
    EXPECT_EQ(hot.total, 3);
    const auto tensor = rubric::tensorLoopPtx(body);
    EXPECT_EQ(tensor.mma, 1);
    // ld, cvt, mma, the conditional branch, the copy and its jump to the join, and the loop's add, setp, bra
    EXPECT_EQ(tensor.total, 9) << "the guarded arm (4 instructions) and `bra.uni` into it are not counted";
    EXPECT_EQ(rubric::tensorLoopPtx("$L__BB0_1:\n  fma.rn.f32 %f1, %f2, %f3, %f1;\n  @%p1 bra $L__BB0_1;\n").total, 0)
        << "no MMAs, no tensor loop";

    // An if/else inside the longer (dropped) arm of another stays dropped, whichever arm is shorter.
    const std::string nested = R"(
$L__BB1_1:
    mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f4, %f5, %f6, %f7}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f4, %f5, %f6, %f7};
    @%p1 bra $L__BB1_3;
    bra.uni $L__BB1_2;
$L__BB1_3:
    add.s32 %r1, %r1, 1;
    bra.uni $L__BB1_9;
$L__BB1_2:
    @%p2 bra $L__BB1_5;
    bra.uni $L__BB1_4;
$L__BB1_5:
    add.s32 %r1, %r1, 2;
    add.s32 %r1, %r1, 3;
    add.s32 %r1, %r1, 4;
    bra.uni $L__BB1_6;
$L__BB1_4:
    add.s32 %r1, %r1, 5;
$L__BB1_6:
    add.s32 %r1, %r1, 6;
$L__BB1_9:
    @%p4 bra $L__BB1_1;
)";
    // mma, @p1 bra, the then arm's add and bra.uni, the loop's branch
    EXPECT_EQ(rubric::tensorLoopPtx(nested).total, 5);
}

TEST(RubricTensorMix, ScoreIsTensorCyclesPerIssueSlotOverTwo)
{
    EXPECT_NEAR(rubric::tensorFlopsPerCycle(h200()), 495e12 / (132 * 4 * 1980e6), 1e-9);
    EXPECT_NEAR(rubric::tensorFlopsPerCycle(h200()), 473.5, 0.1);
    EXPECT_DOUBLE_EQ(rubric::tensorMixScore(0), 0);
    EXPECT_DOUBLE_EQ(rubric::tensorMixScore(1), 2.5);
    EXPECT_DOUBLE_EQ(rubric::tensorMixScore(2), 5);
    EXPECT_DOUBLE_EQ(rubric::tensorMixScore(8), 5);
}

TEST(RubricTensorMix, WgmmaDefaultIsTensorBoundAndMmaSyncIsNot)
{
    const ir::Graph g = ir::makeMatmul();
    rubric::CompileCache cache;
    const double rate = rubric::tensorFlopsPerCycle(h200());

    // Run 8's sm_90 TF32 default (transpose_b=off): two warpgroups of m64n256k8 wgmma, A by
    // descriptor, B's fragments loaded (4 per thread per 8-deep step) and rounded with cvt.rna;
    // block_k 32 = 4 MMAs per k-tile.
    const auto wg = compileGemm4096(g, schedule::Precision::TF32, {}, cache, {{"transpose_b", 0}});
    ASSERT_FALSE(wg.facts.kernels.empty());
    ASSERT_TRUE(wg.facts.kernels.front().warpgroupMma);
    const auto fw = rubric::instructionMixFigures(wg.facts.kernels.front(), wg.facts);
    ASSERT_TRUE(fw.tensor);
    expectTensorLoop(fw.tensorLoop, 4, "wgmma.mma_async m64n256k8", 16, 16);
    EXPECT_GE(fw.tensorLoop.syncs, 3) << "wgmma.fence, commit_group, wait_group at least";
    EXPECT_NEAR(fw.tensorCycles, 4 * 65536 / rate, 1e-6);
    EXPECT_LT(fw.tensorLoop.total, rubric::hotLoopPtx(wg.facts.kernels.front().ptxBody).total)
        << "the boundary tiles' guarded copy is left out";
    EXPECT_GE(fw.tensorPerIssue, 2);
    std::optional<rubric::RubricReport> wr;
    const auto *ws = mixOf(wg, wr);
    ASSERT_TRUE(ws);
    EXPECT_DOUBLE_EQ(ws->score, 5.0);
    EXPECT_NE(ws->sentence.find("4 wgmma.mma_async m64n256k8"), std::string::npos) << ws->sentence;
    EXPECT_NE(ws->sentence.find("the tensor work dominates the issue"), std::string::npos) << ws->sentence;
    EXPECT_NE(ws->evidence.find("4.00 shared loads"), std::string::npos) << ws->evidence;

    // Today's default at 4096^3, transpose_b=on: the transposing pass first (no tensor loop), then the
    // same MMAs with both operands by descriptor: no fragment loads, no cvt.rna in the tensor loop.
    const auto ss = compileGemm4096(g, schedule::Precision::TF32, {}, cache);
    ASSERT_EQ(ss.facts.kernels.size(), 2u);
    EXPECT_TRUE(ss.facts.kernels.front().transposeB());
    EXPECT_FALSE(rubric::instructionMixFigures(ss.facts.kernels.front(), ss.facts).computeBound);
    const auto &ssk = ss.facts.kernels.back();
    ASSERT_TRUE(ssk.warpgroupMma && ssk.bothDescriptors);
    const auto fss = rubric::instructionMixFigures(ssk, ss.facts);
    ASSERT_TRUE(fss.tensor);
    expectTensorLoop(fss.tensorLoop, 4, "wgmma.mma_async m64n256k8", 0, 0);
    EXPECT_NEAR(fss.tensorCycles, fw.tensorCycles, 1e-6);
    EXPECT_GT(fss.tensorPerIssue, fw.tensorPerIssue) << "fewer instructions per MMA without fragments";

    // Run 7's mma.sync default: four 64x64 warps, 32 m16n8k8 per 8-deep step, every fragment element
    // loaded (0.75 per MMA) and rounded (1 per MMA): the issue nearly matches the tensor time.
    const auto ms = compileGemm4096(g, schedule::Precision::TF32, kMmaSync4096, cache);
    ASSERT_FALSE(ms.facts.kernels.empty());
    const auto fm = rubric::instructionMixFigures(ms.facts.kernels.front(), ms.facts);
    ASSERT_TRUE(fm.tensor);
    expectTensorLoop(fm.tensorLoop, 128, "mma.sync m16n8k8", 96, 128);
    EXPECT_NEAR(fm.tensorCycles, fw.tensorCycles, 1e-6) << "the same FLOPs per warp and k-tile";
    EXPECT_GT(fm.tensorPerIssue, 1);
    EXPECT_LT(fm.tensorPerIssue, 1.5);
    std::optional<rubric::RubricReport> mr;
    const auto *mss = mixOf(ms, mr);
    ASSERT_TRUE(mss);
    EXPECT_NEAR(mss->score, 5 * fm.tensorPerIssue / 2, 0.05);
    EXPECT_LT(mss->score, ws->score);
    EXPECT_NE(mss->sentence.find("math=tf32_wgmma"), std::string::npos) << mss->sentence;

    // FP32: the FMA formula, as before.
    const auto fp = compileGemm4096(g, schedule::Precision::FP32, {}, cache);
    ASSERT_FALSE(fp.facts.kernels.empty());
    const auto ff = rubric::instructionMixFigures(fp.facts.kernels.front(), fp.facts);
    EXPECT_FALSE(ff.tensor);
    std::optional<rubric::RubricReport> fr;
    const auto *fs = mixOf(fp, fr);
    ASSERT_TRUE(fs);
    EXPECT_DOUBLE_EQ(fs->score, rubric::roundScore(rubric::computeMixScore(ff.fmaShare, ff.ldsPerFma)));
    EXPECT_EQ(fs->evidence.find("tensor loop"), std::string::npos);
}

TEST(RubricTensorMix, MeasuredCounterpartOnTheStoredNcuInstructionCounts)
{
    // Executed warp instructions of the two kernels under Nsight Compute (executed IPC per SM x SM
    // active cycles x 132 SMs): run 8's wgmma default (ncu-wgmma-4096-call2.txt: 0.97 x 697,236.64)
    // and run 7's mma.sync default (ncu-tf32-4096-default.txt: 1.67 x 1,656,823.60).
    const ir::Graph g = ir::makeMatmul();
    rubric::CompileCache cache;
    namespace m = rubric::metric;
    const double tensorCycles = 2.0 * 4096 * 4096 * 4096 / rubric::tensorFlopsPerCycle(h200());
    struct Case {
        std::map<std::string, int> decisions;
        double instructions, measuredScore;
    };
    for (const Case &c : {Case{{}, 0.97 * 697236.64 * 132, 5.0}, Case{kMmaSync4096, 1.67 * 1656823.60 * 132, 2.0}}) {
        // Run 8's wgmma default was measured: transpose_b=off.
        const auto k = compileGemm4096(g, schedule::Precision::TF32, c.decisions, cache, {{"transpose_b", 0}});
        ASSERT_FALSE(k.facts.kernels.empty());
        const auto &kf = k.facts.kernels.front();
        std::map<std::string, double> v = {{m::kInstructions, c.instructions}, {m::kSharedLoadInstructions, 1e6}};
        auto rows = rubric::compareWithMetrics(kf, k.facts, v);
        const auto *r = mixRow(rows);
        ASSERT_TRUE(r);
        ASSERT_TRUE(r->comparable) << r->note;
        EXPECT_EQ(r->quantity, "tensor-pipe cycles per issued instruction");
        EXPECT_NEAR(r->measuredValue, tensorCycles / c.instructions, 1e-9 * r->measuredValue)
            << "every warp runs every k-tile's MMAs: the FLOPs of the problem (no padding at 4096)";
        EXPECT_DOUBLE_EQ(r->measuredScore, c.measuredScore);
        EXPECT_LE(std::abs(r->staticScore - r->measuredScore), 1.0) << r->note;
        EXPECT_NE(r->note.find("MMAs from the PTX loop (recorded without a tensor counter)"), std::string::npos) << r->note;

        // With the tensor counter the MMAs are the executed ones: the count run 10's ncu read for the
        // wgmma default (2,097,152: 512 blocks x 2 warpgroups x 4 warps x 128 k-tiles x 4 steps) gives
        // the same tensor cycles; half of it would halve them.
        const double executedMmas = c.decisions.empty() ? 2097152.0 : 0.0;
        if (executedMmas > 0) {
            v[m::kTensorInstructions] = executedMmas;
            auto counted = rubric::compareWithMetrics(kf, k.facts, v);
            ASSERT_TRUE(mixRow(counted) && mixRow(counted)->comparable);
            EXPECT_NEAR(mixRow(counted)->measuredValue, tensorCycles / c.instructions, 1e-9 * tensorCycles);
            EXPECT_NE(mixRow(counted)->note.find("executed MMAs (counted by sm__inst_executed_pipe_tensor_op_hmma)"),
                      std::string::npos);
            v[m::kTensorInstructions] = executedMmas / 2;
            counted = rubric::compareWithMetrics(kf, k.facts, v);
            EXPECT_NEAR(mixRow(counted)->measuredValue, tensorCycles / c.instructions / 2, 1e-9 * tensorCycles);
            v.erase(m::kTensorInstructions);
        }

        v.erase(m::kInstructions);
        rows = rubric::compareWithMetrics(kf, k.facts, v);
        ASSERT_TRUE(mixRow(rows));
        EXPECT_FALSE(mixRow(rows)->comparable);
    }
}
