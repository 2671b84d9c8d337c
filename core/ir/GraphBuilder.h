#pragma once
// Concise construction of IR graphs for tests, canonical programs and (later) the frontend.
//   GraphBuilder (tensors, compute calls) -> Graph -> validate -> Interpreter, codegen
// The builder keeps ops aside until build(), so the references it hands out stay valid.

#include "core/common/Result.h"
#include "core/ir/Graph.h"

#include <deque>
#include <string>
#include <vector>

namespace stitch::ir {

/// Example:
///     GraphBuilder b("matmul");
///     Expr M = sizeVar("M"), N = sizeVar("N"), K = sizeVar("K");
///     Tensor A = b.input("A", DType::F32, {M, K});
///     Tensor B = b.input("B", DType::F32, {K, N});
///     Tensor C = b.output("C", DType::F32, {M, N});
///     Expr i = var("i"), j = var("j"), k = var("k");
///     b.compute(C, {i, j}, reduceSum({{"k", K}}), A(i, k) * B(k, j));
///     Result<Graph> graph = b.build();
class GraphBuilder {
public:
    explicit GraphBuilder(std::string graphName) : m_graph(std::move(graphName)) {}

    Tensor input(std::string name, DType dtype, Shape shape);
    Tensor output(std::string name, DType dtype, Shape shape);
    Tensor intermediate(std::string name, DType dtype, Shape shape);

    /// out[vars...] = body. Each var must be an iteration variable (var("i")) and spans the
    /// matching dimension of out. The op is named after out; rename or locate it through the
    /// returned reference, which stays valid for the builder's lifetime.
    ComputeOp &compute(const Tensor &out, const std::vector<Expr> &vars, Expr body);
    /// out[vars...] = reduction body.
    ComputeOp &compute(const Tensor &out, const std::vector<Expr> &vars, Reduction reduction, Expr body);
    /// Adds a fully specified op as is.
    ComputeOp &add(ComputeOp op);

    /// The graph with every op, not validated (for programs known to be valid, and for tests
    /// that want to see validate() fail).
    Graph finish() const;
    /// The graph with every op, or the validation error.
    Result<Graph> build() const;

private:
    Graph m_graph;
    std::deque<ComputeOp> m_ops;
};

} // namespace stitch::ir
