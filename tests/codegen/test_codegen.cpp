// Code generation without a GPU: schedules (JSON, legality with reasons), fusion, determinism,
// golden files, and every sampled legal schedule compiling with NVRTC.
#include "CodegenFixtures.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

schedule::Problem problemFor(const Case &c) { return {c.graph, c.sizes, sm90(), schedule::Precision::FP32}; }

} // namespace

TEST(Schedule, JsonRoundTripsEveryDecision)
{
    for (const auto &c : cases()) {
        auto s = schedule::defaultSchedule(problemFor(c));
        ASSERT_TRUE(s.ok()) << c.name << ": " << s.error().toString();
        auto back = schedule::parseSchedule(schedule::toJson(*s), "s.json");
        ASSERT_TRUE(back.ok()) << back.error().toString();
        EXPECT_EQ(*back, *s) << c.name;
        EXPECT_EQ(schedule::toJson(*back), schedule::toJson(*s));
    }
}

TEST(Schedule, BadFilesNameTheMemberAndTheValue)
{
    auto unknownKey = schedule::parseSchedule(
        R"({"groups": [{"name": "C", "strategy": "gemm", "ops": ["C"], "decisions": {"block_q": 1}}]})", "s.json");
    ASSERT_FALSE(unknownKey.ok());
    EXPECT_NE(unknownKey.error().message.find("unknown decision \"block_q\""), std::string::npos) << unknownKey.error().message;
    EXPECT_NE(unknownKey.error().message.find("block_m"), std::string::npos) << "lists the known decisions";

    auto badValue = schedule::parseSchedule(
        R"({"groups": [{"name": "C", "strategy": "gemm", "ops": ["C"], "decisions": {"block_m": 96}}]})", "s.json");
    ASSERT_FALSE(badValue.ok());
    EXPECT_NE(badValue.error().message.find("groups[0].decisions: block_m: 96 is not one of 16, 32, 64, 128, 256"),
              std::string::npos)
        << badValue.error().message;

    auto topLevel = schedule::parseSchedule(R"({"groups": [], "fusion": true})", "s.json");
    ASSERT_FALSE(topLevel.ok());
    EXPECT_NE(topLevel.error().message.find("unknown key \"fusion\""), std::string::npos);

    auto syntax = schedule::parseSchedule("{\n  \"groups\": [\n  }", "s.json");
    ASSERT_FALSE(syntax.ok());
    ASSERT_TRUE(syntax.error().location.has_value());
    EXPECT_EQ(syntax.error().location->line, 3);
}

TEST(Schedule, ResourceLimitsAreRefusedWithTheDecisionValueAndLimit)
{
    const Case c = cases()[1]; // matmul_aligned
    schedule::Problem problem{c.graph, c.sizes, *ArchDatabase::builtin().arch("sm_75"), schedule::Precision::FP32};
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    auto &g = s->groups.front();
    g.set("block_m", 256);
    g.set("block_n", 256);
    g.set("thread_m", 8);
    g.set("thread_n", 8);
    g.set("block_k", 32);
    auto st = schedule::validateSchedule(*s, problem);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("shared memory"), std::string::npos) << st.error().message;
    EXPECT_NE(st.error().message.find("block_k"), std::string::npos) << st.error().message;
    EXPECT_NE(st.error().message.find("sm_75 limit of"), std::string::npos) << "names the limit: " << st.error().message;
    EXPECT_FALSE(codegen::generateProgram(problem, *s).ok()) << "nothing is generated for an illegal schedule";
}

TEST(Schedule, VectorWidthFallsBackOnOddRows)
{
    const Case c = cases()[0]; // 67x45x33
    auto problem = problemFor(c);
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->groups.front().value("vector"), 1) << "N = 45 rows are not 8- or 16-byte aligned";
    auto a = schedule::analyzeGroup(c.graph, s->groups.front().ops, s->groups.front().strategy);
    ASSERT_TRUE(a.ok());
    for (const auto &o : schedule::legalValues(*a, s->groups.front(), "vector", problem)) {
        if (o.value == 1) {
            EXPECT_TRUE(o.legal);
        } else {
            EXPECT_FALSE(o.legal);
            // cp.async (the sm_90 default) copies A (rows along K = 33) per float; B's rows (N = 45)
            // still refuse the vector.
            EXPECT_NE(o.why.find("45 elements"), std::string::npos) << o.why;
        }
    }
}

TEST(Schedule, AsyncCopyNeedsCpAsyncAndARingOfBuffers)
{
    const Case c = cases()[0]; // 67x45x33: rows of A are not 16-byte aligned
    auto problem = problemFor(c);
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    auto g = s->groups.front();
    auto a = schedule::analyzeGroup(c.graph, g.ops, g.strategy);
    ASSERT_TRUE(a.ok());
    auto messages = [&](const schedule::KernelGroup &k, const schedule::Problem &p) {
        std::string all;
        for (const auto &v : schedule::checkGroup(*a, k, p))
            all += v.message + "\n";
        return all;
    };
    g.set("copy", 0);
    g.set("stages", 3);
    EXPECT_NE(messages(g, problem).find("more than 2 buffers need copy=async"), std::string::npos);
    g.set("copy", 1);
    g.set("stages", 1);
    EXPECT_NE(messages(g, problem).find("copy=async needs stages >= 2"), std::string::npos);
    g.set("stages", 4);
    g.set("vector", 1);
    EXPECT_EQ(messages(g, problem), "") << "a 4-stage cp.async ring of small tiles is legal on sm_90";
    const schedule::Problem turing{problem.graph, problem.sizes, *ArchDatabase::builtin().arch("sm_75"),
                                   problem.precision};
    EXPECT_NE(messages(g, turing).find("sm_75 has no cp.async"), std::string::npos) << messages(g, turing);
    // The element-wise copies of A (rows along k) need no alignment; B's rows (45 floats) still do.
    g.set("vector", 4);
    const std::string why = messages(g, problem);
    EXPECT_EQ(why.find("rows of A"), std::string::npos) << why;
    EXPECT_NE(why.find("rows of B have 45 elements"), std::string::npos) << why;
}

TEST(Schedule, GroupsMustCoverTheProgramInDataflowOrder)
{
    const Case c = cases()[2]; // softmax
    auto problem = problemFor(c);
    schedule::Schedule s;
    s.groups = {{"y", {"Y"}, schedule::Strategy::Generic, {}}, {"mx", {"rowMax"}, schedule::Strategy::Generic, {}}};
    auto st = schedule::validateSchedule(s, problem);
    ASSERT_FALSE(st.ok());
    std::string all;
    for (const auto &d : st.error().diagnostics)
        all += d.message + "\n";
    EXPECT_NE(all.find("reads rowMax before the group that computes it"), std::string::npos) << all;
    EXPECT_NE(all.find("op 'rowSum' is in no group"), std::string::npos) << all;
}

TEST(Fusion, DefaultSchedulesFuseTheCanonicalPrograms)
{
    auto groupsOf = [](const ir::Graph &g, ir::SizeBindings sizes) {
        auto s = schedule::defaultSchedule({g, sizes, sm90(), schedule::Precision::FP32});
        EXPECT_TRUE(s.ok());
        return s.ok() ? s->groups : std::vector<schedule::KernelGroup>{};
    };
    auto softmax = groupsOf(ir::makeSoftmaxRows(), {{"M", 64}, {"N", 1000}});
    ASSERT_EQ(softmax.size(), 1u);
    EXPECT_EQ(softmax[0].strategy, schedule::Strategy::RowReduction);
    auto gelu = groupsOf(ir::makeGemmBiasGelu(), {{"M", 64}, {"N", 64}, {"K", 64}});
    ASSERT_EQ(gelu.size(), 1u);
    EXPECT_EQ(gelu[0].strategy, schedule::Strategy::Gemm);
    EXPECT_EQ(gelu[0].ops, (std::vector<std::string>{"G", "H", "Y"}));
    auto chain = groupsOf(ir::makeElementwiseChain(), {{"M", 64}, {"N", 64}});
    ASSERT_EQ(chain.size(), 1u);
    EXPECT_EQ(chain[0].strategy, schedule::Strategy::Elementwise);
    auto ln = groupsOf(ir::makeLayerNormRows(), {{"M", 64}, {"N", 768}});
    ASSERT_EQ(ln.size(), 1u);
    EXPECT_EQ(ln[0].strategy, schedule::Strategy::RowReduction);

    auto analysis = schedule::analyzeGroup(ir::makeGemmBiasGelu(), {"G", "H", "Y"}, schedule::Strategy::Gemm);
    ASSERT_TRUE(analysis.ok());
    EXPECT_EQ(analysis->local.size(), 2u) << "G and H never reach memory";
    EXPECT_EQ(analysis->stored.size(), 1u);
}

TEST(Fusion, AnIllegalFusionSaysWhichOpBreaksItAndWhy)
{
    auto a = schedule::analyzeGroup(ir::makeSoftmaxRows(), {"rowMax", "rowSum", "Y"}, schedule::Strategy::Elementwise);
    ASSERT_FALSE(a.ok());
    EXPECT_NE(a.error().message.find("op 'rowMax': is a reduction, not element-wise"), std::string::npos)
        << a.error().message;
    auto g = schedule::analyzeGroup(ir::makeSoftmaxRows(), {"rowMax"}, schedule::Strategy::Gemm);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.error().message.find("not a sum"), std::string::npos) << g.error().message;
}

TEST(Codegen, HostLauncherSizesGridsAndWorkspacesIn64Bits)
{
    // 32768 x 32768 results in 4 K slices: the split-K workspace holds 2^32 floats and the sum
    // kernel's grid has 2^22 blocks; int arithmetic would wrap both.
    const Case c{"matmul_huge", ir::makeMatmul(), {{"M", 32768}, {"N", 32768}, {"K", 4096}}};
    auto problem = problemFor(c);
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    s->groups.front().set("stream_k", 0); // the large-GEMM default's stream-K excludes split K
    s->groups.front().set("split_k", 4);
    ASSERT_TRUE(schedule::validateSchedule(*s, problem).ok());
    auto p = codegen::generateProgram(problem, *s);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    const std::string launcher = p->source.substr(p->source.find("_run("));
    EXPECT_NE(launcher.find("cudaMallocAsync((void **)&C_partials, (size_t)((((long long)M * (long long)N) * 4))"),
              std::string::npos)
        << launcher;
    EXPECT_NE(launcher.find("if (grid1_[0] < 1 || grid1_[0] > 2147483647LL"), std::string::npos) << launcher;
}

TEST(Codegen, GenerationIsDeterministic)
{
    for (const auto &c : cases()) {
        auto problem = problemFor(c);
        auto s = schedule::defaultSchedule(problem);
        ASSERT_TRUE(s.ok());
        auto a = codegen::generateProgram(problem, *s), b = codegen::generateProgram(problem, *s);
        ASSERT_TRUE(a.ok() && b.ok()) << c.name;
        EXPECT_EQ(a->source, b->source) << c.name;
    }
}

TEST(Codegen, GoldenFilesOfTheDefaultSchedules)
{
    // STITCHCUDA_UPDATE_GOLDEN=1 rewrites them; review the diff like any code change.
    const bool update = std::getenv("STITCHCUDA_UPDATE_GOLDEN") != nullptr;
    struct Golden {
        Case c;
        std::vector<std::pair<std::string, int>> decisions; ///< set on the first group over the defaults
        schedule::Precision precision = schedule::Precision::FP32;
        schedule::TensorCoreDefault tensorCores = schedule::TensorCoreDefault::Fastest;
    };
    const std::vector<Golden> golden = {
        {{"matmul", ir::makeMatmul(), {{"M", 1024}, {"N", 1024}, {"K", 1024}}}, {}},
        // The cp.async ring: A (rows along k) copied one float per lane and transposed, B 16 bytes per lane.
        {{"matmul_async", ir::makeMatmul(), {{"M", 1000}, {"N", 1024}, {"K", 1020}}},
         {{"copy", 1}, {"stages", 3}, {"block_k", 16}, {"min_blocks", 2}}},
        // Stream-K on the 4096^3 winner's tile: 512 tiles, 132 shared blocks (one per H200 SM) for the last
        // 116, then one block per tile; the fused bias + GELU after the partial sums meet.
        {{"gemm_bias_gelu_stream_k", ir::makeGemmBiasGelu(), {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
         {{"block_m", 256}, {"block_n", 128}, {"thread_m", 16}, {"thread_n", 8}, {"block_k", 16}, {"copy", 1},
          {"stages", 4}, {"min_blocks", 1}, {"split_k", 1}, {"stream_k", 1}}},
        {{"softmax_rows", ir::makeSoftmaxRows(), {{"M", 4096}, {"N", 1000}}}, {}},
        {{"layernorm_rows", ir::makeLayerNormRows(), {{"M", 4096}, {"N", 768}}}, {}},
        {{"elementwise_chain", ir::makeElementwiseChain(), {{"M", 4096}, {"N", 4096}}}, {}},
        {{"gemm_bias_gelu", ir::makeGemmBiasGelu(), {{"M", 8192}, {"N", 8192}, {"K", 128}}}, {}},
        // TF32 tensor cores by warp (the mma.sync default under precision tf32): 128x128 blocks of four 64x64 warp tiles
        // of m16n8k8 MMAs fed by the 3-stage ring, A in k-contiguous rows; M = 2000 and K = 1020 leave
        // boundary tiles, the fused bias + GELU runs on the accumulators.
        {{"gemm_bias_gelu_tf32", ir::makeGemmBiasGelu(), {{"M", 2000}, {"N", 2048}, {"K", 1020}}},
         {},
         schedule::Precision::TF32,
         schedule::TensorCoreDefault::WarpMma},
        // Hopper warpgroup MMAs (sm_90a): two warpgroups of m64n256k8 along n (C^T = B^T A^T), A by
        // descriptor in 128-byte swizzled rows, B from registers, the same shapes and epilogue.
        {{"gemm_bias_gelu_wgmma", ir::makeGemmBiasGelu(), {{"M", 2000}, {"N", 2048}, {"K", 1020}}},
         {{"math", 2}, {"copy", 1}, {"smem_pad", 0}, {"block_m", 256}, {"block_n", 128}, {"thread_m", 8},
          {"thread_n", 16}, {"block_k", 32}, {"stages", 4}, {"min_blocks", 1}, {"split_k", 1}},
         schedule::Precision::TF32},
        // transpose_b=on (the TF32 default on sm_90 from M = 4096): a 64 x 64-tile pass writes B
        // transposed and rounded into the workspace C_bt, then both wgmma operands come by descriptor
        // from 128-byte swizzled tiles, one MMA group left running across each tile's barrier.
        {{"matmul_wgmma_transposed", ir::makeMatmul(), {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
         {},
         schedule::Precision::TF32},
    };
    for (const auto &[c, decisions, precision, tensorCores] : golden) {
        auto problem = problemFor(c);
        problem.precision = precision;
        auto s = schedule::defaultSchedule(problem, tensorCores);
        ASSERT_TRUE(s.ok());
        for (const auto &[key, value] : decisions)
            s->groups.front().set(key, value);
        ASSERT_TRUE(schedule::validateSchedule(*s, problem).ok()) << c.name;
        auto p = codegen::generateProgram(problem, *s);
        ASSERT_TRUE(p.ok()) << p.error().toString();
        const std::string path = std::string(STITCHCUDA_SOURCE_DIR) + "/tests/codegen/golden/" + c.name + ".cu";
        if (update) {
            std::ofstream(path, std::ios::binary) << p->source;
            continue;
        }
        std::ifstream in(path, std::ios::binary);
        ASSERT_TRUE(in.good()) << "missing golden file " << path << " (run with STITCHCUDA_UPDATE_GOLDEN=1)";
        std::stringstream ss;
        ss << in.rdbuf();
        EXPECT_EQ(p->source, ss.str()) << c.name << ": the generated code changed; review it and update the golden file";
    }
}

namespace {

/// One program per test, so they run in parallel (until session 15 the walk of a GEMM's legal space
/// to sample it took 120-200 s per program on two cores; pruned, the slowest program takes 20 s).
class CodegenSampled : public ::testing::TestWithParam<std::size_t> {};

} // namespace

TEST_P(CodegenSampled, EveryLegalScheduleCompiles)
{
    // A spread of legal schedules per program (odd and aligned sizes); the GPU test runs the same
    // samples and checks their answers.
    const Case c = cases()[GetParam()];
    auto problem = problemFor(c);
    const auto schedules = sampleSchedules(problem, 12);
    ASSERT_GE(schedules.size(), 2u) << c.name;
    for (const auto &s : schedules) {
        auto p = codegen::generateProgram(problem, s);
        ASSERT_TRUE(p.ok()) << c.name << ": " << p.error().toString();
        auto compiled = compileProgram(*p, "sm_90");
        ASSERT_TRUE(compiled.ok()) << c.name << " " << schedule::describe(s.groups.front()) << ":\n"
                                   << compiled.error().toString() << "\n"
                                   << p->source;
        for (const auto &k : p->kernels)
            EXPECT_NE(compiled->kernel(k.code.name), nullptr) << k.code.name;
        auto plan = codegen::toLaunchPlan(*p, c.graph, c.sizes);
        ASSERT_TRUE(plan.ok()) << plan.error().toString();
        EXPECT_EQ(plan->launches.size(), p->kernels.size());
    }
}

INSTANTIATE_TEST_SUITE_P(Programs, CodegenSampled, ::testing::Range<std::size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t> &info) { return cases()[info.param].name; });

TEST(Codegen, GenericStrategyHandlesEveryCanonicalOp)
{
    for (const auto &c : cases()) {
        schedule::Schedule s;
        for (const auto &op : c.graph.ops())
            s.groups.push_back({"k_" + op.name, {op.name}, schedule::Strategy::Generic, {{"threads", 128}}});
        auto problem = problemFor(c);
        auto p = codegen::generateProgram(problem, s);
        ASSERT_TRUE(p.ok()) << p.error().toString();
        auto compiled = compileProgram(*p, "sm_80");
        ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    }
}

TEST(Codegen, ElementwiseVectorsTakeAScalarPathAtTheTailAndOnUnalignedBuffers)
{
    // 33 x 47 = 1551 elements, not a multiple of 4 or 2: every vector width is legal, the last
    // partial vector (and any buffer off the vector's alignment) takes the scalar path.
    const auto all = cases();
    for (const char *name : {"chain_odd", "chain_aligned"}) {
        const Case c = *std::find_if(all.begin(), all.end(), [&](const Case &x) { return x.name == name; });
        const auto problem = problemFor(c);
        auto base = schedule::defaultSchedule(problem);
        ASSERT_TRUE(base.ok());
        ASSERT_EQ(base->groups.size(), 1u);
        ASSERT_EQ(base->groups[0].strategy, schedule::Strategy::Elementwise);
        auto a = schedule::analyzeGroup(c.graph, base->groups[0].ops, base->groups[0].strategy);
        ASSERT_TRUE(a.ok());
        for (const auto &o : schedule::legalValues(*a, base->groups[0], "vector", problem))
            EXPECT_TRUE(o.legal) << name << " vector=" << o.value << ": " << o.why;
        for (int vec : {2, 4}) {
            schedule::Schedule s = *base;
            s.groups[0].set("vector", vec);
            auto p = codegen::generateProgram(problem, s);
            ASSERT_TRUE(p.ok()) << p.error().toString();
            const std::string v = std::to_string(vec);
            EXPECT_NE(p->source.find("% " + std::to_string(vec * 4) + ") == 0;"), std::string::npos) << "the alignment check";
            const bool odd = std::string(name) == "chain_odd";
            EXPECT_EQ(p->source.find("if (!aligned_ || e_ + " + v + " > total_)") != std::string::npos, odd)
                << name << ": the tail test only where the count is not a multiple of " << vec;
            EXPECT_EQ(p->source.find("if (!aligned_) {") != std::string::npos, !odd);
            EXPECT_NE(p->source.find("for (long long p_ = e_; p_ < e_ + " + v + " && p_ < total_; ++p_)"), std::string::npos);
            auto compiled = compileProgram(*p, "sm_90");
            ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
            expectCompiledClean(*p, *compiled);
        }
    }
}

TEST(Codegen, LongRowsPrefetchTheNextRowIntoSharedMemory)
{
    // Layer norm over 256 rows of 262144, a cluster of 8 blocks of 512 threads per row, 16 rows
    // per cluster (one wave of clusters): the next row's elements copy into shared memory by
    // cp.async while this row is reduced and stored, so the registers hold one row only.
    const Case c{"layernorm_rows", ir::makeLayerNormRows(), {{"M", 256}, {"N", 262144}}};
    auto problem = problemFor(c);
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    auto &g = s->groups.front();
    setLongRowDecisions(g, {.threadsPerRow = 512, .cluster = 8, .rowSteps = 16, .prefetch = 2});
    ASSERT_TRUE(schedule::validateSchedule(*s, problem).ok());
    auto p = codegen::generateProgram(problem, *s);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    const std::string &src = p->source;
    const auto prologue = src.find("cp.async.cg.shared.global");
    const auto loop = src.find("for (int step_ = 0; step_ < 16; ++step_)");
    const auto wait = src.find("cp.async.wait_all");
    const auto firstPass = src.find("p_mean_ = p_mean_ + ");
    const auto next = src.find("reinterpret_cast<const float *>(X + next_ * (long long)cols_)");
    const auto firstBarrier = src.find("cluster_.sync();");
    ASSERT_NE(prologue, std::string::npos) << src;
    EXPECT_LT(prologue, loop) << "the first row is copied before the loop";
    EXPECT_LT(loop, wait);
    EXPECT_LT(wait, firstPass) << "the copies land before the registers are filled";
    EXPECT_LT(firstPass, next) << "the next row overwrites the slots only after the first pass read them";
    EXPECT_LT(next, firstBarrier) << "the next row is in flight during the reductions";
    EXPECT_EQ(src.find("n_X_["), std::string::npos) << "no second register copy of the row";
    EXPECT_EQ(p->kernels.front().code.dynamicSharedBytes, 512 * 64 * 4);
    auto compiled = compileProgram(*p, "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    const auto *k = compiled->kernel(g.name);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->spillStoreBytes, 0);
    EXPECT_EQ(k->localBytes, 0);
    EXPECT_LE(k->registers, 128) << "one 512-thread block per SM";

    // Offered on sm_90 as "shared"; refused before sm_80 (no cp.async), with the reason.
    auto a = schedule::analyzeGroup(c.graph, g.ops, g.strategy);
    ASSERT_TRUE(a.ok());
    auto values = schedule::legalValues(*a, g, "prefetch", problem);
    ASSERT_EQ(values.size(), 4u);
    EXPECT_EQ(values[2].text, "shared");
    EXPECT_TRUE(values[2].legal) << values[2].why;
    EXPECT_EQ(values[3].text, "bulk");
    const ArchLimits *sm75 = ArchDatabase::builtin().arch("sm_75");
    ASSERT_NE(sm75, nullptr);
    const schedule::Problem turing{c.graph, c.sizes, *sm75, schedule::Precision::FP32};
    g.set("cluster", 1);
    g.set("threads_per_row", 1024);
    g.set("row_steps", 2);
    auto old = schedule::legalValues(*a, g, "prefetch", turing);
    ASSERT_EQ(old.size(), 4u);
    EXPECT_FALSE(old[2].legal);
    EXPECT_NE(old[2].why.find("cp.async, which needs sm_80 or newer, not sm_75"), std::string::npos) << old[2].why;
    EXPECT_FALSE(old[3].legal);
    EXPECT_NE(old[3].why.find("cp.async.bulk, which needs sm_90 or newer, not sm_75"), std::string::npos) << old[3].why;
}

TEST(Codegen, LongRowsPrefetchTheNextRowInRegisters)
{
    // 256 rows of 262144: too few rows for the SMs, so a cluster of 16 blocks shares each row and
    // walks 4 rows in turn, loading the next one while this one is reduced and stored
    // (row_steps=4 prefetch=next_row).
    const Case c{"softmax_rows", ir::makeSoftmaxRows(), {{"M", 256}, {"N", 262144}}};
    auto problem = problemFor(c);
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    auto &g = s->groups.front();
    setLongRowDecisions(g, {.threadsPerRow = 512, .cluster = 16, .rowSteps = 4, .prefetch = 1});
    ASSERT_TRUE(schedule::validateSchedule(*s, problem).ok());
    auto p = codegen::generateProgram(problem, *s);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    EXPECT_NE(p->source.find("float n_X_[32]; // the next row's elements"), std::string::npos) << p->source;
    EXPECT_NE(p->source.find("for (int step_ = 0; step_ < 4; ++step_)"), std::string::npos);
    EXPECT_NE(p->source.find("part_[step_ & 1][0]"), std::string::npos) << "partials alternate between row steps";
    EXPECT_NE(p->source.find("cluster_.barrier_wait();"), std::string::npos);
    EXPECT_NE(p->source.find("x_X_[it_ * 4 + 0] = expf((x_X_[it_ * 4 + 0] - s_rowMax_));"), std::string::npos)
        << "the sum pass keeps exp(X - rowMax) for the output pass";
    EXPECT_NE(p->source.find("const float rc0_0_ = 1.0f / s_rowSum_;"), std::string::npos)
        << "one reciprocal per row, no division per element";
    EXPECT_NE(p->source.find("* ((float)((rc0_0_)))"), std::string::npos);
    auto plan = codegen::toLaunchPlan(*p, c.graph, c.sizes);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->launches.front().config.gridX, 256u / 4 * 16);
    auto compiled = compileProgram(*p, "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    const auto *k = compiled->kernel(g.name);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->spillStoreBytes, 0) << "the row and the next row stay in registers";
    EXPECT_EQ(k->localBytes, 0);

    // Refused with reasons: without the register cache there is nothing to prefetch into, and
    // with 1024 threads per row two rows of elements do not fit the registers.
    auto a = schedule::analyzeGroup(c.graph, g.ops, g.strategy);
    ASSERT_TRUE(a.ok());
    g.set("cache", 0);
    auto noCache = schedule::checkGroup(*a, g, problem);
    ASSERT_FALSE(noCache.empty());
    EXPECT_NE(noCache.front().message.find("prefetch=next_row loads the next row for the register cache"),
              std::string::npos)
        << noCache.front().message;
    g.set("cache", 1);
    g.set("threads_per_row", 1024);
    g.set("cluster", 8);
    auto tooBig = schedule::checkGroup(*a, g, problem);
    ASSERT_FALSE(tooBig.empty());
    EXPECT_NE(tooBig.front().message.find("this row and the next"), std::string::npos) << tooBig.front().message;
    g.set("prefetch", 0);
    EXPECT_TRUE(schedule::checkGroup(*a, g, problem).empty()) << "stepping without prefetch needs one row of registers";
    g.set("row_steps", 1);
    g.set("prefetch", 1);
    auto noNext = schedule::checkGroup(*a, g, problem);
    ASSERT_FALSE(noNext.empty());
    EXPECT_NE(noNext.front().message.find("needs row_steps > 1"), std::string::npos) << noNext.front().message;
}

// The large-GEMM default (stream-K, 128 x 128 tiles) applies where it was measured: sm_90 takes it
// at 4096^3, sm_80 (not measured) keeps the general rule.
TEST(Heuristics, TheLargeGemmDefaultFollowsTheArchitecturesMeasuredDefaults)
{
    auto lifted = stitch::frontend::liftTensorExpressions(
        "size M = 4096\nsize N = 4096\nsize K = 4096\ninput A: f32[M, K]\ninput B: f32[K, N]\noutput C: f32[M, N]\n"
        "C[i, j] = sum(k) A[i, k] * B[k, j]\n",
        "gemm.te");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    for (const char *arch : {"sm_90", "sm_80"}) {
        const stitch::ArchLimits &limits = *stitch::ArchDatabase::builtin().arch(arch);
        const stitch::schedule::Problem problem{lifted->graph, lifted->sizes, limits, stitch::schedule::Precision::FP32};
        auto s = stitch::schedule::defaultSchedule(problem);
        ASSERT_TRUE(s.ok()) << s.error().toString();
        EXPECT_EQ(s->groups.front().value("stream_k"), limits.measured("large_gemm_stream_k") ? 1 : 0) << arch;
    }
}
