#pragma once
// Integer polynomials over named atoms: the normal form of CUDA index arithmetic.
//   index Expr -> IndexMath::toPoly -> IntPoly (compare, divide, substitute) -> IndexMath::toExpr
// Atoms are opaque keys here (IndexMath gives them meaning); coefficients are exact int64 and
// overflow throws std::overflow_error rather than wrapping.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stitch::frontend::cudalift {

/// A sum of coefficient * monomial terms; a monomial is a sorted list of atom keys (repeats are
/// powers). Zero coefficients are never stored, so equal polynomials compare equal.
class IntPoly {
public:
    using Monomial = std::vector<std::string>;

    IntPoly() = default;
    static IntPoly constant(std::int64_t value);
    static IntPoly atom(const std::string &key);

    const std::map<Monomial, std::int64_t> &terms() const { return m_terms; }
    bool isZero() const { return m_terms.empty(); }
    /// The value when the polynomial is a constant.
    std::optional<std::int64_t> constantValue() const;
    std::set<std::string> atoms() const;
    bool contains(std::string_view key) const;
    /// Highest power of key in any term.
    int degree(std::string_view key) const;
    /// One term with a positive coefficient, the form of an exact divisor (N, 4, H * W).
    bool isPositiveMonomial() const;

    IntPoly operator+(const IntPoly &other) const;
    IntPoly operator-(const IntPoly &other) const;
    IntPoly operator*(const IntPoly &other) const;
    IntPoly operator-() const;
    IntPoly operator+(std::int64_t c) const { return *this + constant(c); }
    IntPoly operator-(std::int64_t c) const { return *this - constant(c); }
    bool operator==(const IntPoly &other) const = default;

    /// this == coefficient * key + rest, when key appears with power at most one.
    std::optional<std::pair<IntPoly, IntPoly>> linearIn(const std::string &key) const;
    /// Exact division by a single-term divisor; nullopt when some term does not divide.
    std::optional<IntPoly> dividedBy(const IntPoly &divisor) const;
    /// (sum of the terms divisible by divisor, divided by it; the other terms).
    std::pair<IntPoly, IntPoly> splitDivisible(const IntPoly &divisor) const;
    IntPoly substituted(const std::string &key, const IntPoly &value) const;

private:
    void addTerm(const Monomial &m, std::int64_t c);
    std::map<Monomial, std::int64_t> m_terms;
};

} // namespace stitch::frontend::cudalift
