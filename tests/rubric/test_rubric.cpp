// The rubric without a GPU: each analyzer on schedules whose answer is known (vector width, shared
// padding, wgmma's descriptor and register operands, row tails, an oversized block, occupancy, the
// model's ranking and memory-bound time), and every codegen fixture program scored quickly.
// Calibration: test_rubric_calibration.cpp.
#include "RubricTestSupport.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace rubric_test;

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

TEST(RubricCoalescing, TensorCoreStoresFollowTheAccumulatorLayout)
{
    // mma.sync (the TF32 default off sm_90): lane 4 g + t stores columns 2t, 2t + 1 of row g, 8 B:
    // a warp writes 8 rows of 32 bytes. wgmma along n (the sm_90 default): lane 4 g + t stores
    // column g of row 2t, 4 B: 4 rows of 32 bytes. Both use every byte of the sectors they touch,
    // as many stores per thread as it holds results (over the vector width).
    const ir::Graph g = ir::makeMatmul();
    const schedule::Problem tf32{g, kGemm1024, sm90(), schedule::Precision::TF32};
    const auto mma = factsOf(tf32, generate(tf32, scheduleWith(tf32, {})));
    ASSERT_TRUE(mma.tensorCores && !mma.warpgroupMma);
    const auto *m = stream(mma, "store C");
    ASSERT_TRUE(m);
    EXPECT_NE(m->what.find("8 B per lane, in mma.sync's accumulator layout"), std::string::npos) << m->what;
    EXPECT_DOUBLE_EQ(rubric::sectorsPerRequest(*m).sectors, 8);
    EXPECT_DOUBLE_EQ(rubric::sectorsPerRequest(*m).efficiency(), 1.0);

    auto def = schedule::defaultSchedule(tf32);
    ASSERT_TRUE(def.ok());
    const auto wg = factsOf(tf32, generate(tf32, *def));
    ASSERT_TRUE(wg.warpgroupMma);
    const auto *w = stream(wg, "store C");
    ASSERT_TRUE(w);
    EXPECT_NE(w->what.find("4 B per lane, in the warpgroup MMA's accumulator layout"), std::string::npos) << w->what;
    EXPECT_DOUBLE_EQ(rubric::sectorsPerRequest(*w).sectors, 4);
    EXPECT_DOUBLE_EQ(rubric::sectorsPerRequest(*w).efficiency(), 1.0);
    const int results = def->groups.front().value("thread_m") * def->groups.front().value("thread_n");
    EXPECT_DOUBLE_EQ(w->requests, static_cast<double>(wg.blocks) * results * (wg.threads / 32));
}

TEST(RubricCoalescing, ScalarStoresUseAQuarterOfEverySectorFourTimesOver)
{
    // store=scalar: each lane stores 4 B of its 16, so a warp's store touches the sectors of the
    // float4 store with a quarter of their bytes, and there are four times as many.
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemm1024);
    auto vector = kTile128, scalar = kTile128;
    scalar["store"] = 1;
    const auto kv = factsOf(problem, generate(problem, scheduleWith(problem, vector)));
    const auto ks = factsOf(problem, generate(problem, scheduleWith(problem, scalar)));
    const auto *v = stream(kv, "store C"), *s = stream(ks, "store C");
    ASSERT_TRUE(v && s);
    EXPECT_NE(v->what.find("16 B per lane"), std::string::npos) << v->what;
    EXPECT_NE(s->what.find("4 B per lane"), std::string::npos) << s->what;
    EXPECT_DOUBLE_EQ(rubric::sectorsPerRequest(*v).efficiency(), 1.0);
    EXPECT_DOUBLE_EQ(rubric::sectorsPerRequest(*s).efficiency(), 0.25);
    EXPECT_DOUBLE_EQ(s->requests, 4 * v->requests);
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

TEST(RubricInstructionMix, TheHotLoopIsTheNestedKLoopEvenWhenTheEpilogueHasMoreFmas)
{
    // A stream-K GEMM's shape: a loop over tile segments holding the k-loop (2 FMAs a trip) and a
    // fused epilogue (an erf polynomial, 3 FMAs once per segment). The k-loop runs several trips per
    // segment, so it is the hot loop although the segment loop's trip holds more FMAs.
    const std::string body = R"(
$L__BB0_1:
    mov.u32 %r1, 0;
$L__BB0_2:
    ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%r1];
    fma.rn.f32 %f1, %f2, %f3, %f1;
    fma.rn.f32 %f2, %f2, %f3, %f2;
    add.s32 %r1, %r1, 16;
    setp.lt.s32 %p1, %r1, 64;
    @%p1 bra $L__BB0_2;
    fma.rn.f32 %f5, %f1, %f1, %f6;
    fma.rn.f32 %f5, %f5, %f1, %f7;
    fma.rn.f32 %f5, %f5, %f1, %f8;
    st.global.f32 [%rd3], %f5;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p2, %r2, %r3;
    @%p2 bra $L__BB0_1;
    ret;
)";
    const auto hot = rubric::hotLoopPtx(body);
    EXPECT_EQ(hot.fma, 2) << "the k-loop, not the segment loop (5 FMAs)";
    EXPECT_EQ(hot.sharedLoads, 1);
    EXPECT_EQ(hot.total, 6);
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

TEST(RubricBankConflicts, WgmmaDescriptorOperandIsTensorCoreTrafficNotLoads)
{
    // The tf32 default on sm_90 at 4096^3 with transpose_b=off: warpgroup MMAs, both operands
    // row-major, so A is read by descriptor from a 128-byte-swizzled tile and B's fragments are
    // loaded from a [32][136] tile.
    const ir::Graph g = ir::makeMatmul();
    const schedule::Problem problem{g, {{"M", 4096}, {"N", 4096}, {"K", 4096}}, sm90(), schedule::Precision::TF32};
    auto def = schedule::defaultSchedule(problem);
    ASSERT_TRUE(def.ok()) << def.error().toString();
    ASSERT_EQ(def->groups.front().value("math"), 2) << schedule::toJson(*def);
    def->groups.front().set("transpose_b", 0);
    const auto program = generate(problem, *def);
    const auto k = factsOf(problem, program);
    ASSERT_TRUE(k.warpgroupMma);
    EXPECT_EQ(k.descriptorOperand, "A");
    EXPECT_EQ(k.registerOperand, "B");
    EXPECT_EQ(k.descriptorSwizzleBytes, 128);
    double loadRequests = 0;
    int loads = 0, fills = 0;
    for (const auto &s : k.streams) {
        if (!s.shared)
            continue;
        EXPECT_EQ(rubric::bankWavefronts(s, 32).maxWays, 1) << s.what;
        if (s.store) {
            ++fills;
            EXPECT_EQ(s.what.rfind("cp.async", 0), 0u) << s.what;
            EXPECT_EQ(s.bytesPerLane, 16) << s.what;
        } else {
            ++loads;
            loadRequests += s.requests;
            EXPECT_EQ(s.bytesPerLane, 4) << s.what;
            EXPECT_NE(s.what.find("read B fragments"), std::string::npos) << s.what;
        }
    }
    EXPECT_EQ(loads, 1) << "the register operand's fragments are the only shared loads";
    EXPECT_EQ(fills, 2) << "the descriptor tile's and the register tile's cp.async fills";
    // 4 loads per warp and 8-deep step, one wavefront each: the model's fragment term.
    EXPECT_DOUBLE_EQ(loadRequests, k.fragmentWavefronts * static_cast<double>(k.blocks));
    ASSERT_TRUE(stream(k, "cp.async A tile to shared memory for the descriptor (128-byte swizzled"));
    EXPECT_TRUE(stream(k, "cp.async A: 4 floats per lane along k")) << "16-byte copies into the k-contiguous tile";
    EXPECT_FALSE(stream(k, "read A")) << "no load instructions for the descriptor operand";

    rubric::Rubric r;
    auto rep = r.scoreProgram(problem, program);
    ASSERT_TRUE(rep.ok()) << rep.error().toString();
    const auto *bank = rep->kernelScore(0, "bank_conflicts");
    ASSERT_TRUE(bank);
    EXPECT_DOUBLE_EQ(bank->score, 5.0);
    EXPECT_NE(bank->evidence.find("128-byte-swizzled"), std::string::npos) << bank->evidence;
    EXPECT_NE(bank->evidence.find("A by wgmma descriptor"), std::string::npos) << bank->evidence;
    EXPECT_NE(bank->sentence.find("A is read by the tensor cores through a wgmma descriptor"), std::string::npos)
        << bank->sentence;
    EXPECT_NE(bank->sentence.find("4 conflict-free 4-byte loads per thread per 8-deep step"), std::string::npos)
        << bank->sentence;
}

TEST(RubricBankConflicts, WgmmaVariantsLoadOnlyTheRegisterOperand)
{
    // Both MMA arrangements, the three swizzles and split K: one shared load stream (conflict free,
    // as test_wgmma.cpp asserts of the padded tile), the swizzled fill conflict free, and the model's
    // fragment wavefronts equal to the loads.
    for (const auto &c : {Case{"matmul", ir::makeMatmul(), {{"M", 1024}, {"N", 1024}, {"K", 1024}}},
                          Case{"matmul_tt", makeMatmulTransposed(), {{"M", 1024}, {"N", 1024}, {"K", 1024}}}}) {
        const schedule::Problem problem{c.graph, c.sizes, sm90(), schedule::Precision::TF32};
        auto base = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
        ASSERT_TRUE(base.ok());
        const auto variants = wgmmaVariants(problem, *base);
        ASSERT_GE(variants.size(), 4u) << c.name;
        for (const auto &s : variants) {
            const auto k = factsOf(problem, generate(problem, s));
            ASSERT_TRUE(k.warpgroupMma);
            const int bk = s.groups.front().value("block_k");
            EXPECT_EQ(k.descriptorSwizzleBytes, bk * 4);
            double loadRequests = 0;
            for (const auto &st : k.streams) {
                if (!st.shared)
                    continue;
                if (!st.store) {
                    loadRequests += st.requests;
                    EXPECT_EQ(rubric::bankWavefronts(st, 32).maxWays, 1) << c.name << " " << st.what;
                    EXPECT_NE(st.what.find("read " + k.registerOperand + " fragments"), std::string::npos) << st.what;
                } else if (st.what.find("swizzled") != std::string::npos) {
                    EXPECT_EQ(rubric::bankWavefronts(st, 32).maxWays, 1) << c.name << " " << st.what;
                }
            }
            EXPECT_DOUBLE_EQ(loadRequests, k.fragmentWavefronts * static_cast<double>(k.blocks))
                << c.name << " " << schedule::toJson(s);
            // transpose_b=on: both tiles by descriptor, no loads at all.
            EXPECT_EQ(k.bothDescriptors, s.groups.front().value("transpose_b") == 1) << schedule::toJson(s);
            if (k.bothDescriptors) {
                EXPECT_EQ(loadRequests, 0) << schedule::toJson(s);
            }
        }
    }
}

TEST(RubricBankConflicts, TransposedBIsOneCoalescedConflictFreePassThenNoFragments)
{
    // The tf32 default on sm_90 at 4096^3 (transpose_b=on): a pass writes B transposed, then the
    // warpgroup MMAs read both tiles by descriptor.
    const ir::Graph g = ir::makeMatmul();
    const schedule::Problem problem{g, {{"M", 4096}, {"N", 4096}, {"K", 4096}}, sm90(), schedule::Precision::TF32};
    auto def = schedule::defaultSchedule(problem);
    ASSERT_TRUE(def.ok()) << def.error().toString();
    ASSERT_EQ(def->groups.front().value("transpose_b"), 1) << schedule::toJson(*def);
    const auto program = generate(problem, *def);
    auto facts = rubric::analyzeProgram(problem, program, nullptr);
    ASSERT_TRUE(facts.ok()) << facts.error().toString();
    ASSERT_EQ(facts->kernels.size(), 2u);
    const auto &t = facts->kernels.front();
    EXPECT_TRUE(t.transposeB());
    EXPECT_FALSE(t.tiledGemm());
    EXPECT_DOUBLE_EQ(t.flops, 0);
    EXPECT_DOUBLE_EQ(t.uniqueBytes, 2.0 * 4096 * 4096 * 4) << "B read once, its copy written once";
    int global = 0, shared = 0;
    for (const auto &s : t.streams) {
        if (s.shared) {
            ++shared;
            EXPECT_EQ(rubric::bankWavefronts(s, 32).maxWays, 1) << s.what;
        } else {
            ++global;
            EXPECT_DOUBLE_EQ(rubric::sectorsPerRequest(s).efficiency(), 1.0) << s.what;
        }
    }
    EXPECT_EQ(global, 2);
    EXPECT_EQ(shared, 2);
    const auto &k = facts->kernels.back();
    ASSERT_TRUE(k.warpgroupMma && k.bothDescriptors);
    EXPECT_DOUBLE_EQ(k.fragmentWavefronts, 0);
    EXPECT_TRUE(k.registerOperand.empty());
    for (const auto &s : k.streams)
        if (s.shared) {
            EXPECT_TRUE(s.store) << s.what << ": the MMAs' reads are no instructions";
            EXPECT_EQ(rubric::bankWavefronts(s, 32).maxWays, 1) << s.what;
        }
    // Per k-step each of the 2 warpgroups reads A's 256 x 8 and its own 64 x 8 of B.
    EXPECT_DOUBLE_EQ(k.descriptorBytes, 128.0 * 4 * 2 * (256 + 64) * 8 * 4);
    rubric::Rubric r;
    auto rep = r.scoreProgram(problem, program);
    ASSERT_TRUE(rep.ok());
    const auto *bank = rep->kernelScore(1, "bank_conflicts");
    ASSERT_TRUE(bank);
    EXPECT_DOUBLE_EQ(bank->score, 5.0);
    EXPECT_NE(bank->sentence.find("A and B (transposed) are read by the tensor cores"), std::string::npos) << bank->sentence;
}

TEST(RubricBankConflicts, WgmmaKContiguousRegisterTileFillsConflictBelowBlockK32)
{
    // C = A B^T (A[i, k], B[j, k]): B by descriptor, A's register tile k-contiguous, [128][block_k + 4].
    // Its 16-byte fills put block_k / 4 lanes on a row: at block_k 32 a phase of 8 lanes is one row;
    // at 16 (rows 20 floats apart) and 8 (12) a phase spans rows whose banks overlap: 2-way. The
    // fragment loads stay conflict free (g x stride + t: 32 distinct banks at stride 36, 20 or 12).
    ir::GraphBuilder b("matmul_nt");
    const ir::Expr M = ir::sizeVar("M"), N = ir::sizeVar("N"), K = ir::sizeVar("K");
    const ir::Tensor A = b.input("A", ir::DType::F32, {M, K});
    const ir::Tensor B = b.input("B", ir::DType::F32, {N, K});
    const ir::Tensor C = b.output("C", ir::DType::F32, {M, N});
    const ir::Expr i = ir::var("i"), j = ir::var("j"), k = ir::var("k");
    b.compute(C, {i, j}, ir::reduceSum({{"k", K}}), A(i, k) * B(j, k));
    const ir::Graph g = b.finish();
    const schedule::Problem problem{g, kGemm1024, sm90(), schedule::Precision::TF32};
    for (const auto &[bk, ways] : std::vector<std::pair<int, int>>{{32, 1}, {16, 2}, {8, 2}}) {
        const auto s = scheduleWith(problem, {{"math", 2},     {"copy", 1},       {"smem_pad", 0}, {"block_m", 128},
                                              {"block_n", 128}, {"thread_m", 8},   {"thread_n", 8}, {"block_k", bk},
                                              {"stages", 3},    {"min_blocks", 1}, {"split_k", 1},  {"vector", 4}});
        const auto kf = factsOf(problem, generate(problem, s));
        ASSERT_TRUE(kf.warpgroupMma);
        EXPECT_EQ(kf.descriptorOperand, "B");
        const auto *fill = stream(kf, "cp.async A tile to shared memory for the fragments (k-contiguous rows");
        const auto *desc = stream(kf, "cp.async B tile to shared memory for the descriptor");
        const auto *frag = stream(kf, "read A fragments");
        ASSERT_TRUE(fill && desc && frag) << bk;
        EXPECT_EQ(rubric::bankWavefronts(*fill, 32).maxWays, ways) << "block_k " << bk;
        EXPECT_EQ(rubric::bankWavefronts(*desc, 32).maxWays, 1) << "block_k " << bk;
        EXPECT_EQ(rubric::bankWavefronts(*frag, 32).maxWays, 1) << "block_k " << bk;
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
    // The H200's best 65536x512 softmax ran at 1.19x bytes / bandwidth; this grid is 3.9 waves, whose
    // blocks start together and lose part of the load/reduce overlap (PerfModel::overlapMs).
    EXPECT_LT(pred.ms, 1.4 * ideal) << "predicted " << pred.ms << " ms, bytes/bandwidth " << ideal << " ms";
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

namespace {
class RubricFixtures : public ::testing::TestWithParam<std::size_t> {};
} // namespace

// One test per fixture problem, so they run in parallel (sampling a GEMM's legal space took minutes
// on two cores until the walk was pruned in session 15; now 3-16 s).
TEST_P(RubricFixtures, EveryProgramScoresOnEveryDimension)
{
    rubric::Rubric r;
    rubric::CompileCache cache;
    std::size_t programs = 0;
    const auto c = cases()[GetParam()];
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
    EXPECT_GT(programs, 0u);
    // How fast: tests/rubric/bench_rubric.cpp (a benchmark, not a timed test; docs/RUBRIC.md "Speed").
}

INSTANTIATE_TEST_SUITE_P(Programs, RubricFixtures, ::testing::Range<std::size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t> &info) { return cases()[info.param].name; });

// The model's terms that the H200 calibration (docs/RUBRIC.md) added: the per-SM tail of a tiled

TEST(RubricFacade, ScoreScheduleGeneratesCompilesThroughTheCacheAndScores)
{
    // What `stitchcuda rubric` and the studio's Rubric dock share: the schedule's program, NVRTC
    // through the cache (a second score is a memory hit), every dimension; without a cache, scored
    // on estimated registers. A compiler that rejects the program is an internal error, said so.
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemm1024);
    const auto sched = schedule::defaultSchedule(problem);
    ASSERT_TRUE(sched.ok()) << sched.error().toString();
    const rubric::Rubric r;
    rubric::CompileCache cache;
    auto first = rubric::scoreSchedule(r, problem, *sched, &cache);
    ASSERT_TRUE(first.ok()) << first.error().toString();
    ASSERT_NE(first->compiled, nullptr);
    EXPECT_EQ(first->report.program.size(), 8u);
    EXPECT_EQ(first->report.kernels.size(), 1u);
    EXPECT_GT(first->report.predictedMs, 0);
    auto again = rubric::scoreSchedule(r, problem, *sched, &cache);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(cache.stats().compiled, 1);
    EXPECT_EQ(cache.stats().memoryHits, 1);
    EXPECT_EQ(again->report.predictedMs, first->report.predictedMs);

    auto estimated = rubric::scoreSchedule(r, problem, *sched, nullptr);
    ASSERT_TRUE(estimated.ok());
    EXPECT_EQ(estimated->compiled, nullptr);
    EXPECT_EQ(estimated->report.program.size(), 7u) << "no instruction mix without the PTX";

    rubric::CompileCache rejecting(std::nullopt, [](const std::string &, const std::string &, const std::string &) {
        return Result<cuda::CompileResult>(makeError(ErrorKind::Compile, "planted failure"));
    });
    auto failed = rubric::scoreSchedule(r, problem, *sched, &rejecting);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().message, "internal error: the generated program does not compile: planted failure");
}

TEST(RubricCoalescing, StreamKPartialSumsAreStreamsOfTheirOwn)
{
    // 1024^3 in 128x128 tiles: 64 tiles, every one shared by stream-K's 264 blocks (two per SM). Each
    // part of a shared tile stores its partial sums and the last to arrive reads the others', one
    // float per accumulator, lanes consecutive. The H200 counted exactly these requests (run 24
    // call 6, bench --metrics: 163,904 global store requests with the 32,768 of C and the flags'
    // resets; 262,144 loads with the 131,072 of the A and B tiles).
    const ir::Graph g = ir::makeMatmul();
    const auto problem = problemOf(g, kGemm1024);
    std::map<std::string, int> d = kTile128;
    d["thread_m"] = 16;
    d["stream_k"] = 1;
    d["min_blocks"] = 2;
    const auto k = factsOf(problem, generate(problem, scheduleWith(problem, d)));
    ASSERT_TRUE(k.streamK);
    EXPECT_EQ(k.streamKBlocks, 264);
    EXPECT_EQ(k.streamKTiles, 64);
    const auto *stores = stream(k, "store stream-K partial sums");
    const auto *loads = stream(k, "read stream-K partial sums");
    ASSERT_NE(stores, nullptr);
    ASSERT_NE(loads, nullptr);
    EXPECT_EQ(stores->requests, 163840);
    EXPECT_EQ(loads->requests, 131072);
    EXPECT_EQ(rubric::sectorsPerRequest(*stores).sectors, 4) << "coalesced: 32 lanes x 4 B";
    // Without stream-K, no partial sums.
    d["stream_k"] = 0;
    const auto plain = factsOf(problem, generate(problem, scheduleWith(problem, d)));
    EXPECT_EQ(stream(plain, "store stream-K partial sums"), nullptr);
}
