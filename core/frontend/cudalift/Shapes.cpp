#include "core/frontend/cudalift/Shapes.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <set>

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

// Allocation factor lists longer than this are not permuted (5! = 120 candidates at most).
constexpr std::size_t kMaxPermutedFactors = 5;

std::optional<std::vector<IntPoly>> polys(const std::vector<Expr> &dims, IndexMath &math)
{
    std::vector<IntPoly> out;
    for (const Expr &d : dims) {
        auto p = math.toPoly(d);
        if (!p)
            return std::nullopt;
        out.push_back(*p);
    }
    return out;
}

std::vector<IntPoly> strides(const std::vector<IntPoly> &dims)
{
    std::vector<IntPoly> s(dims.size(), IntPoly::constant(1));
    for (std::size_t d = dims.size(); d-- > 1;)
        s[d - 1] = s[d] * dims[d];
    return s;
}

IntPoly termPoly(const IntPoly::Monomial &m, std::int64_t c)
{
    IntPoly t = IntPoly::constant(c);
    for (const std::string &a : m)
        t = t * IntPoly::atom(a);
    return t;
}

std::optional<std::string> splittableVar(const FlatOp &op, const std::vector<IntPoly> &dims, IndexMath &math)
{
    if (dims.size() < 2 || op.spatial.size() != 1)
        return std::nullopt;
    auto p = math.toPoly(op.writeIndex);
    const FlatVar &v = op.spatial.front();
    if (!p || !(*p == IntPoly::atom(IndexMath::varKey(v.name))))
        return std::nullopt;
    auto lo = math.toPoly(v.lo), hi = math.toPoly(v.hi);
    IntPoly total = IntPoly::constant(1);
    for (const IntPoly &d : dims)
        total = total * d;
    if (!lo || !hi || !lo->isZero() || !(*hi - total).isZero())
        return std::nullopt;
    return v.name;
}

} // namespace

std::vector<IntPoly> splitByStrides(const IntPoly &index, const std::vector<IntPoly> &dims)
{
    const std::vector<IntPoly> s = strides(dims);
    for (const IntPoly &stride : s) {
        if (!stride.isPositiveMonomial())
            return {};
    }
    std::vector<IntPoly> out(dims.size());
    for (const auto &[m, c] : index.terms()) {
        const IntPoly term = termPoly(m, c);
        for (std::size_t d = 0; d < dims.size(); ++d) {
            if (auto q = term.dividedBy(s[d])) {
                out[d] = out[d] + *q;
                break;
            }
        }
    }
    return out;
}

bool inBounds(const std::vector<IntPoly> &perDim, const std::vector<IntPoly> &dims, IndexMath &math)
{
    for (std::size_t d = 0; d < dims.size(); ++d) {
        if (!math.nonNegative(perDim[d]) || !math.less(perDim[d], dims[d]))
            return false;
    }
    return true;
}

void declareOpRanges(const FlatOp &op, IndexMath &math)
{
    for (const FlatVar &v : op.spatial)
        math.setRange(v.name, v.lo, v.hi);
    for (const LoopVar &v : op.reduceVars)
        math.setRange(v.name, v.lo, v.hi);
}

std::optional<WriteMapping> writeMapping(const FlatOp &op, const std::vector<IntPoly> &dims, IndexMath &math)
{
    auto p = math.toPoly(op.writeIndex);
    if (!p)
        return std::nullopt;
    const std::vector<IntPoly> per = splitByStrides(*p, dims);
    if (per.empty())
        return std::nullopt;
    WriteMapping m;
    for (const IntPoly &d : per) {
        std::string found;
        for (const std::string &a : d.atoms()) {
            if (IndexMath::isOpaqueKey(a))
                return std::nullopt;
            if (!IndexMath::isVarKey(a))
                continue;
            if (!found.empty())
                return std::nullopt;
            found = a;
        }
        if (found.empty()) {
            m.vars.emplace_back();
            m.offsets.push_back(d);
            continue;
        }
        auto linear = d.linearIn(found);
        if (!linear || linear->first.constantValue() != 1)
            return std::nullopt;
        const std::string name = found.substr(2);
        if (std::find(m.vars.begin(), m.vars.end(), name) != m.vars.end())
            return std::nullopt;
        if (std::none_of(op.spatial.begin(), op.spatial.end(), [&](const FlatVar &v) { return v.name == name; }))
            return std::nullopt;
        m.vars.push_back(name);
        m.offsets.push_back(linear->second);
    }
    if (static_cast<std::size_t>(std::count_if(m.vars.begin(), m.vars.end(), [](const std::string &v) { return !v.empty(); }))
        != op.spatial.size())
        return std::nullopt;
    return m;
}

Expr rewriteReads(const Expr &e, IndexMath &math, const std::function<Expr(const Expr &)> &onRead)
{
    if (!e.defined())
        return e;
    auto rec = [&](const Expr &x) { return rewriteReads(x, math, onRead); };
    if (e.kind() == ir::ExprKind::Read)
        return onRead(e);
    const std::size_t mark = math.factCount();
    if (e.kind() == ir::ExprKind::Select) {
        const Expr c = rec(e.operand(0));
        for (const IntPoly &f : math.factsOf(c))
            math.pushFact(f);
        const Expr a = rec(e.operand(1));
        math.truncateFacts(mark);
        for (const IntPoly &f : math.factsOf(negateCondition(c)))
            math.pushFact(f);
        const Expr b = rec(e.operand(2));
        math.truncateFacts(mark);
        return ir::select(c, a, b);
    }
    if (e.kind() == ir::ExprKind::Binary && e.binaryOp() == ir::BinaryOp::And) {
        const Expr x = rec(e.operand(0));
        for (const IntPoly &f : math.factsOf(x))
            math.pushFact(f);
        const Expr y = rec(e.operand(1));
        math.truncateFacts(mark);
        return ir::logicalAnd(x, y);
    }
    if (e.operands().empty())
        return e;
    std::vector<Expr> operands;
    for (const Expr &o : e.operands())
        operands.push_back(rec(o));
    return rebuild(e, std::move(operands));
}

ShapeMap allocationShapes(const std::vector<BufferInfo> &buffers, IndexMath &math)
{
    ShapeMap shapes;
    for (std::size_t b = 0; b < buffers.size(); ++b) {
        std::vector<Expr> dims;
        bool monomials = true;
        for (const Expr &f : buffers[b].factors) {
            auto p = math.toPoly(f);
            if (p && p->constantValue() == 1)
                continue;
            monomials = monomials && p && p->isPositiveMonomial();
            dims.push_back(f);
        }
        if (monomials && dims.size() > 1)
            shapes[static_cast<int>(b)] = std::move(dims);
    }
    return shapes;
}

namespace {

/// Whether every dimension of a write mapping provably stays inside dims (what Assembly refuses
/// otherwise): a flat index whose bound is not a multiple of the row (i < ROWS * COLS / 256 * 256)
/// maps onto [ROWS, COLS] as row 0, column i, which this rules out in favour of the flat shape.
bool mappingInBounds(const FlatOp &op, const WriteMapping &m, const std::vector<IntPoly> &dims, IndexMath &math)
{
    for (std::size_t d = 0; d < dims.size() && d < m.vars.size(); ++d) {
        IntPoly lo = m.offsets[d], hi = m.offsets[d] + IntPoly::constant(1);
        if (!m.vars[d].empty()) {
            const auto v = std::find_if(op.spatial.begin(), op.spatial.end(), [&](const FlatVar &x) { return x.name == m.vars[d]; });
            if (v == op.spatial.end())
                return false;
            const auto vlo = math.toPoly(v->lo), vhi = math.toPoly(v->hi);
            if (!vlo || !vhi)
                return false;
            lo = *vlo + m.offsets[d];
            hi = *vhi + m.offsets[d];
        }
        if (!math.nonNegative(lo) || !math.lessEqual(hi, dims[d]))
            return false;
    }
    return true;
}

} // namespace

ShapeMap chooseShapes(const std::vector<BufferInfo> &buffers, const std::vector<LaunchOps *> &launches,
                      IndexMath &math, const ShapeMap &fixed, std::vector<std::size_t> &unexpressible)
{
    std::map<int, std::vector<std::vector<Expr>>> candidates;
    auto candidatesOf = [&](int b) -> std::vector<std::vector<Expr>> & {
        auto it = candidates.find(b);
        if (it != candidates.end())
            return it->second;
        std::vector<std::vector<Expr>> &list = candidates[b];
        if (auto f = fixed.find(b); f != fixed.end()) {
            list.push_back(f->second);
            return list;
        }
        const BufferInfo &info = buffers[static_cast<std::size_t>(b)];
        std::vector<Expr> factors;
        bool monomials = true;
        for (const Expr &f : info.factors) {
            auto p = math.toPoly(f);
            if (p && p->constantValue() == 1)
                continue;
            monomials = monomials && p && p->isPositiveMonomial();
            factors.push_back(f);
        }
        if (monomials && factors.size() > 1 && factors.size() <= kMaxPermutedFactors) {
            std::vector<std::size_t> order(factors.size());
            for (std::size_t i = 0; i < order.size(); ++i)
                order[i] = i;
            std::set<std::string> seen;
            do {
                std::vector<Expr> shape;
                std::string key;
                for (std::size_t i : order) {
                    shape.push_back(factors[i]);
                    key += factors[i].toString() + ",";
                }
                if (seen.insert(key).second)
                    list.push_back(std::move(shape));
            } while (std::next_permutation(order.begin(), order.end()));
        }
        list.push_back({info.elements});
        return list;
    };

    std::map<int, std::vector<int>> score, writesOk;
    std::map<int, int> writes;
    for (LaunchOps *launch : launches) {
        for (const FlatOp &op : launch->ops) {
            declareOpRanges(op, math);
            if (op.buffer >= 0) {
                auto &cands = candidatesOf(op.buffer);
                score[op.buffer].resize(cands.size());
                writesOk[op.buffer].resize(cands.size());
                ++writes[op.buffer];
                for (std::size_t c = 0; c < cands.size(); ++c) {
                    auto dims = polys(cands[c], math);
                    const auto mapping = dims ? writeMapping(op, *dims, math) : std::nullopt;
                    if (mapping && mappingInBounds(op, *mapping, *dims, math)) {
                        ++writesOk[op.buffer][c];
                        ++score[op.buffer][c];
                    }
                }
            }
            auto onRead = [&](const Expr &r) {
                const int b = r.tensor().id;
                if (b < 0 || r.operands().size() != 1)
                    return r;
                auto &cands = candidatesOf(b);
                score[b].resize(cands.size());
                auto index = math.toPoly(r.operand(0));
                for (std::size_t c = 0; c < cands.size() && index; ++c) {
                    auto dims = polys(cands[c], math);
                    if (!dims)
                        continue;
                    const auto per = splitByStrides(*index, *dims);
                    if (!per.empty() && inBounds(per, *dims, math))
                        ++score[b][c];
                }
                return r;
            };
            for (const Expr *e : {&op.body, &op.init, &op.partialGuard})
                (void)rewriteReads(*e, math, onRead);
        }
    }

    ShapeMap chosen;
    for (auto &[b, cands] : candidates) {
        std::size_t best = 0;
        for (std::size_t c = 1; c < cands.size(); ++c) {
            const int w = writesOk[b].empty() ? 0 : writesOk[b][c];
            const int wb = writesOk[b].empty() ? 0 : writesOk[b][best];
            if (w > wb || (w == wb && score[b][c] > score[b][best]))
                best = c;
        }
        chosen[b] = cands[best];
    }
    for (std::size_t l = 0; l < launches.size(); ++l) {
        for (const FlatOp &op : launches[l]->ops) {
            if (op.buffer < 0)
                continue;
            declareOpRanges(op, math);
            auto dims = polys(chosen.at(op.buffer), math);
            if (!dims || !writeMapping(op, *dims, math)) {
                unexpressible.push_back(l);
                break;
            }
        }
    }
    return chosen;
}

namespace {

/// Replaces spatial variable var by parts (var = sum parts[d] * strides[d]) in every op of launch:
/// in the op's variable list, in all expressions, and in the indices of intermediate reads.
void replaceVar(LaunchOps &launch, const std::string &var, const std::vector<FlatVar> &parts,
                const std::vector<Expr> &strideExprs, IndexMath &math)
{
    Expr value;
    for (std::size_t d = 0; d < parts.size(); ++d) {
        const Expr term = strideExprs[d].isIntConst(1) ? ir::var(parts[d].name) : ir::var(parts[d].name) * strideExprs[d];
        value = value.defined() ? value + term : term;
    }
    const std::map<std::string, Expr> substitution{{var, value}};
    auto reindex = [&](const Expr &e) {
        return rewrite(e, [&](const Expr &x) -> std::optional<Expr> {
            if (x.kind() != ir::ExprKind::Read || !isIntermediateTensor(x.tensor().id))
                return std::nullopt;
            std::vector<Expr> indices;
            for (const Expr &i : x.operands()) {
                if (i.kind() == ir::ExprKind::IterVar && i.name() == var) {
                    for (const FlatVar &p : parts)
                        indices.push_back(ir::var(p.name));
                } else {
                    indices.push_back(i);
                }
            }
            return ir::read(x.tensor(), indices);
        });
    };
    for (FlatOp &op : launch.ops) {
        auto it = std::find_if(op.spatial.begin(), op.spatial.end(), [&](const FlatVar &v) { return v.name == var; });
        if (it != op.spatial.end()) {
            it = op.spatial.erase(it);
            op.spatial.insert(it, parts.begin(), parts.end());
        }
        declareOpRanges(op, math);
        for (const FlatVar &p : parts)
            math.setRange(p.name, p.lo, p.hi);
        auto apply = [&](Expr &e) {
            if (e.defined())
                e = math.simplify(ir::substitute(reindex(e), substitution));
        };
        apply(op.writeIndex);
        apply(op.body);
        apply(op.init);
        apply(op.partialGuard);
        for (LoopVar &r : op.reduceVars) {
            apply(r.lo);
            apply(r.hi);
        }
    }
    for (auto &[e, name] : launch.hints) {
        e = math.simplify(ir::substitute(e, substitution));
        for (FlatOp &op : launch.ops) {
            for (FlatVar &v : op.spatial) {
                if (e.kind() == ir::ExprKind::IterVar && e.name() == v.name && v.hint.empty())
                    v.hint = name;
            }
        }
    }
    auto pos = std::find(launch.varOrder.begin(), launch.varOrder.end(), var);
    if (pos != launch.varOrder.end()) {
        pos = launch.varOrder.erase(pos);
        for (const FlatVar &p : parts)
            pos = launch.varOrder.insert(pos, p.name) + 1;
    }
}

} // namespace

bool splitDivModVars(LaunchOps &launch, IndexMath &math)
{
    bool any = false;
    for (int round = 0; round < 8; ++round) {
        // A variable used as v / B or v % B over [0, A * B) is the pair (v / B, v % B).
        std::optional<std::pair<std::string, IntPoly>> found;
        for (const FlatOp &op : launch.ops) {
            declareOpRanges(op, math);
            for (const Expr *e : {&op.writeIndex, &op.body, &op.init, &op.partialGuard}) {
                ir::visitExpr(*e, [&](const Expr &x) {
                    if (found || x.kind() != ir::ExprKind::Binary
                        || (x.binaryOp() != ir::BinaryOp::Div && x.binaryOp() != ir::BinaryOp::Mod)
                        || x.operand(0).kind() != ir::ExprKind::IterVar || !ir::isInteger(x.dtype()))
                        return;
                    auto divisor = math.toPoly(x.operand(1));
                    if (divisor && divisor->isPositiveMonomial() && ir::collectIterVars(x.operand(1)).empty()
                        && divisor->constantValue() != 1)
                        found = std::make_pair(x.operand(0).name(), *divisor);
                });
            }
        }
        if (!found)
            return any;
        const auto &[var, divisor] = *found;
        // Every op that has the variable must range over all of [0, A * B).
        std::optional<IntPoly> outer;
        bool ok = true;
        for (const FlatOp &op : launch.ops) {
            for (const FlatVar &v : op.spatial) {
                if (v.name != var)
                    continue;
                auto lo = math.toPoly(v.lo), hi = math.toPoly(v.hi);
                auto q = hi ? hi->dividedBy(divisor) : std::nullopt;
                if (!lo || !lo->isZero() || !q || (outer && !(*outer == *q)))
                    ok = false;
                else
                    outer = q;
            }
        }
        if (!ok || !outer)
            return any;
        const std::vector<FlatVar> parts{{var + "/", {}, Expr(0), math.toExpr(*outer)},
                                         {var + "%", {}, Expr(0), math.toExpr(divisor)}};
        replaceVar(launch, var, parts, {math.toExpr(divisor), Expr(1)}, math);
        any = true;
    }
    return any;
}

std::vector<int> splitLaunchVars(LaunchOps &launch, const ShapeMap &shapes, IndexMath &math)
{
    std::vector<int> used;
    for (std::size_t i = 0; i < launch.ops.size(); ++i) {
        FlatOp &target = launch.ops[i];
        if (target.buffer < 0 || !shapes.count(target.buffer))
            continue;
        declareOpRanges(target, math);
        auto dims = polys(shapes.at(target.buffer), math);
        if (!dims)
            continue;
        auto var = splittableVar(target, *dims, math);
        if (!var)
            continue;
        const std::vector<Expr> &shape = shapes.at(target.buffer);
        std::vector<FlatVar> parts;
        std::vector<Expr> strideExprs;
        const std::vector<IntPoly> s = strides(*dims);
        for (std::size_t d = 0; d < dims->size(); ++d) {
            parts.push_back({*var + "_" + std::to_string(d), {}, Expr(0), shape[d]});
            strideExprs.push_back(math.toExpr(s[d]));
        }
        replaceVar(launch, *var, parts, strideExprs, math);
        used.push_back(target.buffer);
    }
    return used;
}

std::vector<Expr> flatIndices(const Expr &flat, const std::vector<Expr> &shape, IndexMath &math)
{
    if (shape.empty())
        return {}; // a scalar: its one element
    if (shape.size() == 1)
        return {math.simplify(flat)};
    auto dims = polys(shape, math);
    auto index = math.toPoly(flat);
    if (dims && index) {
        const auto per = splitByStrides(*index, *dims);
        if (!per.empty() && inBounds(per, *dims, math)) {
            std::vector<Expr> out;
            for (const IntPoly &p : per)
                out.push_back(math.toExpr(p));
            return out;
        }
    }
    // Exact for any in-range flat index: the dimension's digit in the mixed-radix number.
    std::vector<Expr> out;
    Expr stride = Expr(1);
    std::vector<Expr> strideOf(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
        strideOf[d] = stride;
        stride = math.simplify(stride * shape[d]);
    }
    for (std::size_t d = 0; d < shape.size(); ++d) {
        Expr e = strideOf[d].isIntConst(1) ? flat : flat / strideOf[d];
        if (d > 0)
            e = e % shape[d];
        out.push_back(math.simplify(e));
    }
    return out;
}

} // namespace stitch::frontend::cudalift
