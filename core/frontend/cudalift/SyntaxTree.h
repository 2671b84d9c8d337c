#pragma once
// A parsed CUDA file (tree-sitter, tree-sitter-cuda grammar) with the node helpers the lifter uses.
//   .cu text -> SyntaxTree::parse -> TSNode walks (Preprocessor, KernelExec, HostProgram)
// Also parses snippets (macro bodies) whose locations map back to where the snippet came from.

#include "core/common/Result.h"
#include "core/ir/ComputeOp.h"

#include <tree_sitter/api.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stitch::frontend::cudalift {

/// Owns one tree-sitter tree and the text it was parsed from.
class SyntaxTree {
public:
    /// Parses text; never returns null (an empty tree when tree-sitter gives up). A snippet's
    /// nodes all report `origin` as their location, so messages point at the macro definition.
    static std::unique_ptr<SyntaxTree> parse(std::string text, std::string fileName,
                                             std::optional<SourceLocation> origin = std::nullopt);
    ~SyntaxTree();
    SyntaxTree(const SyntaxTree &) = delete;
    SyntaxTree &operator=(const SyntaxTree &) = delete;

    TSNode root() const;
    bool valid() const { return m_tree != nullptr; }
    const std::string &text() const { return m_text; }
    const std::string &fileName() const { return m_file; }

    std::string_view text(TSNode node) const;
    SourceLocation location(TSNode node) const;
    SourceLocation endLocation(TSNode node) const;
    ir::SourceSpan span(TSNode node) const;

    /// ERROR and MISSING nodes as located syntax errors.
    std::vector<Diagnostic> syntaxErrors() const;

private:
    SyntaxTree() = default;
    std::string m_text;
    std::string m_file;
    std::optional<SourceLocation> m_origin;
    TSParser *m_parser = nullptr;
    TSTree *m_tree = nullptr;
};

/// The grammar's node type ("binary_expression", "identifier", ...).
std::string_view kind(TSNode node);
/// The child in a named field, or a null node.
TSNode field(TSNode node, const char *name);
std::vector<TSNode> namedChildren(TSNode node);
std::vector<TSNode> children(TSNode node);
/// The operator token of a binary, unary, update or assignment expression ("+", "+=", "++").
std::string_view operatorOf(TSNode node);
/// Whether node has an anonymous child token spelled exactly `token` (e.g. "__shared__", "const").
bool hasToken(TSNode node, std::string_view token);

} // namespace stitch::frontend::cudalift
