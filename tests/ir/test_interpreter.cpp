#include "core/ir/GraphBuilder.h"
#include "core/ir/Interpreter.h"
#include "core/ir/Programs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace stitch::ir;
using stitch::ErrorKind;


namespace {

// Values in [-1, -0.1] or [0.1, 1]: never zero, so a dropped term always shows up.
TensorData randomNonZero(std::size_t count, std::mt19937 &rng)
{
    std::uniform_real_distribution<double> magnitude(0.1, 1.0);
    std::bernoulli_distribution negative(0.5);
    TensorData data(count);
    for (double &v : data)
        v = negative(rng) ? -magnitude(rng) : magnitude(rng);
    return data;
}

TensorData handMatmul(const TensorData &a, const TensorData &b, int m, int n, int k)
{
    TensorData c(static_cast<std::size_t>(m * n), 0.0);
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
            double acc = 0.0;
            for (int p = 0; p < k; ++p)
                acc += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(p * n + j)];
            c[static_cast<std::size_t>(i * n + j)] = acc;
        }
    }
    return c;
}

void expectAllNear(const TensorData &actual, const TensorData &expected, double tolerance)
{
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t e = 0; e < actual.size(); ++e)
        ASSERT_NEAR(actual[e], expected[e], tolerance) << "element " << e;
}

struct Fixture {
    GraphBuilder b{"test"};
    Expr M = sizeVar("M");
    Expr N = sizeVar("N");
    Expr i = var("i");
    Expr j = var("j");
    Expr k = var("k");
};

} // namespace

class MatmulShapes : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(MatmulShapes, MatchesHandWrittenLoops)
{
    const auto [m, n, k] = GetParam();
    std::mt19937 rng(1234u + static_cast<unsigned>(m * 31 + n * 7 + k));
    const TensorData a = randomNonZero(static_cast<std::size_t>(m * k), rng);
    const TensorData b = randomNonZero(static_cast<std::size_t>(k * n), rng);

    auto result = interpret(makeMatmul(), {{"M", m}, {"N", n}, {"K", k}}, {{"A", a}, {"B", b}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    ASSERT_EQ(result->size(), 1u);
    expectAllNear(result->at("C"), handMatmul(a, b, m, n, k), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(NonSquare, MatmulShapes,
                         ::testing::Values(std::make_tuple(7, 5, 3), std::make_tuple(33, 17, 65),
                                           std::make_tuple(1, 9, 4), std::make_tuple(16, 16, 16)));

TEST(Interpreter, Matmul256MatchesHandLoops)
{
    constexpr int size = 256;
    std::mt19937 rng(7);
    const TensorData a = randomNonZero(size * size, rng);
    const TensorData b = randomNonZero(size * size, rng);
    auto result = interpret(makeMatmul(), {{"M", size}, {"N", size}, {"K", size}}, {{"A", a}, {"B", b}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    expectAllNear(result->at("C"), handMatmul(a, b, size, size, size), 1e-12);
}

TEST(Interpreter, SoftmaxRowsSumToOneAndMatchTheFormula)
{
    constexpr int m = 6;
    constexpr int n = 37;
    std::mt19937 rng(99);
    TensorData x = randomNonZero(m * n, rng);
    for (std::size_t e = 0; e < x.size(); ++e)
        x[e] = x[e] * 10.0 + (e < n ? 500.0 : 0.0); // a row near 500 would overflow a naive exp

    auto result = interpret(makeSoftmaxRows(), {{"M", m}, {"N", n}}, {{"X", x}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    const TensorData &y = result->at("Y");
    ASSERT_EQ(y.size(), static_cast<std::size_t>(m * n));
    EXPECT_EQ(result->at("rowMax").size(), static_cast<std::size_t>(m));

    for (int r = 0; r < m; ++r) {
        double rowMax = -std::numeric_limits<double>::infinity();
        for (int c = 0; c < n; ++c)
            rowMax = std::max(rowMax, x[static_cast<std::size_t>(r * n + c)]);
        double denominator = 0.0;
        for (int c = 0; c < n; ++c)
            denominator += std::exp(x[static_cast<std::size_t>(r * n + c)] - rowMax);
        double total = 0.0;
        for (int c = 0; c < n; ++c) {
            const std::size_t e = static_cast<std::size_t>(r * n + c);
            EXPECT_NEAR(y[e], std::exp(x[e] - rowMax) / denominator, 1e-14);
            EXPECT_GT(y[e], 0.0);
            total += y[e];
        }
        EXPECT_NEAR(total, 1.0, 1e-12) << "row " << r;
        EXPECT_DOUBLE_EQ(result->at("rowMax")[static_cast<std::size_t>(r)], rowMax);
    }
}

TEST(Interpreter, GemmBiasGelu)
{
    constexpr int m = 9;
    constexpr int n = 11;
    constexpr int k = 13;
    std::mt19937 rng(5);
    const TensorData a = randomNonZero(m * k, rng);
    const TensorData w = randomNonZero(k * n, rng);
    const TensorData bias = randomNonZero(n, rng);

    auto result = interpret(makeGemmBiasGelu(), {{"M", m}, {"N", n}, {"K", k}}, {{"A", a}, {"W", w}, {"bias", bias}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    const TensorData gemm = handMatmul(a, w, m, n, k);
    TensorData expected(gemm.size());
    for (int r = 0; r < m; ++r) {
        for (int c = 0; c < n; ++c) {
            const std::size_t e = static_cast<std::size_t>(r * n + c);
            const double h = gemm[e] + bias[static_cast<std::size_t>(c)];
            expected[e] = 0.5 * h * (1.0 + std::erf(h / std::sqrt(2.0)));
        }
    }
    expectAllNear(result->at("Y"), expected, 1e-13);
    expectAllNear(result->at("G"), gemm, 1e-13);
}

TEST(Interpreter, ElementwiseChain)
{
    constexpr int m = 4;
    constexpr int n = 19;
    std::mt19937 rng(11);
    const TensorData x = randomNonZero(m * n, rng);
    const TensorData y = randomNonZero(m * n, rng);
    auto result = interpret(makeElementwiseChain(), {{"M", m}, {"N", n}}, {{"X", x}, {"Y", y}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    TensorData expected(x.size());
    int positives = 0;
    for (std::size_t e = 0; e < x.size(); ++e) {
        const double t3 = std::tanh(x[e] * y[e] + 1.0) * 0.5 - x[e];
        expected[e] = t3 > 0.0 ? t3 : 0.0;
        positives += t3 > 0.0;
    }
    EXPECT_GT(positives, 0);
    EXPECT_LT(positives, m * n) << "inputs should exercise both sides of relu";
    expectAllNear(result->at("Z"), expected, 1e-15);
    EXPECT_EQ(result->size(), 5u) << "four intermediates and the output";
}

TEST(Interpreter, MaxMinProdReductions)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F64, {f.M, f.N});
    const Tensor mx = f.b.output("mx", DType::F64, {f.M});
    const Tensor mn = f.b.output("mn", DType::F64, {f.M});
    const Tensor pr = f.b.output("pr", DType::F64, {f.M});
    const Tensor total = f.b.output("total", DType::F64, {});
    f.b.compute(mx, {f.i}, reduceMax({{"j", f.N}}), X(f.i, f.j));
    f.b.compute(mn, {f.i}, reduceMin({{"j", f.N}}), X(f.i, f.j));
    f.b.compute(pr, {f.i}, reduceProd({{"j", f.N}}), X(f.i, f.j));
    f.b.compute(total, {}, reduceSum({{"i", f.M}, {"j", f.N}}), X(f.i, f.j));
    auto g = f.b.build();
    ASSERT_TRUE(g.ok()) << g.error().toString();

    constexpr int m = 5;
    constexpr int n = 7;
    std::mt19937 rng(3);
    const TensorData x = randomNonZero(m * n, rng);
    auto result = interpret(*g, {{"M", m}, {"N", n}}, {{"X", x}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    double sum = 0.0;
    for (int r = 0; r < m; ++r) {
        double hi = -1e300, lo = 1e300, prod = 1.0;
        for (int c = 0; c < n; ++c) {
            const double v = x[static_cast<std::size_t>(r * n + c)];
            hi = std::max(hi, v);
            lo = std::min(lo, v);
            prod *= v;
            sum += v;
        }
        EXPECT_EQ(result->at("mx")[static_cast<std::size_t>(r)], hi);
        EXPECT_EQ(result->at("mn")[static_cast<std::size_t>(r)], lo);
        EXPECT_NEAR(result->at("pr")[static_cast<std::size_t>(r)], prod, 1e-15);
    }
    ASSERT_EQ(result->at("total").size(), 1u);
    EXPECT_NEAR(result->at("total")[0], sum, 1e-12);

    // Over an empty range each reduction yields its identity.
    auto empty = interpret(*g, {{"M", 2}, {"N", 0}}, {{"X", {}}});
    ASSERT_TRUE(empty.ok()) << empty.error().toString();
    EXPECT_EQ(empty->at("mx")[0], -std::numeric_limits<double>::infinity());
    EXPECT_EQ(empty->at("mn")[1], std::numeric_limits<double>::infinity());
    EXPECT_EQ(empty->at("pr")[0], 1.0);
    EXPECT_EQ(empty->at("total")[0], 0.0);
}

TEST(Interpreter, ReductionInitAndTriangularRange)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor bias = f.b.input("bias", DType::F32, {f.N});
    const Tensor prefix = f.b.output("prefix", DType::F32, {f.N});
    // prefix[i] = bias[i] + X[0] + ... + X[i]: the range of k depends on i.
    f.b.compute(prefix, {f.i}, reduceSum({{"k", f.i + 1}}, bias(f.i)), X(f.k));
    auto g = f.b.build();
    ASSERT_TRUE(g.ok()) << g.error().toString();

    const TensorData x{1.5, -2.0, 4.0, 0.25};
    const TensorData b{10.0, 20.0, 30.0, 40.0};
    auto result = interpret(*g, {{"N", 4}}, {{"X", x}, {"bias", b}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    EXPECT_EQ(result->at("prefix"), (TensorData{11.5, 19.5, 33.5, 43.75}));
}

TEST(Interpreter, SelectCastAndGuardedReads)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor leaky = f.b.output("leaky", DType::F32, {f.N});
    const Tensor shifted = f.b.output("shifted", DType::F32, {f.N});
    const Tensor rising = f.b.output("rising", DType::Bool, {f.N});
    const Tensor tenths = f.b.output("tenths", DType::I32, {f.N});
    const Tensor stored = f.b.output("stored", DType::I32, {f.N});
    f.b.compute(leaky, {f.i}, select(X(f.i) > 0.0, X(f.i), X(f.i) * 0.1));
    // Both guards read X[i - 1] only when i > 0; an eager evaluation would read X[-1].
    f.b.compute(shifted, {f.i}, select(f.i > 0, X(f.i - 1), 0.0));
    f.b.compute(rising, {f.i}, logicalAnd(f.i > 0, X(f.i) > X(f.i - 1)));
    f.b.compute(tenths, {f.i}, cast(DType::I32, X(f.i) * 10.0));
    f.b.compute(stored, {f.i}, X(f.i) * 10.0); // storing to int32 converts like a cast
    auto g = f.b.build();
    ASSERT_TRUE(g.ok()) << g.error().toString();

    const TensorData x{0.57, -0.83, 2.0, -0.25, 0.31};
    auto result = interpret(*g, {{"N", 5}}, {{"X", x}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    expectAllNear(result->at("leaky"), {0.57, -0.083, 2.0, -0.025, 0.31}, 1e-15);
    EXPECT_EQ(result->at("shifted"), (TensorData{0.0, 0.57, -0.83, 2.0, -0.25}));
    EXPECT_EQ(result->at("rising"), (TensorData{0.0, 0.0, 1.0, 0.0, 1.0}));
    EXPECT_EQ(result->at("tenths"), (TensorData{5.0, -8.0, 20.0, -2.0, 3.0})) << "truncation toward zero";
    EXPECT_EQ(result->at("stored"), result->at("tenths"));
}

TEST(Interpreter, IntegerDivisionFollowsC)
{
    Fixture f;
    const Tensor q = f.b.output("q", DType::I32, {f.N});
    const Tensor r = f.b.output("r", DType::I32, {f.N});
    const Tensor fq = f.b.output("fq", DType::I32, {f.N});
    const Tensor fdiv = f.b.output("fdiv", DType::F32, {f.N});
    f.b.compute(q, {f.i}, (f.i - 5) / 2);
    f.b.compute(r, {f.i}, (f.i - 5) % 3);
    f.b.compute(fq, {f.i}, floorDiv(f.i - 5, 2));
    f.b.compute(fdiv, {f.i}, cast(DType::F32, f.i) / 4.0);
    auto g = f.b.build();
    ASSERT_TRUE(g.ok()) << g.error().toString();
    auto result = interpret(*g, {{"N", 4}}, {});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    EXPECT_EQ(result->at("q"), (TensorData{-2, -2, -1, -1}));
    EXPECT_EQ(result->at("r"), (TensorData{-2, -1, 0, -2}));
    EXPECT_EQ(result->at("fq"), (TensorData{-3, -2, -2, -1}));
    EXPECT_EQ(result->at("fdiv"), (TensorData{0.0, 0.25, 0.5, 0.75}));
}

TEST(Interpreter, LowerBoundedDomainLeavesTheBorderZero)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F64, {f.N});
    const Tensor Y = f.b.output("Y", DType::F64, {f.N});
    ComputeOp op;
    op.name = "blur";
    op.output = Y.ref();
    op.domain = {IterVar("i", f.N - 2, 1)};
    op.body = (X(f.i - 1) + X(f.i) + X(f.i + 1)) / 3.0;
    f.b.add(op);
    auto g = f.b.build();
    ASSERT_TRUE(g.ok()) << g.error().toString();
    auto result = interpret(*g, {{"N", 5}}, {{"X", {3.0, 6.0, 9.0, 0.0, 3.0}}});
    ASSERT_TRUE(result.ok()) << result.error().toString();
    EXPECT_EQ(result->at("Y"), (TensorData{0.0, 6.0, 5.0, 4.0, 0.0}));
}

TEST(Interpreter, OutOfBoundsReadIsAnError)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    f.b.compute(Y, {f.i}, X(f.i + 1));
    auto g = f.b.build();
    ASSERT_TRUE(g.ok());
    auto result = interpret(*g, {{"N", 5}}, {{"X", TensorData(5, 1.0)}});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().kind, ErrorKind::InvalidArgument);
    EXPECT_EQ(result.error().message, "op 'Y': out-of-bounds read X[5] of X[5] at i = 4");
}

TEST(Interpreter, OutOfBoundsPlainVariableReadIsAnError)
{
    Fixture f;
    const Tensor A = f.b.input("A", DType::F32, {f.M, f.N});
    const Tensor B = f.b.input("B", DType::F32, {f.M, f.N});
    const Tensor C = f.b.output("C", DType::F32, {f.M, f.M});
    // Reads A[i, j] with j < M although A has only N columns.
    f.b.compute(C, {f.i, f.j}, A(f.i, f.j) + B(f.i, 0));
    auto g = f.b.build();
    ASSERT_TRUE(g.ok());
    auto result = interpret(*g, {{"M", 4}, {"N", 3}}, {{"A", TensorData(12, 1.0)}, {"B", TensorData(12, 1.0)}});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().message, "op 'C': out-of-bounds read A[0, 3] of A[4, 3] at i = 0, j = 3");
}

TEST(Interpreter, FaultsInsideReductionsNameTheReductionPoint)
{
    Fixture f;
    const Expr K = sizeVar("K");
    const Tensor A = f.b.input("A", DType::F32, {f.M, K});
    const Tensor bias = f.b.input("bias", DType::F32, {f.N});
    const Tensor C = f.b.output("C", DType::F32, {f.M, f.N});
    f.b.compute(C, {f.i, f.j}, reduceSum({{"k", K}}), A(f.i, f.k + 1));
    auto body = interpret(f.b.finish(), {{"M", 2}, {"N", 2}, {"K", 3}},
                          {{"A", TensorData(6, 1.0)}, {"bias", TensorData(2, 1.0)}});
    ASSERT_FALSE(body.ok());
    EXPECT_EQ(body.error().message, "op 'C': out-of-bounds read A[0, 3] of A[2, 3] at i = 0, j = 0, k = 2");

    Fixture h;
    const Tensor Ah = h.b.input("A", DType::F32, {h.M, K});
    const Tensor biasH = h.b.input("bias", DType::F32, {h.N});
    const Tensor Dh = h.b.output("D", DType::F32, {h.M, h.N});
    h.b.compute(Dh, {h.i, h.j}, reduceSum({{"k", K}}, biasH(h.j + 1)), Ah(h.i, h.k));
    auto init = interpret(h.b.finish(), {{"M", 2}, {"N", 2}, {"K", 3}},
                          {{"A", TensorData(6, 1.0)}, {"bias", TensorData(2, 1.0)}});
    ASSERT_FALSE(init.ok());
    EXPECT_EQ(init.error().message, "op 'D': out-of-bounds read bias[2] of bias[2] at i = 0, j = 1");
}

TEST(Interpreter, WritesOutsideTheOutputAreAnError)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    ComputeOp op;
    op.name = "Y";
    op.output = Y.ref();
    op.domain = {IterVar("i", f.N, 1)};
    op.body = X(f.i - 1);
    f.b.add(op);
    auto result = interpret(f.b.finish(), {{"N", 3}}, {{"X", TensorData(3, 1.0)}});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().message, "op 'Y': 'i' covers [1, 4) but 'Y' has extent 3 in dimension 0");
}

TEST(Interpreter, RuntimeFaults)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor D = f.b.output("D", DType::I32, {f.N});
    f.b.compute(D, {f.i}, 10 / (f.i - 2));
    auto divide = interpret(f.b.finish(), {{"N", 4}}, {{"X", TensorData(4, 1.0)}});
    ASSERT_FALSE(divide.ok());
    EXPECT_EQ(divide.error().message, "op 'D': integer division by zero at i = 2");

    Fixture h;
    const Tensor Xh = h.b.input("X", DType::F32, {h.N});
    const Tensor C = h.b.output("C", DType::I32, {h.N});
    h.b.compute(C, {h.i}, cast(DType::I32, Xh(h.i) * 1e10));
    auto overflow = interpret(h.b.finish(), {{"N", 2}}, {{"X", TensorData(2, 1.0)}});
    ASSERT_FALSE(overflow.ok());
    EXPECT_EQ(overflow.error().message, "op 'C': cannot convert 10000000000 to int32 at i = 0");
}

TEST(Interpreter, FaultsCarryTheOpSourceLocation)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    f.b.compute(Y, {f.i}, X(f.i * 2)).source = SourceSpan{{"k.cu", 7, 3}, {"k.cu", 7, 30}};
    auto result = interpret(f.b.finish(), {{"N", 4}}, {{"X", TensorData(4, 1.0)}});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().toString(), "k.cu:7:3: invalid-argument: op 'Y': out-of-bounds read X[4] of X[4] at i = 2");
}

TEST(Interpreter, RejectsBadArguments)
{
    const Graph matmul = makeMatmul();
    const TensorData six(6, 1.0);

    auto unbound = interpret(matmul, {{"M", 2}, {"N", 3}}, {{"A", six}, {"B", six}});
    ASSERT_FALSE(unbound.ok());
    EXPECT_EQ(unbound.error().message, "size variable 'K' is not bound");

    auto missing = interpret(matmul, {{"M", 2}, {"N", 2}, {"K", 3}}, {{"A", six}});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message, "no data for input 'B'");

    auto wrongSize = interpret(matmul, {{"M", 2}, {"N", 2}, {"K", 3}}, {{"A", six}, {"B", TensorData(5)}});
    ASSERT_FALSE(wrongSize.ok());
    EXPECT_EQ(wrongSize.error().message, "input 'B' has 5 elements but its shape [K, N] needs 6");

    auto unknown = interpret(matmul, {{"M", 2}, {"N", 2}, {"K", 3}}, {{"A", six}, {"B", six}, {"C", six}});
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().message, "'C' is not an input of the graph");

    auto negative = interpret(matmul, {{"M", -2}, {"N", 2}, {"K", 3}}, {{"A", six}, {"B", six}});
    ASSERT_FALSE(negative.ok());
    EXPECT_NE(negative.error().message.find("negative"), std::string::npos);

    InterpreterOptions small;
    small.maxTensorElements = 1000;
    auto huge = Interpreter(matmul, small).run({{"M", 100}, {"N", 100}, {"K", 1}}, {{"A", TensorData(100)}, {"B", TensorData(100)}});
    ASSERT_FALSE(huge.ok());
    EXPECT_EQ(huge.error().kind, ErrorKind::ResourceLimit);

    GraphBuilder broken("broken");
    const Tensor Y = broken.output("Y", DType::F32, {4});
    (void)Y;
    auto invalid = interpret(broken.finish(), {}, {});
    ASSERT_FALSE(invalid.ok());
    EXPECT_NE(invalid.error().message.find("output 'Y' is never written"), std::string::npos);
}
