// IndexMath: proofs that an index polynomial is non-negative over the declared ranges.
// Sound and incomplete: variables are replaced by the end of their range that minimises the
// polynomial, divisions by their bounds, sizes by their lower bounds; "false" means "not proven".
#include "core/frontend/cudalift/IndexMath.h"

#include <algorithm>

namespace stitch::frontend::cudalift {

using ir::BinaryOp;
using ir::Expr;

namespace {

// Proofs recurse into coefficients and opaque atoms; real index expressions need two or three
// levels, the bound keeps adversarial input from running away.
constexpr int kMaxProofDepth = 6;
constexpr int kMaxEliminations = 32;

bool hasVarAtom(const IntPoly &p)
{
    for (const std::string &a : p.atoms()) {
        if (IndexMath::isVarKey(a))
            return true;
    }
    return false;
}

} // namespace

const std::optional<IntPoly> &IndexMath::derivedPoly(const std::string &name) const
{
    static const std::optional<IntPoly> none;
    if (!m_derived)
        return none;
    auto def = m_derived->find(name);
    if (def == m_derived->end())
        return none;
    auto cached = m_derivedPolys.find(name);
    if (cached != m_derivedPolys.end())
        return cached->second;
    // Mark before computing, so a definition that mentions itself cannot recurse. Proofs see
    // different state while the definition is computed and after, so memoized results go.
    m_derivedPolys[name] = std::nullopt;
    forgetProofs();
    auto poly = const_cast<IndexMath &>(*this).toPoly(def->second);
    forgetProofs();
    if (poly) {
        for (const std::string &a : poly->atoms()) {
            if (isOpaqueKey(a))
                m_assumedNumerators.insert(a);
        }
    }
    return m_derivedPolys[name] = poly;
}

IntPoly IndexMath::expandDerived(const IntPoly &p) const
{
    IntPoly q = p;
    for (int round = 0; round < 4; ++round) {
        bool changed = false;
        for (const std::string &a : q.atoms()) {
            if (!isSizeKey(a))
                continue;
            if (const auto &d = derivedPoly(a.substr(2))) {
                q = q.substituted(a, *d);
                changed = true;
            }
        }
        if (!changed)
            break;
    }
    return q;
}

void IndexMath::forgetProofs() const
{
    for (auto &[context, memo] : m_memos.byContext)
        memo.clear();
    m_memos.entries = 0;
}

void IndexMath::selectProofContext() const
{
    // Called outside any proof, so the memos may go entirely. Opaque atoms and derived sizes
    // only ever get added; a new one may change what is provable.
    const std::size_t derivedSizes = m_derived ? m_derived->size() : 0;
    if (m_opaqueParts.size() != m_memos.opaqueParts || derivedSizes != m_memos.derivedSizes
        || m_memos.entries > 100000 || m_memos.byContext.size() > 10000) {
        m_memos = ProofMemos();
        m_memos.opaqueParts = m_opaqueParts.size();
        m_memos.derivedSizes = derivedSizes;
    }
    if (!m_contextChanged && m_memos.current)
        return;
    // Every name is length-prefixed: atom keys hold expression text, so no separator is safe.
    std::string key;
    auto name = [&](const std::string &text) { key += std::to_string(text.size()) + ':' + text; };
    auto poly = [&](const IntPoly &p) {
        for (const auto &[monomial, c] : p.terms()) {
            key += std::to_string(c);
            for (const std::string &atom : monomial) {
                key += '*';
                name(atom);
            }
            key += '+';
        }
        key += ';';
    };
    for (const IntPoly &fact : m_facts)
        poly(fact);
    key += '|';
    for (const auto &[var, r] : m_ranges) {
        name(var);
        poly(r.lo);
        poly(r.hi);
    }
    key += '|';
    for (const auto &[size, lowerBound] : m_sizeLowerBounds) {
        name(size);
        key += std::to_string(lowerBound) + ';';
    }
    m_memos.current = &m_memos.byContext[key];
    m_contextChanged = false;
}

bool IndexMath::nonNegative(const IntPoly &p) const
{
    // Simplification calls proofs and proofs never simplify, but keep nesting bounded regardless.
    if (m_activeProofs > 4)
        return false;
    if (m_activeProofs == 0)
        selectProofContext();
    ++m_activeProofs;
    const bool proven = proveNonNegative(p, 0);
    --m_activeProofs;
    return proven;
}

bool IndexMath::proveNonNegative(const IntPoly &p, int depth) const
{
    if (auto c = p.constantValue())
        return *c >= 0;
    if (depth > kMaxProofDepth)
        return false;
    // The search below tries every fact at every level, so the same sub-goals come back
    // exponentially often (conv2d's bounds checks took ~1 s). A proof found once holds at any
    // depth; a failure holds at the same or a deeper level, which has less left to try.
    auto known = m_memos.current->find(p.terms());
    if (known != m_memos.current->end() && (known->second < 0 || depth >= known->second))
        return known->second < 0;
    bool proven = proveDirect(p, depth);
    for (std::size_t f = 0; f < m_facts.size() && !proven; ++f)
        proven = proveDirect(p - m_facts[f], depth);
    auto [entry, added] = m_memos.current->try_emplace(p.terms(), depth);
    entry->second = proven ? -1 : std::min(entry->second, depth);
    m_memos.entries += added ? 1 : 0;
    return proven;
}

bool IndexMath::proveDirect(const IntPoly &p, int depth) const
{
    IntPoly q = p;
    for (int step = 0; step < kMaxEliminations; ++step) {
        if (auto c = q.constantValue())
            return *c >= 0;
        const std::set<std::string> atoms = q.atoms();
        if (std::any_of(atoms.begin(), atoms.end(), [](const std::string &a) { return isOpaqueKey(a); })) {
            auto bounded = boundOpaqueTerms(q, depth);
            if (!bounded)
                return false;
            q = *bounded;
            continue;
        }
        std::vector<std::string> vars;
        for (const std::string &a : atoms) {
            if (isVarKey(a))
                vars.push_back(a);
        }
        if (vars.empty()) {
            if (proveSizesOnly(q, depth))
                return true;
            // Derived sizes were taken as plain non-negative extents; their definitions may say more.
            const IntPoly expanded = expandDerived(q);
            if (expanded == q)
                return false;
            q = expanded;
            continue;
        }
        // Eliminate an innermost variable first: one that no other remaining range mentions.
        std::string chosen;
        for (const std::string &v : vars) {
            bool mentioned = false;
            for (const std::string &w : vars) {
                const VarRange *r = range(w.substr(2));
                if (w != v && r && (r->lo.contains(v) || r->hi.contains(v)))
                    mentioned = true;
            }
            if (!mentioned) {
                chosen = v;
                break;
            }
        }
        const VarRange *r = chosen.empty() ? nullptr : range(chosen.substr(2));
        if (!r)
            return false;
        auto linear = q.linearIn(chosen);
        if (!linear)
            return false;
        const auto &[coefficient, rest] = *linear;
        if (proveNonNegative(coefficient, depth + 1))
            q = coefficient * r->lo + rest;
        else if (proveNonNegative(-coefficient, depth + 1))
            q = coefficient * (r->hi - 1) + rest;
        else
            return false;
    }
    return false;
}

std::optional<IntPoly> IndexMath::boundOpaqueTerms(const IntPoly &p, int depth) const
{
    IntPoly result;
    for (const auto &[m, c] : p.terms()) {
        std::vector<std::string> opaqueAtoms;
        IntPoly rest = IntPoly::constant(c);
        for (const std::string &a : m) {
            if (isOpaqueKey(a))
                opaqueAtoms.push_back(a);
            else if (isVarKey(a))
                return std::nullopt; // the sign of the multiplier would be unknown
            else
                rest = rest * IntPoly::atom(a);
        }
        if (opaqueAtoms.empty()) {
            result = result + rest;
            continue;
        }
        if (opaqueAtoms.size() != 1)
            return std::nullopt;
        auto parts = m_opaqueParts.find(opaqueAtoms.front());
        if (parts == m_opaqueParts.end())
            return std::nullopt;
        const IntPoly *x = &parts->second.a;
        const IntPoly *d = &parts->second.b;
        const BinaryOp op = parts->second.op;
        if (op == BinaryOp::Min || op == BinaryOp::Max) {
            // min(x, y) <= x and max(x, y) >= x: usable on the side that gives a lower bound.
            if ((op == BinaryOp::Min) == (c < 0)) {
                result = result + rest * *x;
                continue;
            }
            return std::nullopt;
        }
        if (op != BinaryOp::Div && op != BinaryOp::FloorDiv && op != BinaryOp::Mod)
            return std::nullopt;
        if (!d->isPositiveMonomial() || hasVarAtom(*d)
            || !(m_assumedNumerators.count(opaqueAtoms.front()) || proveNonNegative(*x, depth + 1)))
            return std::nullopt;
        if (op == BinaryOp::Mod) {
            if (c < 0)
                result = result + rest * (*d - 1);
            continue; // a remainder is at least 0
        }
        const auto scaled = rest.dividedBy(*d);
        if (c > 0)
            result = result + (scaled ? *scaled * (*x - *d + 1) : IntPoly());
        else if (scaled)
            result = result + *scaled * *x;
        else
            return std::nullopt;
    }
    return result;
}

bool IndexMath::proveSizesOnly(const IntPoly &p, int depth) const
{
    (void)depth;
    std::vector<std::pair<std::string, std::int64_t>> lowerBounds;
    bool boundsNonNegative = true;
    for (const std::string &a : p.atoms()) {
        if (!isSizeKey(a))
            return false;
        // Sizes are at least 1 unless the program sets them lower; derived sizes (OH, blocks)
        // are extents, at least 0.
        auto it = m_sizeLowerBounds.find(a.substr(2));
        const bool derived = m_derived && m_derived->count(a.substr(2));
        const std::int64_t lowerBound = it != m_sizeLowerBounds.end() ? it->second : derived ? 0 : 1;
        lowerBounds.emplace_back(a, lowerBound);
        boundsNonNegative = boundsNonNegative && lowerBound >= 0;
    }
    // With every size >= 0, non-negative coefficients already prove it; the substitution below
    // (each size = its lower bound + a non-negative rest) only helps negative ones, and it is
    // the costly part (it multiplies out every power).
    if (boundsNonNegative
        && std::all_of(p.terms().begin(), p.terms().end(), [](const auto &term) { return term.second >= 0; }))
        return true;
    IntPoly q = p;
    for (const auto &[a, lowerBound] : lowerBounds)
        q = q.substituted(a, IntPoly::atom(a) + lowerBound);
    for (const auto &[m, c] : q.terms()) {
        if (c < 0)
            return false;
    }
    return true;
}

} // namespace stitch::frontend::cudalift
