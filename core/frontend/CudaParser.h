#pragma once
// The one place that runs tree-sitter on CUDA text, within CudaParseLimits.
//   .cu text -> parseCuda (size cap, time budget) -> CudaTree -> indexCudaTree (outline)
//                                                            -> cudalift::SyntaxTree (lifter)
// Internal to core: callers outside it use indexCudaSource and liftCudaProgram.

#include "core/common/Result.h"
#include "core/frontend/CudaSourceIndex.h"

#include <tree_sitter/api.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stitch::frontend {

using ParseClock = std::chrono::steady_clock;

/// An owned tree-sitter tree. Its nodes hold byte offsets into the text it was parsed from,
/// which the caller keeps.
class CudaTree {
public:
    TSNode root() const { return ts_tree_root_node(m_tree.get()); }

private:
    struct Deleter {
        void operator()(TSTree *tree) const { ts_tree_delete(tree); }
    };
    explicit CudaTree(TSTree *tree) : m_tree(tree) {}
    friend Result<CudaTree> parseCudaUntil(std::string_view, const std::string &, ParseClock::time_point,
                                           std::size_t);
    std::unique_ptr<TSTree, Deleter> m_tree;
};

/// The deepest syntax tree a parse returns (a tree-sitter node's depth below the root). Every
/// walk over the tree (the outline, the lifter's kernels, host code and macros) recurses once or
/// more per level, each level taking up to 22 KB of stack under ASan at -O1 (nested device-function
/// calls): a file nested deeper is refused, never walked. The code in this repository nests at most
/// 35 levels; clang stops at 256 nested brackets, about 512 levels.
inline constexpr unsigned kMaxCudaSyntaxDepth = 1000;

/// Parses source with the CUDA grammar, giving tree-sitter until deadline. Errors, located at
/// fileName:1:1: Parse when source is larger than maxSourceBytes, Timeout when the deadline
/// passes first (the message says the file is probably not CUDA). Unsupported, located at its
/// first node that deep, when the tree is deeper than kMaxCudaSyntaxDepth.
Result<CudaTree> parseCudaUntil(std::string_view source, const std::string &fileName, ParseClock::time_point deadline,
                                std::size_t maxSourceBytes);

/// parseCudaUntil with limits.budgetFor(source.size()) from now.
Result<CudaTree> parseCuda(std::string_view source, const std::string &fileName, const CudaParseLimits &limits = {});

/// "tree-sitter-cuda 0.21.1": the grammar this build parses with.
std::string cudaGrammarName();

/// What a node tree-sitter could not read (an ERROR node) or had to assume (a MISSING node) is:
/// the limit of the grammar, not a verdict on the code; nvcc/NVRTC is the authority on syntax.
/// "the CUDA grammar (tree-sitter-cuda 0.21.1) cannot read this construct near 'x < n)'; nvcc/NVRTC
/// is the authority on whether it is valid CUDA".
std::string grammarLimitMessage(TSNode node, std::string_view source);

/// The ERROR and MISSING nodes under node (itself included), in source order, at most max, as
/// located warnings with grammarLimitMessage. Empty when the subtree is clean.
/// Locations go through lines (the source's #line directives) when given.
std::vector<Diagnostic> grammarLimits(TSNode node, std::string_view source, const std::string &fileName,
                                      std::size_t max = 50, const class LineMap *lines = nullptr);

/// The kernel a launch names, from the text of its call's function: `::k` is the file-scope kernel
/// `k` (StitchCUDA's generated host launchers write launches so).
std::string_view launchedKernelName(std::string_view functionText);

/// The outline of a parsed file; source must be the text root was parsed from.
SourceIndex indexCudaTree(TSNode root, const std::string &source, const std::string &fileName);

} // namespace stitch::frontend
