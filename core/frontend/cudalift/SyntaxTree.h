#pragma once
// A parsed CUDA file (tree-sitter, tree-sitter-cuda grammar) with the node helpers the lifter uses.
//   .cu text -> SyntaxTree::parse (parseCuda: size cap, time budget) -> TSNode walks (Preprocessor,
//   KernelExec, HostProgram) and indexCudaTree (the kernel outline, from the same parse)
// Also parses snippets (macro bodies) whose locations map back to where the snippet came from.

#include "core/common/Result.h"
#include "core/frontend/CudaParser.h"
#include "core/frontend/SourceExpansion.h"
#include "core/frontend/cudalift/LiftRefusal.h"
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
    /// Parses a file within limits; never returns null. When tree-sitter gives up (too large, out
    /// of time) the tree is not valid() and failure() says why.
    static std::unique_ptr<SyntaxTree> parse(std::string text, std::string fileName,
                                             const CudaParseLimits &limits = {});
    /// Parses a snippet (a macro body) in what is left of this file's time budget, so snippets
    /// cannot multiply it. All the snippet's nodes report origin as their location, so messages
    /// point at the macro definition. Not valid() when the budget is spent.
    std::unique_ptr<SyntaxTree> parseSnippet(std::string text, SourceLocation origin) const;
    ~SyntaxTree();
    SyntaxTree(const SyntaxTree &) = delete;
    SyntaxTree &operator=(const SyntaxTree &) = delete;

    /// Only for a valid() tree.
    TSNode root() const;
    bool valid() const { return m_tree.has_value(); }
    const std::string &text() const { return m_text; }
    const std::string &fileName() const { return m_file; }

    std::string_view text(TSNode node) const;
    SourceLocation location(TSNode node) const;
    SourceLocation endLocation(TSNode node) const;
    ir::SourceSpan span(TSNode node) const;

    /// What the grammar could not read under node (the whole file when null): ERROR and MISSING
    /// nodes as located warnings (grammarLimitMessage: the grammar's limit, not a syntax error;
    /// nvcc/NVRTC is the authority). Empty for a clean subtree or a tree that is not valid().
    std::vector<Diagnostic> grammarLimits(TSNode node = TSNode{}, std::size_t max = 50) const;
    /// Why `what` (a kernel, a device function, host code) cannot be followed when its subtree
    /// has an ERROR or MISSING node: the first one, located, as a Refusal that says it is the
    /// grammar's limit. nullopt for a clean subtree.
    std::optional<Refusal> grammarLimitRefusal(TSNode subtree, const std::string &what) const;
    /// Why the tree is not valid(): a Parse or Timeout error at file:1:1.
    const std::optional<Error> &failure() const { return m_failure; }

private:
    SyntaxTree() = default;
    void parseUntil(ParseClock::time_point deadline, std::size_t maxSourceBytes);

    std::string m_text;
    std::string m_file;
    std::optional<SourceLocation> m_origin;
    std::optional<LineMap> m_lines;       ///< the text's #line directives (files, not snippets)
    ParseClock::time_point m_deadline;
    std::size_t m_maxSourceBytes = 0;
    std::optional<CudaTree> m_tree;
    std::optional<Error> m_failure;
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
