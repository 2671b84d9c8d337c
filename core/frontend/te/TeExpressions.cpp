// .te expressions: precedence climbing over tokens, typing every node as it is built.
#include "core/frontend/te/TeParser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace stitch::frontend::te {

namespace {

struct UnaryFunction {
    std::string_view name;
    ir::UnaryOp op;
};

constexpr UnaryFunction kUnaryFunctions[] = {
    {"abs", ir::UnaryOp::Abs},         {"exp", ir::UnaryOp::Exp},   {"log", ir::UnaryOp::Log},
    {"sqrt", ir::UnaryOp::Sqrt},       {"rsqrt", ir::UnaryOp::Rsqrt}, {"tanh", ir::UnaryOp::Tanh},
    {"sigmoid", ir::UnaryOp::Sigmoid}, {"erf", ir::UnaryOp::Erf},   {"relu", ir::UnaryOp::Relu},
    {"floor", ir::UnaryOp::Floor},     {"ceil", ir::UnaryOp::Ceil}, {"sin", ir::UnaryOp::Sin},
    {"cos", ir::UnaryOp::Cos},
};

struct BinaryFunction {
    std::string_view name;
    ir::BinaryOp op;
};

constexpr BinaryFunction kBinaryFunctions[] = {
    {"min", ir::BinaryOp::Min}, {"max", ir::BinaryOp::Max}, {"pow", ir::BinaryOp::Pow}};

struct BinaryOperator {
    TokenKind token;
    ir::BinaryOp op;
    int precedence; ///< higher binds tighter
};

constexpr int kComparisonPrecedence = 4;

constexpr BinaryOperator kOperators[] = {
    {TokenKind::OrOr, ir::BinaryOp::Or, 1},
    {TokenKind::AndAnd, ir::BinaryOp::And, 2},
    {TokenKind::EqualEqual, ir::BinaryOp::Eq, 3},
    {TokenKind::NotEqual, ir::BinaryOp::Ne, 3},
    {TokenKind::Less, ir::BinaryOp::Lt, kComparisonPrecedence},
    {TokenKind::LessEqual, ir::BinaryOp::Le, kComparisonPrecedence},
    {TokenKind::Greater, ir::BinaryOp::Gt, kComparisonPrecedence},
    {TokenKind::GreaterEqual, ir::BinaryOp::Ge, kComparisonPrecedence},
    {TokenKind::Plus, ir::BinaryOp::Add, 5},
    {TokenKind::Minus, ir::BinaryOp::Sub, 5},
    {TokenKind::Star, ir::BinaryOp::Mul, 6},
    {TokenKind::Slash, ir::BinaryOp::Div, 6},
    {TokenKind::Percent, ir::BinaryOp::Mod, 6},
    {TokenKind::SlashSlash, ir::BinaryOp::FloorDiv, 6},
};

const BinaryOperator *binaryOperator(TokenKind kind)
{
    for (const BinaryOperator &op : kOperators) {
        if (op.token == kind)
            return &op;
    }
    return nullptr;
}

const char *const kReservedWords[] = {
    "graph", "size", "input", "output", "tensor", "in", "init", "sum", "prod", "select",
    "true", "false", "inf", "nan",
};

std::string typeOf(const Value &value)
{
    return ir::dtypeName(value.expr.dtype());
}

bool fitsInteger(std::int64_t value, ir::DType type)
{
    if (type == ir::DType::I32)
        return value >= std::numeric_limits<std::int32_t>::min() && value <= std::numeric_limits<std::int32_t>::max();
    return type == ir::DType::I64;
}

} // namespace

Value adoptLiteral(Value literal, ir::DType like)
{
    if (!literal.literal)
        return literal;
    const ir::Expr &e = literal.expr;
    if (e.kind() == ir::ExprKind::FloatConst && ir::isFloat(like))
        literal.expr = ir::floatConst(e.floatValue(), like);
    else if (e.kind() == ir::ExprKind::IntConst && ir::isInteger(e.dtype()) && ir::isInteger(like)
             && fitsInteger(e.intValue(), like))
        literal.expr = ir::intConst(e.intValue(), like);
    return literal;
}

namespace {

void adoptTypes(Value &a, Value &b)
{
    if (a.literal && !b.literal)
        a = adoptLiteral(std::move(a), b.expr.dtype());
    else if (b.literal && !a.literal)
        b = adoptLiteral(std::move(b), a.expr.dtype());
}

} // namespace

bool isReservedName(std::string_view name)
{
    if (std::find(std::begin(kReservedWords), std::end(kReservedWords), name) != std::end(kReservedWords))
        return true;
    for (const UnaryFunction &f : kUnaryFunctions) {
        if (f.name == name)
            return true;
    }
    for (const BinaryFunction &f : kBinaryFunctions) {
        if (f.name == name)
            return true;
    }
    return ir::parseDType(name).ok();
}

NestingGuard::NestingGuard(Parser &parser, const Token &at) : m_parser(parser)
{
    if (++m_parser.m_nesting > m_parser.m_limits.maxNesting) {
        // The destructor of a guard whose constructor throws never runs.
        --m_parser.m_nesting;
        m_parser.fail(at, "expression nested too deeply (more than " + std::to_string(m_parser.m_limits.maxNesting)
                              + " levels of brackets, calls and unary operators); split it into several statements");
    }
}

Value Parser::makeNode(ir::Expr expr, const SourceLocation &location, std::initializer_list<const Value *> operands)
{
    Value value;
    value.expr = std::move(expr);
    value.location = location;
    int height = 0;
    std::int64_t nodes = 1;
    for (const Value *operand : operands) {
        height = std::max(height, operand->height);
        nodes += operand->nodes;
    }
    value.height = height + 1;
    // Saturate: the check below fires long before an int64 could overflow.
    value.nodes = std::min(nodes, m_limits.maxExprNodes + 1);
    if (value.height > m_limits.maxExprHeight) {
        fail(location, "expression too deep: more than " + std::to_string(m_limits.maxExprHeight)
                           + " operators on one path; split it into several statements");
    }
    if (value.nodes > m_limits.maxExprNodes) {
        fail(location, "expression too large: more than " + std::to_string(m_limits.maxExprNodes)
                           + " operations once sizes are expanded; split it into several statements");
    }
    return value;
}

void Parser::requireNumber(const Value &value, const std::string &what, const Token &at)
{
    if (value.expr.dtype() == ir::DType::Bool)
        fail(at, "type error: " + what + " has type bool, expected a number");
}

void Parser::requireBool(const Value &value, const std::string &what, const Token &at)
{
    if (value.expr.dtype() != ir::DType::Bool)
        fail(at, "type error: " + what + " has type " + typeOf(value) + ", expected bool (write x != 0 to test a number)");
}

void Parser::requireInteger(const Value &value, const std::string &what, const Token &at)
{
    if (!ir::isInteger(value.expr.dtype()))
        fail(at, "type error: " + what + " has type " + typeOf(value) + ", expected an integer (int32 or int64)");
}

void Parser::requireInteger(const Value &value, const std::string &what)
{
    if (!ir::isInteger(value.expr.dtype()))
        fail(value.location, "type error: " + what + " has type " + typeOf(value) + ", expected an integer (int32 or int64)");
}

Value Parser::parseIntegerExpression(const std::string &what)
{
    Value value = parseExpression();
    requireInteger(value, what);
    if (m_context == Context::Shape)
        checkSizeExpression(value, what);
    return value;
}

Value Parser::parseExpression()
{
    NestingGuard guard(*this, peek());
    Value condition = parseBinary(1);
    if (!at(TokenKind::Question))
        return condition;
    const Token &question = next();
    requireBool(condition, "the condition of '?:'", question);
    Value yes = parseExpression();
    expect(TokenKind::Colon, "':' of the conditional expression '?' at " + position(locate(question)));
    Value no = parseExpression();
    const bool numbers = yes.expr.dtype() != ir::DType::Bool && no.expr.dtype() != ir::DType::Bool;
    const bool bools = yes.expr.dtype() == ir::DType::Bool && no.expr.dtype() == ir::DType::Bool;
    if (!numbers && !bools) {
        fail(question, "type error: the branches of '?:' have types " + typeOf(yes) + " and " + typeOf(no)
                           + "; both must be numbers or both bool");
    }
    adoptTypes(yes, no);
    return makeNode(ir::select(condition.expr, yes.expr, no.expr), condition.location, {&condition, &yes, &no});
}

Value Parser::parseBinary(int minPrecedence)
{
    Value lhs = parseUnary();
    bool lastWasComparison = false;
    for (const BinaryOperator *op = binaryOperator(peek().kind); op && op->precedence >= minPrecedence;
         op = binaryOperator(peek().kind)) {
        const Token &opToken = next();
        if (op->precedence == kComparisonPrecedence && lastWasComparison) {
            fail(opToken, "chained comparison: 'a < b < c' is not supported; write 'a < b && b < c'");
        }
        Value rhs = parseBinary(op->precedence + 1);
        lhs = combine(op->op, std::move(lhs), std::move(rhs), opToken);
        lastWasComparison = op->precedence == kComparisonPrecedence;
    }
    return lhs;
}

Value Parser::combine(ir::BinaryOp op, Value lhs, Value rhs, const Token &opToken)
{
    const bool call = opToken.kind == TokenKind::Identifier;
    const std::string name = "'" + std::string(opToken.text) + "'";
    const std::string first = call ? "the first argument of " + name : "the left operand of " + name;
    const std::string second = call ? "the second argument of " + name : "the right operand of " + name;
    switch (op) {
    case ir::BinaryOp::And:
    case ir::BinaryOp::Or:
        requireBool(lhs, first, opToken);
        requireBool(rhs, second, opToken);
        break;
    case ir::BinaryOp::Eq:
    case ir::BinaryOp::Ne:
        if ((lhs.expr.dtype() == ir::DType::Bool) != (rhs.expr.dtype() == ir::DType::Bool)) {
            fail(opToken, "type error: " + name + " compares " + typeOf(lhs) + " with " + typeOf(rhs)
                              + "; compare numbers with numbers and bools with bools");
        }
        break;
    default:
        requireNumber(lhs, first, opToken);
        requireNumber(rhs, second, opToken);
        break;
    }
    adoptTypes(lhs, rhs);
    ir::Expr expr = ir::binary(op, lhs.expr, rhs.expr);
    return makeNode(std::move(expr), lhs.location, {&lhs, &rhs});
}

Value Parser::parseUnary()
{
    const Token &token = peek();
    if (token.kind != TokenKind::Minus && token.kind != TokenKind::Bang && token.kind != TokenKind::Plus)
        return parsePrimary();
    NestingGuard guard(*this, token);
    next();
    Value operand = parseUnary();
    if (token.kind == TokenKind::Plus) {
        requireNumber(operand, "the operand of unary '+'", token);
        operand.location = locate(token);
        return operand;
    }
    if (token.kind == TokenKind::Bang) {
        requireBool(operand, "the operand of '!'", token);
        return makeNode(ir::logicalNot(operand.expr), locate(token), {&operand});
    }
    requireNumber(operand, "the operand of unary '-'", token);
    if (operand.literal) {
        // Fold "-1" into a constant so literals stay literals (and adopt their neighbour's type).
        const ir::Expr &e = operand.expr;
        if (e.kind() == ir::ExprKind::FloatConst) {
            operand.expr = ir::floatConst(-e.floatValue(), e.dtype());
        } else {
            // Never INT64_MIN: its positive spelling does not parse, so negation cannot overflow.
            const std::int64_t negated = -e.intValue();
            operand.expr = ir::intConst(negated, fitsInteger(negated, ir::DType::I32) ? ir::DType::I32 : ir::DType::I64);
        }
        operand.location = locate(token);
        return operand;
    }
    return makeNode(ir::neg(operand.expr), locate(token), {&operand});
}

Value Parser::parsePrimary()
{
    const Token &token = peek();
    Value value;
    value.location = locate(token);
    switch (token.kind) {
    case TokenKind::Integer: {
        next();
        std::int64_t number = 0;
        const auto [end, ec] = std::from_chars(token.text.data(), token.text.data() + token.text.size(), number);
        if (ec != std::errc() || end != token.text.data() + token.text.size())
            fail(token, "integer literal " + describeToken(token) + " does not fit in 64 bits");
        value.expr = ir::intConst(number, fitsInteger(number, ir::DType::I32) ? ir::DType::I32 : ir::DType::I64);
        value.literal = true;
        return value;
    }
    case TokenKind::Float: {
        next();
        double number = 0;
        const auto [end, ec] = std::from_chars(token.text.data(), token.text.data() + token.text.size(), number);
        if (ec != std::errc() || end != token.text.data() + token.text.size() || !std::isfinite(number))
            fail(token, "floating-point literal " + describeToken(token) + " is out of range");
        value.expr = ir::floatConst(number, ir::DType::F32);
        value.literal = true;
        return value;
    }
    case TokenKind::Identifier:
        next();
        if (at(TokenKind::LParen))
            return parseCall(token);
        return parseName(token);
    case TokenKind::LParen: {
        next();
        value = parseExpression();
        expect(TokenKind::RParen, "')' to close the '(' at " + position(locate(token)));
        value.location = locate(token);
        return value;
    }
    default:
        fail(token, "expected an expression, found " + describeToken(token));
    }
}

Value Parser::parseName(const Token &name)
{
    const std::string text(name.text);
    if (IndexVar *var = findIndexVar(text)) {
        if (var->reduction && m_context == Context::Range) {
            fail(name, "a reduction range may use sizes and the left-hand side's index variables, not the reduction variable '"
                           + text + "'");
        }
        if (var->reduction && m_context == Context::Init) {
            fail(name, "the init cannot use the reduction variable '" + text
                           + "': it is evaluated once per output element, before the reduction");
        }
        Value value;
        value.expr = ir::var(text);
        value.location = locate(name);
        return value;
    }
    if (auto it = m_tensors.find(text); it != m_tensors.end()) {
        if (m_context == Context::Shape)
            fail(name, "'" + text + "' is a tensor; shapes and sizes may use only sizes and integer constants");
        if (m_context == Context::Range)
            fail(name, "'" + text + "' is a tensor; a reduction range cannot depend on tensor data");
        return parseRead(it->second, name, at(TokenKind::LBracket));
    }
    if (auto it = m_sizes.find(text); it != m_sizes.end()) {
        if (it->second.alias.expr.defined()) {
            Value value = it->second.alias;
            value.location = locate(name);
            value.literal = false;
            return value;
        }
        Value value;
        value.expr = ir::sizeVar(text);
        value.location = locate(name);
        return value;
    }
    Value value;
    value.location = locate(name);
    if (text == "true" || text == "false") {
        value.expr = ir::boolConst(text == "true");
        return value;
    }
    if (text == "inf" || text == "nan") {
        value.expr = ir::floatConst(text == "inf" ? std::numeric_limits<double>::infinity()
                                                  : std::numeric_limits<double>::quiet_NaN());
        value.literal = true;
        return value;
    }
    if (text == "sum" || text == "prod" || text == "min" || text == "max") {
        fail(name, "'" + text + "' is a reduction or function; write " + text + "(k) BODY at the start of a right-hand side"
                       + (text == "min" || text == "max" ? ", or " + text + "(a, b)" : std::string()));
    }
    if (ir::parseDType(text).ok())
        fail(name, "'" + text + "' is an element type; convert a value with " + text + "(...)");
    if (text == "graph" || text == "size" || text == "input" || text == "output" || text == "tensor" || text == "in"
        || text == "init")
        fail(name, "'" + text + "' is a keyword and cannot appear in an expression");
    if (isReservedName(text))
        fail(name, "'" + text + "' is a built-in function; call it as " + text + "(...)");
    if (m_context == Context::Shape)
        fail(name, "undefined size '" + text + "': declare it first with 'size " + text + "'");
    fail(name, "unknown name '" + text + "': not a tensor, size or index variable of this statement");
}

Value Parser::parseRead(TensorInfo &tensor, const Token &name, bool bracketed)
{
    const ir::Tensor &t = tensor.tensor;
    if (m_output == &tensor) {
        fail(name, "'" + t.name + "' is read in its own definition; a statement cannot read the tensor it computes"
                   " (compute the new values into another tensor)");
    }
    if (t.role != ir::TensorRole::Input && !tensor.computedAt) {
        fail(name, "'" + t.name + "' is read before it is computed; statements run in order, so compute '" + t.name
                       + "' first");
    }
    tensor.read = true;
    std::vector<Value> indices;
    const Token *open = &name;
    if (bracketed) {
        open = &next();
        if (!at(TokenKind::RBracket)) {
            for (;;) {
                const Token &start = peek();
                Value index = parseExpression();
                const auto dimension = static_cast<int>(indices.size());
                requireInteger(index, "index " + std::to_string(dimension) + " of '" + t.name + "'", start);
                if (index.expr.kind() == ir::ExprKind::IterVar && dimension < t.rank()) {
                    m_bareUses.push_back(BareUse{index.expr.name(), t.name, dimension,
                                                 t.shape[static_cast<std::size_t>(dimension)], index.location});
                }
                indices.push_back(std::move(index));
                if (at(TokenKind::Comma)) {
                    next();
                    continue;
                }
                if (at(TokenKind::RBracket))
                    break;
                fail(peek(), "expected ',' or ']' in the index list of '" + t.name + "' opened at "
                                 + position(locate(*open)) + ", found " + describeToken(peek()));
            }
        }
        next();
    }
    if (static_cast<int>(indices.size()) != t.rank()) {
        const std::string given = std::to_string(indices.size()) + (indices.size() == 1 ? " index is" : " indices are");
        fail(*open, "wrong index count: '" + t.name + "' has rank " + std::to_string(t.rank()) + " ("
                        + ir::dtypeName(t.dtype) + t.shape.toString() + ") but " + given + " given");
    }
    std::vector<ir::Expr> exprs;
    Value value;
    value.location = locate(name);
    int height = 0;
    std::int64_t nodes = 1;
    for (const Value &index : indices) {
        exprs.push_back(index.expr);
        height = std::max(height, index.height);
        nodes += index.nodes;
    }
    Value summary; // a stand-in operand carrying the combined height and size of the indices
    summary.height = height;
    summary.nodes = nodes - 1;
    return makeNode(ir::read(t.ref(), std::move(exprs)), value.location, {&summary});
}

Value Parser::parseCall(const Token &name)
{
    const std::string text(name.text);
    const Token &open = next();
    std::size_t expected = 0;
    std::optional<ir::UnaryOp> unaryOp;
    std::optional<ir::BinaryOp> binaryOp;
    std::optional<ir::DType> castType;
    for (const UnaryFunction &f : kUnaryFunctions) {
        if (f.name == text)
            unaryOp = f.op;
    }
    for (const BinaryFunction &f : kBinaryFunctions) {
        if (f.name == text)
            binaryOp = f.op;
    }
    if (auto type = ir::parseDType(text))
        castType = *type;
    if (unaryOp || castType)
        expected = 1;
    else if (binaryOp)
        expected = 2;
    else if (text == "select")
        expected = 3;
    else if (text == "sum" || text == "prod")
        fail(name, "'" + text + "' starts a reduction, which must be the whole right-hand side of a statement;"
                                " compute it into its own tensor first");
    else if (m_tensors.count(text))
        fail(name, "'" + text + "' is a tensor: index it with [...], not (...)");
    else if (m_sizes.count(text) || findIndexVar(text))
        fail(name, "'" + text + "' is not a function");
    else
        fail(name, "unknown function '" + text
                       + "'; the functions are abs, ceil, cos, erf, exp, floor, log, max, min, pow, relu, rsqrt,"
                         " select, sigmoid, sin, sqrt, tanh and the type conversions f32(...), i32(...), ...");

    std::vector<Value> args;
    std::vector<const Token *> argTokens;
    if (!at(TokenKind::RParen)) {
        for (;;) {
            if (args.size() == expected) {
                fail(peek(), "'" + text + "' takes " + std::to_string(expected) + " argument"
                                 + (expected == 1 ? "" : "s") + ", but more are given");
            }
            argTokens.push_back(&peek());
            args.push_back(parseExpression());
            if (at(TokenKind::Comma)) {
                next();
                continue;
            }
            if (at(TokenKind::RParen))
                break;
            fail(peek(), "expected ',' or ')' in the call of '" + text + "' opened at " + position(locate(open))
                             + ", found " + describeToken(peek()));
        }
    }
    const Token &close = next();
    if (args.size() != expected) {
        fail(close, "'" + text + "' takes " + std::to_string(expected) + " argument" + (expected == 1 ? "" : "s")
                        + ", but " + std::to_string(args.size()) + (args.size() == 1 ? " is" : " are") + " given");
    }
    const SourceLocation location = locate(name);
    if (castType)
        return makeNode(ir::cast(*castType, args[0].expr), location, {&args[0]});
    if (unaryOp) {
        requireNumber(args[0], "the argument of '" + text + "'", *argTokens[0]);
        return makeNode(ir::unary(*unaryOp, args[0].expr), location, {&args[0]});
    }
    if (binaryOp) {
        Value result = combine(*binaryOp, std::move(args[0]), std::move(args[1]), name);
        result.location = location;
        return result;
    }
    requireBool(args[0], "the condition of 'select'", *argTokens[0]);
    const bool numbers = args[1].expr.dtype() != ir::DType::Bool && args[2].expr.dtype() != ir::DType::Bool;
    const bool bools = args[1].expr.dtype() == ir::DType::Bool && args[2].expr.dtype() == ir::DType::Bool;
    if (!numbers && !bools) {
        fail(name, "type error: the branches of 'select' have types " + typeOf(args[1]) + " and " + typeOf(args[2])
                       + "; both must be numbers or both bool");
    }
    adoptTypes(args[1], args[2]);
    return makeNode(ir::select(args[0].expr, args[1].expr, args[2].expr), location, {&args[0], &args[1], &args[2]});
}

} // namespace stitch::frontend::te
