// Every examples/*.te lifts, validates, and computes what an independent hand-written loop nest
// computes on random non-zero inputs (the reference shares nothing with the IR but the formula).
#include "TeTestUtil.h"

#include "core/ir/Programs.h"

#include <cmath>
#include <filesystem>

using namespace stitch;
using stitch::tetest::liftExample;
using stitch::tetest::randomNonZero;

namespace {

struct ExampleRun {
    frontend::LiftedProgram program;
    ir::TensorValues inputs;
    ir::TensorValues outputs;
    std::int64_t size(const std::string &name) const { return program.sizes.at(name); }
};

/// Lifts name, fills every input with random non-zero values at the file's own sizes and
/// interprets it.
ExampleRun runExample(const std::string &name, unsigned seed = 7)
{
    ExampleRun run;
    run.program = liftExample(name);
    std::mt19937_64 rng(seed);
    for (const ir::Tensor *t : run.program.graph.inputs()) {
        auto extents = t->shape.evaluate(run.program.sizes);
        EXPECT_TRUE(extents.ok()) << t->name;
        if (!extents)
            return run;
        run.inputs[t->name] = randomNonZero(static_cast<std::size_t>(ir::elementCount(*extents)), rng);
    }
    auto values = ir::interpret(run.program.graph, run.program.sizes, run.inputs);
    EXPECT_TRUE(values.ok()) << (values ? "" : values.error().toString());
    if (values)
        run.outputs = std::move(values).value();
    return run;
}

void expectClose(const ir::TensorData &actual, const ir::TensorData &expected, const std::string &what)
{
    ASSERT_EQ(actual.size(), expected.size()) << what;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        ASSERT_NEAR(actual[i], expected[i], 1e-10 * (1.0 + std::fabs(expected[i]))) << what << " at flat index " << i;
    }
}

} // namespace

TEST(TeExamples, EveryExampleLiftsWithoutWarnings)
{
    int count = 0;
    for (const auto &entry : std::filesystem::directory_iterator(std::string(STITCHCUDA_SOURCE_DIR) + "/examples")) {
        if (entry.path().extension() != ".te")
            continue;
        ++count;
        const frontend::LiftedProgram p = liftExample(entry.path().filename().string());
        EXPECT_EQ(p.language, "te");
        EXPECT_TRUE(p.graph.validate().ok()) << entry.path();
        EXPECT_TRUE(p.diagnostics.empty()) << entry.path() << ": " << p.diagnostics.front().toString();
        EXPECT_FALSE(p.graph.ops().empty()) << entry.path();
        for (const ir::ComputeOp &op : p.graph.ops()) {
            ASSERT_TRUE(op.source.has_value()) << op.name;
            EXPECT_EQ(op.source->begin.file, entry.path().string());
            EXPECT_GT(op.source->begin.line, 0);
        }
    }
    EXPECT_GE(count, 7);
}

TEST(TeExamples, SameGraphsAsTheIrFixtures)
{
    // The IR team's canonical programs, written independently in C++ with GraphBuilder.
    EXPECT_EQ(liftExample("matmul.te").graph.toString(), ir::makeMatmul().toString());
    EXPECT_EQ(liftExample("softmax.te").graph.toString(), ir::makeSoftmaxRows().toString());
    EXPECT_EQ(liftExample("elementwise_chain.te").graph.toString(), ir::makeElementwiseChain().toString());
    EXPECT_EQ(liftExample("gemm_bias_gelu.te").graph.toString(), ir::makeGemmBiasGelu().toString());
}

TEST(TeExamples, Matmul)
{
    const ExampleRun r = runExample("matmul.te");
    const auto M = r.size("M"), N = r.size("N"), K = r.size("K");
    const auto &A = r.inputs.at("A"), &B = r.inputs.at("B");
    ir::TensorData C(static_cast<std::size_t>(M * N));
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (std::int64_t k = 0; k < K; ++k)
                acc += A[i * K + k] * B[k * N + j];
            C[i * N + j] = acc;
        }
    expectClose(r.outputs.at("C"), C, "C");
}

TEST(TeExamples, Softmax)
{
    const ExampleRun r = runExample("softmax.te");
    const auto M = r.size("M"), N = r.size("N");
    const auto &X = r.inputs.at("X");
    ir::TensorData Y(static_cast<std::size_t>(M * N));
    for (std::int64_t i = 0; i < M; ++i) {
        double m = -INFINITY, s = 0;
        for (std::int64_t j = 0; j < N; ++j)
            m = std::max(m, X[i * N + j]);
        for (std::int64_t j = 0; j < N; ++j)
            s += std::exp(X[i * N + j] - m);
        for (std::int64_t j = 0; j < N; ++j)
            Y[i * N + j] = std::exp(X[i * N + j] - m) / s;
    }
    expectClose(r.outputs.at("Y"), Y, "Y");
}

TEST(TeExamples, LayerNorm)
{
    const ExampleRun r = runExample("layernorm.te");
    const auto M = r.size("M"), N = r.size("N");
    const auto &X = r.inputs.at("X"), &gamma = r.inputs.at("gamma"), &beta = r.inputs.at("beta");
    ir::TensorData Y(static_cast<std::size_t>(M * N));
    for (std::int64_t i = 0; i < M; ++i) {
        double mean = 0, var = 0;
        for (std::int64_t j = 0; j < N; ++j)
            mean += X[i * N + j] / static_cast<double>(N);
        for (std::int64_t j = 0; j < N; ++j)
            var += (X[i * N + j] - mean) * (X[i * N + j] - mean) / static_cast<double>(N);
        for (std::int64_t j = 0; j < N; ++j)
            Y[i * N + j] = (X[i * N + j] - mean) / std::sqrt(var + 1e-5) * gamma[j] + beta[j];
    }
    expectClose(r.outputs.at("Y"), Y, "Y");
}

TEST(TeExamples, GemmBiasGelu)
{
    const ExampleRun r = runExample("gemm_bias_gelu.te");
    const auto M = r.size("M"), N = r.size("N"), K = r.size("K");
    const auto &A = r.inputs.at("A"), &W = r.inputs.at("W"), &bias = r.inputs.at("bias");
    ir::TensorData Y(static_cast<std::size_t>(M * N));
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            double h = bias[j];
            double g = 0;
            for (std::int64_t k = 0; k < K; ++k)
                g += A[i * K + k] * W[k * N + j];
            h += g;
            Y[i * N + j] = 0.5 * h * (1.0 + std::erf(h / std::sqrt(2.0)));
        }
    expectClose(r.outputs.at("Y"), Y, "Y");
}

TEST(TeExamples, ElementwiseChain)
{
    const ExampleRun r = runExample("elementwise_chain.te");
    const auto &X = r.inputs.at("X"), &Yin = r.inputs.at("Y");
    ir::TensorData Z(X.size());
    for (std::size_t e = 0; e < X.size(); ++e)
        Z[e] = std::max(0.0, std::tanh(X[e] * Yin[e] + 1.0) * 0.5 - X[e]);
    expectClose(r.outputs.at("Z"), Z, "Z");
}

TEST(TeExamples, Conv2dWithPadding)
{
    const ExampleRun r = runExample("conv2d.te");
    const auto B = r.size("B"), C = r.size("C"), H = r.size("H"), W = r.size("W");
    const auto K = r.size("K"), R = r.size("R"), S = r.size("S"), P = r.size("P");
    const auto OH = H + 2 * P - R + 1, OW = W + 2 * P - S + 1;
    const auto &X = r.inputs.at("X"), &F = r.inputs.at("F"), &bias = r.inputs.at("bias");
    ir::TensorData Y(static_cast<std::size_t>(B * K * OH * OW));
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t k = 0; k < K; ++k)
            for (std::int64_t y = 0; y < OH; ++y)
                for (std::int64_t x = 0; x < OW; ++x) {
                    double acc = bias[k];
                    for (std::int64_t c = 0; c < C; ++c)
                        for (std::int64_t dr = 0; dr < R; ++dr)
                            for (std::int64_t ds = 0; ds < S; ++ds) {
                                const std::int64_t iy = y + dr - P, ix = x + ds - P;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                    continue; // zero padding
                                acc += X[((b * C + c) * H + iy) * W + ix] * F[((k * C + c) * R + dr) * S + ds];
                            }
                    Y[((b * K + k) * OH + y) * OW + x] = acc;
                }
    expectClose(r.outputs.at("Y"), Y, "Y");
}

TEST(TeExamples, AvgPool)
{
    const ExampleRun r = runExample("avgpool.te");
    const auto B = r.size("B"), C = r.size("C"), H = r.size("H"), W = r.size("W");
    const auto OH = H / 2, OW = W / 2;
    const auto &X = r.inputs.at("X");
    ir::TensorData Y(static_cast<std::size_t>(B * C * OH * OW));
    for (std::int64_t bc = 0; bc < B * C; ++bc)
        for (std::int64_t y = 0; y < OH; ++y)
            for (std::int64_t x = 0; x < OW; ++x) {
                const double *plane = &X[static_cast<std::size_t>(bc * H * W)];
                Y[(bc * OH + y) * OW + x] = (plane[2 * y * W + 2 * x] + plane[2 * y * W + 2 * x + 1]
                                             + plane[(2 * y + 1) * W + 2 * x] + plane[(2 * y + 1) * W + 2 * x + 1])
                    / 4.0;
            }
    expectClose(r.outputs.at("Y"), Y, "Y");
}
