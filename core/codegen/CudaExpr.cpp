#include "core/codegen/CudaExpr.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>

namespace stitch::codegen {

using ir::BinaryOp;
using ir::DType;
using ir::Expr;
using ir::ExprKind;
using ir::UnaryOp;

std::string cIdentifier(const std::string &name)
{
    static const std::set<std::string> reserved = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
        "float", "for", "goto", "if", "inline", "int", "long", "register", "return", "short", "signed", "sizeof",
        "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true",
        "false", "class", "delete", "new", "this", "template", "typename", "namespace", "operator", "private",
        "public", "protected", "virtual", "friend", "using", "threadIdx", "blockIdx", "blockDim", "gridDim",
        "warpSize", "max", "min", "abs", "exp", "log", "sqrt", "float2", "float4", "half"};
    std::string out;
    for (char c : name)
        out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
        out = "t_" + out;
    // Generated locals end in '_' (acc_, row_): a user name never does after this.
    if (reserved.contains(out) || out.back() == '_')
        out += "x";
    return out;
}

std::string floatLiteral(double value, DType type)
{
    const bool single = type != DType::F64;
    if (std::isnan(value))
        return single ? "__int_as_float(0x7fffffff)" : "__longlong_as_double(0x7fffffffffffffffLL)";
    if (std::isinf(value)) {
        if (single)
            return value > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
        return value > 0 ? "__longlong_as_double(0x7ff0000000000000LL)" : "__longlong_as_double(0xfff0000000000000LL)";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", value);
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos)
        s += ".0";
    return single ? s + "f" : s;
}

namespace {

bool singleFloat(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

std::string fn(const char *name, DType t) { return singleFloat(t) ? std::string(name) + "f" : std::string(name); }

std::string paren(const std::string &s) { return "(" + s + ")"; }

const std::string kLog2e = "1.44269504f"; // log2(e) as a float, for exp=fast

} // namespace

std::string combine(ir::ReduceKind kind, DType type, const std::string &acc, const std::string &value)
{
    const bool fl = ir::isFloat(type);
    switch (kind) {
    case ir::ReduceKind::Sum: return acc + " + " + paren(value);
    case ir::ReduceKind::Prod: return acc + " * " + paren(value);
    case ir::ReduceKind::Max: return (fl ? fn("fmax", type) : std::string("max")) + "(" + acc + ", " + value + ")";
    case ir::ReduceKind::Min: return (fl ? fn("fmin", type) : std::string("min")) + "(" + acc + ", " + value + ")";
    }
    return acc;
}

std::string reductionIdentityLiteral(ir::ReduceKind kind, DType type)
{
    if (ir::isFloat(type)) {
        switch (kind) {
        case ir::ReduceKind::Sum: return floatLiteral(0.0, type);
        case ir::ReduceKind::Prod: return floatLiteral(1.0, type);
        case ir::ReduceKind::Max: return floatLiteral(-std::numeric_limits<double>::infinity(), type);
        case ir::ReduceKind::Min: return floatLiteral(std::numeric_limits<double>::infinity(), type);
        }
    }
    const bool wide = type == DType::I64;
    switch (kind) {
    case ir::ReduceKind::Sum: return "0";
    case ir::ReduceKind::Prod: return "1";
    case ir::ReduceKind::Max: return wide ? "(-9223372036854775807LL - 1)" : "(-2147483647 - 1)";
    case ir::ReduceKind::Min: return wide ? "9223372036854775807LL" : "2147483647";
    }
    return "0";
}

std::vector<ir::TensorId> wideTensors(const ir::Graph &graph, const ir::SizeBindings &sizes)
{
    std::vector<ir::TensorId> out;
    for (const auto &t : graph.tensors()) {
        auto extents = t.shape.evaluate(sizes);
        if (!extents.ok() || ir::elementCount(*extents) >= (std::int64_t(1) << 31))
            out.push_back(t.id);
    }
    return out;
}

std::string emitGlobalAccess(const ir::Tensor &tensor, const std::vector<std::string> &indices, const ExprScope &scope)
{
    const bool wide = scope.wideTensors &&
                      std::find(scope.wideTensors->begin(), scope.wideTensors->end(), tensor.id) != scope.wideTensors->end();
    std::string index;
    if (indices.empty()) {
        index = "0";
    } else {
        index = wide ? "(long long)" + paren(indices[0]) : paren(indices[0]);
        for (std::size_t d = 1; d < indices.size(); ++d)
            index = paren(index + " * " + paren(emitExpr(tensor.shape[d], scope)) + " + " + paren(indices[d]));
    }
    return cIdentifier(tensor.name) + "[" + index + "]";
}

std::string emitExpDifference(const std::string &a, const std::string &b, bool fast)
{
    if (!fast)
        return "expf(" + a + " - " + b + ")";
    return "stitch_ex2_ftz_(fmaf(" + a + ", " + kLog2e + ", " + b + " * -" + kLog2e + "))";
}

std::string fastExpHelper()
{
    return "#ifndef STITCH_EX2_FTZ_\n"
           "#define STITCH_EX2_FTZ_\n"
           "// exp=fast: 2^x by the hardware's approximation (2 ulp; results below 2^-126 flush to zero).\n"
           "static __device__ __forceinline__ float stitch_ex2_ftz_(float x)\n"
           "{\n"
           "    float y;\n"
           "    asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x));\n"
           "    return y;\n"
           "}\n"
           "#endif\n";
}

std::string erf1pHelper()
{
    return "#ifndef STITCH_ERF1P_\n"
           "#define STITCH_ERF1P_\n"
           "// erf=erfc: 1 + erf(z) = erfc(-z), with erfc(|z|) = t exp(-z^2 + P(t)), t = 1 / (1 + |z| / 2)\n"
           "// (Numerical Recipes' erfcc, relative error < 1.2e-7; here within 6e-7 for z >= -2 and 1.7e-6 for\n"
           "// z >= -4, with the approximate reciprocal and exponential); 2 - erfc(z) for z >= 0. No cancellation.\n"
           "static __device__ __forceinline__ float stitch_erf1p_(float z)\n"
           "{\n"
           "    const float a = fabsf(z);\n"
           "    float t, e;\n"
           "    asm(\"rcp.approx.ftz.f32 %0, %1;\" : \"=f\"(t) : \"f\"(fmaf(a, 0.5f, 1.0f)));\n"
           "    float p = fmaf(t, 0.17087277f, -0.82215223f);\n"
           "    p = fmaf(p, t, 1.48851587f);\n"
           "    p = fmaf(p, t, -1.13520398f);\n"
           "    p = fmaf(p, t, 0.27886807f);\n"
           "    p = fmaf(p, t, -0.18628806f);\n"
           "    p = fmaf(p, t, 0.09678418f);\n"
           "    p = fmaf(p, t, 0.37409196f);\n"
           "    p = fmaf(p, t, 1.00002368f);\n"
           "    p = fmaf(p, t, -1.26551223f);\n"
           "    asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(e) : \"f\"(fmaf(-a, a, p) * " + kLog2e + "));\n"
           "    const float c = t * e; // erfc(|z|)\n"
           "    return z < 0.0f ? c : 2.0f - c;\n"
           "}\n"
           "#endif\n";
}

std::string deviceHelpers(const ExprScope &scope)
{
    return (scope.fastExp ? fastExpHelper() : std::string()) + (scope.erfc ? erf1pHelper() : std::string());
}

std::string emitExpr(const Expr &e, const ExprScope &scope)
{
    const DType t = e.dtype();
    switch (e.kind()) {
    case ExprKind::IntConst:
        if (t == DType::Bool)
            return e.intValue() ? "true" : "false";
        return t == DType::I64 ? std::to_string(e.intValue()) + "LL"
                               : (e.intValue() < 0 ? paren(std::to_string(e.intValue())) : std::to_string(e.intValue()));
    case ExprKind::FloatConst: return floatLiteral(e.floatValue(), t);
    case ExprKind::IterVar: {
        auto it = scope.vars.find(e.name());
        if (it == scope.vars.end())
            throw std::runtime_error("iteration variable '" + e.name() + "' has no value in this kernel");
        return paren(it->second);
    }
    case ExprKind::SizeVar: return scope.wideSizes ? "(long long)" + cIdentifier(e.name()) : cIdentifier(e.name());
    case ExprKind::Read: {
        if (scope.local)
            if (auto v = scope.local(e, scope))
                return *v;
        const ir::Tensor *tensor = scope.graph ? scope.graph->tensor(e.tensor().id) : nullptr;
        if (!tensor)
            throw std::runtime_error("read of unknown tensor " + e.tensor().name);
        std::vector<std::string> idx;
        for (const Expr &i : e.operands())
            idx.push_back(emitExpr(i, scope));
        return emitGlobalAccess(*tensor, idx, scope);
    }
    case ExprKind::Unary: {
        const std::string a = emitExpr(e.operand(0), scope);
        const DType at = e.operand(0).dtype();
        const bool fl = ir::isFloat(at);
        switch (e.unaryOp()) {
        case UnaryOp::Neg: return paren("-" + a);
        case UnaryOp::Abs: return fl ? fn("fabs", at) + paren(a) : "abs" + paren(a);
        case UnaryOp::Exp:
            if (scope.fastExp && at == DType::F32) {
                const Expr &x = e.operand(0);
                if (x.kind() == ExprKind::Binary && x.binaryOp() == BinaryOp::Sub)
                    return emitExpDifference(emitExpr(x.operand(0), scope), emitExpr(x.operand(1), scope), true);
                return "stitch_ex2_ftz_(" + a + " * " + kLog2e + ")";
            }
            return fn("exp", at) + paren(a);
        case UnaryOp::Log: return fn("log", at) + paren(a);
        case UnaryOp::Sqrt: return fn("sqrt", at) + paren(a);
        case UnaryOp::Rsqrt: return fn("rsqrt", at) + paren(a);
        case UnaryOp::Tanh: return fn("tanh", at) + paren(a);
        case UnaryOp::Sigmoid:
            return paren(floatLiteral(1.0, at) + " / (" + floatLiteral(1.0, at) + " + " + fn("exp", at) + "(-" + a + "))");
        case UnaryOp::Erf: return fn("erf", at) + paren(a);
        case UnaryOp::Relu:
            return fl ? fn("fmax", at) + "(" + a + ", " + floatLiteral(0.0, at) + ")" : "max(" + a + ", 0)";
        case UnaryOp::Floor: return fl ? fn("floor", at) + paren(a) : a;
        case UnaryOp::Ceil: return fl ? fn("ceil", at) + paren(a) : a;
        case UnaryOp::Sin: return fn("sin", at) + paren(a);
        case UnaryOp::Cos: return fn("cos", at) + paren(a);
        case UnaryOp::Not: return paren("!" + a);
        }
        break;
    }
    case ExprKind::Binary: {
        if (scope.erfc)
            if (auto m = ir::matchOnePlusErf(e)) {
                const std::string z = emitExpr(m->z, scope);
                return "stitch_erf1p_(" + (m->negated ? "-" + paren(z) : z) + ")";
            }
        const std::string a = emitExpr(e.operand(0), scope), b = emitExpr(e.operand(1), scope);
        const bool fl = ir::isFloat(t);
        switch (e.binaryOp()) {
        case BinaryOp::Add: return paren(a + " + " + b);
        case BinaryOp::Sub: return paren(a + " - " + b);
        case BinaryOp::Mul: return paren(a + " * " + b);
        case BinaryOp::Div: return paren(a + " / " + b);
        case BinaryOp::Mod: return fl ? fn("fmod", t) + "(" + a + ", " + b + ")" : paren(a + " % " + b);
        case BinaryOp::FloorDiv:
            return fl ? fn("floor", t) + "(" + a + " / " + b + ")" : "stitch_floordiv(" + a + ", " + b + ")";
        // 64-bit host sizes: both sides long long, or min(int, long long) is ambiguous under nvcc.
        case BinaryOp::Min:
            if (!fl && scope.wideSizes)
                return "min((long long)" + paren(a) + ", (long long)" + paren(b) + ")";
            return (fl ? fn("fmin", t) : std::string("min")) + "(" + a + ", " + b + ")";
        case BinaryOp::Max:
            if (!fl && scope.wideSizes)
                return "max((long long)" + paren(a) + ", (long long)" + paren(b) + ")";
            return (fl ? fn("fmax", t) : std::string("max")) + "(" + a + ", " + b + ")";
        case BinaryOp::Pow: return fn("pow", t) + "(" + a + ", " + b + ")";
        case BinaryOp::Lt: return paren(a + " < " + b);
        case BinaryOp::Le: return paren(a + " <= " + b);
        case BinaryOp::Gt: return paren(a + " > " + b);
        case BinaryOp::Ge: return paren(a + " >= " + b);
        case BinaryOp::Eq: return paren(a + " == " + b);
        case BinaryOp::Ne: return paren(a + " != " + b);
        case BinaryOp::And: return paren(a + " && " + b);
        case BinaryOp::Or: return paren(a + " || " + b);
        }
        break;
    }
    case ExprKind::Select:
        return paren(emitExpr(e.operand(0), scope) + " ? " + emitExpr(e.operand(1), scope) + " : " +
                     emitExpr(e.operand(2), scope));
    case ExprKind::Cast: return "((" + std::string(ir::cudaTypeName(t)) + ")" + paren(emitExpr(e.operand(0), scope)) + ")";
    }
    throw std::runtime_error("expression kind the code generator does not know");
}

} // namespace stitch::codegen
