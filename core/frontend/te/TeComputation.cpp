// .te computations: the left-hand side, the reduction header and the checks of what is stored.
#include "core/frontend/te/TeParser.h"

namespace stitch::frontend::te {

namespace {

/// `Y[i] = 1` for a float Y stores 1.0 of Y's type: a literal right-hand side takes the type it is
/// stored as, so the op's body has the output's type like any other expression would.
Value literalForOutput(Value value, ir::DType type)
{
    const ir::Expr &e = value.expr;
    if (value.literal && e.kind() == ir::ExprKind::IntConst && ir::isFloat(type))
        value.expr = ir::floatConst(static_cast<double>(e.intValue()), type);
    return adoptLiteral(std::move(value), type);
}

std::string describeTensor(const ir::Tensor &t)
{
    return std::string(ir::dtypeName(t.dtype)) + t.shape.toString();
}

} // namespace

bool Parser::startsReduction() const
{
    const Token &word = peek();
    if (word.kind != TokenKind::Identifier || peek(1).kind != TokenKind::LParen)
        return false;
    if (word.text == "sum" || word.text == "prod")
        return true;
    if (word.text != "min" && word.text != "max")
        return false;
    // max(j) X[i, j] declares j; max(a, b) uses names that exist. The first argument tells which.
    const Token &first = peek(2);
    if (first.kind != TokenKind::Identifier || peek(3).kind == TokenKind::LParen || peek(3).kind == TokenKind::LBracket)
        return false;
    const std::string text(first.text);
    return !isReservedName(text) && !m_sizes.count(text) && !m_tensors.count(text)
        && !findIndexVar(text);
}

ir::Reduction Parser::parseReductionHeader(Value &init)
{
    int count = 0;
    const Token &kindToken = next();
    const std::string kindName(kindToken.text);
    ir::Reduction reduction;
    reduction.kind = kindName == "sum" ? ir::ReduceKind::Sum
        : kindName == "prod"           ? ir::ReduceKind::Prod
        : kindName == "max"            ? ir::ReduceKind::Max
                                       : ir::ReduceKind::Min;
    const Token &open = next();
    const std::string header = "'" + kindName + "(...)' at " + position(locate(kindToken));
    for (;;) {
        if (atWord("init") && peek(1).kind == TokenKind::Assign) {
            const Token &initToken = next();
            next();
            if (init.expr.defined())
                fail(initToken, "duplicate definition: " + header + " already has an init");
            m_context = Context::Init;
            init = parseExpression();
            m_context = Context::Body;
        } else {
            const Token &name = expectIdentifier("a reduction variable in " + header
                                                 + " (as in sum(k), sum(k < K) or sum(k in [lo, hi)))");
            const std::string text(name.text);
            if (isReservedName(text))
                fail(name, "'" + text + "' is a reserved word and cannot name a reduction variable");
            if (m_sizes.count(text) || m_tensors.count(text))
                fail(name, "'" + text + "' is already a " + (m_sizes.count(text) ? "size" : "tensor")
                               + "; a reduction variable needs a new name");
            if (const IndexVar *existing = findIndexVar(text)) {
                fail(name, "duplicate definition: '" + text + "' is already " + (existing->reduction ? "a reduction" : "an index")
                               + " variable of this statement (at " + position(existing->location) + ")");
            }
            if (count == m_limits.maxReductionVars) {
                fail(name, "too many reduction variables in " + header + ": at most "
                               + std::to_string(m_limits.maxReductionVars));
            }
            IndexVar var;
            var.name = text;
            var.location = locate(name);
            var.reduction = true;
            if (at(TokenKind::Less)) {
                next();
                m_context = Context::Range;
                // Additive level: a comparison after the bound would be a mistake, not part of it.
                Value upper = parseBinary(5);
                requireInteger(upper, "the upper bound of '" + text + "'");
                m_context = Context::Body;
                var.explicitRange = true;
                var.lower = ir::intConst(0);
                var.upper = upper.expr;
                var.origin = "its range '" + text + " < " + upper.expr.toString() + "'";
            } else if (atWord("in")) {
                next();
                const Token &bracket = expect(TokenKind::LBracket, "'[' to start the range of '" + text + "' (as in "
                                                                       + text + " in [lo, hi))");
                m_context = Context::Range;
                Value lower = parseExpression();
                requireInteger(lower, "the lower bound of '" + text + "'");
                expect(TokenKind::Comma, "',' between the bounds of '" + text + "' in [lo, hi)");
                Value upper = parseExpression();
                requireInteger(upper, "the upper bound of '" + text + "'");
                expect(TokenKind::RParen, "')' to close the range opened at " + position(locate(bracket))
                                              + " (ranges are half-open: [lo, hi))");
                m_context = Context::Body;
                var.explicitRange = true;
                var.lower = lower.expr;
                var.upper = upper.expr;
                var.origin = "its range '" + text + " in [" + lower.expr.toString() + ", " + upper.expr.toString() + ")'";
            }
            ++count;
            m_vars.push_back(std::move(var));
        }
        if (at(TokenKind::Comma)) {
            next();
            continue;
        }
        if (at(TokenKind::RParen))
            break;
        fail(peek(), "expected ',' or ')' in " + header + " opened at " + position(locate(open)) + ", found "
                         + describeToken(peek()));
    }
    next();
    if (count == 0)
        fail(kindToken, "'" + kindName + "' needs at least one reduction variable, as in " + kindName + "(k)");
    return reduction;
}

void Parser::parseComputation()
{
    const Token &name = next();
    const std::string text(name.text);
    auto it = m_tensors.find(text);
    if (it == m_tensors.end()) {
        if (m_sizes.count(text))
            fail(name, "'" + text + "' is a size; only output and intermediate tensors can be computed");
        fail(name, "unknown tensor '" + text + "': declare it before computing it, as in 'output " + text + ": f32[M, N]'"
                       " or 'tensor " + text + ": f32[M, N]'");
    }
    TensorInfo &out = it->second;
    const ir::Tensor &t = out.tensor;
    if (t.role == ir::TensorRole::Input)
        fail(name, "'" + text + "' is an input and cannot be computed; declare it with 'output' or 'tensor'");
    if (out.computedAt)
        fail(name, "duplicate definition: '" + text + "' is already computed at " + position(*out.computedAt));
    if (++m_statements > m_limits.maxStatements) {
        m_stopped = true;
        fail(name, "too many statements: at most " + std::to_string(m_limits.maxStatements) + " computations per file");
    }

    std::vector<const Token *> varTokens;
    if (at(TokenKind::LBracket)) {
        const Token &open = next();
        if (!at(TokenKind::RBracket)) {
            for (;;) {
                const Token &var = expectIdentifier("an index variable name on the left-hand side (as in "
                                                    + text + "[i, j] = ...); index expressions belong on the right");
                varTokens.push_back(&var);
                if (at(TokenKind::Comma)) {
                    next();
                    continue;
                }
                if (at(TokenKind::RBracket))
                    break;
                fail(peek(), "expected ',' or ']' on the left-hand side opened at " + position(locate(open)) + ", found "
                                 + describeToken(peek()));
            }
        }
        next();
    }
    if (static_cast<int>(varTokens.size()) != t.rank()) {
        fail(name, "wrong index count: '" + text + "' has rank " + std::to_string(t.rank()) + " (" + describeTensor(t)
                       + ") but the left-hand side names " + std::to_string(varTokens.size()) + " index variable"
                       + (varTokens.size() == 1 ? "" : "s"));
    }
    for (std::size_t d = 0; d < varTokens.size(); ++d) {
        // After the count check, so that this quadratic loop runs on at most maxRank names.
        const std::string varName(varTokens[d]->text);
        if (isReservedName(varName) || m_sizes.count(varName) || m_tensors.count(varName)) {
            const char *what = isReservedName(varName) ? "a reserved word" : m_sizes.count(varName) ? "a size" : "a tensor";
            fail(*varTokens[d], "'" + varName + "' is already " + what + "; an index variable needs a new name");
        }
        for (std::size_t e = 0; e < d; ++e) {
            if (varTokens[e]->text == varTokens[d]->text)
                fail(*varTokens[d], "duplicate definition: index variable '" + varName + "' appears twice on the left-hand side");
        }
        IndexVar var;
        var.name = std::string(varTokens[d]->text);
        var.location = locate(*varTokens[d]);
        var.lower = ir::intConst(0);
        var.upper = t.shape[d];
        var.origin = "dimension " + std::to_string(d) + " of '" + text + "'";
        m_vars.push_back(std::move(var));
    }
    expect(TokenKind::Assign, "'=' after the left-hand side");
    // Marked before the right-hand side is read, so that an error there does not cascade into
    // "never computed" and "read before it is computed" errors elsewhere.
    out.computedAt = locate(name);
    m_output = &out;

    std::optional<ir::Reduction> reduction;
    Value init;
    const Token &rhsStart = peek();
    if (startsReduction()) {
        reduction = parseReductionHeader(init);
        // A header must be followed by its body, so a line break right after it continues the
        // statement; long headers read better that way.
        if (at(TokenKind::EndOfStatement) && peek().text == "\n")
            next();
    }
    m_context = Context::Body;
    Value body = parseExpression();
    const Token &last = m_tokens[m_pos - 1];
    expectEndOfStatement("the right-hand side (is an operator missing?)");

    if (reduction)
        requireNumber(body, "the body of '" + std::string(rhsStart.text) + "'", rhsStart);
    inferAndCheckRanges();
    checkAssignment(out, body, "the right-hand side");
    if (init.expr.defined())
        checkAssignment(out, init, "the init");

    ir::ComputeOp op;
    op.name = text;
    op.output = t.ref();
    for (const IndexVar &var : m_vars) {
        if (var.reduction)
            continue;
        op.domain.emplace_back(var.name, var.upper);
    }
    if (reduction) {
        for (const IndexVar &var : m_vars) {
            if (!var.reduction)
                continue;
            const ir::Expr extent = var.lower.isIntConst(0) ? var.upper : var.upper - var.lower;
            reduction->vars.emplace_back(var.name, extent, var.lower);
        }
        if (init.expr.defined())
            reduction->init = literalForOutput(init, t.dtype).expr;
        op.reduction = std::move(reduction);
    }
    op.body = literalForOutput(body, t.dtype).expr;
    op.source = ir::SourceSpan{locate(name), SourceLocation{m_fileName, last.line,
                                                            last.column + static_cast<int>(last.text.size())}};
    m_builder.add(std::move(op));
}

void Parser::checkAssignment(const TensorInfo &out, const Value &value, const char *what)
{
    const ir::DType to = out.tensor.dtype;
    const ir::DType from = value.expr.dtype();
    const std::string name = "'" + out.tensor.name + "'";
    const std::string prefix = "type error: " + name + " is " + ir::dtypeName(to) + " but " + what + " has type "
        + ir::dtypeName(from);
    if (to == ir::DType::Bool && from != ir::DType::Bool)
        fail(value.location, prefix + "; compare it (x != 0) to get a bool");
    if (ir::isInteger(to) && !ir::isInteger(from)) {
        fail(value.location, prefix + "; convert explicitly with " + ir::dtypeShortName(to) + "(...)"
                                 + (ir::isFloat(from) ? ", which truncates toward zero" : ""));
    }
    if (ir::isFloat(to) && from == ir::DType::Bool)
        fail(value.location, prefix + "; convert explicitly with " + ir::dtypeShortName(to) + "(...) or select(c, 1.0, 0.0)");
}

} // namespace stitch::frontend::te
