#include "core/frontend/cudalift/IntPoly.h"

#include <algorithm>
#include <stdexcept>

namespace stitch::frontend::cudalift {

namespace {

// Index polynomials of real kernels have a handful of terms; thousands mean a runaway expansion.
constexpr std::size_t kMaxTerms = 512;

std::int64_t checkedAdd(std::int64_t a, std::int64_t b)
{
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        throw std::overflow_error("index arithmetic overflows 64 bits");
    return r;
}

std::int64_t checkedMul(std::int64_t a, std::int64_t b)
{
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        throw std::overflow_error("index arithmetic overflows 64 bits");
    return r;
}

// Multiset difference a - b for sorted monomials; nullopt when b is not contained in a.
std::optional<IntPoly::Monomial> monomialQuotient(const IntPoly::Monomial &a, const IntPoly::Monomial &b)
{
    IntPoly::Monomial rest;
    std::size_t j = 0;
    for (const std::string &atom : a) {
        if (j < b.size() && b[j] == atom)
            ++j;
        else
            rest.push_back(atom);
    }
    if (j != b.size())
        return std::nullopt;
    return rest;
}

} // namespace

IntPoly IntPoly::constant(std::int64_t value)
{
    IntPoly p;
    if (value != 0)
        p.m_terms[{}] = value;
    return p;
}

IntPoly IntPoly::atom(const std::string &key)
{
    IntPoly p;
    p.m_terms[{key}] = 1;
    return p;
}

void IntPoly::addTerm(const Monomial &m, std::int64_t c)
{
    if (c == 0)
        return;
    auto [it, inserted] = m_terms.emplace(m, c);
    if (!inserted) {
        it->second = checkedAdd(it->second, c);
        if (it->second == 0)
            m_terms.erase(it);
    }
    if (m_terms.size() > kMaxTerms)
        throw std::length_error("index expression has too many terms");
}

std::optional<std::int64_t> IntPoly::constantValue() const
{
    if (m_terms.empty())
        return 0;
    if (m_terms.size() == 1 && m_terms.begin()->first.empty())
        return m_terms.begin()->second;
    return std::nullopt;
}

std::set<std::string> IntPoly::atoms() const
{
    std::set<std::string> out;
    for (const auto &[m, c] : m_terms)
        out.insert(m.begin(), m.end());
    return out;
}

bool IntPoly::contains(std::string_view key) const
{
    return degree(key) > 0;
}

int IntPoly::degree(std::string_view key) const
{
    int best = 0;
    for (const auto &[m, c] : m_terms)
        best = std::max(best, static_cast<int>(std::count(m.begin(), m.end(), key)));
    return best;
}

bool IntPoly::isPositiveMonomial() const
{
    return m_terms.size() == 1 && m_terms.begin()->second > 0;
}

IntPoly IntPoly::operator+(const IntPoly &other) const
{
    IntPoly r = *this;
    for (const auto &[m, c] : other.m_terms)
        r.addTerm(m, c);
    return r;
}

IntPoly IntPoly::operator-(const IntPoly &other) const
{
    return *this + (-other);
}

IntPoly IntPoly::operator-() const
{
    IntPoly r;
    for (const auto &[m, c] : m_terms)
        r.m_terms[m] = checkedMul(c, -1);
    return r;
}

IntPoly IntPoly::operator*(const IntPoly &other) const
{
    IntPoly r;
    for (const auto &[ma, ca] : m_terms) {
        for (const auto &[mb, cb] : other.m_terms) {
            Monomial m = ma;
            m.insert(m.end(), mb.begin(), mb.end());
            std::sort(m.begin(), m.end());
            r.addTerm(m, checkedMul(ca, cb));
        }
    }
    return r;
}

std::optional<std::pair<IntPoly, IntPoly>> IntPoly::linearIn(const std::string &key) const
{
    IntPoly coefficient, rest;
    for (const auto &[m, c] : m_terms) {
        const auto n = std::count(m.begin(), m.end(), key);
        if (n > 1)
            return std::nullopt;
        if (n == 0) {
            rest.addTerm(m, c);
            continue;
        }
        Monomial reduced = m;
        reduced.erase(std::find(reduced.begin(), reduced.end(), key));
        coefficient.addTerm(reduced, c);
    }
    return std::make_pair(coefficient, rest);
}

std::optional<IntPoly> IntPoly::dividedBy(const IntPoly &divisor) const
{
    auto [quotient, rest] = splitDivisible(divisor);
    if (!rest.isZero())
        return std::nullopt;
    return quotient;
}

std::pair<IntPoly, IntPoly> IntPoly::splitDivisible(const IntPoly &divisor) const
{
    IntPoly quotient, rest;
    if (divisor.m_terms.size() != 1) {
        rest = *this;
        return {quotient, rest};
    }
    const auto &[dm, dc] = *divisor.m_terms.begin();
    for (const auto &[m, c] : m_terms) {
        auto q = monomialQuotient(m, dm);
        if (q && c % dc == 0)
            quotient.addTerm(*q, c / dc);
        else
            rest.addTerm(m, c);
    }
    return {quotient, rest};
}

IntPoly IntPoly::substituted(const std::string &key, const IntPoly &value) const
{
    IntPoly r;
    for (const auto &[m, c] : m_terms) {
        IntPoly term = constant(c);
        Monomial kept;
        for (const std::string &atom : m) {
            if (atom == key)
                term = term * value;
            else
                kept.push_back(atom);
        }
        IntPoly keptPoly;
        keptPoly.m_terms[kept] = 1;
        r = r + term * keptPoly;
    }
    return r;
}

} // namespace stitch::frontend::cudalift
