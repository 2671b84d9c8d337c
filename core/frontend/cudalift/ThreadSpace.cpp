#include "core/frontend/cudalift/ThreadSpace.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/frontend/cudalift/LiftRefusal.h"
#include "core/frontend/cudalift/Reductions.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <functional>
#include <set>

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

using ExprFn = std::function<Expr(const Expr &)>;

void transformAll(KernelEffects &fx, const ExprFn &f)
{
    auto vars = [&](std::vector<LoopVar> &list) {
        for (LoopVar &v : list) {
            v.lo = f(v.lo);
            v.hi = f(v.hi);
        }
    };
    for (StoreEffect &s : fx.stores) {
        s.index = f(s.index);
        s.value = f(s.value);
        for (Expr &g : s.guard)
            g = f(g);
        vars(s.mapLoops);
    }
    for (PendingReduction &p : fx.pending) {
        if (p.init.defined())
            p.init = f(p.init);
        p.body = f(p.body);
        for (Expr &g : p.guard)
            g = f(g);
        vars(p.vars);
    }
    for (auto &[name, v] : fx.loopVars) {
        v.lo = f(v.lo);
        v.hi = f(v.hi);
    }
    for (auto &[e, name] : fx.hints)
        e = f(e);
}

bool mentioned(const KernelEffects &fx, const std::string &var)
{
    auto in = [&](const Expr &e) { return mentionsVar(e, var); };
    auto inVars = [&](const std::vector<LoopVar> &list) {
        return std::any_of(list.begin(), list.end(), [&](const LoopVar &v) { return in(v.lo) || in(v.hi); });
    };
    for (const StoreEffect &s : fx.stores) {
        if (in(s.index) || in(s.value) || std::any_of(s.guard.begin(), s.guard.end(), in) || inVars(s.mapLoops))
            return true;
    }
    for (const PendingReduction &p : fx.pending) {
        if (in(p.init) || in(p.body) || std::any_of(p.guard.begin(), p.guard.end(), in) || inVars(p.vars))
            return true;
    }
    return false;
}

std::set<int> pendingReads(const Expr &e)
{
    std::set<int> ids;
    ir::visitExpr(e, [&](const Expr &x) {
        if (x.kind() == ir::ExprKind::Read && isPendingTensor(x.tensor().id))
            ids.insert(pendingIndex(x.tensor().id));
    });
    return ids;
}

struct Domain {
    std::vector<FlatVar> vars;
    std::vector<Expr> rest;
    bool empty = false;
};

Expr tighter(IndexMath &math, const Expr &a, const Expr &b, bool upper)
{
    auto pa = math.toPoly(a);
    auto pb = math.toPoly(b);
    if (pa && pb) {
        if (math.lessEqual(*pa, *pb))
            return upper ? a : b;
        if (math.lessEqual(*pb, *pa))
            return upper ? b : a;
    }
    return math.simplify(upper ? ir::min(a, b) : ir::max(a, b));
}

void declareRanges(IndexMath &math, const std::vector<FlatVar> &vars)
{
    for (const FlatVar &v : vars)
        math.setRange(v.name, v.lo, v.hi);
}

/// Bounds a guard puts on one spatial variable (v >= lo or v < hi); false when the atom is not that.
bool applyBound(IndexMath &math, std::vector<FlatVar> &vars, const IntPoly &p)
{
    FlatVar *target = nullptr;
    for (const std::string &a : p.atoms()) {
        if (IndexMath::isOpaqueKey(a) && !ir::collectIterVars(math.atomExpr(a)).empty())
            return false;
        if (!IndexMath::isVarKey(a))
            continue;
        auto it = std::find_if(vars.begin(), vars.end(), [&](const FlatVar &v) { return "v:" + v.name == a; });
        if (it == vars.end() || (target && &*it != target))
            return false;
        target = &*it;
    }
    if (!target)
        return false;
    auto linear = p.linearIn("v:" + target->name);
    if (!linear)
        return false;
    const auto c = linear->first.constantValue();
    const IntPoly &rest = linear->second;
    if (c == 1)
        target->lo = tighter(math, target->lo, math.toExpr(-rest), false);
    else if (c == -1)
        target->hi = tighter(math, target->hi, math.toExpr(rest + 1), true);
    else
        return false;
    math.setRange(target->name, target->lo, target->hi);
    return true;
}

Domain refine(IndexMath &math, std::vector<FlatVar> vars, const std::vector<Expr> &guard)
{
    Domain d;
    declareRanges(math, vars);
    std::vector<Expr> atoms;
    for (const Expr &g : guard) {
        for (const Expr &c : conjuncts(math.simplify(g)))
            atoms.push_back(c);
    }
    std::vector<Expr> pending;
    for (const Expr &atom : atoms) {
        if (isBoolConst(atom, true))
            continue;
        if (isBoolConst(atom, false)) {
            d.empty = true;
            return d;
        }
        std::vector<IntPoly> bounds;
        if (auto p = math.asNonNegative(atom)) {
            bounds.push_back(*p);
        } else if (atom.kind() == ir::ExprKind::Binary && atom.binaryOp() == ir::BinaryOp::Eq) {
            auto a = math.toPoly(atom.operand(0));
            auto b = math.toPoly(atom.operand(1));
            if (a && b)
                bounds = {*a - *b, *b - *a};
        }
        bool rectangular = !bounds.empty();
        std::vector<FlatVar> trial = vars;
        for (const IntPoly &p : bounds)
            rectangular = rectangular && applyBound(math, trial, p);
        if (rectangular)
            vars = std::move(trial);
        else
            pending.push_back(atom);
        declareRanges(math, vars);
    }
    for (const Expr &atom : pending) {
        const Expr s = math.simplify(atom);
        if (isBoolConst(s, false)) {
            d.empty = true;
            return d;
        }
        if (!isBoolConst(s, true))
            d.rest.push_back(s);
    }
    for (const FlatVar &v : vars) {
        auto lo = math.toPoly(v.lo);
        auto hi = math.toPoly(v.hi);
        if (lo && hi && math.lessEqual(*hi, *lo))
            d.empty = true;
    }
    d.vars = std::move(vars);
    return d;
}

std::string display(const Expr &e, const std::map<std::string, std::string> &hints)
{
    std::map<std::string, Expr> names;
    ir::visitExpr(e, [&](const Expr &x) {
        if (x.kind() == ir::ExprKind::IterVar) {
            auto it = hints.find(x.name());
            names[x.name()] = ir::var(it != hints.end() ? it->second : x.name().substr(x.name()[0] == '%' ? 1 : 0));
        }
    });
    return ir::substitute(e, names).toString();
}

[[noreturn]] void refuseAt(const ir::SourceSpan &span, std::string construct, std::string why, std::string advice)
{
    throw LiftRefusal(Refusal{span.begin, std::move(construct), std::move(why), std::move(advice)});
}

} // namespace

LaunchOps buildFlatOps(KernelEffects fx, const LaunchBinding &launch, const std::vector<BufferInfo> &buffers,
                       IndexMath &math)
{
    LaunchOps out;
    const ExprFn simplify = [&](const Expr &e) { return math.simplify(e); };

    // Unit grid or block dimensions contribute nothing: their index is 0.
    std::map<std::string, Expr> unit;
    for (int d = 0; d < 3; ++d) {
        const auto dd = static_cast<std::size_t>(d);
        if (launch.grid[dd].isIntConst(1))
            unit[blockVar(d)] = Expr(0);
        if (launch.block[dd].isIntConst(1))
            unit[threadVar(d)] = Expr(0);
    }
    if (!unit.empty())
        transformAll(fx, [&](const Expr &e) { return math.simplify(ir::substitute(e, unit)); });
    auto isConsumed = [&](const std::string &v) {
        return std::find(fx.consumedThreadVars.begin(), fx.consumedThreadVars.end(), v) != fx.consumedThreadVars.end();
    };
    for (const std::string &c : fx.consumedThreadVars) {
        if (!unit.count(c) && mentioned(fx, c)) {
            const ir::SourceSpan span = fx.stores.empty() ? ir::SourceSpan{launch.location, launch.location} : fx.stores.front().span;
            refuseAt(span, c == blockVar(0) || c == blockVar(1) || c == blockVar(2) ? "blockIdx" : "threadIdx",
                     "the thread index is used both as the start of a grid-stride loop and elsewhere, so threads "
                     "may touch the same elements",
                     "use only the loop variable inside the loop");
        }
    }

    std::vector<FlatVar> threadVars;
    for (int d = 2; d >= 0; --d) {
        const auto dd = static_cast<std::size_t>(d);
        const std::string b = blockVar(d), t = threadVar(d);
        const bool hasB = !unit.count(b) && !isConsumed(b) && mentioned(fx, b);
        const bool hasT = !unit.count(t) && !isConsumed(t) && mentioned(fx, t);
        if (hasB && hasT) {
            const std::string g = std::string("%g") + "xyz"[d];
            const Expr extent = math.simplify(launch.grid[dd] * launch.block[dd]);
            math.setRange(g, Expr(0), extent);
            KernelEffects trial = fx;
            const std::map<std::string, Expr> fuse{{t, ir::var(g) - ir::var(b) * launch.block[dd]}};
            transformAll(trial, [&](const Expr &e) { return math.simplify(ir::substitute(e, fuse)); });
            if (!mentioned(trial, b) && !mentioned(trial, t)) {
                fx = std::move(trial);
                threadVars.push_back({g, {}, Expr(0), extent});
                continue;
            }
        }
        if (hasB)
            threadVars.push_back({b, {}, Expr(0), launch.grid[dd]});
        if (hasT)
            threadVars.push_back({t, {}, Expr(0), launch.block[dd]});
    }

    std::map<std::string, std::string> hints;
    for (const auto &[e, name] : fx.hints) {
        if (e.kind() == ir::ExprKind::IterVar && !hints.count(e.name()))
            hints[e.name()] = name;
    }
    std::vector<const LoopVar *> loops;
    for (const auto &[name, v] : fx.loopVars)
        loops.push_back(&v);
    std::sort(loops.begin(), loops.end(), [](const LoopVar *a, const LoopVar *b) {
        return std::stoll(a->name.substr(2)) < std::stoll(b->name.substr(2));
    });
    for (const LoopVar *v : loops) {
        if (!hints.count(v->name))
            hints[v->name] = v->hint;
    }
    for (FlatVar &v : threadVars) {
        auto it = hints.find(v.name);
        v.hint = it != hints.end() ? it->second : std::string();
        out.varOrder.push_back(v.name);
    }
    for (const LoopVar *v : loops)
        out.varOrder.push_back(v->name);
    auto flatVarOf = [&](const std::string &name) -> std::optional<FlatVar> {
        for (const FlatVar &v : threadVars) {
            if (v.name == name)
                return v;
        }
        auto it = fx.loopVars.find(name);
        if (it != fx.loopVars.end())
            return FlatVar{name, it->second.hint, it->second.lo, it->second.hi};
        return std::nullopt;
    };

    // Pending reductions reachable from the stores, and how often each is read.
    std::map<int, int> uses;
    std::vector<int> work;
    auto countUses = [&](const Expr &e) {
        for (int id : pendingReads(e)) {
            if (uses[id]++ == 0)
                work.push_back(id);
        }
    };
    for (const StoreEffect &s : fx.stores) {
        countUses(s.index);
        countUses(s.value);
        for (const Expr &g : s.guard)
            countUses(g);
    }
    while (!work.empty()) {
        const PendingReduction &p = fx.pending.at(static_cast<std::size_t>(work.back()));
        work.pop_back();
        countUses(p.init);
        countUses(p.body);
        for (const Expr &g : p.guard)
            countUses(g);
    }

    std::map<int, Expr> replacement; // pending id -> read of its intermediate
    std::set<int> fused;
    for (const StoreEffect &s : fx.stores) {
        if (s.value.kind() == ir::ExprKind::Read && isPendingTensor(s.value.tensor().id)
            && uses[pendingIndex(s.value.tensor().id)] == 1)
            fused.insert(pendingIndex(s.value.tensor().id));
    }
    for (const auto &[id, count] : uses) {
        if (fused.count(id))
            continue;
        const PendingReduction &p = fx.pending.at(static_cast<std::size_t>(id));
        std::set<std::string> own;
        for (const LoopVar &v : p.vars)
            own.insert(v.name);
        std::set<std::string> free;
        auto collect = [&](const Expr &e) {
            for (const std::string &v : ir::collectIterVars(e)) {
                if (!own.count(v))
                    free.insert(v);
            }
        };
        collect(p.init);
        collect(p.body);
        for (const LoopVar &v : p.vars) {
            collect(v.lo);
            collect(v.hi);
        }
        std::vector<FlatVar> spatial;
        for (const std::string &name : out.varOrder) {
            if (free.count(name)) {
                spatial.push_back(*flatVarOf(name));
                free.erase(name);
            }
        }
        if (!free.empty())
            refuseAt(p.span, "reduction", "the reduction depends on '" + *free.begin() + "', which is not an index", {});
        Domain dom = refine(math, spatial, p.guard);
        FlatOp op;
        op.name = launch.kernel + "_" + (p.hint.empty() ? std::string("acc") : p.hint);
        op.spatial = dom.vars;
        op.partialGuard = ir::boolConst(true);
        op.reduceKind = p.kind;
        op.reduceVars = p.vars;
        op.dtype = p.dtype;
        op.span = p.span;
        op.body = p.body;
        op.init = p.init;
        if (!dom.rest.empty()) {
            // Outside its guard the reduction's value is never read: compute the identity there.
            const Expr guard = conjunction(dom.rest);
            const Expr identity = ir::reductionIdentity(p.kind, p.dtype);
            op.body = ir::select(guard, op.body, identity);
            if (op.init.defined())
                op.init = ir::select(guard, op.init, identity);
        }
        std::vector<Expr> indices;
        for (const FlatVar &v : op.spatial)
            indices.push_back(ir::var(v.name));
        replacement[id] = ir::read(ir::TensorRef{intermediateTensorId(static_cast<int>(out.ops.size())), op.name, p.dtype},
                                   indices);
        out.ops.push_back(std::move(op));
    }

    const std::size_t intermediates = out.ops.size();
    for (const StoreEffect &s : fx.stores) {
        std::vector<FlatVar> vars = threadVars;
        for (const LoopVar &l : s.mapLoops)
            vars.push_back({l.name, l.hint, l.lo, l.hi});
        Domain dom = refine(math, vars, s.guard);
        if (dom.empty) {
            out.notes.push_back({Severity::Note, s.span.begin, "a store that no thread performs was dropped"});
            continue;
        }
        FlatOp op;
        op.name = launch.kernel;
        op.buffer = s.buffer;
        op.parameter = s.parameter;
        op.dtype = buffers[static_cast<std::size_t>(s.buffer)].dtype;
        op.span = s.span;
        op.writeIndex = s.index;
        op.body = s.value;
        op.partialGuard = conjunction(dom.rest);
        if (fused.count(s.value.kind() == ir::ExprKind::Read ? pendingIndex(s.value.tensor().id) : -1)) {
            const PendingReduction &p = fx.pending.at(static_cast<std::size_t>(pendingIndex(s.value.tensor().id)));
            op.reduceKind = p.kind;
            op.reduceVars = p.vars;
            op.init = p.init;
            op.body = p.body;
            op.span.begin = p.span.begin.line < op.span.begin.line ? p.span.begin : op.span.begin;
        }
        // A variable the guard pins to one value is not a dimension of the op.
        std::map<std::string, Expr> pinned;
        for (const FlatVar &v : dom.vars) {
            auto lo = math.toPoly(v.lo), hi = math.toPoly(v.hi);
            if (lo && hi && (*hi - *lo).constantValue() == 1)
                pinned[v.name] = v.lo;
            else
                op.spatial.push_back(v);
        }
        if (!pinned.empty()) {
            auto pin = [&](const Expr &e) { return e.defined() ? math.simplify(ir::substitute(e, pinned)) : e; };
            op.writeIndex = pin(op.writeIndex);
            op.body = pin(op.body);
            op.init = pin(op.init);
            op.partialGuard = pin(op.partialGuard);
            for (LoopVar &r : op.reduceVars) {
                r.lo = pin(r.lo);
                r.hi = pin(r.hi);
            }
        }
        out.ops.push_back(std::move(op));
    }

    for (FlatOp &op : out.ops) {
        for (const FlatVar &v : op.spatial)
            math.setRange(v.name, v.lo, v.hi);
        for (const LoopVar &v : op.reduceVars)
            math.setRange(v.name, v.lo, v.hi);
        tidyReduction(op, math);
    }

    auto resolve = [&](const Expr &e) {
        if (!e.defined())
            return e;
        return rewrite(e, [&](const Expr &x) -> std::optional<Expr> {
            if (x.kind() == ir::ExprKind::Read && isPendingTensor(x.tensor().id)) {
                auto it = replacement.find(pendingIndex(x.tensor().id));
                if (it != replacement.end())
                    return it->second;
            }
            return std::nullopt;
        });
    };
    for (FlatOp &op : out.ops) {
        op.body = resolve(op.body);
        op.init = resolve(op.init);
        op.partialGuard = resolve(op.partialGuard);
        op.writeIndex = resolve(op.writeIndex);
        if (readsAny(op.body, [](const ir::TensorRef &t) { return isPendingTensor(t.id) || isPlaceholderTensor(t.id); }))
            refuseAt(op.span, "reduction", "a running value is used in a way the lifter cannot order (" + op.body.toString() + ")", {});
        for (FlatVar &v : op.spatial) {
            if (!ir::collectIterVars(v.lo).empty() || !ir::collectIterVars(v.hi).empty())
                refuseAt(op.span, display(ir::var(v.name), hints),
                         "the range of '" + display(ir::var(v.name), hints) + "' depends on another index ("
                             + display(v.lo, hints) + " .. " + display(v.hi, hints) + "): the iteration space is not "
                                                                                       "rectangular",
                         "compute the full rectangle and mask with a ternary");
            if (v.hint.empty()) {
                auto it = hints.find(v.name);
                if (it != hints.end())
                    v.hint = it->second;
            }
        }
    }

    // Races: one store per buffer, and no thread reads an element another thread writes.
    std::map<int, const FlatOp *> writer;
    for (std::size_t i = intermediates; i < out.ops.size(); ++i) {
        const FlatOp &op = out.ops[i];
        auto [it, first] = writer.emplace(op.buffer, &op);
        if (!first)
            refuseAt(op.span, buffers[static_cast<std::size_t>(op.buffer)].name,
                     "the kernel writes '" + buffers[static_cast<std::size_t>(op.buffer)].name
                         + "' in two different places (" + display(it->second->writeIndex, hints) + " and "
                         + display(op.writeIndex, hints) + ")",
                     "write each output element from exactly one store");
    }
    for (const FlatOp &op : out.ops) {
        std::vector<Expr> exprs{op.body, op.init, op.partialGuard};
        for (const Expr &e : exprs) {
            for (const Expr &r : ir::collectReads(e)) {
                const int b = r.tensor().id;
                auto w = writer.find(b);
                if (b < 0 || w == writer.end())
                    continue;
                // The thread's own element, read before it is written: other threads never touch it.
                const bool sameElement = r.operands().size() == 1
                    && math.simplify(r.operand(0)).equals(math.simplify(w->second->writeIndex));
                if (!sameElement) {
                    const std::string name = buffers[static_cast<std::size_t>(b)].name;
                    refuseAt(w->second->span, name + "[" + display(w->second->writeIndex, hints) + "]",
                             "threads write '" + name + "[" + display(w->second->writeIndex, hints)
                                 + "]' while threads of the same launch read '" + name + "["
                                 + display(r.operand(0), hints)
                                 + "]', so the result depends on which thread runs first (a race on '" + name + "')",
                             "write the result to a separate buffer");
                }
            }
        }
    }
    for (FlatOp &op : out.ops) {
        for (FlatVar &v : op.spatial) {
            if (v.hint.empty())
                v.hint = hints.count(v.name) ? hints.at(v.name) : std::string();
        }
        for (LoopVar &v : op.reduceVars) {
            if (hints.count(v.name))
                v.hint = hints.at(v.name);
        }
    }
    out.hints = std::move(fx.hints);
    return out;
}

} // namespace stitch::frontend::cudalift
