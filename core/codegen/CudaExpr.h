#pragma once
// IR expressions as CUDA C++ text.
//   ComputeOp body / init / extents -> emitExpr(ExprScope) -> kernel source
// A scope says what each iteration variable is in the kernel and which tensor reads are values
// already on chip (fused intermediates, cached rows); every other read becomes a global load with
// a row-major index.

#include "core/ir/Graph.h"
#include "core/ir/Shape.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::codegen {

struct ExprScope {
    const ir::Graph *graph = nullptr;
    std::map<std::string, std::string> vars;  ///< iteration variable -> C expression
    /// A read served from registers: return the C expression, or nullopt for a global load.
    std::function<std::optional<std::string>(const ir::Expr &read, const ExprScope &scope)> local;
    /// Tensors whose flat index needs 64 bits (2^31 elements or more).
    const std::vector<ir::TensorId> *wideTensors = nullptr;
    /// Size variables as 64-bit values (host arithmetic such as grid sizes: M * N passes 2^31).
    bool wideSizes = false;
    /// exp=fast: float exp(a - b) as 2^(a log2 e - b log2 e) of one FMA, exp(x) as 2^(x log2 e),
    /// by ex2.approx.ftz (fastExpHelper() defines it).
    bool fastExp = false;
    /// erf=erfc: float 1 + erf(z) and 1 - erf(z) as stitch_erf1p_(z) and stitch_erf1p_(-z), i.e.
    /// erfc(-z) and erfc(z) by one rational approximation (erf1pHelper() defines it).
    bool erfc = false;
};

/// exp(a - b) of float32 C expressions, precise (expf) or fast (one FMA and ex2.approx.ftz).
std::string emitExpDifference(const std::string &a, const std::string &b, bool fast);

/// The device function exp=fast calls, guarded so that every kernel of a program may include it:
/// ex2.approx.ftz.f32 (2 ulp; results below 2^-126 flush to zero). exp2f would be the same
/// instruction without ftz, plus a scaling around it for denormal results that measured 9% slower
/// over softmax's long rows (bench/results/2026-11-30/run12-long-rows).
std::string fastExpHelper();

/// The device function erf=erfc calls, guarded like fastExpHelper(): 1 + erf(z) = erfc(-z), from
/// erfc(|z|) = t exp(-z^2 + P(t)), t = 1 / (1 + |z| / 2), P of degree 9 (Numerical Recipes' erfcc,
/// relative error below 1.2e-7), with rcp.approx and ex2.approx; for z >= 0 the sum is 2 - erfc(z).
/// Branch-free, about 18 instructions against about 28 for 1 + erff(z).
std::string erf1pHelper();

/// The device functions an expression written in `scope` may call (fastExpHelper() for fastExp,
/// erf1pHelper() for erfc), to write before the kernel; empty when it calls none.
std::string deviceHelpers(const ExprScope &scope);

/// The C++ text of an expression (throws std::runtime_error for an unknown iteration variable:
/// a generator bug, caught and reported by generateProgram).
std::string emitExpr(const ir::Expr &expr, const ExprScope &scope);

/// "X[((long long)(i) * (N) + (j))]": a global read of tensor at C index expressions.
std::string emitGlobalAccess(const ir::Tensor &tensor, const std::vector<std::string> &indices, const ExprScope &scope);

/// A float literal of the type: "0.5f", "1e-05f", "__int_as_float(0x7f800000)" for +inf.
std::string floatLiteral(double value, ir::DType type);

/// The combine step of a reduction: "acc + x", "fmaxf(acc, x)", ...
std::string combine(ir::ReduceKind kind, ir::DType type, const std::string &acc, const std::string &value);

/// The identity of a reduction as a literal of type (0, 1, -inf, +inf, or the integer extremes).
std::string reductionIdentityLiteral(ir::ReduceKind kind, ir::DType type);

/// Tensors of the graph with at least 2^31 elements for these sizes.
std::vector<ir::TensorId> wideTensors(const ir::Graph &graph, const ir::SizeBindings &sizes);

/// An identifier for a tensor or size name that cannot clash with C++ keywords or generated locals.
std::string cIdentifier(const std::string &name);

} // namespace stitch::codegen
