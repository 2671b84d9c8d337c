#pragma once
// Canonical IR programs: the shared fixtures of interpreter, codegen and GPU tests.
//   Programs (makeMatmul, ...) -> Graph -> Interpreter reference / (later) CUDA codegen + runner
// Sizes stay symbolic (M, N, K); a test binds them. Each graph validates.

#include "core/ir/Graph.h"

namespace stitch::ir {

/// C[i, j] = sum(k) A[i, k] * B[k, j]; A: [M, K], B: [K, N], C: [M, N].
Graph makeMatmul(DType dtype = DType::F32);

/// Numerically stable softmax of each row of X: [M, N], as three ops:
///   rowMax[i] = max(j) X[i, j]
///   rowSum[i] = sum(j) exp(X[i, j] - rowMax[i])
///   Y[i, j]   = exp(X[i, j] - rowMax[i]) / rowSum[i]
Graph makeSoftmaxRows(DType dtype = DType::F32);

/// Layer normalisation of each row of X: [M, N] with scale gamma and shift beta: [N]:
///   mean[i] = sum(j) X[i, j] / N
///   var[i]  = sum(j) (X[i, j] - mean[i]) * (X[i, j] - mean[i]) / N
///   Y[i, j] = (X[i, j] - mean[i]) * rsqrt(var[i] + 1e-5) * gamma[j] + beta[j]
Graph makeLayerNormRows(DType dtype = DType::F32);
/// Five element-wise ops over [M, N] with inputs X and Y:
///   t0 = X * Y,  t1 = t0 + 1,  t2 = tanh(t1),  t3 = t2 * 0.5 - X,  Z = relu(t3)
Graph makeElementwiseChain(DType dtype = DType::F32);

/// GEMM, bias and exact (erf) GELU; A: [M, K], W: [K, N], bias: [N]:
///   G[i, j] = sum(k) A[i, k] * W[k, j]
///   H[i, j] = G[i, j] + bias[j]
///   Y[i, j] = 0.5 * H[i, j] * (1 + erf(H[i, j] * 0.7071067811865476))
Graph makeGemmBiasGelu(DType dtype = DType::F32);

} // namespace stitch::ir
