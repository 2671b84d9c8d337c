#include "core/ir/DType.h"

#include <string>
#include <utility>

namespace stitch::ir {

const char *dtypeName(DType type)
{
    switch (type) {
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::Bool: return "bool";
    }
    return "unknown";
}

const char *dtypeShortName(DType type)
{
    switch (type) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
    }
    return "unknown";
}

const char *cudaTypeName(DType type)
{
    switch (type) {
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::F16: return "__half";
    case DType::BF16: return "__nv_bfloat16";
    case DType::I32: return "int";
    case DType::I64: return "long long";
    case DType::Bool: return "bool";
    }
    return "void";
}

int dtypeSize(DType type)
{
    switch (type) {
    case DType::F64:
    case DType::I64:
        return 8;
    case DType::F32:
    case DType::I32:
        return 4;
    case DType::F16:
    case DType::BF16:
        return 2;
    case DType::Bool:
        return 1;
    }
    return 0;
}

bool isFloat(DType type)
{
    return type == DType::F32 || type == DType::F64 || type == DType::F16 || type == DType::BF16;
}

bool isInteger(DType type)
{
    return type == DType::I32 || type == DType::I64;
}

namespace {

int promotionRank(DType type)
{
    switch (type) {
    case DType::Bool: return 0;
    case DType::I32: return 1;
    case DType::I64: return 2;
    case DType::F16:
    case DType::BF16:
        return 3;
    case DType::F32: return 4;
    case DType::F64: return 5;
    }
    return 0;
}

} // namespace

DType promoteTypes(DType a, DType b)
{
    if (a == b)
        return a;
    // Neither half type can represent the other exactly, so they meet in the next wider float.
    if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16))
        return DType::F32;
    return promotionRank(a) >= promotionRank(b) ? a : b;
}

Result<DType> parseDType(std::string_view name)
{
    static const std::pair<std::string_view, DType> names[] = {
        {"float32", DType::F32}, {"f32", DType::F32}, {"float", DType::F32},
        {"float64", DType::F64}, {"f64", DType::F64}, {"double", DType::F64},
        {"float16", DType::F16}, {"f16", DType::F16}, {"half", DType::F16}, {"__half", DType::F16},
        {"bfloat16", DType::BF16}, {"bf16", DType::BF16}, {"__nv_bfloat16", DType::BF16},
        {"nv_bfloat16", DType::BF16},
        {"int32", DType::I32}, {"i32", DType::I32}, {"int", DType::I32}, {"int32_t", DType::I32},
        {"int64", DType::I64}, {"i64", DType::I64}, {"long long", DType::I64},
        {"int64_t", DType::I64},
        {"bool", DType::Bool},
    };
    for (const auto &[spelling, type] : names) {
        if (spelling == name)
            return type;
    }
    return makeError(ErrorKind::Parse, "unknown element type '" + std::string(name) + "'");
}

} // namespace stitch::ir
