#include "core/ir/Expr.h"
#include "core/ir/ExprUtil.h"
#include "core/ir/Shape.h"
#include "core/ir/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace stitch::ir;

namespace {

Tensor makeTensor(TensorId id, const std::string &name, DType dtype, Shape shape)
{
    Tensor t;
    t.id = id;
    t.name = name;
    t.dtype = dtype;
    t.shape = std::move(shape);
    return t;
}

} // namespace

TEST(ExprPrinter, TensorExpressionText)
{
    const Expr M = sizeVar("M"), N = sizeVar("N"), K = sizeVar("K");
    const Tensor A = makeTensor(0, "A", DType::F32, {M, K});
    const Tensor B = makeTensor(1, "B", DType::F32, {K, N});
    const Expr i = var("i"), j = var("j"), k = var("k");

    EXPECT_EQ((A(i, k) * B(k, j)).toString(), "A[i, k] * B[k, j]");
    EXPECT_EQ((A(i, k) + B(k, j) * 2.0).toString(), "A[i, k] + B[k, j] * 2.0");
    EXPECT_EQ(((A(i, k) + B(k, j)) * 2.0).toString(), "(A[i, k] + B[k, j]) * 2.0");
    EXPECT_EQ(A(i + 1, k * 2).toString(), "A[i + 1, k * 2]");
    EXPECT_EQ(A(i, 0).toString(), "A[i, 0]");
    EXPECT_EQ(exp(A(i, k) - max(A(i, k), 0.0)).toString(), "exp(A[i, k] - max(A[i, k], 0.0))");
    EXPECT_EQ(rsqrt(A(i, k)).toString(), "rsqrt(A[i, k])");
    EXPECT_EQ(select(i < M, A(i, k), 0.0).toString(), "select(i < M, A[i, k], 0.0)");
    EXPECT_EQ(cast(DType::F16, A(i, k)).toString(), "float16(A[i, k])");
    EXPECT_EQ(cast(DType::F32, i).toString(), "float32(i)");
    EXPECT_EQ(floorDiv(i, 2).toString(), "i // 2");
    EXPECT_EQ((i % 4).toString(), "i % 4");
    EXPECT_EQ(pow(A(i, k), 3.0).toString(), "pow(A[i, k], 3.0)");
    EXPECT_EQ(logicalAnd(i >= 1, logicalOr(j < N, eq(k, 0))).toString(), "i >= 1 && (j < N || k == 0)");
    EXPECT_EQ(logicalNot(ne(i, j)).toString(), "!(i != j)");
    EXPECT_EQ(boolConst(true).toString(), "true");
}

TEST(ExprPrinter, ParenthesesFollowTheTree)
{
    const Expr a = var("a"), b = var("b"), c = var("c");
    EXPECT_EQ((a - b - c).toString(), "a - b - c");
    EXPECT_EQ((a - (b - c)).toString(), "a - (b - c)");
    EXPECT_EQ((a + (b + c)).toString(), "a + (b + c)");
    EXPECT_EQ((a / (b * c)).toString(), "a / (b * c)");
    EXPECT_EQ((a * b / c).toString(), "a * b / c");
    EXPECT_EQ((-(a + b)).toString(), "-(a + b)");
    EXPECT_EQ((-a * b).toString(), "-a * b");
    EXPECT_EQ((a * -1).toString(), "a * -1");
    EXPECT_EQ((-intConst(-1)).toString(), "-(-1)");
    EXPECT_EQ(eq(a < b, 0).toString(), "(a < b) == 0");
    EXPECT_EQ(logicalOr(a, logicalAnd(b, c)).toString(), "a || (b && c)");
    EXPECT_EQ(logicalAnd(logicalOr(a, b), c).toString(), "(a || b) && c");
}

TEST(ExprPrinter, FloatConstantsLookLikeFloats)
{
    EXPECT_EQ(floatConst(1.0).toString(), "1.0");
    EXPECT_EQ(floatConst(0.5).toString(), "0.5");
    EXPECT_EQ(floatConst(0.7071067811865476).toString(), "0.7071067811865476");
    EXPECT_EQ(floatConst(1e-7).toString(), "1e-07");
    EXPECT_EQ(floatConst(-std::numeric_limits<double>::infinity()).toString(), "-inf");
    EXPECT_EQ(floatConst(std::nan("")).toString(), "nan");
    EXPECT_EQ(Expr(3).toString(), "3");
}

TEST(ExprTypes, Inference)
{
    const Tensor A = makeTensor(0, "A", DType::F32, {sizeVar("N")});
    const Tensor D = makeTensor(1, "D", DType::F64, {sizeVar("N")});
    const Tensor H = makeTensor(2, "H", DType::F16, {sizeVar("N")});
    const Expr i = var("i");

    EXPECT_EQ(i.dtype(), DType::I32);
    EXPECT_EQ(sizeVar("N").dtype(), DType::I32);
    EXPECT_EQ(A(i).dtype(), DType::F32);
    EXPECT_EQ((A(i) * 2).dtype(), DType::F32);
    EXPECT_EQ((i * 2).dtype(), DType::I32);
    EXPECT_EQ((i + 0.5).dtype(), DType::F32);
    EXPECT_EQ(Expr(std::int64_t{5}).dtype(), DType::I64);

    // A literal next to an expression adopts its type instead of widening it.
    const Expr scaled = D(i) * 0.5;
    EXPECT_EQ(scaled.dtype(), DType::F64);
    EXPECT_EQ(scaled.operand(1).dtype(), DType::F64);
    EXPECT_EQ((H(i) + 1.0).dtype(), DType::F16);
    EXPECT_EQ((H(i) + A(i)).dtype(), DType::F32);

    EXPECT_EQ((A(i) < 0.0).dtype(), DType::Bool);
    EXPECT_EQ(logicalAnd(i > 0, i < 4).dtype(), DType::Bool);
    EXPECT_EQ(logicalNot(i).dtype(), DType::Bool);
    EXPECT_EQ(exp(i).dtype(), DType::F32) << "transcendentals of integers are float";
    EXPECT_EQ(abs(i).dtype(), DType::I32);
    EXPECT_EQ(pow(i, 2).dtype(), DType::F32);
    EXPECT_EQ((i / 2).dtype(), DType::I32);
    EXPECT_EQ(cast(DType::I64, A(i)).dtype(), DType::I64);
    EXPECT_EQ(select(i > 0, D(i), A(i)).dtype(), DType::F64);
}

TEST(ExprEquality, Structural)
{
    const Tensor A = makeTensor(0, "A", DType::F32, {sizeVar("N")});
    const Tensor A2 = makeTensor(5, "A", DType::F32, {sizeVar("N")});
    const Expr i = var("i");

    const Expr e1 = exp(A(i + 1) * 2.0);
    const Expr e2 = exp(A(i + 1) * 2.0);
    EXPECT_TRUE(e1.equals(e2));
    EXPECT_FALSE(e1.sameAs(e2));
    EXPECT_TRUE(e1.sameAs(e1));
    EXPECT_FALSE(e1.equals(exp(A(i + 1) * 3.0)));
    EXPECT_FALSE(e1.equals(exp(A(i + 2) * 2.0)));
    EXPECT_FALSE(e1.equals(tanh(A(i + 1) * 2.0)));
    EXPECT_FALSE(e1.equals(exp(A2(i + 1) * 2.0))) << "same name, different tensor id";
    EXPECT_FALSE(intConst(1).equals(intConst(1, DType::I64))) << "types are part of the structure";
    EXPECT_FALSE(var("i").equals(sizeVar("i")));
    EXPECT_TRUE(floatConst(std::nan("")).equals(floatConst(std::nan(""))));
    EXPECT_FALSE(Expr().equals(i));
    EXPECT_TRUE(Expr().equals(Expr()));
}

TEST(ExprUtil, CollectAndSubstitute)
{
    const Expr M = sizeVar("M"), N = sizeVar("N");
    const Tensor A = makeTensor(0, "A", DType::F32, {M, N});
    const Tensor B = makeTensor(1, "B", DType::F32, {N});
    const Expr i = var("i"), j = var("j");
    const Expr body = A(i, j) * B(j) + A(i, N - 1) + cast(DType::F32, M);

    EXPECT_EQ(collectIterVars(body), (std::vector<std::string>{"i", "j"}));
    EXPECT_EQ(collectSizeVars(body), (std::vector<std::string>{"N", "M"}));
    const std::vector<Expr> reads = collectReads(body);
    ASSERT_EQ(reads.size(), 3u);
    EXPECT_EQ(reads[0].toString(), "A[i, j]");
    EXPECT_EQ(reads[1].toString(), "B[j]");
    EXPECT_EQ(reads[2].toString(), "A[i, N - 1]");

    const Expr replaced = substitute(body, {{"j", j + 1}});
    EXPECT_EQ(replaced.toString(), "A[i, j + 1] * B[j + 1] + A[i, N - 1] + float32(M)");
    // The subtree without j is shared, not rebuilt.
    EXPECT_TRUE(replaced.operand(0).operand(1).sameAs(body.operand(0).operand(1)));
    EXPECT_TRUE(substitute(body, {{"q", i}}).sameAs(body));

    EXPECT_FALSE(hasUndefined(body));
    EXPECT_TRUE(hasUndefined(A(i, Expr())));
}

TEST(ExprUtil, MatchesOnePlusErf)
{
    const Tensor H = makeTensor(0, "H", DType::F32, {sizeVar("N")});
    const Tensor D = makeTensor(1, "D", DType::F64, {sizeVar("N")});
    const Expr j = var("j"), z = H(j) * 0.7071067811865476;
    auto expectMatch = [&](const Expr &e, bool negated) {
        auto m = matchOnePlusErf(e);
        ASSERT_TRUE(m.has_value()) << e.toString();
        EXPECT_TRUE(m->z.equals(z)) << m->z.toString();
        EXPECT_EQ(m->negated, negated) << e.toString();
    };
    expectMatch(1.0 + erf(z), false);
    expectMatch(erf(z) + 1.0, false);
    expectMatch(1.0 - erf(z), true);
    // GELU's whole expression is a product; the sum inside it is what matches.
    const Expr gelu = 0.5 * H(j) * (1.0 + erf(z));
    EXPECT_FALSE(matchOnePlusErf(gelu).has_value());
    EXPECT_TRUE(matchOnePlusErf(gelu.operand(1)).has_value());
    EXPECT_FALSE(matchOnePlusErf(erf(z) - 1.0).has_value()) << "erf(z) - 1 is -erfc(z), not 1 + erf";
    EXPECT_FALSE(matchOnePlusErf(2.0 + erf(z)).has_value());
    EXPECT_FALSE(matchOnePlusErf(1.0 + H(j)).has_value());
    EXPECT_FALSE(matchOnePlusErf(1.0 + erf(D(j))).has_value()) << "float64: erf keeps the library";
    EXPECT_FALSE(matchOnePlusErf(Expr()).has_value());
}

TEST(SizeExpr, EvaluatesWithBindings)
{
    const Expr M = sizeVar("M"), N = sizeVar("N");
    const SizeBindings sizes{{"M", 7}, {"N", 3}};
    EXPECT_EQ(*evaluateSizeExpr(M * N + 1, sizes), 22);
    EXPECT_EQ(*evaluateSizeExpr((M - 10) / N, sizes), -1) << "C division truncates";
    EXPECT_EQ(*evaluateSizeExpr(floorDiv(M - 10, N), sizes), -1);
    EXPECT_EQ(*evaluateSizeExpr(floorDiv(M - 11, N), sizes), -2);
    EXPECT_EQ(*evaluateSizeExpr(min(M, N) + max(M, N), sizes), 10);
    // select over comparisons (C's 1 / 0), evaluating only the branch it takes.
    EXPECT_EQ(*evaluateSizeExpr(select(binary(BinaryOp::Lt, M, N), M, N), sizes), 3);
    EXPECT_EQ(*evaluateSizeExpr(select(binary(BinaryOp::Ge, M, N), M % N, M / (N - 3)), sizes), 1);
    EXPECT_EQ(*evaluateSizeExpr(binary(BinaryOp::Eq, M, intConst(7)) + binary(BinaryOp::Ne, M, N), sizes), 2);

    auto unbound = evaluateSizeExpr(sizeVar("K"), sizes);
    ASSERT_FALSE(unbound.ok());
    EXPECT_NE(unbound.error().message.find("'K' is not bound"), std::string::npos);
    EXPECT_FALSE(evaluateSizeExpr(M + var("i"), sizes).ok());
    EXPECT_FALSE(evaluateSizeExpr(M / (N - 3), sizes).ok());
    EXPECT_FALSE(evaluateSizeExpr(M * 0.5, sizes).ok());
}

TEST(Shape, PrintsAndEvaluates)
{
    const Expr M = sizeVar("M"), N = sizeVar("N");
    const Shape shape{M, N * 2, 4};
    EXPECT_EQ(shape.rank(), 3);
    EXPECT_EQ(shape.toString(), "[M, N * 2, 4]");
    EXPECT_EQ(Shape{}.toString(), "[]");
    EXPECT_FALSE(shape.isConcrete());
    EXPECT_TRUE((Shape{3, 4}).isConcrete());
    EXPECT_EQ(shape.sizeVars(), (std::vector<std::string>{"M", "N"}));
    EXPECT_EQ(*shape.evaluate({{"M", 5}, {"N", 3}}), (std::vector<std::int64_t>{5, 6, 4}));
    EXPECT_TRUE(shape.equals(Shape{M, N * 2, 4}));
    EXPECT_FALSE(shape.equals(Shape{M, N * 2}));

    auto negative = (Shape{M - 10}).evaluate({{"M", 5}});
    ASSERT_FALSE(negative.ok());
    EXPECT_NE(negative.error().message.find("negative"), std::string::npos);

    EXPECT_EQ(rowMajorStrides({5, 6, 4}), (std::vector<std::int64_t>{24, 4, 1}));
    EXPECT_EQ(elementCount({5, 6, 4}), 120);
    EXPECT_EQ(elementCount({}), 1);
}

TEST(Tensor, Describes)
{
    const Tensor A = makeTensor(3, "A", DType::BF16, {sizeVar("M"), 8});
    EXPECT_EQ(A.toString(), "A: bfloat16[M, 8]");
    EXPECT_EQ(A.rank(), 2);
    EXPECT_EQ(A.ref(), (TensorRef{3, "A", DType::BF16}));
    EXPECT_STREQ(tensorRoleName(TensorRole::Intermediate), "intermediate");
    EXPECT_TRUE(A.at({var("i"), 0}).equals(A(var("i"), 0)));
}
