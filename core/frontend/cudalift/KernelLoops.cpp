// KernelExec: for loops. A loop either stores a different element per iteration (a map loop,
// whose variable becomes spatial), folds values into running variables (a reduction), or strides
// over the grid (its variable replaces the thread index).
#include "core/frontend/cudalift/ExprTools.h"
#include "core/frontend/cudalift/KernelExec.h"

#include <algorithm>

namespace stitch::frontend::cudalift {

using ir::BinaryOp;
using ir::Expr;
using ir::ExprKind;
using ir::ReduceKind;

namespace {

constexpr int kMaxLoopDepth = 8;

/// How a loop updates one running variable: kind, extra (inner) reduction variables and the term
/// folded in per iteration. No kind means the loop leaves the variable unchanged.
struct Accumulation {
    std::optional<ReduceKind> kind;
    std::vector<LoopVar> vars;
    Expr term;
};

class AccumulationMatcher {
public:
    AccumulationMatcher(const Expr &placeholder, const std::vector<PendingReduction> &pending)
        : m_p(placeholder), m_pending(pending)
    {
    }

    std::optional<Accumulation> match(const Expr &e) const
    {
        if (isP(e))
            return Accumulation{};
        if (!uses(e))
            return std::nullopt; // overwritten with a fresh value: not a reduction
        switch (e.kind()) {
        case ExprKind::Binary:
            return matchBinary(e);
        case ExprKind::Select:
            return matchSelect(e);
        case ExprKind::Read:
            return matchPending(e);
        case ExprKind::Cast:
            return match(e.operand(0));
        default:
            return std::nullopt;
        }
    }

    /// Whether e reads the running value, directly or through a pending inner reduction.
    bool uses(const Expr &e, int depth = 0) const
    {
        return readsAny(e, [&](const ir::TensorRef &t) {
            if (t.id == m_p.tensor().id)
                return true;
            if (!isPendingTensor(t.id) || depth > 8)
                return false;
            const PendingReduction &r = m_pending.at(static_cast<std::size_t>(pendingIndex(t.id)));
            return uses(r.init, depth + 1) || uses(r.body, depth + 1);
        });
    }

private:
    bool isP(const Expr &e) const { return e.sameAs(m_p) || e.equals(m_p); }
    Expr identity(ReduceKind kind) const { return ir::reductionIdentity(kind, m_p.dtype()); }

    std::optional<Accumulation> fold(ReduceKind kind, const Expr &inner, const Expr &term,
                                     Expr (*combine)(const Expr &, const Expr &)) const
    {
        if (uses(term))
            return std::nullopt;
        auto m = match(inner);
        if (!m || !m->vars.empty() || (m->kind && *m->kind != kind))
            return std::nullopt;
        return Accumulation{kind, {}, m->term.defined() ? combine(m->term, term) : term};
    }

    std::optional<Accumulation> matchBinary(const Expr &e) const
    {
        const Expr &a = e.operand(0);
        const Expr &b = e.operand(1);
        switch (e.binaryOp()) {
        case BinaryOp::Add:
            if (!uses(b))
                return fold(ReduceKind::Sum, a, b, [](const Expr &x, const Expr &y) { return x + y; });
            return fold(ReduceKind::Sum, b, a, [](const Expr &x, const Expr &y) { return x + y; });
        case BinaryOp::Sub: {
            if (uses(b))
                return std::nullopt;
            auto m = fold(ReduceKind::Sum, a, b, [](const Expr &x, const Expr &y) { return x - y; });
            if (m && isP(a))
                m->term = ir::neg(b);
            return m;
        }
        case BinaryOp::Mul:
            if (!uses(b))
                return fold(ReduceKind::Prod, a, b, [](const Expr &x, const Expr &y) { return x * y; });
            return fold(ReduceKind::Prod, b, a, [](const Expr &x, const Expr &y) { return x * y; });
        case BinaryOp::Max:
        case BinaryOp::Min: {
            const ReduceKind kind = e.binaryOp() == BinaryOp::Max ? ReduceKind::Max : ReduceKind::Min;
            auto combine = e.binaryOp() == BinaryOp::Max ? +[](const Expr &x, const Expr &y) { return ir::max(x, y); }
                                                         : +[](const Expr &x, const Expr &y) { return ir::min(x, y); };
            if (!uses(b))
                return fold(kind, a, b, combine);
            return fold(kind, b, a, combine);
        }
        default:
            return std::nullopt;
        }
    }

    std::optional<Accumulation> matchSelect(const Expr &e) const
    {
        const Expr &c = e.operand(0);
        const Expr &a = e.operand(1);
        const Expr &b = e.operand(2);
        if (uses(c)) {
            // if (x > m) m = x;  and  m = (x < m) ? x : m;  are max and min.
            if (c.kind() != ExprKind::Binary || !ir::isComparison(c.binaryOp()))
                return std::nullopt;
            const Expr &l = c.operand(0);
            const Expr &r = c.operand(1);
            const BinaryOp op = c.binaryOp();
            const bool greater = op == BinaryOp::Gt || op == BinaryOp::Ge;
            const bool lessOp = op == BinaryOp::Lt || op == BinaryOp::Le;
            if (!greater && !lessOp)
                return std::nullopt;
            // select(l > r, l, r) is max(l, r); select(l > r, r, l) is min(l, r).
            std::optional<bool> isMax;
            if ((a.equals(l) && b.equals(r)))
                isMax = greater;
            else if (a.equals(r) && b.equals(l))
                isMax = lessOp;
            if (!isMax)
                return std::nullopt;
            const Expr term = isP(l) ? r : isP(r) ? l : Expr();
            if (!term.defined() || uses(term))
                return std::nullopt;
            return Accumulation{*isMax ? ReduceKind::Max : ReduceKind::Min, {}, term};
        }
        auto ma = match(a);
        auto mb = match(b);
        if (!ma || !mb)
            return std::nullopt;
        if (ma->kind && mb->kind && *ma->kind != *mb->kind)
            return std::nullopt;
        const auto kind = ma->kind ? ma->kind : mb->kind;
        if (!kind)
            return Accumulation{};
        if (!ma->vars.empty() && !mb->vars.empty())
            return std::nullopt;
        if ((!ma->vars.empty() && mb->term.defined()) || (!mb->vars.empty() && ma->term.defined()))
            return std::nullopt; // a per-inner-iteration term on one side, a single term on the other
        const Expr ta = ma->term.defined() ? ma->term : identity(*kind);
        const Expr tb = mb->term.defined() ? mb->term : identity(*kind);
        return Accumulation{kind, ma->vars.empty() ? mb->vars : ma->vars, selectOrFold(c, ta, tb)};
    }

    std::optional<Accumulation> matchPending(const Expr &e) const
    {
        if (!isPendingTensor(e.tensor().id))
            return std::nullopt;
        const PendingReduction &r = m_pending.at(static_cast<std::size_t>(pendingIndex(e.tensor().id)));
        if (!r.init.defined() || !isP(r.init) || uses(r.body))
            return std::nullopt;
        return Accumulation{r.kind, r.vars, r.body};
    }

    Expr m_p;
    const std::vector<PendingReduction> &m_pending;
};

struct LoopHeader {
    std::string name;      ///< the loop variable as written
    bool declared = false; ///< declared in the for-initializer
    Expr lo, hi, step;
};

} // namespace

KernelExec::Flow KernelExec::execFor(TSNode stmt, State &s)
{
    if (m_loopDepth >= kMaxLoopDepth)
        refuse(stmt, "loops nested deeper than " + std::to_string(kMaxLoopDepth));
    const TSNode init = field(stmt, "initializer");
    const TSNode condNode = field(stmt, "condition");
    const TSNode update = field(stmt, "update");
    const TSNode body = field(stmt, "body");
    const char *shape = "the loop is not of the form for (int i = a; i < b; i += c)";
    const char *shapeAdvice = "write the loop with one integer counter, a < or <= bound and a constant positive step";

    LoopHeader h;
    if (kind(init) == "declaration") {
        const auto decls = namedChildren(init);
        TSNode d{};
        for (TSNode x : decls) {
            if (kind(x) == "init_declarator")
                d = x;
        }
        if (ts_node_is_null(d) || kind(field(d, "declarator")) != "identifier")
            refuse(stmt, shape, shapeAdvice);
        auto t = scalarTypeFromText(textOf(field(init, "type")));
        if (!t || !ir::isInteger(*t))
            refuse(stmt, "the loop counter is not an integer", shapeAdvice);
        h.name = textOf(field(d, "declarator"));
        h.declared = true;
        h.lo = eval(field(d, "value"), s);
    } else if (kind(init) == "assignment_expression" && operatorOf(init) == "="
               && kind(field(init, "left")) == "identifier") {
        h.name = textOf(field(init, "left"));
        h.lo = eval(field(init, "right"), s);
    } else {
        refuse(stmt, shape, shapeAdvice);
    }

    if (kind(condNode) != "binary_expression")
        refuse(stmt, shape, shapeAdvice);
    std::string rel(operatorOf(condNode));
    TSNode bound = field(condNode, "right");
    if (textOf(field(condNode, "left")) != h.name) {
        if (textOf(field(condNode, "right")) != h.name)
            refuse(condNode, shape, shapeAdvice);
        bound = field(condNode, "left");
        rel = rel == ">" ? "<" : rel == ">=" ? "<=" : rel == "<" ? ">" : rel == "<=" ? ">=" : rel;
    }

    if (kind(update) == "update_expression" && textOf(field(update, "argument")) == h.name
        && operatorOf(update) == "++") {
        h.step = Expr(1);
    } else if (kind(update) == "assignment_expression" && textOf(field(update, "left")) == h.name
               && operatorOf(update) == "+=") {
        h.step = eval(field(update, "right"), s);
    } else if (kind(update) == "assignment_expression" && textOf(field(update, "left")) == h.name
               && operatorOf(update) == "=" && kind(field(update, "right")) == "binary_expression"
               && operatorOf(field(update, "right")) == "+"
               && textOf(field(field(update, "right"), "left")) == h.name) {
        h.step = eval(field(field(update, "right"), "right"), s);
    } else {
        refuse(stmt, "the loop does not count up by a constant step", shapeAdvice);
    }

    // Evaluate the bound with the counter visible (it may not mention it, but a macro might).
    {
        State probe = s;
        probe.scopes.emplace_back();
        Local counter;
        counter.name = h.name;
        counter.value = ir::var("%uninit");
        declare(probe, counter);
        h.hi = eval(bound, probe);
    }
    if (rel == "<=")
        h.hi = h.hi + 1;
    else if (rel != "<" && rel != "!=")
        refuse(condNode, "the loop condition must bound the counter from above (i < n or i <= n)", shapeAdvice);
    h.lo = m_math.simplify(h.lo);
    h.hi = m_math.simplify(h.hi);
    h.step = m_math.simplify(h.step);
    for (const Expr *x : {&h.lo, &h.hi, &h.step}) {
        checkIndex(*x, stmt, "the loop's trip count");
        if (readsAny(*x, [](const ir::TensorRef &) { return true; }))
            refuse(stmt, "the loop's trip count depends on data");
    }
    auto lo = m_math.toPoly(h.lo);
    auto hi = m_math.toPoly(h.hi);
    auto step = m_math.toPoly(h.step);
    if (!lo || !hi || !step)
        refuse(stmt, "the loop bounds are not integers", shapeAdvice);
    if (rel == "!=" && !(step->constantValue() == 1 && m_math.lessEqual(*lo, *hi)))
        refuse(condNode, "a != loop condition is only understood with step 1 from below", shapeAdvice);

    // Grid- and block-stride loops: every index in [0, hi) is visited by exactly one thread.
    std::vector<std::string> consumed;
    int strideDim = -1;
    for (int d = 0; d < 3 && consumed.empty(); ++d) {
        strideDim = d;
        const auto dd = static_cast<std::size_t>(d);
        auto bx = m_math.toPoly(ir::var(blockVar(d)));
        auto tx = m_math.toPoly(ir::var(threadVar(d)));
        auto bdim = m_math.toPoly(m_launch.block[dd]);
        auto gdim = m_math.toPoly(m_launch.grid[dd]);
        if (*lo == *bx * *bdim + *tx && *step == *gdim * *bdim)
            consumed = {blockVar(d), threadVar(d)};
        else if (*lo == *tx && *step == *bdim && !(bdim->constantValue() == 1))
            consumed = {threadVar(d)};
        else if (*lo == *bx && *step == *gdim && !(gdim->constantValue() == 1))
            consumed = {blockVar(d)};
    }

    LoopVar lv;
    lv.name = "%L" + std::to_string(ts_node_start_byte(stmt)) + m_inlineContext;
    lv.hint = h.name;
    Expr counterValue;
    if (!consumed.empty()) {
        lv.lo = Expr(0);
        lv.hi = h.hi;
        counterValue = ir::var(lv.name);
        for (const std::string &c : consumed)
            m_effects.consumedThreadVars.push_back(c);
        m_effects.strideBounds.emplace(strideDim, h.hi);
        m_effects.strideLoops[lv.name] = StrideLoop{h.lo, h.step};
    } else if (step->constantValue() == 1) {
        lv.lo = h.lo;
        lv.hi = h.hi;
        counterValue = ir::var(lv.name);
    } else if (auto c = step->constantValue(); c && *c > 1) {
        lv.lo = Expr(0);
        lv.hi = m_math.simplify((h.hi - h.lo + (*c - 1)) / Expr(*c));
        counterValue = m_math.simplify(h.lo + ir::var(lv.name) * Expr(*c));
    } else {
        refuse(stmt, "the loop step " + h.step.toString() + " is neither a positive constant nor a grid or block stride",
               shapeAdvice);
    }
    m_math.setRange(lv.name, lv.lo, lv.hi);
    m_effects.loopVars[lv.name] = lv;

    ++m_loopDepth;
    struct DepthGuard {
        int &depth;
        ~DepthGuard() { --depth; }
    } guard{m_loopDepth};

    const std::size_t outerScopes = s.scopes.size();
    auto runBody = [&](State start, std::vector<StoreEffect> &stores) {
        ExitSink continues;
        ExitSink *savedContinue = m_continueSink;
        std::vector<StoreEffect> *savedStores = m_storeSink;
        m_continueSink = &continues;
        m_storeSink = &stores;
        start.scopes.emplace_back();
        Local counter;
        counter.name = h.name;
        counter.type = ir::DType::I32;
        counter.value = counterValue;
        declare(start, counter);
        const State base = start;
        State end;
        try {
            const Flow flow = exec(body, start);
            std::vector<State> ends = std::move(continues.states);
            if (flow == Flow::Normal)
                ends.push_back(std::move(start));
            if (ends.empty())
                refuse(stmt, "every path through the loop body returns");
            end = merge(base, std::move(ends), stmt);
        } catch (...) {
            m_continueSink = savedContinue;
            m_storeSink = savedStores;
            throw;
        }
        m_continueSink = savedContinue;
        m_storeSink = savedStores;
        end.scopes.resize(outerScopes);
        return end;
    };

    // Pass 0 finds what the body changes; pass 1 runs it again with running values as placeholders.
    std::vector<StoreEffect> discovered;
    const State end0 = runBody(s, discovered);
    struct Carried {
        bool isCell = false;
        std::string name; ///< scalar name or cell key
        std::size_t scope = 0;
        ir::DType type = ir::DType::F32;
        Expr initial;
        Expr placeholder;
    };
    std::vector<Carried> carried;
    for (std::size_t d = 0; d < outerScopes; ++d) {
        for (const auto &[name, local] : s.scopes[d]) {
            if (local.kind != LocalKind::Scalar || (!h.declared && name == h.name))
                continue;
            const Local &after = end0.scopes[d].at(name);
            if (!after.value.sameAs(local.value))
                carried.push_back({false, name, d, local.type, local.value, {}});
        }
    }
    std::vector<std::string> mapCells;
    for (const auto &[key, cell] : end0.cells) {
        auto before = s.cells.find(key);
        if (before != s.cells.end() && before->second.value.sameAs(cell.value))
            continue;
        if (mentionsVar(cell.index, lv.name)) {
            mapCells.push_back(key);
            continue;
        }
        const BufferInfo &b = (*m_program.buffers)[static_cast<std::size_t>(cell.buffer)];
        const Expr initial = before != s.cells.end() ? readCell(before->second, s) : ir::read(b.ref(cell.buffer), {cell.index});
        carried.push_back({true, key, 0, b.dtype, initial, {}});
    }
    if (!carried.empty() && (!discovered.empty() || !mapCells.empty()))
        refuse(stmt, "the loop both accumulates into '" + (carried.front().isCell ? std::string("a buffer element")
                                                                                   : carried.front().name)
                         + "' and stores a different element per iteration",
               "split the loop in two");

    State p1 = s;
    for (Carried &c : carried) {
        c.placeholder = placeholder(c.isCell ? "cell" : c.name, c.type);
        if (c.isCell) {
            Cell cell = end0.cells.at(c.name);
            auto before = s.cells.find(c.name);
            cell.guard = before != s.cells.end() ? before->second.guard : s.conditions;
            cell.value = c.placeholder;
            p1.cells[c.name] = cell;
        } else {
            p1.scopes[c.scope].at(c.name).value = c.placeholder;
        }
    }
    std::vector<StoreEffect> stores;
    const State end1 = runBody(p1, stores);
    const bool touchesShared = !end1.shared.empty() && end1.phase != s.phase;
    if (touchesShared && end1.lastSharedReadPhase == end1.phase)
        refuse(stmt, "no __syncthreads() between the last read of the tile and the next iteration's stores",
               "end the loop body with __syncthreads()");

    if (carried.empty()) {
        for (const auto &[key, cell] : end1.cells) {
            if (!mentionsVar(cell.index, lv.name))
                continue;
            StoreEffect st;
            st.buffer = cell.buffer;
            st.index = cell.index;
            st.value = cell.value;
            st.guard = cell.guard;
            st.mapLoops = {lv};
            st.span = cell.span;
            st.parameter = cell.parameter;
            m_storeSink->push_back(std::move(st));
        }
        for (StoreEffect &st : stores) {
            st.mapLoops.insert(st.mapLoops.begin(), lv);
            m_storeSink->push_back(std::move(st));
        }
        for (const auto &[key, cell] : end1.cells) {
            if (!mentionsVar(cell.index, lv.name))
                s.cells[key] = cell;
        }
    } else {
        if (!stores.empty())
            refuse(stmt, "the loop both accumulates and stores", "split the loop in two");
        for (const Carried &c : carried) {
            const Expr e = c.isCell ? end1.cells.at(c.name).value : end1.scopes[c.scope].at(c.name).value;
            const std::string shown = c.isCell ? "the buffer element" : "'" + c.name + "'";
            for (const Carried &other : carried) {
                if (&other == &c)
                    continue;
                AccumulationMatcher otherUse(other.placeholder, m_effects.pending);
                if (otherUse.uses(e))
                    refuse(stmt, "the update of " + shown + " depends on the running value of "
                                     + (other.isCell ? "a buffer element" : "'" + other.name + "'"),
                           "compute the two quantities in separate loops");
            }
            AccumulationMatcher matcher(c.placeholder, m_effects.pending);
            auto acc = matcher.match(e);
            if (!acc)
                refuse(stmt, "the update of " + shown + " in this loop is not a running sum, product, minimum or "
                                 "maximum (" + e.toString() + ")",
                       "only loops that fold one value per iteration into a variable become reductions");
            if (!acc->kind)
                continue;
            for (const Carried &other : carried) {
                if (readsAny(acc->term, [&](const ir::TensorRef &t) { return t.id == other.placeholder.tensor().id; }))
                    refuse(stmt, "the update of " + shown + " depends on the running value of "
                                     + (other.isCell ? "a buffer element" : "'" + other.name + "'"),
                           "compute the two quantities in separate loops");
            }
            if (readsAny(acc->term, [](const ir::TensorRef &t) { return isPlaceholderTensor(t.id); }))
                refuse(stmt, "the update of " + shown + " depends on a running value of an enclosing loop");
            for (const LoopVar &inner : acc->vars) {
                if (mentionsVar(inner.lo, lv.name) || mentionsVar(inner.hi, lv.name))
                    refuse(stmt, "the bounds of the inner loop over '" + inner.hint + "' depend on '" + h.name + "'",
                           "triangular reductions are not supported");
            }
            if (mentionsVar(c.initial, "%uninit"))
                refuse(stmt, shown + " is accumulated before it is initialized");
            PendingReduction p;
            p.id = static_cast<int>(m_effects.pending.size());
            p.kind = *acc->kind;
            p.vars = {lv};
            p.vars.insert(p.vars.end(), acc->vars.begin(), acc->vars.end());
            p.body = m_math.simplify(acc->term);
            const Expr init = m_math.simplify(c.initial);
            if (!init.equals(ir::reductionIdentity(p.kind, c.type)))
                p.init = init;
            p.guard = s.conditions;
            p.dtype = c.type;
            p.hint = c.isCell ? std::string() : c.name;
            p.span = m_tree->span(stmt);
            if (m_site)
                p.span = ir::SourceSpan{*m_site, *m_site};
            const Expr result = pendingRead(p);
            m_effects.pending.push_back(std::move(p));
            if (c.isCell) {
                Cell cell = end1.cells.at(c.name);
                auto before = s.cells.find(c.name);
                cell.guard = before != s.cells.end() ? before->second.guard : s.conditions;
                cell.value = result;
                s.cells[c.name] = std::move(cell);
            } else {
                s.scopes[c.scope].at(c.name).value = result;
            }
        }
    }
    // Tiles stored inside the loop are not modelled after it; a later read says so.
    for (const auto &[key, store] : end1.shared) {
        if (!s.shared.count(key))
            s.sharedWrittenInLoop.emplace(store.array, store.where);
    }
    if (touchesShared) {
        for (const auto &[key, store] : end1.shared)
            s.sharedWrittenInLoop.emplace(store.array, store.where);
        s.shared.clear();
    }
    s.phase = end1.phase;
    s.lastSharedReadPhase = end1.lastSharedReadPhase;
    if (!h.declared) {
        if (Local *counter = lookup(s, h.name))
            counter->value = m_math.lessEqual(*lo, *hi) && consumed.empty() ? h.hi : ir::var("%uninit");
    }
    return Flow::Normal;
}

} // namespace stitch::frontend::cudalift
