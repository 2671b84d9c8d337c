#include "core/ir/ExprUtil.h"

#include <algorithm>

namespace stitch::ir {

void visitExpr(const Expr &expr, const std::function<void(const Expr &)> &visitor)
{
    if (!expr.defined())
        return;
    visitor(expr);
    for (const Expr &operand : expr.operands())
        visitExpr(operand, visitor);
}

namespace {

std::vector<std::string> collectNames(const Expr &expr, ExprKind kind)
{
    std::vector<std::string> names;
    visitExpr(expr, [&](const Expr &e) {
        if (e.kind() == kind && std::find(names.begin(), names.end(), e.name()) == names.end())
            names.push_back(e.name());
    });
    return names;
}

Expr rebuild(const Expr &original, std::vector<Expr> operands)
{
    switch (original.kind()) {
    case ExprKind::Read:
        return read(original.tensor(), std::move(operands));
    case ExprKind::Unary:
        return unary(original.unaryOp(), std::move(operands[0]));
    case ExprKind::Binary:
        return binary(original.binaryOp(), std::move(operands[0]), std::move(operands[1]));
    case ExprKind::Select:
        return select(std::move(operands[0]), std::move(operands[1]), std::move(operands[2]));
    case ExprKind::Cast:
        return cast(original.dtype(), std::move(operands[0]));
    default:
        return original; // leaves have no operands to replace
    }
}

} // namespace

std::vector<std::string> collectIterVars(const Expr &expr)
{
    return collectNames(expr, ExprKind::IterVar);
}

std::vector<std::string> collectSizeVars(const Expr &expr)
{
    return collectNames(expr, ExprKind::SizeVar);
}

std::vector<Expr> collectReads(const Expr &expr)
{
    std::vector<Expr> reads;
    visitExpr(expr, [&](const Expr &e) {
        if (e.kind() == ExprKind::Read)
            reads.push_back(e);
    });
    return reads;
}

std::optional<OnePlusErf> matchOnePlusErf(const Expr &e)
{
    if (!e.defined() || e.kind() != ExprKind::Binary || e.dtype() != DType::F32 ||
        (e.binaryOp() != BinaryOp::Add && e.binaryOp() != BinaryOp::Sub))
        return std::nullopt;
    auto one = [](const Expr &x) {
        return (x.kind() == ExprKind::FloatConst && x.floatValue() == 1.0) ||
               (x.kind() == ExprKind::IntConst && x.intValue() == 1);
    };
    auto erf = [](const Expr &x) {
        return x.kind() == ExprKind::Unary && x.unaryOp() == UnaryOp::Erf && x.operand(0).dtype() == DType::F32;
    };
    const Expr &l = e.operand(0), &r = e.operand(1);
    if (one(l) && erf(r))
        return OnePlusErf{r.operand(0), e.binaryOp() == BinaryOp::Sub};
    if (e.binaryOp() == BinaryOp::Add && erf(l) && one(r))
        return OnePlusErf{l.operand(0), false};
    return std::nullopt;
}

bool hasUndefined(const Expr &expr)
{
    if (!expr.defined())
        return true;
    return std::any_of(expr.operands().begin(), expr.operands().end(),
                       [](const Expr &operand) { return hasUndefined(operand); });
}

Expr substitute(const Expr &expr, const std::map<std::string, Expr> &replacements)
{
    if (!expr.defined())
        return expr;
    if (expr.kind() == ExprKind::IterVar) {
        auto it = replacements.find(expr.name());
        return it != replacements.end() ? it->second : expr;
    }
    if (expr.operands().empty())
        return expr;
    bool changed = false;
    std::vector<Expr> operands;
    operands.reserve(expr.operands().size());
    for (const Expr &operand : expr.operands()) {
        operands.push_back(substitute(operand, replacements));
        changed = changed || !operands.back().sameAs(operand);
    }
    return changed ? rebuild(expr, std::move(operands)) : expr;
}

} // namespace stitch::ir
