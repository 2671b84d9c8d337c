#pragma once
// #define macros and file-scope constants, as the lifter resolves identifiers through them.
//   SyntaxTree -> Preprocessor (object/function-like #defines, const globals) -> KernelExec, HostProgram
//   named integer literals -> SizeTable (size variables with their values and where they are written)
// Macro bodies are parsed as expressions once; an expansion is evaluated at its use site, as the
// C preprocessor would substitute it there.

#include "core/common/Result.h"
#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/cudalift/SyntaxTree.h"
#include "core/ir/Shape.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// A #define or a file-scope `const int N = ...;`.
struct NamedConstant {
    std::string name;
    std::vector<std::string> parameters;  ///< function-like macros only
    bool functionLike = false;
    const SyntaxTree *tree = nullptr;     ///< the tree holding value (the file, or a snippet)
    TSNode value{};                       ///< the value expression; null when not an expression
    std::string text;                     ///< the value as written
    SourceLocation location;
    SourceRange valueRange;               ///< where the value is written in the file
};

class Preprocessor {
public:
    explicit Preprocessor(const SyntaxTree &file);

    const NamedConstant *find(const std::string &name) const;
    const std::map<std::string, NamedConstant> &constants() const { return m_constants; }
    /// Set when a macro body could not be parsed within the file's time budget (Timeout).
    const std::optional<Error> &failure() const { return m_failure; }

private:
    void addDefine(TSNode node, bool functionLike);
    void addGlobalConst(TSNode declaration);

    const SyntaxTree &m_file;
    std::map<std::string, NamedConstant> m_constants;
    std::vector<std::unique_ptr<SyntaxTree>> m_snippets;
    std::optional<Error> m_failure;
};

/// A named integer constant of the program used as a size variable.
struct SizeDefinition {
    std::string name;
    std::int64_t value = 0;
    SourceLocation location;
    SourceRange literal;                  ///< the literal's text, so tests can resize the program
    bool fileScope = false;               ///< a #define or global constant: device code may use it
};

/// The sizes met while lifting, in order of first use.
class SizeTable {
public:
    /// Registers name = value (idempotent) and returns sizeVar(name).
    ir::Expr define(const SizeDefinition &definition);
    const SizeDefinition *find(const std::string &name) const;
    const std::vector<SizeDefinition> &definitions() const { return m_definitions; }
    ir::SizeBindings bindings() const;

    /// A named size computed from others (#define OH ((H - K) / S + 1), const int outH = ...).
    /// Kept as one symbol while lifting so shapes read [C, OH, OW]; inlined into the final graph.
    /// Returns sizeVar(name). A macro (global) reuses an existing entry of its name; a local whose
    /// name is taken by a different definition gets a fresh name.
    ir::Expr defineDerived(const std::string &name, const ir::Expr &definition, bool global);
    const std::map<std::string, ir::Expr> &derived() const { return m_derived; }
    /// e with every derived size replaced by its definition (recursively).
    ir::Expr inlineDerived(const ir::Expr &e) const;

private:
    std::vector<SizeDefinition> m_definitions;
    std::map<std::string, ir::Expr> m_derived;
};

/// Parses a C integer or floating literal ("1024", "0x10", "1e-5f", "2.0", "3u").
struct NumberValue {
    bool isFloat = false;
    std::int64_t intValue = 0;
    double floatValue = 0.0;
    ir::DType dtype = ir::DType::I32;
};
std::optional<NumberValue> parseNumber(std::string_view text);

} // namespace stitch::frontend::cudalift
