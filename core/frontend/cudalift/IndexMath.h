#pragma once
// Index arithmetic with meaning: atoms, variable ranges, facts, simplification and proofs.
//   symbolic index Expr -> toPoly / simplify (div, mod folded where ranges prove it) -> toExpr
//   guards, bounds checks -> nonNegative (sound, incomplete: "false" only means "not proven")
// Sizes are assumed to be at least their lower bound (1 unless the program sets a size to 0);
// derived sizes are non-negative extents whose divisions have non-negative numerators.

#include "core/frontend/cudalift/IntPoly.h"
#include "core/ir/Expr.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// Half-open range [lo, hi) of an iteration variable.
struct VarRange {
    IntPoly lo;
    IntPoly hi;
};

class IndexMath {
public:
    /// Atom keys: "v:name" for iteration variables, "s:name" for sizes, "o:text" for the rest.
    std::string keyOf(const ir::Expr &atom);
    const ir::Expr &atomExpr(const std::string &key) const;
    static bool isVarKey(const std::string &key) { return key.rfind("v:", 0) == 0; }
    static bool isSizeKey(const std::string &key) { return key.rfind("s:", 0) == 0; }
    static bool isOpaqueKey(const std::string &key) { return key.rfind("o:", 0) == 0; }
    static std::string varKey(const std::string &name) { return "v:" + name; }

    /// Declares var in [lo, hi); both must be integer expressions of sizes and outer variables.
    void setRange(const std::string &var, const ir::Expr &lo, const ir::Expr &hi);
    void setRange(const std::string &var, const IntPoly &lo, const IntPoly &hi);
    void clearRange(const std::string &var);
    const VarRange *range(const std::string &var) const;
    void setSizeLowerBound(const std::string &size, std::int64_t lowerBound);
    /// Named sizes defined by other sizes. A polynomial definition (total = M * N) is expanded;
    /// any other (OH = (H - K) / S + 1) stays one atom, expanded only inside proofs.
    void setDerived(const std::map<std::string, ir::Expr> *derived)
    {
        m_derived = derived;
        forgetProofs();
    }
    /// Printing order of iteration variables (outer first); others follow alphabetically.
    void setVarOrder(std::vector<std::string> order) { m_varOrder = std::move(order); }

    /// Facts p >= 0 that hold where the expression being examined is evaluated (select guards).
    void pushFact(const IntPoly &p)
    {
        m_facts.push_back(p);
        m_contextChanged = true;
    }
    void popFact()
    {
        m_facts.pop_back();
        m_contextChanged = true;
    }
    std::size_t factCount() const { return m_facts.size(); }
    void truncateFacts(std::size_t count)
    {
        m_facts.resize(count);
        m_contextChanged = true;
    }
    /// The facts a true condition gives: each conjunct that is an integer comparison.
    std::vector<IntPoly> factsOf(const ir::Expr &condition);

    /// The normal form of an integer expression; nullopt for non-integer ones.
    std::optional<IntPoly> toPoly(const ir::Expr &expr);
    ir::Expr toExpr(const IntPoly &p) const;
    /// Integer subtrees in normal form, provable comparisons folded, selects on constants folded.
    ir::Expr simplify(const ir::Expr &expr);

    bool nonNegative(const IntPoly &p) const;
    bool less(const IntPoly &a, const IntPoly &b) const { return nonNegative(b - a - 1); }
    bool lessEqual(const IntPoly &a, const IntPoly &b) const { return nonNegative(b - a); }
    /// a comparison as p >= 0 (Lt, Le, Gt, Ge of integers); nullopt for anything else.
    std::optional<IntPoly> asNonNegative(const ir::Expr &comparison);

private:
    IntPoly opaque(const ir::Expr &expr);
    std::optional<IntPoly> divide(const ir::Expr &expr, bool wantRemainder);
    bool proveNonNegative(const IntPoly &p, int depth) const;
    bool proveDirect(const IntPoly &p, int depth) const;
    bool proveSizesOnly(const IntPoly &p, int depth) const;
    std::optional<IntPoly> boundOpaqueTerms(const IntPoly &p, int depth) const;
    int atomRank(const std::string &key) const;

    /// Operands of opaque div/mod/min/max atoms, kept so proofs never re-enter toPoly.
    struct OpaqueParts {
        ir::BinaryOp op = ir::BinaryOp::Div;
        IntPoly a;
        IntPoly b;
    };
    IntPoly opaqueBinary(ir::BinaryOp op, const IntPoly &a, const IntPoly &b);

    std::map<std::string, ir::Expr> m_atoms;
    std::map<std::string, OpaqueParts> m_opaqueParts;
    mutable int m_activeProofs = 0;

    /// Proof results by context (facts, ranges, size bounds), then by polynomial: -1 when
    /// proven, else the smallest depth at which it was not (see proveNonNegative). Lifting asks
    /// the same few questions in the same few contexts over and over (conv2d: 1476 questions,
    /// 218 distinct).
    using ProofMemo = std::map<std::map<IntPoly::Monomial, std::int64_t>, int>;
    struct ProofMemos {
        std::map<std::string, ProofMemo> byContext;
        ProofMemo *current = nullptr; ///< points into byContext
        std::size_t entries = 0;
        std::size_t opaqueParts = 0;
        std::size_t derivedSizes = 0;

        ProofMemos() = default;
        // A copy starts empty: current must point into its own maps.
        ProofMemos(const ProofMemos &) {}
        ProofMemos &operator=(const ProofMemos &)
        {
            *this = ProofMemos();
            return *this;
        }
        ProofMemos &operator=(ProofMemos &&) = default;
    };
    void selectProofContext() const;
    /// Empties every memo but keeps the maps, so a proof in progress keeps a valid current.
    void forgetProofs() const;
    mutable ProofMemos m_memos;
    mutable bool m_contextChanged = true;
    const std::map<std::string, ir::Expr> *m_derived = nullptr;
    mutable std::map<std::string, std::optional<IntPoly>> m_derivedPolys;
    /// Divisions inside derived sizes: their numerators are assumed non-negative, as a program
    /// that computes OH = (H - K) / S + 1 assumes H >= K.
    mutable std::set<std::string> m_assumedNumerators;
    const std::optional<IntPoly> &derivedPoly(const std::string &name) const;
    IntPoly expandDerived(const IntPoly &p) const;
    std::map<std::string, VarRange> m_ranges;
    std::map<std::string, std::int64_t> m_sizeLowerBounds;
    std::vector<std::string> m_varOrder;
    std::vector<IntPoly> m_facts;
};

} // namespace stitch::frontend::cudalift
