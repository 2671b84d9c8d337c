#pragma once
// Tensor shapes as lists of dimension expressions over size variables (M, N, K) and constants.
//   GraphBuilder / frontend -> Shape -> Tensor -> Shape::evaluate(SizeBindings) -> Interpreter, runner
// A shape stays symbolic in the graph; concrete sizes exist only for one run's bindings.

#include "core/common/Result.h"
#include "core/ir/Expr.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace stitch::ir {

/// Values of size variables for one run, by name: {"M", 128}, {"N", 64}.
using SizeBindings = std::map<std::string, std::int64_t, std::less<>>;

/// Evaluates an integer expression built from constants, size variables and integer arithmetic
/// (+, -, *, /, %, //, min, max, negation, casts to integer types) and select over comparisons
/// (C's 1 / 0; only the chosen branch is evaluated). Anything else, an unbound
/// size variable, a division by zero or a value beyond 2^62 is an InvalidArgument error.
Result<std::int64_t> evaluateSizeExpr(const Expr &expr, const SizeBindings &sizes);

/// Dimensions of a tensor, outermost first (row-major). Rank 0 is a scalar.
class Shape {
public:
    Shape() = default;
    Shape(std::initializer_list<Expr> dims) : m_dims(dims) {}
    explicit Shape(std::vector<Expr> dims) : m_dims(std::move(dims)) {}

    int rank() const { return static_cast<int>(m_dims.size()); }
    const std::vector<Expr> &dims() const { return m_dims; }
    const Expr &operator[](std::size_t index) const { return m_dims.at(index); }

    /// True when every dimension is an integer constant.
    bool isConcrete() const;
    /// Size variables used by the dimensions, each once, in order of first appearance.
    std::vector<std::string> sizeVars() const;
    /// Concrete extents for these bindings; a negative extent is an error.
    Result<std::vector<std::int64_t>> evaluate(const SizeBindings &sizes) const;

    bool equals(const Shape &other) const;
    /// "[M, K]", "[]" for a scalar.
    std::string toString() const;

private:
    std::vector<Expr> m_dims;
};

/// Number of elements of a concrete shape (1 for a scalar).
std::int64_t elementCount(const std::vector<std::int64_t> &extents);

/// Row-major strides of a concrete shape, in elements.
std::vector<std::int64_t> rowMajorStrides(const std::vector<std::int64_t> &extents);

} // namespace stitch::ir
