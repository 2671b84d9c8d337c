#pragma once
// CUDA source -> tree-sitter (tree-sitter-cuda grammar) -> outline of kernels and syntax errors.
//   .cu text -> indexCudaSource -> SourceIndex -> studio outline, CLI, (later) the Parse agent
// Syntax errors are located the way a compiler locates them; nothing here needs a GPU or NVRTC.

#include "core/common/Result.h"

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
    std::vector<Diagnostic> syntaxErrors;   ///< ERROR / MISSING nodes of the parse tree
};

/// Parses CUDA source with tree-sitter. Never throws; a broken file still yields the kernels
/// tree-sitter could recover plus located syntax errors.
SourceIndex indexCudaSource(const std::string &source, const std::string &fileName);

/// The grammar's ABI version and the tree-sitter runtime's supported range ("14 (runtime 13-14)").
std::string treeSitterVersionInfo();

} // namespace stitch::frontend
