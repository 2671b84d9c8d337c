#pragma once
// The .te parser and its semantic checks (private to core/frontend/te).
//   Token stream -> Parser: declarations (TeParser.cpp), computations (TeComputation.cpp),
//   expressions (TeExpressions.cpp), index ranges (TeRanges.cpp) -> GraphBuilder -> LiftedProgram
// One pass: a name is declared before it is used, so every expression is typed as it is read.

#include "core/frontend/te/TeFrontend.h"
#include "core/frontend/te/TeLexer.h"
#include "core/ir/GraphBuilder.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::frontend::te {

/// A typed expression while it is being parsed.
struct Value {
    ir::Expr expr;
    SourceLocation location;   ///< where the expression starts
    bool literal = false;      ///< a number as written, which adopts the type of its neighbour
    int height = 1;            ///< operators on the longest path, leaves count one
    std::int64_t nodes = 1;    ///< tree size with shared nodes counted each time
};

struct SizeInfo {
    SourceLocation location;
    std::optional<std::int64_t> value; ///< `size N = 64`
    Value alias;                       ///< `size OH = H - 2`: uses of OH become this expression
};

struct TensorInfo {
    ir::Tensor tensor;
    SourceLocation location;
    std::optional<SourceLocation> computedAt;
    bool read = false;
};

/// An index variable of the statement being parsed.
struct IndexVar {
    std::string name;
    SourceLocation location;
    bool reduction = false;
    bool explicitRange = false; ///< `k < K` or `k in [lo, hi)`; otherwise inferred from its uses
    ir::Expr lower;             ///< defined once known
    ir::Expr upper;
    std::string origin;         ///< where the range came from, for shape-mismatch messages
};

/// An index variable used alone as an index, X[i, k]: it must range over that dimension.
struct BareUse {
    std::string var;
    std::string tensor;
    int dimension = 0;
    ir::Expr extent;
    SourceLocation location;
};

/// What names an expression may use, and what it must not contain.
enum class Context {
    Shape,     ///< dimensions and size values: sizes and integer constants only
    Range,     ///< reduction ranges: sizes and the statement's spatial variables, no reads
    Init,      ///< reduction init: like the body without reduction variables
    Body,
};

/// Thrown to abandon the current statement; the parser records it and resumes at the next one.
struct StatementError {
    Diagnostic diagnostic;
};

class Parser {
public:
    Parser(std::string_view source, std::string fileName, const Limits &limits);

    Result<LiftedProgram> run();

private:
    // TeParser.cpp: statements and declarations
    void parseStatement();
    void parseGraphName();
    void parseSizes();
    void parseTensorDeclarations(ir::TensorRole role);
    ir::Shape parseShape(const std::string &tensorName);
    void finishProgram();
    void declareName(const Token &name, const char *what);

    // TeComputation.cpp: `Y[i, j] = [reduction] expression`
    void parseComputation();
    ir::Reduction parseReductionHeader(Value &init);
    bool startsReduction() const;
    void checkAssignment(const TensorInfo &out, const Value &value, const char *what);

    // TeExpressions.cpp: expressions, their types and their names
    Value parseExpression();
    Value parseBinary(int minPrecedence);
    Value parseUnary();
    Value parsePrimary();
    Value parseName(const Token &name);
    Value parseCall(const Token &name);
    Value parseRead(TensorInfo &tensor, const Token &name, bool bracketed);
    Value combine(ir::BinaryOp op, Value lhs, Value rhs, const Token &opToken);
    Value makeNode(ir::Expr expr, const SourceLocation &location, std::initializer_list<const Value *> operands);
    void requireNumber(const Value &value, const std::string &what, const Token &at);
    void requireBool(const Value &value, const std::string &what, const Token &at);
    void requireInteger(const Value &value, const std::string &what, const Token &at);
    void requireInteger(const Value &value, const std::string &what);
    Value parseIntegerExpression(const std::string &what);

    // TeRanges.cpp: reduction ranges and shape checks of bare index variables
    void inferAndCheckRanges();
    bool fitsDimension(const IndexVar &var, const ir::Expr &extent) const;
    std::optional<std::int64_t> evaluateConstant(const ir::Expr &expr) const;
    void checkSizeExpression(const Value &value, const std::string &what);

    // Tokens and errors
    const Token &peek(std::size_t ahead = 0) const;
    const Token &next();
    bool at(TokenKind kind) const { return peek().kind == kind; }
    bool atWord(std::string_view word) const;
    const Token &expect(TokenKind kind, const std::string &what);
    const Token &expectIdentifier(const std::string &what);
    void expectEndOfStatement(const std::string &after);
    SourceLocation locate(const Token &token) const;
    [[noreturn]] void fail(const Token &token, std::string message) const;
    [[noreturn]] void fail(const SourceLocation &location, std::string message) const;
    void report(Diagnostic diagnostic);
    void warn(const SourceLocation &location, std::string message);
    void skipStatement();

    IndexVar *findIndexVar(std::string_view name);
    const IndexVar *findIndexVar(std::string_view name) const;

    friend class NestingGuard;

    std::string_view m_source;
    std::string m_fileName;
    Limits m_limits;
    std::vector<Token> m_tokens;
    std::size_t m_pos = 0;

    ir::GraphBuilder m_builder;
    std::string m_graphName;
    std::optional<SourceLocation> m_graphNameAt;
    std::map<std::string, SizeInfo, std::less<>> m_sizes;
    std::map<std::string, TensorInfo, std::less<>> m_tensors;
    std::vector<std::string> m_tensorOrder; ///< declaration order, for deterministic messages
    ir::SizeBindings m_bindings;
    int m_statements = 0;
    bool m_stopped = false;

    std::vector<Diagnostic> m_errors;
    std::vector<Diagnostic> m_warnings;

    // State of the statement being parsed.
    Context m_context = Context::Body;
    const TensorInfo *m_output = nullptr;
    std::vector<IndexVar> m_vars;       ///< spatial variables, then reduction variables
    std::vector<BareUse> m_bareUses;
    int m_nesting = 0;
};

/// Counts one level of nesting for the lifetime of a parsing function; fails past the limit so
/// that deeply nested input cannot exhaust the stack.
class NestingGuard {
public:
    NestingGuard(Parser &parser, const Token &at);
    ~NestingGuard() { --m_parser.m_nesting; }
    NestingGuard(const NestingGuard &) = delete;
    NestingGuard &operator=(const NestingGuard &) = delete;

private:
    Parser &m_parser;
};

/// "line:col", as messages refer to other places in the same file.
inline std::string position(const SourceLocation &location)
{
    return std::to_string(location.line) + ":" + std::to_string(location.column);
}

/// A literal next to a typed operand takes that operand's type when the kinds agree, so that
/// `0.5 * h` stays float16 for a float16 h (the same rule as ir::literalFor). Other values pass.
Value adoptLiteral(Value literal, ir::DType like);

/// Built-in names a declaration may not take: keywords, functions, constants and type names.
bool isReservedName(std::string_view name);

} // namespace stitch::frontend::te
