#pragma once
// One computation of the IR: out[i, j, ...] = [reduce over k, ...] body, over a rectangular domain.
//   frontend (one kernel loop nest) / GraphBuilder -> ComputeOp -> Graph -> Interpreter, codegen
// An op writes exactly one tensor, at the point named by its spatial iteration variables.

#include "core/common/Result.h"
#include "core/ir/Expr.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::ir {

/// An iteration variable with its range [lowerBound, lowerBound + extent).
/// Spatial extents may use only size variables; reduction extents may also use spatial variables
/// (a causal mask sums k over [0, i + 1)).
struct IterVar {
    std::string name;
    Expr extent;
    Expr lowerBound = Expr(0);

    IterVar() = default;
    IterVar(std::string varName, Expr varExtent, Expr varLowerBound = Expr(0))
        : name(std::move(varName)), extent(std::move(varExtent)), lowerBound(std::move(varLowerBound))
    {
    }

    /// The variable as an expression, to use in bodies.
    Expr var() const { return ir::var(name); }
    /// One past the last value: lowerBound + extent (folded when both are constants).
    Expr upperBound() const;
    /// "k < K" for a zero lower bound, otherwise "i in [1, 1 + (N - 2))".
    std::string toString() const;
};

enum class ReduceKind { Sum, Max, Min, Prod };

/// "sum", "max", "min", "prod".
const char *reduceKindName(ReduceKind kind);

/// Where a reduction starts when no init is given: 0, 1, or the lowest/highest value of type
/// (-inf/+inf for floats, so max over an empty range is -inf as in a hand-written loop).
Expr reductionIdentity(ReduceKind kind, DType type);

struct Reduction {
    ReduceKind kind = ReduceKind::Sum;
    std::vector<IterVar> vars;
    /// Start value; may read tensors and use spatial variables (C = bias[j] + sum(k) ...).
    /// Undefined means reductionIdentity(kind, output type).
    Expr init;

    /// init when defined, else the identity for type.
    Expr initValue(DType type) const;
};

Reduction reduceSum(std::vector<IterVar> vars, Expr init = {});
Reduction reduceMax(std::vector<IterVar> vars, Expr init = {});
Reduction reduceMin(std::vector<IterVar> vars, Expr init = {});
Reduction reduceProd(std::vector<IterVar> vars, Expr init = {});

/// The stretch of source text an op was lifted from.
struct SourceSpan {
    SourceLocation begin;
    SourceLocation end;

    bool operator==(const SourceSpan &) const = default;
};

/// out[domain vars] = body, or with a reduction out[domain vars] = reduce(vars; init) body.
/// Points of the output outside the domain are not written by this op.
struct ComputeOp {
    std::string name;
    TensorRef output;
    std::vector<IterVar> domain;          ///< one per output dimension, outermost first
    std::optional<Reduction> reduction;
    Expr body;
    std::optional<SourceSpan> source;     ///< where the frontend found it, if it did
    /// How many kernels carried unchanged (opaque in a lifted .cu) the program runs before this op:
    /// ops of different stages never share a kernel, and a carried kernel runs between the stages
    /// around it (codegen/Carry.h). 0 for every op of a program without such kernels.
    int stage = 0;

    /// The written element as an expression: C[i, j].
    Expr outputAccess() const;
    /// Domain variables, then reduction variables.
    std::vector<IterVar> allIterVars() const;
    /// Tensors read by the body, the init and the reduction bounds, each once, first read first.
    std::vector<TensorRef> inputs() const;
    /// Whether any expression of the op reads tensor id.
    bool reads(TensorId id) const;

    /// "C[i, j] = sum(k) A[i, k] * B[k, j]"
    std::string toString() const;
    /// Ranges of every iteration variable: "i < M, j < N, k < K".
    std::string domainString() const;
};

} // namespace stitch::ir
