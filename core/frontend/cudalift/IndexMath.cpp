#include "core/frontend/cudalift/IndexMath.h"

#include "core/frontend/cudalift/ExprTools.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace stitch::frontend::cudalift {

using ir::BinaryOp;
using ir::Expr;
using ir::ExprKind;

namespace {

std::int64_t cDivide(std::int64_t a, std::int64_t b, BinaryOp op)
{
    if (op == BinaryOp::Mod)
        return a % b;
    std::int64_t q = a / b;
    if (op == BinaryOp::FloorDiv && (a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return q;
}

bool hasVarAtom(const IntPoly &p)
{
    for (const std::string &a : p.atoms()) {
        if (IndexMath::isVarKey(a))
            return true;
    }
    return false;
}

} // namespace

std::string IndexMath::keyOf(const Expr &atom)
{
    std::string key;
    if (atom.kind() == ExprKind::IterVar)
        key = "v:" + atom.name();
    else if (atom.kind() == ExprKind::SizeVar)
        key = "s:" + atom.name();
    else
        key = "o:" + atom.toString();
    m_atoms.emplace(key, atom);
    return key;
}

const Expr &IndexMath::atomExpr(const std::string &key) const
{
    static const Expr undefined;
    auto it = m_atoms.find(key);
    return it != m_atoms.end() ? it->second : undefined;
}

void IndexMath::setRange(const std::string &var, const Expr &lo, const Expr &hi)
{
    auto l = toPoly(lo);
    auto h = toPoly(hi);
    if (l && h)
        setRange(var, *l, *h);
    else
        clearRange(var);
}

void IndexMath::setRange(const std::string &var, const IntPoly &lo, const IntPoly &hi)
{
    keyOf(ir::var(var));
    m_ranges[var] = VarRange{lo, hi};
    m_contextChanged = true;
}

void IndexMath::clearRange(const std::string &var)
{
    m_ranges.erase(var);
    m_contextChanged = true;
}

const VarRange *IndexMath::range(const std::string &var) const
{
    auto it = m_ranges.find(var);
    return it != m_ranges.end() ? &it->second : nullptr;
}

void IndexMath::setSizeLowerBound(const std::string &size, std::int64_t lowerBound)
{
    m_sizeLowerBounds[size] = lowerBound;
    m_contextChanged = true;
}

std::optional<IntPoly> IndexMath::asNonNegative(const Expr &c)
{
    if (c.kind() != ExprKind::Binary || !ir::isComparison(c.binaryOp()))
        return std::nullopt;
    auto a = toPoly(c.operand(0));
    auto b = toPoly(c.operand(1));
    if (!a || !b)
        return std::nullopt;
    switch (c.binaryOp()) {
    case BinaryOp::Lt: return *b - *a - 1;
    case BinaryOp::Le: return *b - *a;
    case BinaryOp::Gt: return *a - *b - 1;
    case BinaryOp::Ge: return *a - *b;
    default: return std::nullopt;
    }
}

std::vector<IntPoly> IndexMath::factsOf(const Expr &condition)
{
    std::vector<IntPoly> facts;
    for (const Expr &c : conjuncts(condition)) {
        if (auto p = asNonNegative(c)) {
            facts.push_back(*p);
        } else if (c.kind() == ExprKind::Binary && c.binaryOp() == BinaryOp::Eq) {
            auto a = toPoly(c.operand(0));
            auto b = toPoly(c.operand(1));
            if (a && b) {
                facts.push_back(*a - *b);
                facts.push_back(*b - *a);
            }
        }
    }
    return facts;
}

IntPoly IndexMath::opaque(const Expr &expr)
{
    std::vector<Expr> operands;
    for (const Expr &o : expr.operands())
        operands.push_back(simplify(o));
    return IntPoly::atom(keyOf(operands.empty() ? expr : rebuild(expr, std::move(operands))));
}

std::optional<IntPoly> IndexMath::divide(const Expr &expr, bool wantRemainder)
{
    auto a = toPoly(expr.operand(0));
    auto b = toPoly(expr.operand(1));
    if (!a || !b)
        return opaque(expr);
    const auto ca = a->constantValue();
    const auto cb = b->constantValue();
    if (ca && cb) {
        if (*cb == 0)
            return opaque(expr);
        return IntPoly::constant(cDivide(*ca, *cb, expr.binaryOp()));
    }
    if (b->isPositiveMonomial() && !hasVarAtom(*b)) {
        auto [quotient, remainder] = a->splitDivisible(*b);
        if (remainder.isZero() && expr.binaryOp() != BinaryOp::FloorDiv)
            return wantRemainder ? IntPoly() : quotient;
        if (nonNegative(remainder) && less(remainder, *b) && nonNegative(*a))
            return wantRemainder ? remainder : quotient;
        // Peel a factor f of the divisor b = f * c: (f * q + r) / (f * c) = q / c and
        // (f * q + r) % (f * c) = f * (q % c) + r, for a >= 0 and 0 <= r < f.
        const auto &[monomial, coefficient] = *b->terms().begin();
        std::vector<IntPoly> factors;
        for (const std::string &atom : monomial)
            factors.push_back(IntPoly::atom(atom));
        if (coefficient > 1)
            factors.push_back(IntPoly::constant(coefficient));
        for (const IntPoly &f : factors) {
            auto rest = b->dividedBy(f);
            if (!rest || rest->constantValue() == 1)
                continue;
            auto [q, r] = a->splitDivisible(f);
            if (q.isZero() || !nonNegative(r) || !less(r, f) || !nonNegative(*a))
                continue;
            const Expr inner = ir::binary(wantRemainder ? BinaryOp::Mod : BinaryOp::Div, toExpr(q), toExpr(*rest));
            auto folded = toPoly(inner);
            if (!folded)
                continue;
            return wantRemainder ? f * *folded + r : *folded;
        }
    }
    return opaqueBinary(expr.binaryOp(), *a, *b);
}

IntPoly IndexMath::opaqueBinary(BinaryOp op, const IntPoly &a, const IntPoly &b)
{
    const std::string key = keyOf(ir::binary(op, toExpr(a), toExpr(b)));
    m_opaqueParts[key] = OpaqueParts{op, a, b};
    return IntPoly::atom(key);
}

std::optional<IntPoly> IndexMath::toPoly(const Expr &e)
{
    if (!e.defined() || !ir::isInteger(e.dtype()))
        return std::nullopt;
    switch (e.kind()) {
    case ExprKind::IntConst:
        return IntPoly::constant(e.intValue());
    case ExprKind::SizeVar:
        if (const auto &d = derivedPoly(e.name())) {
            const std::set<std::string> atoms = d->atoms();
            if (std::none_of(atoms.begin(), atoms.end(), isOpaqueKey))
                return *d;
        }
        return IntPoly::atom(keyOf(e));
    case ExprKind::IterVar:
        return IntPoly::atom(keyOf(e));
    case ExprKind::Unary:
        if (e.unaryOp() == ir::UnaryOp::Neg) {
            if (auto p = toPoly(e.operand(0)))
                return -*p;
        }
        return opaque(e);
    case ExprKind::Binary: {
        const BinaryOp op = e.binaryOp();
        if (op == BinaryOp::Div || op == BinaryOp::FloorDiv)
            return divide(e, false);
        if (op == BinaryOp::Mod)
            return divide(e, true);
        auto a = toPoly(e.operand(0));
        auto b = toPoly(e.operand(1));
        if (!a || !b)
            return opaque(e);
        switch (op) {
        case BinaryOp::Add: return *a + *b;
        case BinaryOp::Sub: return *a - *b;
        case BinaryOp::Mul: return *a * *b;
        case BinaryOp::Min:
        case BinaryOp::Max: {
            const bool aFirst = lessEqual(*a, *b);
            if (aFirst || lessEqual(*b, *a))
                return (op == BinaryOp::Min) == aFirst ? *a : *b;
            return opaqueBinary(op, *a, *b);
        }
        default:
            return opaque(e);
        }
    }
    case ExprKind::Cast:
        if (ir::isInteger(e.operand(0).dtype()))
            return toPoly(e.operand(0));
        return opaque(e);
    default:
        return opaque(e);
    }
}

int IndexMath::atomRank(const std::string &key) const
{
    if (isVarKey(key)) {
        auto it = std::find(m_varOrder.begin(), m_varOrder.end(), key.substr(2));
        return it != m_varOrder.end() ? static_cast<int>(it - m_varOrder.begin()) : 500;
    }
    return isSizeKey(key) ? 1000 : 2000;
}

Expr IndexMath::toExpr(const IntPoly &p) const
{
    if (p.isZero())
        return ir::intConst(0);
    using RankedAtoms = std::vector<std::pair<int, std::string>>;
    struct Term {
        RankedAtoms atoms;
        std::int64_t coefficient;
    };
    std::vector<Term> terms;
    for (const auto &[m, c] : p.terms()) {
        Term t{{}, c};
        for (const std::string &a : m)
            t.atoms.emplace_back(atomRank(a), a);
        std::sort(t.atoms.begin(), t.atoms.end());
        terms.push_back(std::move(t));
    }
    // Variables outer first, then sizes, then the constant; "row * N + col - 1" reads as written.
    std::stable_sort(terms.begin(), terms.end(), [](const Term &a, const Term &b) {
        if (a.atoms.empty() != b.atoms.empty())
            return b.atoms.empty();
        return a.atoms < b.atoms;
    });
    if (terms.front().coefficient < 0) {
        auto positive = std::find_if(terms.begin(), terms.end(), [](const Term &t) { return t.coefficient > 0; });
        if (positive != terms.end())
            std::rotate(terms.begin(), positive, positive + 1);
    }
    auto constantExpr = [](std::int64_t v) {
        return ir::intConst(v, v > INT32_MAX || v < INT32_MIN ? ir::DType::I64 : ir::DType::I32);
    };
    Expr sum;
    for (const Term &t : terms) {
        const std::int64_t magnitude = t.coefficient < 0 ? -t.coefficient : t.coefficient;
        Expr term;
        for (const auto &[rank, key] : t.atoms) {
            const Expr &a = atomExpr(key);
            term = term.defined() ? term * a : a;
        }
        if (!term.defined())
            term = constantExpr(magnitude);
        else if (magnitude != 1)
            term = term * constantExpr(magnitude);
        if (!sum.defined())
            sum = t.coefficient < 0 ? ir::neg(term) : term;
        else
            sum = t.coefficient < 0 ? sum - term : sum + term;
    }
    return sum;
}

Expr IndexMath::simplify(const Expr &e)
{
    if (!e.defined())
        return e;
    if (ir::isInteger(e.dtype())) {
        if (auto p = toPoly(e))
            return toExpr(*p);
    }
    switch (e.kind()) {
    case ExprKind::Read: {
        std::vector<Expr> indices;
        for (const Expr &i : e.operands())
            indices.push_back(simplify(i));
        return ir::read(e.tensor(), std::move(indices));
    }
    case ExprKind::Unary: {
        Expr x = simplify(e.operand(0));
        if (e.unaryOp() == ir::UnaryOp::Not) {
            if (x.kind() == ExprKind::IntConst || x.kind() == ExprKind::Unary
                || (x.kind() == ExprKind::Binary && (ir::isComparison(x.binaryOp()))))
                return negateCondition(x);
        }
        if (e.unaryOp() == ir::UnaryOp::Neg && x.kind() == ExprKind::FloatConst)
            return ir::floatConst(-x.floatValue(), x.dtype());
        return x.sameAs(e.operand(0)) ? e : ir::unary(e.unaryOp(), x);
    }
    case ExprKind::Binary: {
        Expr a = simplify(e.operand(0));
        Expr b = simplify(e.operand(1));
        const BinaryOp op = e.binaryOp();
        if (op == BinaryOp::And) {
            if (isBoolConst(a, false) || isBoolConst(b, false))
                return ir::boolConst(false);
            if (isBoolConst(a, true))
                return b;
            if (isBoolConst(b, true))
                return a;
        } else if (op == BinaryOp::Or) {
            if (isBoolConst(a, true) || isBoolConst(b, true))
                return ir::boolConst(true);
            if (isBoolConst(a, false))
                return b;
            if (isBoolConst(b, false))
                return a;
        } else if (ir::isComparison(op)) {
            auto pa = toPoly(a);
            auto pb = toPoly(b);
            if (pa && pb) {
                std::optional<bool> known;
                switch (op) {
                case BinaryOp::Lt:
                    if (less(*pa, *pb)) known = true; else if (lessEqual(*pb, *pa)) known = false;
                    break;
                case BinaryOp::Le:
                    if (lessEqual(*pa, *pb)) known = true; else if (less(*pb, *pa)) known = false;
                    break;
                case BinaryOp::Gt:
                    if (less(*pb, *pa)) known = true; else if (lessEqual(*pa, *pb)) known = false;
                    break;
                case BinaryOp::Ge:
                    if (lessEqual(*pb, *pa)) known = true; else if (less(*pa, *pb)) known = false;
                    break;
                case BinaryOp::Eq:
                case BinaryOp::Ne: {
                    bool equal = (*pa - *pb).isZero();
                    bool differ = less(*pa, *pb) || less(*pb, *pa);
                    if (equal || differ)
                        known = (op == BinaryOp::Eq) == equal;
                    break;
                }
                default:
                    break;
                }
                if (known)
                    return ir::boolConst(*known);
            }
        }
        if (a.kind() == ExprKind::FloatConst && b.kind() == ExprKind::FloatConst) {
            // Two float literals: fold, so a guarded-off term (0.0 * 0.0) is recognisably zero.
            const double x = a.floatValue(), y = b.floatValue();
            const ir::DType t = ir::promoteTypes(a.dtype(), b.dtype());
            switch (op) {
            case BinaryOp::Add: return ir::floatConst(x + y, t);
            case BinaryOp::Sub: return ir::floatConst(x - y, t);
            case BinaryOp::Mul: return ir::floatConst(x * y, t);
            case BinaryOp::Min: return ir::floatConst(std::fmin(x, y), t);
            case BinaryOp::Max: return ir::floatConst(std::fmax(x, y), t);
            default: break;
            }
        }
        if (a.sameAs(e.operand(0)) && b.sameAs(e.operand(1)))
            return e;
        return ir::binary(op, a, b);
    }
    case ExprKind::Select: {
        Expr c = simplify(e.operand(0));
        if (isBoolConst(c, true))
            return simplify(e.operand(1));
        if (isBoolConst(c, false))
            return simplify(e.operand(2));
        const std::size_t mark = factCount();
        for (const IntPoly &f : factsOf(c))
            pushFact(f);
        Expr t = simplify(e.operand(1));
        truncateFacts(mark);
        for (const IntPoly &f : factsOf(negateCondition(c)))
            pushFact(f);
        Expr f = simplify(e.operand(2));
        truncateFacts(mark);
        return selectOrFold(c, t, f);
    }
    case ExprKind::Cast: {
        Expr x = simplify(e.operand(0));
        if (x.isConst() && x.dtype() != ir::DType::Bool && ir::isFloat(e.dtype()))
            return convertTo(x, e.dtype());
        return x.sameAs(e.operand(0)) ? e : ir::cast(e.dtype(), x);
    }
    default:
        return e;
    }
}

} // namespace stitch::frontend::cudalift
