#include "core/frontend/cudalift/ExprTools.h"

#include <cctype>

#include "core/ir/ExprUtil.h"

namespace stitch::frontend::cudalift {

using ir::BinaryOp;
using ir::Expr;
using ir::ExprKind;

Expr rebuild(const Expr &original, std::vector<Expr> operands)
{
    switch (original.kind()) {
    case ExprKind::Read:
        return ir::read(original.tensor(), std::move(operands));
    case ExprKind::Unary:
        return ir::unary(original.unaryOp(), std::move(operands[0]));
    case ExprKind::Binary:
        return ir::binary(original.binaryOp(), std::move(operands[0]), std::move(operands[1]));
    case ExprKind::Select:
        return ir::select(std::move(operands[0]), std::move(operands[1]), std::move(operands[2]));
    case ExprKind::Cast:
        return ir::cast(original.dtype(), std::move(operands[0]));
    default:
        return original;
    }
}

Expr rewrite(const Expr &expr, const std::function<std::optional<Expr>(const Expr &)> &replace)
{
    if (!expr.defined())
        return expr;
    if (auto replaced = replace(expr))
        return *replaced;
    if (expr.operands().empty())
        return expr;
    bool changed = false;
    std::vector<Expr> operands;
    operands.reserve(expr.operands().size());
    for (const Expr &operand : expr.operands()) {
        operands.push_back(rewrite(operand, replace));
        changed = changed || !operands.back().sameAs(operand);
    }
    return changed ? rebuild(expr, std::move(operands)) : expr;
}

bool isBoolConst(const Expr &e, bool value)
{
    return e.defined() && e.kind() == ExprKind::IntConst && e.dtype() == ir::DType::Bool
        && (e.intValue() != 0) == value;
}

std::vector<Expr> conjuncts(const Expr &condition)
{
    std::vector<Expr> out;
    if (!condition.defined() || isBoolConst(condition, true))
        return out;
    if (condition.kind() == ExprKind::Binary && condition.binaryOp() == BinaryOp::And) {
        for (const Expr &side : condition.operands()) {
            auto part = conjuncts(side);
            out.insert(out.end(), part.begin(), part.end());
        }
        return out;
    }
    out.push_back(condition);
    return out;
}

Expr conjunction(const std::vector<Expr> &conditions)
{
    Expr result;
    for (const Expr &c : conditions) {
        if (isBoolConst(c, true))
            continue;
        result = result.defined() ? ir::logicalAnd(result, c) : c;
    }
    return result.defined() ? result : ir::boolConst(true);
}

Expr negateCondition(const Expr &c)
{
    if (c.kind() == ExprKind::IntConst && c.dtype() == ir::DType::Bool)
        return ir::boolConst(c.intValue() == 0);
    if (c.kind() == ExprKind::Unary && c.unaryOp() == ir::UnaryOp::Not)
        return c.operand(0);
    if (c.kind() == ExprKind::Binary) {
        const Expr &a = c.operand(0);
        const Expr &b = c.operand(1);
        switch (c.binaryOp()) {
        case BinaryOp::Lt: return ir::ge(a, b);
        case BinaryOp::Le: return ir::gt(a, b);
        case BinaryOp::Gt: return ir::le(a, b);
        case BinaryOp::Ge: return ir::lt(a, b);
        case BinaryOp::Eq: return ir::ne(a, b);
        case BinaryOp::Ne: return ir::eq(a, b);
        case BinaryOp::And: return ir::logicalOr(negateCondition(a), negateCondition(b));
        case BinaryOp::Or: return ir::logicalAnd(negateCondition(a), negateCondition(b));
        default: break;
        }
    }
    return ir::logicalNot(c);
}

Expr selectOrFold(const Expr &condition, const Expr &thenValue, const Expr &elseValue)
{
    if (isBoolConst(condition, true) || thenValue.sameAs(elseValue))
        return thenValue;
    if (isBoolConst(condition, false))
        return elseValue;
    if (thenValue.equals(elseValue))
        return thenValue;
    return ir::select(condition, thenValue, elseValue);
}

bool mentionsVar(const Expr &expr, const std::string &name)
{
    bool found = false;
    ir::visitExpr(expr, [&](const Expr &e) {
        if (e.kind() == ExprKind::IterVar && e.name() == name)
            found = true;
    });
    return found;
}

bool readsAny(const Expr &expr, const std::function<bool(const ir::TensorRef &)> &pred)
{
    bool found = false;
    ir::visitExpr(expr, [&](const Expr &e) {
        if (!found && e.kind() == ExprKind::Read && pred(e.tensor()))
            found = true;
    });
    return found;
}

std::size_t nodeCount(const Expr &expr, std::size_t limit)
{
    if (!expr.defined())
        return 0;
    std::size_t count = 1;
    for (const Expr &operand : expr.operands()) {
        count += nodeCount(operand, limit);
        if (count > limit)
            return count;
    }
    return count;
}

Expr recognizeIdioms(const Expr &expr)
{
    auto isFloatZero = [](const Expr &e) { return e.kind() == ExprKind::FloatConst && e.floatValue() == 0.0; };
    auto isFloatOne = [](const Expr &e) { return e.kind() == ExprKind::FloatConst && e.floatValue() == 1.0; };
    return rewrite(expr, [&](const Expr &e) -> std::optional<Expr> {
        if (e.kind() == ExprKind::Select) {
            const Expr &c = e.operand(0);
            if (c.kind() == ExprKind::Binary && (c.binaryOp() == BinaryOp::Gt || c.binaryOp() == BinaryOp::Ge)
                && isFloatZero(c.operand(1)) && c.operand(0).equals(e.operand(1)) && isFloatZero(e.operand(2)))
                return ir::relu(recognizeIdioms(e.operand(1)));
        }
        if (e.kind() == ExprKind::Binary && e.binaryOp() == BinaryOp::Div && isFloatOne(e.operand(0))) {
            const Expr &d = e.operand(1);
            if (d.kind() == ExprKind::Binary && d.binaryOp() == BinaryOp::Add && isFloatOne(d.operand(0))
                && d.operand(1).kind() == ExprKind::Unary && d.operand(1).unaryOp() == ir::UnaryOp::Exp) {
                const Expr &arg = d.operand(1).operand(0);
                if (arg.kind() == ExprKind::Unary && arg.unaryOp() == ir::UnaryOp::Neg)
                    return ir::sigmoid(recognizeIdioms(arg.operand(0)));
            }
        }
        return std::nullopt;
    });
}

Expr convertTo(const Expr &value, ir::DType type)
{
    const ir::DType from = value.dtype();
    if (from == type)
        return value;
    if (value.kind() == ExprKind::IntConst && from != ir::DType::Bool) {
        if (ir::isFloat(type))
            return ir::floatConst(static_cast<double>(value.intValue()), type);
        if (ir::isInteger(type))
            return ir::intConst(value.intValue(), type);
    }
    if (value.kind() == ExprKind::FloatConst && ir::isFloat(type))
        return ir::floatConst(value.floatValue(), type);
    if ((ir::isFloat(from) && ir::isFloat(type)) || (ir::isInteger(from) && ir::isInteger(type)))
        return value;
    return ir::cast(type, value);
}

std::string identifierFrom(std::string_view text)
{
    std::string out;
    for (char c : text) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_')
            out += c;
        else if (!out.empty() && out.back() != '_')
            out += '_';
    }
    while (!out.empty() && out.back() == '_')
        out.pop_back();
    return out;
}

} // namespace stitch::frontend::cudalift
