#pragma once
// Queries and rewrites over Expr trees, shared by validation, the interpreter and later passes.
//   Expr -> visitExpr / collect* / substitute -> Graph::validate, Interpreter, (later) codegen, rubric
// All functions are pure: they never modify a node, substitute builds new nodes where needed.

#include "core/ir/Expr.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::ir {

/// Calls visitor on every defined node of expr, parents before children, operands in order.
void visitExpr(const Expr &expr, const std::function<void(const Expr &)> &visitor);

/// Names of the iteration variables expr uses, each once, in order of first appearance.
std::vector<std::string> collectIterVars(const Expr &expr);

/// Names of the size variables expr uses, each once, in order of first appearance.
std::vector<std::string> collectSizeVars(const Expr &expr);

/// Every Read node of expr in visiting order (a tensor read twice appears twice).
std::vector<Expr> collectReads(const Expr &expr);

/// True when expr contains an undefined operand somewhere (or is itself undefined).
bool hasUndefined(const Expr &expr);

/// `1 + erf(z)`, `erf(z) + 1` (z) or `1 - erf(z)` (negated: the sum is 1 + erf(-z)) over float32:
/// GELU's form, which the generated code may compute as erfc(-z) (codegen's erf=erfc).
struct OnePlusErf {
    Expr z;
    bool negated = false;
};
std::optional<OnePlusErf> matchOnePlusErf(const Expr &expr);

/// Replaces iteration variables by name; untouched subtrees are shared, not copied.
Expr substitute(const Expr &expr, const std::map<std::string, Expr> &replacements);

} // namespace stitch::ir
