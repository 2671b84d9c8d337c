#pragma once
// Buffer shapes and multi-dimensional indices (phase 2a of the CUDA lifter).
//   allocation factors (cudaMalloc(M * K * sizeof(float))) -> splitLaunchVars (a 1-D thread index
//   over an M x N output becomes i, j) -> chooseShapes over every flat access of every launch (the
//   factor order that makes most accesses A[i, k] in bounds) -> flatIndices for Assembly
// A decomposition is used only when each per-dimension index is proven in bounds; otherwise the
// flat fallback (P / N, P % N) keeps the exact meaning of the original linear index.

#include "core/frontend/cudalift/IndexMath.h"
#include "core/frontend/cudalift/ThreadSpace.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// Splits a flat index over a row-major shape into one index per dimension, assigning each term
/// to the outermost dimension whose stride divides it. Empty when a stride is not a single term.
std::vector<IntPoly> splitByStrides(const IntPoly &index, const std::vector<IntPoly> &dims);

/// Whether every per-dimension index is provably within [0, extent) under the current ranges/facts.
bool inBounds(const std::vector<IntPoly> &perDim, const std::vector<IntPoly> &dims, IndexMath &math);

/// How a store's flat index maps onto output dimensions: dimension d is vars[d] + offsets[d], or
/// the constant offsets[d] when vars[d] is empty (thread 0 writing c[0]).
struct WriteMapping {
    std::vector<std::string> vars;
    std::vector<IntPoly> offsets;
};
std::optional<WriteMapping> writeMapping(const FlatOp &op, const std::vector<IntPoly> &dims, IndexMath &math);

/// Declares the ranges of an op's spatial and reduction variables in math.
void declareOpRanges(const FlatOp &op, IndexMath &math);

/// Calls onRead for every read in e with the facts (select conditions) that hold at the read
/// pushed into math; returns e with each read replaced by onRead's result.
ir::Expr rewriteReads(const ir::Expr &e, IndexMath &math, const std::function<ir::Expr(const ir::Expr &)> &onRead);

/// The chosen shape of each buffer some lifted op touches, by buffer index.
using ShapeMap = std::map<int, std::vector<ir::Expr>>;

/// The multi-dimensional shapes the allocations state, factor order as written (M * K -> [M, K]).
ShapeMap allocationShapes(const std::vector<BufferInfo> &buffers, IndexMath &math);

/// Picks each buffer's shape from the orderings of its allocation factors. `fixed` shapes are kept.
/// Launches whose stores no candidate can express are reported in `unexpressible`.
ShapeMap chooseShapes(const std::vector<BufferInfo> &buffers, const std::vector<LaunchOps *> &launches,
                      IndexMath &math, const ShapeMap &fixed, std::vector<std::size_t> &unexpressible);

/// Splits a spatial variable v over [0, A * B) that the launch uses as v / B or v % B into two
/// variables (the way a kernel decodes `c = idx / H; h = idx % H`). Returns whether it did.
bool splitDivModVars(LaunchOps &launch, IndexMath &math);

/// Where a launch's store writes a multi-dimensional buffer through one thread index spanning all
/// of it, replaces that index by one variable per dimension in every op of the launch (so
/// `idx / N` becomes `i`). Returns the buffers whose shape was used this way.
std::vector<int> splitLaunchVars(LaunchOps &launch, const ShapeMap &shapes, IndexMath &math);

/// The per-dimension indices of a flat read: the decomposition when it is in bounds, else the
/// exact fallback (P / stride) % extent. A scalar (empty shape) has no indices.
std::vector<ir::Expr> flatIndices(const ir::Expr &flat, const std::vector<ir::Expr> &shape, IndexMath &math);

} // namespace stitch::frontend::cudalift
