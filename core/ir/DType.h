#pragma once
// Element types of IR tensors and expressions.
//   CUDA parameter types / user text -> parseDType -> DType -> Tensor, Expr typing, codegen type names
// The CPU interpreter evaluates every type in double precision; DType decides integer vs float rules.

#include "core/common/Result.h"

#include <string_view>

namespace stitch::ir {

/// Element type of a tensor or of an expression's value.
enum class DType { F32, F64, F16, BF16, I32, I64, Bool };

/// Canonical name, stable for text and JSON: "float32", "float64", "float16", "bfloat16",
/// "int32", "int64", "bool".
const char *dtypeName(DType type);

/// Short name used in compact listings: "f32", "f64", "f16", "bf16", "i32", "i64", "bool".
const char *dtypeShortName(DType type);

/// The CUDA C++ spelling of the type, as generated kernels declare it ("float", "__half", ...).
const char *cudaTypeName(DType type);

/// Storage size of one element in bytes (bool is one byte, as in CUDA).
int dtypeSize(DType type);

bool isFloat(DType type);
bool isInteger(DType type); ///< I32 and I64; Bool is neither integer nor float

/// The type of a binary arithmetic result, following C's usual conversions in spirit:
/// any float beats any integer, wider beats narrower, and F16 with BF16 meet in F32.
DType promoteTypes(DType a, DType b);

/// Accepts the canonical name, the short name and the C/CUDA spellings
/// ("float", "double", "half", "__half", "__nv_bfloat16", "int", "long long", "int64_t", ...).
Result<DType> parseDType(std::string_view name);

} // namespace stitch::ir
