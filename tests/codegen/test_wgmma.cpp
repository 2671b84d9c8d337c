// The warpgroup tensor-core GEMM (math=tf32_wgmma, sm_90a), on the CPU: the swizzled shared layout
// the descriptor describes, the legality rules with their reasons, and NVRTC compiles of every
// variant the GPU test runs (no spills, the MMAs not serialized by ptxas). The answers are checked
// on the GPU (test_codegen_gpu, CodegenGpuWgmma).
#include "CodegenFixtures.h"

#include "core/codegen/WgmmaGemm.h"
#include "core/cuda/SourceCompiler.h"

#include <gtest/gtest.h>

#include <cctype>
#include <iostream>
#include <set>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

/// Evaluates the integer C expressions SharedTile::at writes: literals, ( ), * + << >> & ^ |.
class IntExpr {
public:
    explicit IntExpr(std::string text) : m_s(std::move(text)) {}
    long long value()
    {
        const long long v = parse(0);
        skip();
        EXPECT_EQ(m_i, m_s.size()) << "unparsed: " << m_s.substr(m_i);
        return v;
    }

private:
    // Binary operators by C precedence, loosest first.
    static int precedence(const std::string &op)
    {
        if (op == "|") return 1;
        if (op == "^") return 2;
        if (op == "&") return 3;
        if (op == "<<" || op == ">>") return 4;
        if (op == "+" || op == "-") return 5;
        if (op == "*" || op == "/" || op == "%") return 6;
        return -1;
    }
    void skip()
    {
        while (m_i < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_i])))
            ++m_i;
    }
    std::string peekOp()
    {
        skip();
        if (m_i >= m_s.size())
            return "";
        if (m_s.compare(m_i, 2, "<<") == 0 || m_s.compare(m_i, 2, ">>") == 0)
            return m_s.substr(m_i, 2);
        const std::string one(1, m_s[m_i]);
        return precedence(one) > 0 ? one : "";
    }
    long long primary()
    {
        skip();
        if (m_s[m_i] == '(') {
            ++m_i;
            const long long v = parse(0);
            skip();
            EXPECT_EQ(m_s[m_i], ')');
            ++m_i;
            return v;
        }
        long long v = 0;
        while (m_i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_i])))
            v = v * 10 + (m_s[m_i++] - '0');
        return v;
    }
    long long parse(int minPrecedence)
    {
        long long left = primary();
        for (std::string op = peekOp(); !op.empty() && precedence(op) > minPrecedence; op = peekOp()) {
            m_i += op.size();
            const long long right = parse(precedence(op));
            if (op == "|") left |= right;
            else if (op == "^") left ^= right;
            else if (op == "&") left &= right;
            else if (op == "<<") left <<= right;
            else if (op == ">>") left >>= right;
            else if (op == "+") left += right;
            else if (op == "-") left -= right;
            else if (op == "*") left *= right;
            else if (op == "/") left /= right;
            else left %= right;
        }
        return left;
    }
    std::string m_s;
    std::size_t m_i = 0;
};

/// CUTLASS's Swizzle<B, 4, 3> on a byte offset within an aligned atom: bits [4, 4 + B) XOR bits
/// [7, 7 + B); B = 3, 2, 1 for 128-, 64- and 32-byte rows.
long long cuteSwizzle(long long byteOffset, int rowBytes)
{
    const int bits = rowBytes == 128 ? 3 : rowBytes == 64 ? 2 : 1;
    const long long mask = (1LL << bits) - 1;
    return byteOffset ^ (((byteOffset >> 7) & mask) << 4);
}

ir::Graph makeMatmulBothMnMajor()
{
    ir::GraphBuilder b("matmul_mn");
    const ir::Expr M = ir::sizeVar("M"), N = ir::sizeVar("N"), K = ir::sizeVar("K");
    const ir::Tensor A = b.input("A", ir::DType::F32, {K, M});
    const ir::Tensor B = b.input("B", ir::DType::F32, {K, N});
    const ir::Tensor C = b.output("C", ir::DType::F32, {M, N});
    const ir::Expr i = ir::var("i"), j = ir::var("j"), k = ir::var("k");
    b.compute(C, {i, j}, ir::reduceSum({{"k", K}}), A(k, i) * B(k, j));
    return b.finish();
}

/// The problem's mma.sync default with `changes` set on its group.
schedule::Schedule scheduleOver(const schedule::Problem &problem, const std::vector<std::pair<std::string, int>> &changes)
{
    auto base = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
    EXPECT_TRUE(base.ok());
    if (!base.ok() || base->groups.empty())
        return {};
    schedule::Schedule s = *base;
    for (const auto &[key, value] : changes)
        s.groups.front().set(key, value);
    return s;
}

/// The rules that `changes` on the default tf32 mma.sync schedule break, one message per line, or "".
std::string firstViolation(const schedule::Problem &problem, const std::vector<std::pair<std::string, int>> &changes)
{
    const auto s = scheduleOver(problem, changes);
    if (s.groups.empty())
        return "no default schedule";
    const auto &g = s.groups.front();
    auto analysis = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
    EXPECT_TRUE(analysis.ok());
    const auto violations = schedule::checkGroup(*analysis, g, problem);
    std::string all;
    for (const auto &v : violations)
        all += v.message + "\n";
    return all;
}

const std::vector<std::pair<std::string, int>> kWgmma256x128 = {
    {"math", 2},       {"copy", 1},     {"smem_pad", 0}, {"block_m", 256}, {"block_n", 128},
    {"thread_m", 8},   {"thread_n", 16}, {"block_k", 32}, {"stages", 4},    {"min_blocks", 1}, {"split_k", 1}};

} // namespace

TEST(Wgmma, SwizzledChunksAreCutlassSwizzleOfTheByteOffset)
{
    for (int rowBytes : {32, 64, 128})
        for (int row = 0; row < 32; ++row)
            for (int chunk = 0; chunk < rowBytes / 16; ++chunk) {
                const long long logical = row * rowBytes + chunk * 16;
                EXPECT_EQ(row * rowBytes + schedule::wgmmaSwizzledChunk(row, chunk, rowBytes) * 16,
                          cuteSwizzle(logical, rowBytes))
                    << rowBytes << "-byte rows, row " << row << ", chunk " << chunk;
            }
}

TEST(Wgmma, GeneratedTileIndexIsTheSwizzledLayout)
{
    // The C expression the copies use for element (row o, k kk) of stage s, evaluated, against the
    // swizzle applied to the unswizzled byte offset (rows of block_k floats, stages back to back).
    for (int bk : {8, 16, 32}) {
        const auto t = codegen::wgmma::wgmmaTiles(128, 64, bk, true, false);
        ASSERT_TRUE(t.swap);
        ASSERT_EQ(t.desc.swizzle, bk * 4);
        ASSERT_EQ(t.desc.rows, 128);
        for (int stage = 0; stage < 2; ++stage)
            for (int o = 0; o < 24; ++o)
                for (int kk = 0; kk < bk; ++kk) {
                    const std::string at = t.desc.at(std::to_string(stage), std::to_string(kk), std::to_string(o));
                    const long long got = IntExpr(at).value();
                    const long long expected =
                        stage * t.desc.stageFloats() + cuteSwizzle((o * bk + kk) * 4, bk * 4) / 4;
                    ASSERT_EQ(got, expected) << "block_k " << bk << ", stage " << stage << ", row " << o << ", k " << kk
                                             << ": " << at;
                }
    }
}

TEST(Wgmma, OperandsGoWhereTheHardwareReadsThem)
{
    // Both row-major: B (rows along n) through registers, A (rows along k) by descriptor.
    const auto nn = codegen::wgmma::wgmmaTiles(256, 128, 32, true, false);
    EXPECT_TRUE(nn.swap);
    EXPECT_EQ(nn.nw, 256);
    EXPECT_EQ(nn.warpgroups, 2);
    EXPECT_FALSE(nn.reg.kContiguous);
    EXPECT_EQ(nn.reg.stride, 128 + 8);
    // B transposed (rows along k): A through registers, B by descriptor.
    const auto nt = codegen::wgmma::wgmmaTiles(128, 256, 32, false, true);
    EXPECT_FALSE(nt.swap);
    EXPECT_EQ(nt.nw, 256);
    EXPECT_EQ(nt.warpgroups, 2);
    EXPECT_EQ(nt.reg.stride, 128 + 8);
    // Fragment loads free of bank conflicts: lane 4 g + t reads k row t, row g.
    for (const auto &t : {nn, nt, codegen::wgmma::wgmmaTiles(128, 128, 16, true, true)}) {
        std::set<int> banks;
        for (int lane = 0; lane < 32; ++lane) {
            const int g = lane / 4, tt = lane % 4;
            banks.insert(int(IntExpr(t.reg.at("0", std::to_string(tt), std::to_string(g))).value() % 32));
        }
        EXPECT_EQ(banks.size(), 32u) << "stride " << t.reg.stride;
    }
}

TEST(Wgmma, LegalityNamesEachRule)
{
    const Case c = tf32Cases()[2]; // 1000x3000x700
    schedule::Problem tf32{c.graph, c.sizes, sm90(), schedule::Precision::TF32};
    EXPECT_EQ(firstViolation(tf32, kWgmma256x128), "");

    schedule::Problem fp32{c.graph, c.sizes, sm90(), schedule::Precision::FP32};
    EXPECT_NE(firstViolation(fp32, kWgmma256x128).find("math=tf32_wgmma rounds A and B to TF32"), std::string::npos);

    schedule::Problem ampere{c.graph, c.sizes, *ArchDatabase::builtin().arch("sm_80"), schedule::Precision::TF32};
    EXPECT_NE(firstViolation(ampere, kWgmma256x128).find("sm_90a instructions; sm_80 has none"), std::string::npos);

    auto padded = kWgmma256x128;
    padded.push_back({"smem_pad", 4});
    EXPECT_NE(firstViolation(tf32, padded).find("smem_pad must be 0"), std::string::npos);

    auto wrongThreads = kWgmma256x128;
    wrongThreads.push_back({"thread_n", 8});
    EXPECT_NE(firstViolation(tf32, wrongThreads).find("thread_m must be 8 and thread_n 16"), std::string::npos)
        << firstViolation(tf32, wrongThreads);

    auto narrow = kWgmma256x128; // MMA rows run along n here: block_n must hold whole warpgroups
    narrow.push_back({"block_n", 32});
    EXPECT_NE(firstViolation(tf32, narrow).find("64 MMA rows along n, which does not divide block_n=32"),
              std::string::npos)
        << firstViolation(tf32, narrow);

    const ir::Graph mn = makeMatmulBothMnMajor();
    schedule::Problem mnProblem{mn, c.sizes, sm90(), schedule::Precision::TF32};
    EXPECT_NE(firstViolation(mnProblem, kWgmma256x128).find("A or B must have rows along k"), std::string::npos);
}

TEST(Wgmma, TransposedBIsOfferedWhereBRunsAlongNAndTheRingIsAsync)
{
    const Case c = tf32Cases()[2]; // 1000x3000x700: A[i, k], B[k, j]
    schedule::Problem tf32{c.graph, c.sizes, sm90(), schedule::Precision::TF32};
    auto transposed = kWgmma256x128;
    transposed.push_back({"transpose_b", 1});
    EXPECT_EQ(firstViolation(tf32, transposed), "");

    auto mma = transposed;
    mma.push_back({"math", 1});
    EXPECT_NE(firstViolation(tf32, mma).find("transpose_b=on writes B transposed so that warpgroup MMAs read both operands "
                                             "by descriptor: it needs math=tf32_wgmma"),
              std::string::npos)
        << firstViolation(tf32, mma);
    auto producer = transposed;
    producer.push_back({"copy", 2});
    EXPECT_NE(firstViolation(tf32, producer).find("copy=producer's ring is not offered with it"), std::string::npos);

    const Case tt = tf32Cases()[4]; // B stored [j, k]: nothing to transpose
    schedule::Problem ttProblem{tt.graph, tt.sizes, sm90(), schedule::Precision::TF32};
    EXPECT_NE(firstViolation(ttProblem, transposed).find("B is stored [j, k], its rows already run along k"),
              std::string::npos)
        << firstViolation(ttProblem, transposed);

    // The copy reads rows of the transposed B, K floats long: K = 1031 takes no 16-byte copies.
    const Case odd = tf32Cases()[3]; // 4097x257x1031
    schedule::Problem oddProblem{odd.graph, odd.sizes, sm90(), schedule::Precision::TF32};
    auto wide = transposed;
    wide.push_back({"vector", 4});
    EXPECT_NE(firstViolation(oddProblem, wide).find("rows of B transposed have 1031 elements"), std::string::npos)
        << firstViolation(oddProblem, wide);
}

TEST(Wgmma, TransposedBIsWrittenFirstAndBothTilesGoByDescriptor)
{
    const Case c = tf32Cases()[2]; // 1000x3000x700
    schedule::Problem tf32{c.graph, c.sizes, sm90(), schedule::Precision::TF32};
    auto transposed = kWgmma256x128;
    transposed.push_back({"transpose_b", 1});
    auto p = codegen::generateProgram(tf32, scheduleOver(tf32, transposed));
    ASSERT_TRUE(p.ok()) << p.error().toString();
    ASSERT_EQ(p->kernels.size(), 2u);
    const auto &t = p->kernels[0].code, &g = p->kernels[1].code;
    EXPECT_TRUE(t.role == codegen::KernelRole::TransposeB);
    EXPECT_TRUE(g.role == codegen::KernelRole::Main);
    EXPECT_EQ(t.name, "C_transpose_b");
    EXPECT_EQ(g.name, "C");
    // 64 x 64 tiles of B's 700 x 3000: 47 along n, 11 along k.
    auto grid = ir::evaluateSizeExpr(t.grid[0], c.sizes);
    ASSERT_TRUE(grid.ok());
    EXPECT_EQ(*grid, 47 * 11);
    // One workspace, K x N floats, written by the pass and read (const) by the GEMM, which no longer reads B.
    ASSERT_EQ(t.scratch.size(), 1u);
    ASSERT_EQ(g.scratch.size(), 1u);
    EXPECT_EQ(t.scratch[0].name, "C_bt");
    EXPECT_EQ(g.scratch[0].name, "C_bt");
    auto elements = ir::evaluateSizeExpr(g.scratch[0].elements, c.sizes);
    ASSERT_TRUE(elements.ok());
    EXPECT_EQ(*elements, 700 * 3000);
    auto param = [](const codegen::KernelCode &k, const std::string &name) -> const codegen::KernelParam * {
        for (const auto &p : k.params)
            if (p.name == name)
                return &p;
        return nullptr;
    };
    ASSERT_TRUE(param(t, "bt_") && param(t, "bt_")->written);
    ASSERT_TRUE(param(g, "bt_"));
    EXPECT_FALSE(param(g, "bt_")->written);
    EXPECT_TRUE(param(t, "B"));
    EXPECT_FALSE(param(g, "B"));
    // The pass rounds to TF32; the GEMM then has no fragments to round, reads bt_ like A (rows along k,
    // 16-byte copies into a swizzled tile) and keeps one MMA group running across the tile's barrier.
    EXPECT_NE(t.source.find("cvt.rna.tf32.f32"), std::string::npos);
    EXPECT_EQ(g.source.find("cvt.rna"), std::string::npos);
    EXPECT_NE(g.source.find("const float *bSrc_ = bt_ + (long long)(n0_ + bRow_) * ldb_ + kBegin_ + bCol_;"), std::string::npos);
    EXPECT_NE(g.source.find("ldb_ = K;"), std::string::npos);
    EXPECT_NE(g.source.find("wgmma.wait_group.sync.aligned 1;"), std::string::npos);
    EXPECT_NE(g.source.find(": \"l\"(rowDesc0_), \"l\"(desc0_)"), std::string::npos);
    // The launcher runs the pass first, on the same stream.
    EXPECT_LT(p->source.find("::C_transpose_b<<<"), p->source.find("::C<<<"));
}

TEST(Wgmma, ProducerWarpgroupCopiesAndHandsStagesOverByMbarriers)
{
    const Case c = tf32Cases()[2]; // 1000x3000x700
    schedule::Problem tf32{c.graph, c.sizes, sm90(), schedule::Precision::TF32};
    auto producer = kWgmma256x128;
    producer.push_back({"copy", 2});
    EXPECT_EQ(firstViolation(tf32, producer), "");

    // Only the warpgroup MMAs take their stages from mbarriers.
    auto simt = producer;
    simt.push_back({"math", 0});
    EXPECT_NE(firstViolation(tf32, simt).find("copy=producer hands each stage to warpgroup MMAs"), std::string::npos)
        << firstViolation(tf32, simt);

    // 384 threads start with 168 registers each; the two MMA warpgroups of m64n256 take 216, the
    // producer keeps 72. Tiles that need fewer move nothing.
    const schedule::ProducerRegisters regs = schedule::producerRegisters(256, 216, sm90().registersPerSm);
    EXPECT_TRUE(regs.adjust);
    EXPECT_EQ(regs.launch, 168);
    EXPECT_EQ(regs.producer, 72);
    EXPECT_EQ(regs.mma, 216);
    EXPECT_LE(256 * regs.mma + 128 * regs.producer, 384 * regs.launch);
    EXPECT_FALSE(schedule::producerRegisters(256, 150, sm90().registersPerSm).adjust);
    EXPECT_LT(schedule::producerRegisters(512, 216, sm90().registersPerSm).producer, schedule::kMinProducerRegisters);

    auto p = codegen::generateProgram(tf32, scheduleOver(tf32, producer));
    ASSERT_TRUE(p.ok()) << p.error().toString();
    ASSERT_EQ(p->kernels.size(), 1u);
    EXPECT_EQ(p->kernels[0].code.block[0], 384);
    const std::string &src = p->source;
    EXPECT_NE(src.find("__launch_bounds__(384, 1)"), std::string::npos);
    EXPECT_NE(src.find("mbarrier.init.shared::cta.b64 [%0], 128;"), std::string::npos) << "full: the producer's threads";
    EXPECT_NE(src.find("mbarrier.init.shared::cta.b64 [%0], 8;"), std::string::npos) << "empty: the 8 MMA warps";
    EXPECT_NE(src.find("setmaxnreg.dec.sync.aligned.u32 72;"), std::string::npos);
    EXPECT_NE(src.find("setmaxnreg.inc.sync.aligned.u32 216;"), std::string::npos);
    EXPECT_NE(src.find("const int pt_ = threadIdx.x - 256;"), std::string::npos);
    // The producer never waits for its copies: each thread's arrival on full_ comes when they land,
    // and the MMA warpgroups fence the landed tile for the async proxy before their MMAs read it.
    EXPECT_NE(src.find("cp.async.mbarrier.arrive.noinc.shared::cta.b64"), std::string::npos);
    EXPECT_EQ(src.find("cp.async.wait_group"), std::string::npos);
    const std::size_t fullWait = src.find("wait_(&full_[read_]");
    ASSERT_NE(fullWait, std::string::npos);
    EXPECT_LT(src.find("fence.proxy.async.shared::cta", fullWait), src.find("wgmma.mma_async", fullWait));
    // The MMA warpgroups never meet at a block barrier in the k loop: the one __syncthreads publishes
    // the initialized mbarriers.
    std::size_t barriers = 0;
    for (std::size_t at = src.find("__syncthreads()"); at != std::string::npos; at = src.find("__syncthreads()", at + 1))
        ++barriers;
    EXPECT_EQ(barriers, 1u);
    // The producer's copies: 2048 16-byte chunks of A's 256x32 tile, 16 per thread, and B's 32x128 in 8.
    EXPECT_NE(src.find("const int v_ = pt_ + l_ * 128;"), std::string::npos);
    EXPECT_NE(src.find("for (int l_ = 0; l_ < 16; ++l_)"), std::string::npos);
}

TEST(Wgmma, IsTheDefaultUnderTf32OnSm90WhereLegal)
{
    for (const Case &c : tf32Cases()) {
        schedule::Problem problem{c.graph, c.sizes, sm90(), schedule::Precision::TF32};
        auto s = schedule::defaultSchedule(problem);
        ASSERT_TRUE(s.ok()) << s.error().toString();
        const auto &g = s->groups.front();
        EXPECT_EQ(g.value("math"), 2) << c.name << ": " << schedule::describe(g);
        EXPECT_TRUE(schedule::validateSchedule(*s, problem).ok()) << c.name;
        // One 128-thread warpgroup per 64 MMA rows; the largest tile that still fills the H200's SMs.
        const auto a = schedule::analyzeGroup(c.graph, g.ops, g.strategy);
        ASSERT_TRUE(a.ok());
        const auto layout = schedule::wgmmaLayout(g.value("block_m"), g.value("block_n"), g.value("block_k"),
                                                  a->aRowMajor, !a->bRowMajor);
        EXPECT_EQ(g.value("thread_n"), layout.nw / 16) << c.name;
        auto mma = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
        ASSERT_TRUE(mma.ok());
        EXPECT_EQ(mma->groups.front().value("math"), 1) << c.name;
    }
    const Case big = tf32Cases()[3];
    schedule::Problem problem{big.graph, {{"M", 4096}, {"N", 4096}, {"K", 4096}}, sm90(), schedule::Precision::TF32};
    auto s = schedule::defaultSchedule(problem);
    ASSERT_TRUE(s.ok());
    EXPECT_NE(schedule::describe(s->groups.front()).find("block_m=256 block_n=128 thread_m=8 thread_n=16"), std::string::npos)
        << "run 8's winner at 4096^3: " << schedule::describe(s->groups.front());

    // Elsewhere the warp-level MMAs: sm_80 has no wgmma, and with neither operand's rows along k no
    // operand can go by descriptor.
    schedule::Problem ampere{big.graph, problem.sizes, *ArchDatabase::builtin().arch("sm_80"), schedule::Precision::TF32};
    auto onAmpere = schedule::defaultSchedule(ampere);
    ASSERT_TRUE(onAmpere.ok());
    EXPECT_EQ(onAmpere->groups.front().value("math"), 1);
    const ir::Graph mn = makeMatmulBothMnMajor();
    schedule::Problem mnProblem{mn, problem.sizes, sm90(), schedule::Precision::TF32};
    auto mnDefault = schedule::defaultSchedule(mnProblem);
    ASSERT_TRUE(mnDefault.ok());
    EXPECT_EQ(mnDefault->groups.front().value("math"), 1);
}

TEST(Wgmma, EveryVariantCompilesForSm90aWithoutSpillsOrSerializedMmas)
{
    int withReport = 0;
    for (const Case &c : tf32Cases()) {
        schedule::Problem problem{c.graph, c.sizes, sm90(), schedule::Precision::TF32};
        auto base = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
        ASSERT_TRUE(base.ok());
        const auto variants = wgmmaVariants(problem, *base);
        EXPECT_GE(variants.size(), 2u) << c.name;
        for (const auto &s : variants) {
            SCOPED_TRACE(c.name + ": " + schedule::describe(s.groups.front()));
            auto p = codegen::generateProgram(problem, s);
            ASSERT_TRUE(p.ok()) << p.error().toString();
            EXPECT_NE(p->source.find("wgmma.mma_async.sync.aligned.m64n"), std::string::npos);
            EXPECT_NE(p->source.find("fence.proxy.async.shared::cta"), std::string::npos);
            EXPECT_EQ(cuda::archForSource(p->source, "sm_90"), "sm_90a");
            auto compiled = compileProgram(*p, "sm_90");
            ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
            if (compiled->log.find("ptxas info") != std::string::npos)
                ++withReport;
            expectCompiledClean(*p, *compiled);
        }
    }
    std::cout << "  " << withReport << " compiles with ptxas's report in the log\n";
}

TEST(Wgmma, OtherProgramsCompileForTheArchAsGiven)
{
    EXPECT_EQ(cuda::archForSource("__global__ void k() {}", "sm_90"), "sm_90");
    EXPECT_EQ(cuda::archForSource("#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)", "sm_80"), "sm_80");
}
