// The TF32 tensor-core GEMM (math=tf32_mma) without a GPU: its legality and reasons, the schedule
// file round trip, the default heuristics, a warp's m16n8k8 MMA simulated from the PTX ISA's
// fragment tables against the loads and stores the generator emits, and every tile shape
// compiling with NVRTC for sm_90 without spills.
#include "CodegenFixtures.h"

#include "core/codegen/MmaGemm.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <set>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

schedule::Problem tf32Problem(const Case &c, const ArchLimits &arch = sm90())
{
    return {c.graph, c.sizes, arch, schedule::Precision::TF32};
}

std::string messages(const schedule::GroupAnalysis &a, const schedule::KernelGroup &g, const schedule::Problem &p)
{
    std::string all;
    for (const auto &v : schedule::checkGroup(a, g, p))
        all += v.message + "\n";
    return all;
}

// PTX ISA 9.7.14.5.7 "Matrix Fragments for mma.m16n8k8", .tf32, written out again here
// independently of MmaGemm.cpp: groupID g = lane >> 2, threadID_in_group t = lane % 4.
struct Element {
    int row, col;
};
Element ptxA(int lane, int reg) // (row of A, k)
{
    const int g = lane >> 2, t = lane % 4;
    return {reg == 0 || reg == 2 ? g : g + 8, reg < 2 ? t : t + 4};
}
Element ptxB(int lane, int reg) // (k, column of B)
{
    const int g = lane >> 2, t = lane % 4;
    return {reg == 0 ? t : t + 4, g};
}
Element ptxC(int lane, int reg) // (row, column of C)
{
    const int g = lane >> 2, t = lane % 4;
    return {reg < 2 ? g : g + 8, t * 2 + (reg & 1)};
}

} // namespace

TEST(Tf32Mma, AWarpsMmaFromTheGeneratedLoadsMatchesTheProduct)
{
    // One 16x8x8 step of one warp: shared tiles As[k][m] and Bs[k][n] (k-major, as the kernel keeps
    // them), the registers each lane loads (MmaGemm's offsets), the MMA as the PTX ISA defines it on
    // those registers, and the accumulators read back where the epilogue thinks they are.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> value(-8, 8);
    for (int trial = 0; trial < 4; ++trial) {
        double As[8][16], Bs[8][8];
        for (auto &row : As)
            for (double &v : row)
                v = value(rng);
        for (auto &row : Bs)
            for (double &v : row)
                v = value(rng);
        double fragA[16][8], fragB[8][8];
        std::set<std::pair<int, int>> seenA, seenB;
        for (int lane = 0; lane < 32; ++lane) {
            const int g = lane >> 2, t = lane % 4;
            for (int reg = 0; reg < 4; ++reg) {
                const auto o = codegen::mma::aLoad(reg);
                const Element e = ptxA(lane, reg);
                EXPECT_EQ(e.row, g + o.row) << "lane " << lane << " a" << reg << ": the row is the fragment's";
                EXPECT_EQ(2 * t + o.col, codegen::mma::sharedK(e.col)) << "lane " << lane << " a" << reg;
                fragA[e.row][e.col] = As[2 * t + o.col][g + o.row];
                seenA.insert({e.row, e.col});
            }
            for (int reg = 0; reg < 2; ++reg) {
                const auto o = codegen::mma::bLoad(reg);
                const Element e = ptxB(lane, reg);
                EXPECT_EQ(e.col, g + o.col) << "lane " << lane << " b" << reg << ": the column is the fragment's";
                EXPECT_EQ(2 * t + o.row, codegen::mma::sharedK(e.row)) << "lane " << lane << " b" << reg;
                fragB[e.row][e.col] = Bs[2 * t + o.row][g + o.col];
                seenB.insert({e.row, e.col});
            }
        }
        ASSERT_EQ(seenA.size(), 128u) << "every element of the 16x8 A fragment comes from one register";
        ASSERT_EQ(seenB.size(), 64u);
        std::set<int> ks;
        for (int k = 0; k < 8; ++k)
            ks.insert(codegen::mma::sharedK(k));
        ASSERT_EQ(ks.size(), 8u) << "the k permutation covers every shared k row once";
        for (int lane = 0; lane < 32; ++lane) {
            for (int reg = 0; reg < 4; ++reg) {
                const Element e = ptxC(lane, reg);
                double d = 0;
                for (int k = 0; k < 8; ++k)
                    d += fragA[e.row][k] * fragB[k][e.col];
                // Where the kernel stores acc_[2 mi + row / 8][2 ni + col]: row g + row, column 2t + col.
                const auto c = codegen::mma::cElement(reg);
                const int row = (lane >> 2) + c.row, col = 2 * (lane % 4) + c.col;
                double expected = 0;
                for (int k = 0; k < 8; ++k)
                    expected += As[k][row] * Bs[k][col];
                EXPECT_EQ(d, expected) << "lane " << lane << " c" << reg;
            }
        }
    }
}

TEST(Tf32Mma, FragmentLoadsAreFreeOfBankConflictsWithPadding4)
{
    for (int tile : {16, 32, 64, 128, 256}) {
        const int stride = tile + 4;
        for (int reg = 0; reg < 4; ++reg) {
            std::set<int> banks;
            for (int lane = 0; lane < 32; ++lane) {
                const auto o = codegen::mma::aLoad(reg);
                banks.insert(((2 * (lane % 4) + o.col) * stride + (lane >> 2) + o.row) % 32);
            }
            EXPECT_EQ(banks.size(), 32u) << "A tile " << tile << " a" << reg;
        }
        for (int reg = 0; reg < 2; ++reg) {
            std::set<int> banks;
            for (int lane = 0; lane < 32; ++lane) {
                const auto o = codegen::mma::bLoad(reg);
                banks.insert(((2 * (lane % 4) + o.row) * stride + (lane >> 2) + o.col) % 32);
            }
            EXPECT_EQ(banks.size(), 32u) << "B tile " << tile << " b" << reg;
        }
    }
}

TEST(Tf32Mma, KContiguousTilesLoadPairsWithoutBankConflicts)
{
    // A tile whose rows run along k (A row-major, B transposed) keeps k rows 2t and 2t + 1 side by
    // side: one 8-byte load per pair, served per half warp (16 lanes, 32 banks of 4 bytes).
    for (int bk : {8, 16, 32}) {
        const int stride = schedule::mmaKContiguousStride(bk, 4);
        EXPECT_EQ(stride % 16, 8) << bk;
        EXPECT_GE(stride, bk);
        for (int rowOffset : {0, 8}) {
            for (int half = 0; half < 2; ++half) {
                std::set<int> banks;
                for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
                    const int word = ((lane >> 2) + rowOffset) * stride + 2 * (lane % 4);
                    banks.insert(word % 32);
                    banks.insert((word + 1) % 32);
                }
                EXPECT_EQ(banks.size(), 32u) << "block_k " << bk << " rows +" << rowOffset << " half " << half;
            }
        }
    }
    EXPECT_EQ(schedule::mmaKContiguousStride(32, 0), 32) << "smem_pad=0: no padding";
    // The pair (a0, a2) of row g and (a1, a3) of row g + 8 share a row and hold k rows 2t, 2t + 1;
    // b0, b1 likewise.
    EXPECT_EQ(codegen::mma::aLoad(0).row, codegen::mma::aLoad(2).row);
    EXPECT_EQ(codegen::mma::aLoad(2).col - codegen::mma::aLoad(0).col, 1);
    EXPECT_EQ(codegen::mma::aLoad(1).row, codegen::mma::aLoad(3).row);
    EXPECT_EQ(codegen::mma::bLoad(1).row - codegen::mma::bLoad(0).row, 1);
}

TEST(Tf32Mma, LegalOnlyWithTf32PrecisionTensorCoresAndTheAsyncRing)
{
    const Case c = tf32Cases()[1]; // 257x131x77
    auto problem = tf32Problem(c);
    auto s = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
    ASSERT_TRUE(s.ok()) << s.error().toString();
    auto g = s->groups.front();
    EXPECT_EQ(g.value("math"), 1) << "precision tf32 on sm_90 chooses the tensor cores";
    EXPECT_EQ(g.value("copy"), 1);
    auto a = schedule::analyzeGroup(c.graph, g.ops, g.strategy);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(messages(*a, g, problem), "");

    const schedule::Problem fp32{c.graph, c.sizes, sm90(), schedule::Precision::FP32};
    for (const auto &o : schedule::legalValues(*a, g, "math", fp32)) {
        EXPECT_EQ(o.legal, o.text == "simt") << o.text;
        if (!o.legal) {
            EXPECT_NE(o.why.find("the schedule's precision is fp32"), std::string::npos) << o.why;
        }
    }
    // The warpgroup MMAs need other tiles (64-row warpgroups, thread_m 8): test_wgmma.cpp.
    for (const auto &o : schedule::legalValues(*a, g, "math", problem))
        EXPECT_EQ(o.legal, o.text != "tf32_wgmma") << o.text << ": " << o.why;

    const schedule::Problem turing{c.graph, c.sizes, *ArchDatabase::builtin().arch("sm_75"), schedule::Precision::TF32};
    EXPECT_NE(messages(*a, g, turing).find("sm_75 has no TF32 tensor cores"), std::string::npos) << messages(*a, g, turing);

    auto registers = g;
    registers.set("copy", 0);
    registers.set("stages", 2);
    EXPECT_NE(messages(*a, registers, problem).find("math=tf32_mma stages its tiles through the cp.async ring"),
              std::string::npos);

    auto warp = g;
    warp.set("block_m", 64);
    warp.set("thread_m", 16);
    EXPECT_NE(messages(*a, warp, problem).find("8 x thread_m = 128 rows, which does not divide block_m=64"),
              std::string::npos)
        << messages(*a, warp, problem);
    warp = g;
    warp.set("block_n", 32);
    warp.set("thread_n", 16);
    EXPECT_NE(messages(*a, warp, problem).find("4 x thread_n = 64 columns, which does not divide block_n=32"),
              std::string::npos)
        << messages(*a, warp, problem);
    auto big = g;
    big.set("thread_m", 16);
    big.set("thread_n", 16);
    big.set("block_m", 128);
    big.set("block_n", 64);
    EXPECT_NE(messages(*a, big, problem).find("registers per thread"), std::string::npos)
        << "a 128x64 warp tile holds 256 accumulators per thread";

    // A schedule file that asks for tensor cores under fp32 is refused with the reason.
    schedule::Schedule wrong = *s;
    wrong.precision = schedule::Precision::FP32;
    auto st = schedule::validateSchedule(wrong, fp32);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("[math]"), std::string::npos) << st.error().message;
}

TEST(Tf32Mma, FP32ProblemsKeepTheSimtPath)
{
    for (const auto &c : cases()) {
        auto s = schedule::defaultSchedule({c.graph, c.sizes, sm90(), schedule::Precision::FP32});
        ASSERT_TRUE(s.ok());
        for (const auto &g : s->groups) {
            if (g.strategy == schedule::Strategy::Gemm) {
                EXPECT_EQ(g.value("math"), 0) << c.name;
            }
        }
    }
}

TEST(Tf32Mma, ScheduleFilesRoundTripTheMathDecision)
{
    const Case c = tf32Cases()[0];
    auto s = schedule::defaultSchedule(tf32Problem(c), schedule::TensorCoreDefault::WarpMma);
    ASSERT_TRUE(s.ok());
    const std::string json = schedule::toJson(*s);
    EXPECT_NE(json.find("\"math\": \"tf32_mma\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"precision\": \"tf32\""), std::string::npos);
    auto back = schedule::parseSchedule(json, "s.json");
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(*back, *s);

    const std::string line = schedule::describe(s->groups.front());
    EXPECT_NE(line.find(" math=tf32_mma"), std::string::npos) << line;
    auto applied = schedule::applyDescriptions(*s, line);
    ASSERT_TRUE(applied.ok()) << applied.error().toString();
    EXPECT_EQ(applied->groups.front(), s->groups.front());

    // Files and recorded lines from before the decision keep the SIMT kernel.
    auto old = schedule::parseSchedule(
        R"({"groups": [{"name": "C", "strategy": "gemm", "ops": ["C"], "decisions": {"block_m": 64}}]})", "s.json");
    ASSERT_TRUE(old.ok());
    EXPECT_EQ(old->groups.front().value("math"), 0);
    auto bad = schedule::parseSchedule(
        R"({"groups": [{"name": "C", "strategy": "gemm", "ops": ["C"], "decisions": {"math": "wmma"}}]})", "s.json");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("math: wmma is not one of simt, tf32_mma"), std::string::npos)
        << bad.error().message;
}

namespace {

/// Generates and compiles one schedule for sm_90; every kernel without spills or local memory.
void expectCompilesWithoutSpills(const schedule::Problem &problem, const schedule::Schedule &s, const std::string &what)
{
    SCOPED_TRACE(what + ": " + schedule::describe(s.groups.front()));
    ASSERT_TRUE(schedule::validateSchedule(s, problem).ok()) << schedule::validateSchedule(s, problem).error().toString();
    auto p = codegen::generateProgram(problem, s);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    auto compiled = compileProgram(*p, "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString() << "\n" << p->source;
    for (const auto &k : p->kernels) {
        const auto *r = compiled->kernel(k.code.name);
        ASSERT_NE(r, nullptr) << k.code.name;
        EXPECT_LE(r->spillStoreBytes, 0) << k.code.name << ": " << r->registers << " registers";
        EXPECT_EQ(r->localBytes, 0) << k.code.name;
        EXPECT_EQ(r->stackFrameBytes, 0) << k.code.name;
    }
    if (s.groups.front().value("math") == 1) {
        EXPECT_NE(p->source.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
    }
}

} // namespace

TEST(Tf32Mma, EveryWarpTileCompilesWithoutSpills)
{
    // Every legal warp tile (8 thread_m x 4 thread_n), each in a block of 2x2 warps, with the
    // default 32-deep, 3-stage ring; then the other depths and ring lengths for the 64x64 warp tile.
    const Case c = tf32Cases()[5]; // 256x128x96, both operands transposed
    auto problem = tf32Problem(c);
    auto base = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
    ASSERT_TRUE(base.ok());
    auto a = schedule::analyzeGroup(c.graph, base->groups.front().ops, base->groups.front().strategy);
    ASSERT_TRUE(a.ok());
    int compiled = 0;
    for (int tm : {2, 4, 8, 16})
        for (int tn : {2, 4, 8, 16}) {
            schedule::Schedule s = *base;
            auto &g = s.groups.front();
            g.set("thread_m", tm);
            g.set("thread_n", tn);
            g.set("block_m", 16 * tm);
            g.set("block_n", 8 * tn);
            g.set("min_blocks", 1);
            if (!schedule::checkGroup(*a, g, problem).empty()) {
                EXPECT_EQ(tm * tn, 256) << "only the 128x64 warp tile is over the registers: "
                                        << messages(*a, g, problem);
                continue;
            }
            expectCompilesWithoutSpills(problem, s, "warp tile");
            ++compiled;
        }
    EXPECT_EQ(compiled, 15);
    for (int bk : {8, 16, 32})
        for (int stages : {2, 3, 4}) {
            schedule::Schedule s = *base;
            auto &g = s.groups.front();
            g.set("block_m", 128);
            g.set("block_n", 128);
            g.set("thread_m", 8);
            g.set("thread_n", 16);
            g.set("block_k", bk);
            g.set("stages", stages);
            g.set("min_blocks", 1);
            expectCompilesWithoutSpills(problem, s, "ring");
        }
}

TEST(Tf32Mma, TheGpuTestsSchedulesCompileWithoutSpills)
{
    // The default tensor-core schedule of every TF32 case (odd sizes, transposed operands, the fused
    // epilogue) and the variants the GPU test runs: split K, 8 warps of 64x64, a 64x64 block of
    // 32x32 warps with the 16-deep 4-stage ring, and no padding.
    for (const auto &c : tf32Cases()) {
        auto problem = tf32Problem(c);
        auto base = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
        ASSERT_TRUE(base.ok()) << c.name;
        ASSERT_EQ(base->groups.front().value("math"), 1) << c.name;
        expectCompilesWithoutSpills(problem, *base, c.name);
        for (const auto &s : tf32Variants(problem, *base))
            expectCompilesWithoutSpills(problem, s, c.name);
    }
}

TEST(Tf32Mma, SampledLegalSchedulesCompile)
{
    // The spread of the whole legal space of a TF32 problem on sm_90: the three math values, every
    // legal value of every decision at least once; the tensor-core ones without spills.
    for (const auto &c : {tf32Cases()[1], tf32Cases()[6]}) {
        auto problem = tf32Problem(c);
        const auto schedules = sampleSchedules(problem, 8);
        std::set<int> math;
        for (const auto &s : schedules) {
            math.insert(s.groups.front().value("math"));
            if (s.groups.front().value("math") != 0) {
                expectCompilesWithoutSpills(problem, s, c.name);
                continue;
            }
            auto p = codegen::generateProgram(problem, s);
            ASSERT_TRUE(p.ok()) << c.name << ": " << p.error().toString();
            auto compiled = compileProgram(*p, "sm_90");
            ASSERT_TRUE(compiled.ok()) << c.name << " " << schedule::describe(s.groups.front()) << ":\n"
                                       << compiled.error().toString();
        }
        EXPECT_EQ(math, (std::set<int>{0, 1, 2})) << c.name;
    }
}
