#include "core/ir/Programs.h"

#include "core/ir/GraphBuilder.h"

namespace stitch::ir {

Graph makeMatmul(DType dtype)
{
    GraphBuilder b("matmul");
    const Expr M = sizeVar("M"), N = sizeVar("N"), K = sizeVar("K");
    const Tensor A = b.input("A", dtype, {M, K});
    const Tensor B = b.input("B", dtype, {K, N});
    const Tensor C = b.output("C", dtype, {M, N});
    const Expr i = var("i"), j = var("j"), k = var("k");
    b.compute(C, {i, j}, reduceSum({{"k", K}}), A(i, k) * B(k, j));
    return b.finish();
}

Graph makeSoftmaxRows(DType dtype)
{
    GraphBuilder b("softmax_rows");
    const Expr M = sizeVar("M"), N = sizeVar("N");
    const Tensor X = b.input("X", dtype, {M, N});
    const Tensor rowMax = b.intermediate("rowMax", dtype, {M});
    const Tensor rowSum = b.intermediate("rowSum", dtype, {M});
    const Tensor Y = b.output("Y", dtype, {M, N});
    const Expr i = var("i"), j = var("j");
    b.compute(rowMax, {i}, reduceMax({{"j", N}}), X(i, j));
    b.compute(rowSum, {i}, reduceSum({{"j", N}}), exp(X(i, j) - rowMax(i)));
    b.compute(Y, {i, j}, exp(X(i, j) - rowMax(i)) / rowSum(i));
    return b.finish();
}

Graph makeLayerNormRows(DType dtype)
{
    GraphBuilder b("layernorm_rows");
    const Expr M = sizeVar("M"), N = sizeVar("N");
    const Tensor X = b.input("X", dtype, {M, N});
    const Tensor gamma = b.input("gamma", dtype, {N});
    const Tensor beta = b.input("beta", dtype, {N});
    const Tensor mean = b.intermediate("mean", dtype, {M});
    const Tensor var = b.intermediate("var", dtype, {M});
    const Tensor Y = b.output("Y", dtype, {M, N});
    const Expr i = ir::var("i"), j = ir::var("j");
    b.compute(mean, {i}, reduceSum({{"j", N}}), X(i, j) / cast(dtype, N));
    b.compute(var, {i}, reduceSum({{"j", N}}), (X(i, j) - mean(i)) * (X(i, j) - mean(i)) / cast(dtype, N));
    b.compute(Y, {i, j}, (X(i, j) - mean(i)) * rsqrt(var(i) + 1e-5) * gamma(j) + beta(j));
    return b.finish();
}

Graph makeElementwiseChain(DType dtype)
{
    GraphBuilder b("elementwise_chain");
    const Expr M = sizeVar("M"), N = sizeVar("N");
    const Tensor X = b.input("X", dtype, {M, N});
    const Tensor Y = b.input("Y", dtype, {M, N});
    const Tensor t0 = b.intermediate("t0", dtype, {M, N});
    const Tensor t1 = b.intermediate("t1", dtype, {M, N});
    const Tensor t2 = b.intermediate("t2", dtype, {M, N});
    const Tensor t3 = b.intermediate("t3", dtype, {M, N});
    const Tensor Z = b.output("Z", dtype, {M, N});
    const Expr i = var("i"), j = var("j");
    b.compute(t0, {i, j}, X(i, j) * Y(i, j));
    b.compute(t1, {i, j}, t0(i, j) + 1.0);
    b.compute(t2, {i, j}, tanh(t1(i, j)));
    b.compute(t3, {i, j}, t2(i, j) * 0.5 - X(i, j));
    b.compute(Z, {i, j}, relu(t3(i, j)));
    return b.finish();
}

Graph makeGemmBiasGelu(DType dtype)
{
    GraphBuilder b("gemm_bias_gelu");
    const Expr M = sizeVar("M"), N = sizeVar("N"), K = sizeVar("K");
    const Tensor A = b.input("A", dtype, {M, K});
    const Tensor W = b.input("W", dtype, {K, N});
    const Tensor bias = b.input("bias", dtype, {N});
    const Tensor G = b.intermediate("G", dtype, {M, N});
    const Tensor H = b.intermediate("H", dtype, {M, N});
    const Tensor Y = b.output("Y", dtype, {M, N});
    const Expr i = var("i"), j = var("j"), k = var("k");
    b.compute(G, {i, j}, reduceSum({{"k", K}}), A(i, k) * W(k, j));
    b.compute(H, {i, j}, G(i, j) + bias(j));
    // 1/sqrt(2): GELU(x) = x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))).
    b.compute(Y, {i, j}, 0.5 * H(i, j) * (1.0 + erf(H(i, j) * 0.7071067811865476)));
    return b.finish();
}

} // namespace stitch::ir
