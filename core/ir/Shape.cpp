#include "core/ir/Shape.h"

#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <cmath>

namespace stitch::ir {

namespace {

// Sizes beyond this are surely a mistake, and staying below it keeps int64 products exact.
constexpr double kSizeLimit = 4611686018427387904.0; // 2^62

Error sizeError(const Expr &expr, const std::string &why)
{
    return makeError(ErrorKind::InvalidArgument, "cannot evaluate size '" + expr.toString() + "': " + why);
}

Result<std::int64_t> checked(const Expr &expr, double value)
{
    if (!(std::fabs(value) < kSizeLimit))
        return sizeError(expr, "value out of range");
    return static_cast<std::int64_t>(value);
}

} // namespace

Result<std::int64_t> evaluateSizeExpr(const Expr &expr, const SizeBindings &sizes)
{
    if (!expr.defined())
        return makeError(ErrorKind::InvalidArgument, "cannot evaluate an undefined size expression");
    switch (expr.kind()) {
    case ExprKind::IntConst:
        return expr.intValue();
    case ExprKind::SizeVar: {
        auto it = sizes.find(expr.name());
        if (it == sizes.end())
            return makeError(ErrorKind::InvalidArgument, "size variable '" + expr.name() + "' is not bound");
        return it->second;
    }
    case ExprKind::Cast: {
        if (!isInteger(expr.dtype()))
            return sizeError(expr, "cast to a non-integer type");
        return evaluateSizeExpr(expr.operand(0), sizes);
    }
    case ExprKind::Unary: {
        if (expr.unaryOp() != UnaryOp::Neg)
            return sizeError(expr, std::string("'") + unaryOpName(expr.unaryOp()) + "' is not an integer size operation");
        auto a = evaluateSizeExpr(expr.operand(0), sizes);
        if (!a)
            return a;
        return -*a;
    }
    case ExprKind::Binary: {
        auto a = evaluateSizeExpr(expr.operand(0), sizes);
        if (!a)
            return a;
        auto b = evaluateSizeExpr(expr.operand(1), sizes);
        if (!b)
            return b;
        const std::int64_t x = *a;
        const std::int64_t y = *b;
        switch (expr.binaryOp()) {
        case BinaryOp::Add: return checked(expr, static_cast<double>(x) + static_cast<double>(y));
        case BinaryOp::Sub: return checked(expr, static_cast<double>(x) - static_cast<double>(y));
        case BinaryOp::Mul: {
            auto range = checked(expr, static_cast<double>(x) * static_cast<double>(y));
            if (!range)
                return range;
            return x * y; // exact: the double check proved it fits
        }
        case BinaryOp::Min: return std::min(x, y);
        case BinaryOp::Max: return std::max(x, y);
        // Comparisons give 1 or 0 as in C, for the conditions of select (a stream-K grid's tile rule).
        case BinaryOp::Lt: return std::int64_t{x < y};
        case BinaryOp::Le: return std::int64_t{x <= y};
        case BinaryOp::Gt: return std::int64_t{x > y};
        case BinaryOp::Ge: return std::int64_t{x >= y};
        case BinaryOp::Eq: return std::int64_t{x == y};
        case BinaryOp::Ne: return std::int64_t{x != y};
        case BinaryOp::Div:
        case BinaryOp::Mod:
        case BinaryOp::FloorDiv: {
            if (y == 0)
                return sizeError(expr, "division by zero");
            if (expr.binaryOp() == BinaryOp::Div)
                return x / y;
            if (expr.binaryOp() == BinaryOp::Mod)
                return x % y;
            std::int64_t q = x / y;
            if ((x % y != 0) && ((x < 0) != (y < 0)))
                --q;
            return q;
        }
        default:
            return sizeError(expr, std::string("'") + binaryOpName(expr.binaryOp()) + "' is not an integer size operation");
        }
    }
    case ExprKind::IterVar:
        return sizeError(expr, "uses iteration variable '" + expr.name() + "'");
    case ExprKind::FloatConst:
        return sizeError(expr, "floating-point constant");
    case ExprKind::Read:
        return sizeError(expr, "reads tensor '" + expr.tensor().name + "'");
    case ExprKind::Select: { // only the chosen branch is evaluated, as in C
        auto c = evaluateSizeExpr(expr.operand(0), sizes);
        if (!c)
            return c;
        return evaluateSizeExpr(expr.operand(*c != 0 ? 1 : 2), sizes);
    }
    }
    return sizeError(expr, "unsupported expression");
}

bool Shape::isConcrete() const
{
    return std::all_of(m_dims.begin(), m_dims.end(), [](const Expr &dim) {
        return dim.defined() && dim.kind() == ExprKind::IntConst;
    });
}

std::vector<std::string> Shape::sizeVars() const
{
    std::vector<std::string> names;
    for (const Expr &dim : m_dims) {
        for (std::string &name : collectSizeVars(dim)) {
            if (std::find(names.begin(), names.end(), name) == names.end())
                names.push_back(std::move(name));
        }
    }
    return names;
}

Result<std::vector<std::int64_t>> Shape::evaluate(const SizeBindings &sizes) const
{
    std::vector<std::int64_t> extents;
    extents.reserve(m_dims.size());
    for (const Expr &dim : m_dims) {
        auto extent = evaluateSizeExpr(dim, sizes);
        if (!extent)
            return extent.error();
        if (*extent < 0) {
            return makeError(ErrorKind::InvalidArgument,
                             "dimension '" + dim.toString() + "' is negative (" + std::to_string(*extent) + ")");
        }
        extents.push_back(*extent);
    }
    return extents;
}

bool Shape::equals(const Shape &other) const
{
    return std::equal(m_dims.begin(), m_dims.end(), other.m_dims.begin(), other.m_dims.end(),
                      [](const Expr &a, const Expr &b) { return a.equals(b); });
}

std::string Shape::toString() const
{
    std::string text = "[";
    for (std::size_t i = 0; i < m_dims.size(); ++i) {
        if (i > 0)
            text += ", ";
        text += m_dims[i].toString();
    }
    return text + "]";
}

std::int64_t elementCount(const std::vector<std::int64_t> &extents)
{
    std::int64_t count = 1;
    for (std::int64_t extent : extents)
        count *= extent;
    return count;
}

std::vector<std::int64_t> rowMajorStrides(const std::vector<std::int64_t> &extents)
{
    std::vector<std::int64_t> strides(extents.size(), 1);
    for (std::size_t d = extents.size(); d-- > 1;)
        strides[d - 1] = strides[d] * extents[d];
    return strides;
}

} // namespace stitch::ir
