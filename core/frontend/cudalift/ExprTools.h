#pragma once
// Small Expr utilities the lifter needs beyond core/ir/ExprUtil.h: rewriting, conditions, sizes.
//   symbolic values (KernelExec) / flat ops (ThreadSpace, Assembly) -> rewrite, conjuncts, negate
// Pure functions over immutable Expr trees; untouched subtrees are shared.

#include "core/ir/Expr.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// A node with new operands and everything else kept (kind, operator, tensor, cast type).
ir::Expr rebuild(const ir::Expr &original, std::vector<ir::Expr> operands);

/// Pre-order rewrite: where replace returns a value it stands for the whole subtree, elsewhere the
/// node is rebuilt from its rewritten operands.
ir::Expr rewrite(const ir::Expr &expr, const std::function<std::optional<ir::Expr>(const ir::Expr &)> &replace);

/// The operands of a chain of &&, flattened; `true` contributes nothing.
std::vector<ir::Expr> conjuncts(const ir::Expr &condition);
/// a && b && ..., or true for an empty list.
ir::Expr conjunction(const std::vector<ir::Expr> &conditions);
/// !condition with comparisons flipped and De Morgan applied, so guards stay readable.
ir::Expr negateCondition(const ir::Expr &condition);
bool isBoolConst(const ir::Expr &e, bool value);

/// select(c, a, b) that folds a constant condition and identical branches.
ir::Expr selectOrFold(const ir::Expr &condition, const ir::Expr &thenValue, const ir::Expr &elseValue);

bool mentionsVar(const ir::Expr &expr, const std::string &name);
/// Whether expr reads a tensor for which pred is true.
bool readsAny(const ir::Expr &expr, const std::function<bool(const ir::TensorRef &)> &pred);
/// Node count, stopping early once past limit.
std::size_t nodeCount(const ir::Expr &expr, std::size_t limit);

/// Names common hand-written forms: select(x > 0, x, 0) -> relu(x),
/// 1 / (1 + exp(-x)) -> sigmoid(x).
ir::Expr recognizeIdioms(const ir::Expr &expr);

/// Converts a value to type as an assignment does: constants are retyped, float<->float and
/// int<->int conversions are implicit (the reference computes in double), others become casts.
ir::Expr convertTo(const ir::Expr &value, ir::DType type);

/// An identifier made from source text for a name the lifter makes up: every run of characters
/// that cannot be in an identifier becomes one '_', none at either end ("cfg.n" -> "cfg_n",
/// "p->n" -> "p_n", "unsigned int" -> "unsigned_int", "(256)" -> "256").
std::string identifierFrom(std::string_view text);

} // namespace stitch::frontend::cudalift
