#include "core/ir/Tensor.h"

namespace stitch::ir {

const char *tensorRoleName(TensorRole role)
{
    switch (role) {
    case TensorRole::Input: return "input";
    case TensorRole::Output: return "output";
    case TensorRole::Intermediate: return "intermediate";
    }
    return "unknown";
}

std::string Tensor::toString() const
{
    return name + ": " + dtypeName(dtype) + shape.toString();
}

} // namespace stitch::ir
