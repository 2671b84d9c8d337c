// The row kernel's expression rewrites (RowKernelBuilder.h says what each one does).
#include "core/codegen/RowKernelBuilder.h"

#include "core/ir/ExprUtil.h"

namespace stitch::codegen::rowkernel {

std::string stripParens(std::string e)
{
    while (e.size() >= 2 && e.front() == '(' && e.back() == ')') {
        int depth = 0;
        bool wrapsAll = true;
        for (std::size_t i = 0; i + 1 < e.size(); ++i) {
            depth += e[i] == '(' ? 1 : e[i] == ')' ? -1 : 0;
            if (depth == 0) {
                wrapsAll = false;
                break;
            }
        }
        if (!wrapsAll)
            break;
        e = e.substr(1, e.size() - 2);
    }
    return e;
}

std::optional<Expr> invariantDivisor(const ir::ComputeOp &op)
{
    if (op.reduction->kind != ir::ReduceKind::Sum || op.body.kind() != ir::ExprKind::Binary ||
        op.body.binaryOp() != ir::BinaryOp::Div)
        return std::nullopt;
    const ir::DType t = op.output.dtype;
    if ((t != ir::DType::F32 && t != ir::DType::F64) || op.body.dtype() != t)
        return std::nullopt;
    const Expr &d = op.body.operand(1);
    if (!ir::collectReads(d).empty())
        return std::nullopt;
    for (const std::string &v : ir::collectIterVars(d))
        for (const auto &rv : op.reduction->vars)
            if (v == rv.name)
                return std::nullopt;
    return d;
}

Expr reciprocalDivisions(const Expr &e, const std::string &column, std::vector<Expr> &divisors)
{
    auto rebuilt = [&](std::vector<Expr> ops) {
        bool same = true;
        for (std::size_t i = 0; i < ops.size(); ++i)
            same = same && ops[i].sameAs(e.operand(i));
        return same ? std::optional<std::vector<Expr>>{} : std::optional<std::vector<Expr>>{std::move(ops)};
    };
    switch (e.kind()) {
    case ir::ExprKind::Unary:
        if (auto ops = rebuilt({reciprocalDivisions(e.operand(0), column, divisors)}))
            return ir::unary(e.unaryOp(), (*ops)[0]);
        return e;
    case ir::ExprKind::Cast:
        if (auto ops = rebuilt({reciprocalDivisions(e.operand(0), column, divisors)}))
            return ir::cast(e.dtype(), (*ops)[0]);
        return e;
    case ir::ExprKind::Select:
        if (auto ops = rebuilt({reciprocalDivisions(e.operand(0), column, divisors),
                                reciprocalDivisions(e.operand(1), column, divisors),
                                reciprocalDivisions(e.operand(2), column, divisors)}))
            return ir::select((*ops)[0], (*ops)[1], (*ops)[2]);
        return e;
    case ir::ExprKind::Binary: {
        const Expr lhs = reciprocalDivisions(e.operand(0), column, divisors),
                   rhs = reciprocalDivisions(e.operand(1), column, divisors);
        const ir::DType t = e.dtype();
        if (e.binaryOp() == ir::BinaryOp::Div && (t == ir::DType::F32 || t == ir::DType::F64) && rhs.dtype() == t &&
            !rhs.isConst() && !ir::collectReads(rhs).empty()) {
            const auto vars = ir::collectIterVars(rhs);
            if (std::find(vars.begin(), vars.end(), column) == vars.end()) {
                std::size_t k = 0;
                while (k < divisors.size() && !divisors[k].equals(rhs))
                    ++k;
                if (k == divisors.size())
                    divisors.push_back(rhs);
                return ir::binary(ir::BinaryOp::Mul, lhs, ir::cast(t, ir::var("%rcp" + std::to_string(k))));
            }
        }
        if (lhs.sameAs(e.operand(0)) && rhs.sameAs(e.operand(1)))
            return e;
        return ir::binary(e.binaryOp(), lhs, rhs);
    }
    default: return e;
    }
}

Expr replaceEqual(const Expr &e, const Expr &target, const Expr &with)
{
    if (e.equals(target))
        return with;
    switch (e.kind()) {
    case ir::ExprKind::Unary: {
        const Expr a = replaceEqual(e.operand(0), target, with);
        return a.sameAs(e.operand(0)) ? e : ir::unary(e.unaryOp(), a);
    }
    case ir::ExprKind::Cast: {
        const Expr a = replaceEqual(e.operand(0), target, with);
        return a.sameAs(e.operand(0)) ? e : ir::cast(e.dtype(), a);
    }
    case ir::ExprKind::Select: {
        const Expr c = replaceEqual(e.operand(0), target, with), a = replaceEqual(e.operand(1), target, with),
                   b = replaceEqual(e.operand(2), target, with);
        return c.sameAs(e.operand(0)) && a.sameAs(e.operand(1)) && b.sameAs(e.operand(2)) ? e : ir::select(c, a, b);
    }
    case ir::ExprKind::Binary: {
        const Expr a = replaceEqual(e.operand(0), target, with), b = replaceEqual(e.operand(1), target, with);
        return a.sameAs(e.operand(0)) && b.sameAs(e.operand(1)) ? e : ir::binary(e.binaryOp(), a, b);
    }
    default: return e;
    }
}

} // namespace stitch::codegen::rowkernel
