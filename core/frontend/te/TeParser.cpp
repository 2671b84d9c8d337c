// .te statements and declarations, error recovery, and the checks that need the whole file.
#include "core/frontend/te/TeParser.h"

#include <limits>
#include <utility>
#include <new>

namespace stitch::frontend::te {

namespace {

std::string graphNameFor(const std::string &fileName)
{
    std::string stem = fileName.substr(fileName.find_last_of("/\\") + 1);
    if (const auto dot = stem.rfind('.'); dot != std::string::npos && dot > 0)
        stem.resize(dot);
    return stem.empty() ? std::string("program") : stem;
}

} // namespace

Parser::Parser(std::string_view source, std::string fileName, const Limits &limits)
    : m_source(source), m_fileName(std::move(fileName)), m_limits(limits), m_builder(graphNameFor(m_fileName)),
      m_graphName(graphNameFor(m_fileName))
{
}

Result<LiftedProgram> Parser::run()
{
    if (m_source.size() > m_limits.maxSourceBytes) {
        Error error = makeError(ErrorKind::Parse, "file too large: " + std::to_string(m_source.size())
                                                      + " bytes, the limit is " + std::to_string(m_limits.maxSourceBytes),
                                SourceLocation{m_fileName, 1, 1});
        error.diagnostics.push_back(Diagnostic{Severity::Error, *error.location, error.message});
        return error;
    }
    m_tokens = tokenize(m_source);
    while (!at(TokenKind::EndOfFile) && !m_stopped) {
        try {
            parseStatement();
        } catch (const StatementError &e) {
            report(e.diagnostic);
            skipStatement();
        }
        m_context = Context::Body;
        m_output = nullptr;
        m_vars.clear();
        m_bareUses.clear();
    }
    if (!m_stopped)
        finishProgram();

    if (!m_errors.empty()) {
        const Diagnostic &first = m_errors.front();
        std::string message = first.message;
        if (m_errors.size() > 1)
            message += " (and " + std::to_string(m_errors.size() - 1) + " more)";
        Error error = makeError(ErrorKind::Parse, std::move(message), first.location);
        error.diagnostics = m_errors;
        error.diagnostics.insert(error.diagnostics.end(), m_warnings.begin(), m_warnings.end());
        if (m_stopped && m_statements <= m_limits.maxStatements) {
            error.diagnostics.push_back(Diagnostic{Severity::Note, locate(peek()),
                                                   "too many errors; stopped here"});
        }
        return error;
    }

    ir::Graph graph = m_builder.finish();
    graph.setName(m_graphName);
    if (Status status = graph.validate(); !status) {
        // Every rule of validate() is checked above with a better message; reaching this is a bug.
        Error error = status.error();
        error.kind = ErrorKind::Parse;
        error.message = "internal error, please report: the checked program failed IR validation: " + error.message;
        return error;
    }
    LiftedProgram program;
    program.sourceFile = m_fileName;
    program.language = "te";
    program.graph = std::move(graph);
    program.sizes = m_bindings;
    program.diagnostics = m_warnings;
    return program;
}

// ---- tokens and errors

const Token &Parser::peek(std::size_t ahead) const
{
    const std::size_t index = m_pos + ahead;
    return index < m_tokens.size() ? m_tokens[index] : m_tokens.back();
}

const Token &Parser::next()
{
    const Token &token = peek();
    if (token.kind != TokenKind::EndOfFile)
        ++m_pos;
    return token;
}

bool Parser::atWord(std::string_view word) const
{
    return peek().kind == TokenKind::Identifier && peek().text == word;
}

const Token &Parser::expect(TokenKind kind, const std::string &what)
{
    if (!at(kind))
        fail(peek(), "expected " + what + ", found " + describeToken(peek()));
    return next();
}

const Token &Parser::expectIdentifier(const std::string &what)
{
    return expect(TokenKind::Identifier, what);
}

void Parser::expectEndOfStatement(const std::string &after)
{
    if (at(TokenKind::EndOfFile))
        return;
    if (!at(TokenKind::EndOfStatement))
        fail(peek(), "expected end of line after " + after + ", found " + describeToken(peek()));
    next();
}

SourceLocation Parser::locate(const Token &token) const
{
    return SourceLocation{m_fileName, token.line, token.column};
}

void Parser::fail(const Token &token, std::string message) const
{
    fail(locate(token), std::move(message));
}

void Parser::fail(const SourceLocation &location, std::string message) const
{
    throw StatementError{Diagnostic{Severity::Error, location, std::move(message)}};
}

void Parser::report(Diagnostic diagnostic)
{
    m_errors.push_back(std::move(diagnostic));
    if (static_cast<int>(m_errors.size()) >= m_limits.maxErrors)
        m_stopped = true;
}

void Parser::warn(const SourceLocation &location, std::string message)
{
    m_warnings.push_back(Diagnostic{Severity::Warning, location, std::move(message)});
}

void Parser::skipStatement()
{
    while (!at(TokenKind::EndOfFile) && !at(TokenKind::EndOfStatement))
        next();
    next();
}

const IndexVar *Parser::findIndexVar(std::string_view name) const
{
    for (const IndexVar &var : m_vars) {
        if (var.name == name)
            return &var;
    }
    return nullptr;
}

IndexVar *Parser::findIndexVar(std::string_view name)
{
    return const_cast<IndexVar *>(std::as_const(*this).findIndexVar(name));
}

// ---- statements

void Parser::parseStatement()
{
    const Token &first = peek();
    if (first.kind == TokenKind::Identifier) {
        if (first.text == "graph")
            return parseGraphName();
        if (first.text == "size")
            return parseSizes();
        if (first.text == "input")
            return parseTensorDeclarations(ir::TensorRole::Input);
        if (first.text == "output")
            return parseTensorDeclarations(ir::TensorRole::Output);
        if (first.text == "tensor")
            return parseTensorDeclarations(ir::TensorRole::Intermediate);
        return parseComputation();
    }
    fail(first, "expected a declaration (graph, size, input, output, tensor) or a statement such as "
                "'Y[i, j] = ...', found " + describeToken(first));
}

void Parser::declareName(const Token &name, const char *what)
{
    const std::string text(name.text);
    if (isReservedName(text))
        fail(name, "'" + text + "' is a reserved word (keyword, built-in function or type); choose another name for the " + what);
    if (auto it = m_sizes.find(text); it != m_sizes.end())
        fail(name, "duplicate definition: '" + text + "' is already declared as a size at " + position(it->second.location));
    if (auto it = m_tensors.find(text); it != m_tensors.end())
        fail(name, "duplicate definition: '" + text + "' is already declared as a tensor at " + position(it->second.location));
    if (static_cast<int>(m_sizes.size() + m_tensors.size()) >= m_limits.maxDeclarations)
        fail(name, "too many declarations: at most " + std::to_string(m_limits.maxDeclarations) + " sizes and tensors");
}

void Parser::parseGraphName()
{
    next();
    const Token &name = expectIdentifier("a graph name after 'graph'");
    if (m_graphNameAt)
        fail(name, "duplicate definition: the graph is already named at " + position(*m_graphNameAt));
    m_graphName = std::string(name.text);
    m_graphNameAt = locate(name);
    expectEndOfStatement("the graph name");
}

void Parser::parseSizes()
{
    next();
    for (;;) {
        const Token &name = expectIdentifier("a size name after 'size'");
        declareName(name, "size");
        const std::string text(name.text);
        SizeInfo info;
        info.location = locate(name);
        if (at(TokenKind::Assign)) {
            next();
            m_context = Context::Shape;
            Value value = parseIntegerExpression("the value of size '" + text + "'");
            m_context = Context::Body;
            if (value.expr.kind() == ir::ExprKind::IntConst) {
                const std::int64_t n = value.expr.intValue();
                if (n < 0 || n > std::numeric_limits<std::int32_t>::max()) {
                    fail(value.location, "size '" + text + "' must be between 0 and 2147483647 (sizes are int32), got "
                                             + std::to_string(n));
                }
                info.value = n;
                m_bindings[text] = n;
            } else {
                if (value.nodes > m_limits.maxAliasNodes) {
                    fail(value.location, "the value of size '" + text + "' is too large: at most "
                                             + std::to_string(m_limits.maxAliasNodes) + " operations");
                }
                info.alias = std::move(value);
            }
        }
        m_sizes.emplace(text, std::move(info));
        if (!at(TokenKind::Comma))
            break;
        next();
    }
    expectEndOfStatement("the size declaration");
}

void Parser::parseTensorDeclarations(ir::TensorRole role)
{
    const Token &keyword = next();
    for (;;) {
        const Token &name = expectIdentifier("a tensor name after '" + std::string(keyword.text) + "'");
        declareName(name, "tensor");
        const std::string text(name.text);
        expect(TokenKind::Colon, "':' and an element type after '" + text + "' (as in " + text + ": f32[M, N])");
        const Token &typeToken = expectIdentifier("an element type (f32, f64, f16, bf16, i32, i64 or bool)");
        auto dtype = ir::parseDType(typeToken.text);
        if (!dtype) {
            fail(typeToken, "unknown element type '" + std::string(typeToken.text)
                                + "'; expected f32, f64, f16, bf16, i32, i64 or bool (or float32, float, double, half, int, ...)");
        }
        ir::Shape shape;
        if (at(TokenKind::LBracket))
            shape = parseShape(text);
        TensorInfo info;
        info.location = locate(name);
        switch (role) {
        case ir::TensorRole::Input: info.tensor = m_builder.input(text, *dtype, shape); break;
        case ir::TensorRole::Output: info.tensor = m_builder.output(text, *dtype, shape); break;
        case ir::TensorRole::Intermediate: info.tensor = m_builder.intermediate(text, *dtype, shape); break;
        }
        m_tensors.emplace(text, std::move(info));
        m_tensorOrder.push_back(text);
        if (!at(TokenKind::Comma))
            break;
        next();
    }
    expectEndOfStatement("the declaration");
}

ir::Shape Parser::parseShape(const std::string &tensorName)
{
    const Token &open = next();
    std::vector<ir::Expr> dims;
    m_context = Context::Shape;
    if (!at(TokenKind::RBracket)) {
        for (;;) {
            if (static_cast<int>(dims.size()) == m_limits.maxRank)
                fail(peek(), "too many dimensions for '" + tensorName + "': the rank is at most " + std::to_string(m_limits.maxRank));
            const std::string what = "dimension " + std::to_string(dims.size()) + " of '" + tensorName + "'";
            Value dim = parseIntegerExpression(what);
            if (auto n = evaluateConstant(dim.expr); n && *n < 0)
                fail(dim.location, what + " is negative (" + std::to_string(*n) + ")");
            dims.push_back(dim.expr);
            if (at(TokenKind::Comma)) {
                next();
                continue;
            }
            if (at(TokenKind::RBracket))
                break;
            fail(peek(), "expected ',' or ']' in the shape of '" + tensorName + "' opened at " + position(locate(open))
                             + ", found " + describeToken(peek()));
        }
    }
    next();
    m_context = Context::Body;
    return ir::Shape(std::move(dims));
}

void Parser::finishProgram()
{
    bool anyOutput = false;
    for (const std::string &name : m_tensorOrder) {
        const TensorInfo &info = m_tensors.at(name);
        switch (info.tensor.role) {
        case ir::TensorRole::Input:
            if (!info.read)
                warn(info.location, "input '" + name + "' is never read");
            break;
        case ir::TensorRole::Output:
            anyOutput = true;
            if (!info.computedAt) {
                report(Diagnostic{Severity::Error, info.location,
                                  "output '" + name + "' is never computed; add a statement such as '" + name
                                      + (info.tensor.rank() > 0 ? "[...]" : "") + " = ...'"});
            }
            break;
        case ir::TensorRole::Intermediate:
            if (!info.computedAt)
                warn(info.location, "tensor '" + name + "' is declared but never computed");
            else if (!info.read)
                warn(info.location, "tensor '" + name + "' is computed but never read; declare it with 'output' to return it");
            break;
        }
    }
    if (!anyOutput && m_errors.empty()) {
        report(Diagnostic{Severity::Error, locate(peek()),
                          "the program declares no output: declare one with 'output NAME: TYPE[...]' and compute it"});
    }
}

Result<LiftedProgram> parseTensorExpressions(std::string_view source, const std::string &fileName, const Limits &limits)
{
    try {
        return Parser(source, fileName, limits).run();
    } catch (const std::bad_alloc &) {
        return makeError(ErrorKind::ResourceLimit, "out of memory while parsing " + fileName);
    }
}

} // namespace stitch::frontend::te
