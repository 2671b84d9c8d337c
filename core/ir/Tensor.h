#pragma once
// Tensors of the IR: named, typed, shaped buffers that ops read and write.
//   GraphBuilder / frontend (kernel parameters) -> Tensor -> Graph -> Interpreter buffers, codegen
// A Tensor is a plain description; the Graph that owns it assigns its id.

#include "core/ir/DType.h"
#include "core/ir/Expr.h"
#include "core/ir/Shape.h"

#include <string>
#include <utility>
#include <vector>

namespace stitch::ir {

/// How a tensor relates to the outside of the graph.
enum class TensorRole {
    Input,        ///< provided by the caller, never written
    Output,       ///< written by exactly one op and returned to the caller
    Intermediate, ///< written by one op and read by others; a fusion may keep it on chip
};

/// "input", "output", "intermediate".
const char *tensorRoleName(TensorRole role);

struct Tensor {
    TensorId id = -1;
    std::string name;
    DType dtype = DType::F32;
    Shape shape;
    TensorRole role = TensorRole::Input;

    int rank() const { return shape.rank(); }
    TensorRef ref() const { return TensorRef{id, name, dtype}; }

    /// A read of this tensor: A(i, k) is the expression A[i, k]. Numbers become constants.
    template <typename... Index>
    Expr operator()(Index &&...indices) const
    {
        return read(ref(), std::vector<Expr>{Expr(std::forward<Index>(indices))...});
    }
    /// A read with an index list built at run time, e.g. by the frontend.
    Expr at(std::vector<Expr> indices) const { return read(ref(), std::move(indices)); }

    /// "A: float32[M, K]"
    std::string toString() const;
};

} // namespace stitch::ir
