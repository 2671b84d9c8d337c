#pragma once
// CUDA source -> tree-sitter (tree-sitter-cuda grammar) -> outline of kernels and what the grammar
// could not read (its limits, not the code's errors: nvcc/NVRTC is the authority on syntax).
//   .cu text -> indexCudaSource -> SourceIndex -> studio outline, CLI, (later) the Parse agent
// Syntax errors are located the way a compiler locates them; nothing here needs a GPU or NVRTC.

#include "core/common/Result.h"

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace stitch::frontend {

struct SourceRange {
    SourceLocation begin;
    SourceLocation end;
    unsigned beginByte = 0;
    unsigned endByte = 0;
};

struct KernelParameter {
    std::string type;   ///< as written, e.g. "const float *"
    std::string name;
};

struct KernelInfo {
    std::string name;
    std::string qualifier;              ///< "__global__" or "__device__"
    std::vector<KernelParameter> parameters;
    SourceRange range;                  ///< the whole definition
    SourceLocation nameLocation;
    bool hasSharedMemory = false;       ///< declares __shared__ arrays
    bool hasSyncThreads = false;        ///< calls __syncthreads()
};

struct LaunchSite {
    std::string kernel;                 ///< callee name
    std::string grid, block;            ///< the <<<grid, block>>> expressions as written
    SourceLocation location;
};

struct IncludeDirective {
    std::string path;                   ///< as written between <> or ""
    bool system = false;                ///< <...> rather than "..."
    SourceRange range;
};

struct SourceIndex {
    std::vector<KernelInfo> kernels;        ///< __global__ and __device__ functions, in file order
    std::vector<LaunchSite> launches;       ///< kernel<<<...>>>(...) calls in host code
    std::vector<SourceRange> hostFunctions; ///< definitions without __global__/__device__
    std::vector<IncludeDirective> includes;
    /// What the grammar could not read: ERROR / MISSING nodes of the parse tree as located
    /// warnings (the grammar's limit; nvcc/NVRTC is the authority on syntax), or one error at
    /// file:1:1 when the file was not parsed at all (too large, past its time budget), or at its
    /// first node too deep when it nests deeper than the parser reads (kMaxCudaSyntaxDepth).
    std::vector<Diagnostic> syntaxErrors;
};

/// Bounds on tree-sitter's work for one CUDA file. Its error recovery costs about 25 us per byte
/// of text that is not C (binary data, other languages), so without a budget a few megabytes of
/// such input would hold the caller for minutes; valid CUDA parses about 50x faster.
struct CudaParseLimits {
    std::size_t maxSourceBytes = std::size_t{8} << 20;
    /// The time tree-sitter may take: max(minBudget, size * budgetPerByte).
    std::chrono::milliseconds minBudget{2000};
    std::chrono::nanoseconds budgetPerByte{2000};

    std::chrono::microseconds budgetFor(std::size_t bytes) const;
};

/// Parses CUDA source with tree-sitter. Never throws; a file the grammar cannot fully read still
/// yields the kernels tree-sitter could recover plus located grammar-limit warnings. A file over the size limit, or one that
/// takes longer than its budget, yields no kernels and one error at fileName:1:1; one nested too
/// deeply, no kernels and one error where it gets too deep.
SourceIndex indexCudaSource(const std::string &source, const std::string &fileName,
                            const CudaParseLimits &limits = {});

/// The grammar, its ABI version and the tree-sitter runtime's supported range
/// ("tree-sitter-cuda 0.21.1, grammar ABI 15 (runtime accepts 13-15)").
std::string treeSitterVersionInfo();

} // namespace stitch::frontend
