#include "core/frontend/cudalift/Reductions.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

bool fuseOnePair(FlatOp &op, IndexMath &math)
{
    std::vector<LoopVar> &vars = op.reduceVars;
    for (std::size_t o = 0; o < vars.size(); ++o) {
        for (std::size_t i = o + 1; i < vars.size(); ++i) {
            auto loO = math.toPoly(vars[o].lo), loI = math.toPoly(vars[i].lo);
            if (!loO || !loI || !loO->isZero() || !loI->isZero())
                continue;
            if (mentionsVar(vars[i].hi, vars[o].name) || mentionsVar(vars[o].hi, vars[i].name))
                continue;
            const std::string fused = vars[o].name + "*" + vars[i].name;
            const Expr extent = math.simplify(vars[o].hi * vars[i].hi);
            math.setRange(fused, Expr(0), extent);
            const std::map<std::string, Expr> substitution{
                {vars[i].name, ir::var(fused) - ir::var(vars[o].name) * vars[i].hi}};
            const Expr body = math.simplify(ir::substitute(op.body, substitution));
            if (mentionsVar(body, vars[o].name) || mentionsVar(body, vars[i].name))
                continue;
            op.body = body;
            vars[o] = LoopVar{fused, vars[i].hint, Expr(0), extent};
            vars.erase(vars.begin() + static_cast<std::ptrdiff_t>(i));
            return true;
        }
    }
    return false;
}

/// Upper bounds U such that the body compares `v < U` (or v <= U - 1) in a guard.
std::vector<IntPoly> guardBounds(const Expr &body, const std::string &var, IndexMath &math)
{
    std::vector<IntPoly> bounds;
    ir::visitExpr(body, [&](const Expr &e) {
        if (e.kind() != ir::ExprKind::Select)
            return;
        for (const Expr &c : conjuncts(e.operand(0))) {
            auto p = math.asNonNegative(c);
            if (!p)
                continue;
            auto linear = p->linearIn(IndexMath::varKey(var));
            // p = -v + rest >= 0, i.e. v <= rest, v < rest + 1.
            if (!linear || linear->first.constantValue() != -1)
                continue;
            const IntPoly bound = linear->second + 1;
            const auto atoms = bound.atoms();
            if (std::none_of(atoms.begin(), atoms.end(), [](const std::string &a) { return IndexMath::isVarKey(a); }))
                bounds.push_back(bound);
        }
    });
    return bounds;
}

void trimRanges(FlatOp &op, IndexMath &math)
{
    const Expr identity = ir::reductionIdentity(*op.reduceKind, op.dtype);
    for (LoopVar &v : op.reduceVars) {
        auto hi = math.toPoly(v.hi);
        if (!hi)
            continue;
        for (const IntPoly &bound : guardBounds(op.body, v.name, math)) {
            if (bound == *hi || !math.lessEqual(bound, *hi))
                continue;
            const std::size_t mark = math.factCount();
            math.pushFact(IntPoly::atom(IndexMath::varKey(v.name)) - bound);
            const Expr beyond = math.simplify(op.body);
            math.truncateFacts(mark);
            if (!beyond.isConst() || !beyond.equals(identity))
                continue;
            v.hi = math.toExpr(bound);
            hi = bound;
            math.setRange(v.name, v.lo, v.hi);
            op.body = math.simplify(op.body);
        }
    }
}

} // namespace

void tidyReduction(FlatOp &op, IndexMath &math)
{
    if (!op.reduceKind)
        return;
    for (int guard = 0; guard < 8 && fuseOnePair(op, math); ++guard) {
    }
    trimRanges(op, math);
}

} // namespace stitch::frontend::cudalift
