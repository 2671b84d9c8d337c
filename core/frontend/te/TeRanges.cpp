// .te index ranges: reduction ranges inferred from bare uses (A[i, k] gives k the extent of A's
// dimension 1) and the shape check that every bare index ranges over the dimension it indexes.
#include "core/frontend/te/TeParser.h"

namespace stitch::frontend::te {

namespace {

std::string rangeText(const IndexVar &var)
{
    return "[" + var.lower.toString() + ", " + var.upper.toString() + ")";
}

} // namespace

std::optional<std::int64_t> Parser::evaluateConstant(const ir::Expr &expr) const
{
    auto value = ir::evaluateSizeExpr(expr, m_bindings);
    if (!value)
        return std::nullopt;
    return *value;
}

bool Parser::fitsDimension(const IndexVar &var, const ir::Expr &extent) const
{
    const bool nonNegativeStart = var.lower.kind() == ir::ExprKind::IntConst && var.lower.intValue() >= 0;
    if (nonNegativeStart && var.upper.equals(extent))
        return true;
    const auto lower = evaluateConstant(var.lower);
    const auto upper = evaluateConstant(var.upper);
    const auto size = evaluateConstant(extent);
    if (lower && upper && size)
        return *upper <= *lower || (*lower >= 0 && *upper <= *size); // an empty range reads nothing
    // An explicit reduction range such as `k < i + 1` cannot be proven in bounds here; the
    // interpreter checks every read when the program runs.
    return var.reduction && var.explicitRange;
}

void Parser::inferAndCheckRanges()
{
    for (IndexVar &var : m_vars) {
        if (!var.reduction || var.explicitRange)
            continue;
        const BareUse *first = nullptr;
        for (const BareUse &use : m_bareUses) {
            if (use.var == var.name) {
                first = &use;
                break;
            }
        }
        if (!first) {
            fail(var.location, "reduction variable '" + var.name + "' is not bound: its range is inferred from an index that is"
                                   " exactly '" + var.name + "' (as in X[" + var.name + "]) and there is none; give it a range,"
                                   " as in " + var.name + " < EXTENT");
        }
        var.lower = ir::intConst(0);
        var.upper = first->extent;
        var.origin = "dimension " + std::to_string(first->dimension) + " of '" + first->tensor + "' at "
            + position(first->location);
    }
    for (const BareUse &use : m_bareUses) {
        const IndexVar *var = findIndexVar(use.var);
        if (!var || fitsDimension(*var, use.extent))
            continue;
        fail(use.location, "shape mismatch: '" + use.var + "' ranges over " + rangeText(*var) + " (from " + var->origin
                               + ") but indexes dimension " + std::to_string(use.dimension) + " of '" + use.tensor
                               + "', which has extent " + use.extent.toString());
    }
}

void Parser::checkSizeExpression(const Value &value, const std::string &what)
{
    // The operations ir::evaluateSizeExpr accepts; checked here so the mistake is found at its line.
    std::vector<const ir::Expr *> pending{&value.expr};
    while (!pending.empty()) {
        const ir::Expr &e = *pending.back();
        pending.pop_back();
        bool allowed = false;
        switch (e.kind()) {
        case ir::ExprKind::IntConst:
        case ir::ExprKind::SizeVar:
            allowed = true;
            break;
        case ir::ExprKind::Unary:
            allowed = e.unaryOp() == ir::UnaryOp::Neg;
            break;
        case ir::ExprKind::Cast:
            allowed = ir::isInteger(e.dtype());
            break;
        case ir::ExprKind::Binary:
            switch (e.binaryOp()) {
            case ir::BinaryOp::Add:
            case ir::BinaryOp::Sub:
            case ir::BinaryOp::Mul:
            case ir::BinaryOp::Div:
            case ir::BinaryOp::Mod:
            case ir::BinaryOp::FloorDiv:
            case ir::BinaryOp::Min:
            case ir::BinaryOp::Max:
                allowed = true;
                break;
            default:
                break;
            }
            break;
        default:
            break;
        }
        if (!allowed || (e.kind() == ir::ExprKind::IntConst && e.dtype() == ir::DType::Bool)) {
            fail(value.location, what + " may use only integer constants, sizes, + - * / % // and min/max; found '"
                                     + e.toString() + "'");
        }
        for (const ir::Expr &operand : e.operands())
            pending.push_back(&operand);
    }
}

} // namespace stitch::frontend::te
