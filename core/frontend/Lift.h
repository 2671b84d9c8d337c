#pragma once
// Lifting user programs into the computation graph (the Parse agent's job).
//   .te text  -> liftTensorExpressions -> LiftedProgram{Graph, sizes, ...}
//   .cu text  -> liftCudaProgram (tree-sitter AST of kernels + host code) -> LiftedProgram
//   LiftedProgram -> `stitchcuda lift` (JSON, docs/LIFT-JSON.md), interpreter, agents, studio
// Nothing here guesses: what cannot be lifted is a located diagnostic and, for a CUDA kernel, an
// opaque kernel that stays in the program as written.

#include "core/common/Result.h"
#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/SourceExpansion.h"
#include "core/ir/Graph.h"
#include "core/ir/Shape.h"

#include <string>
#include <vector>

namespace stitch::frontend {

/// A kernel that could not be lifted: kept and launched as written.
struct OpaqueKernel {
    std::string name;
    SourceRange range;
    std::vector<std::string> reads;   ///< buffers (host names) it reads, when known from the launch
    std::vector<std::string> writes;  ///< buffers it writes, when known
    Diagnostic why;                   ///< the construct that blocked lifting, located, with advice
};

/// One kernel launch in the host program, in program order.
struct LiftedLaunch {
    std::string kernel;
    std::string grid, block;                 ///< as written
    std::vector<std::string> arguments;      ///< as written
    std::vector<std::string> ops;            ///< graph ops this launch became (empty if opaque)
    SourceLocation location;                 ///< the launch; for an inferred one, the kernel's name
    bool inferred = false;                   ///< no host code launches the kernel: grid and block
                                             ///< come from its guards (a lone kernel, lifted alone)
};

struct LiftedProgram {
    std::string sourceFile;
    std::string language;                    ///< "te" or "cuda"
    ir::Graph graph;
    ir::SizeBindings sizes;                  ///< concrete sizes known from the source (#define, const, literals)
    std::vector<LiftedLaunch> launches;      ///< CUDA only
    std::vector<OpaqueKernel> opaque;        ///< CUDA only
    std::vector<Diagnostic> diagnostics;     ///< warnings and notes (errors fail the Result)
    /// CUDA only, set when includes, conditionals or -D changed the file's text: the text lifted
    /// (self-contained; its #line directives name the files), so what replays the lift (a trace,
    /// a plan's CPU reference) needs neither the headers nor the options.
    std::string expandedSource;
    std::vector<std::string> includedFiles;  ///< headers inlined, in order
};

/// Parses a tensor-expression file (.te; language in docs/TE.md). Errors are located
/// file:line:col with what was expected.
Result<LiftedProgram> liftTensorExpressions(const std::string &source, const std::string &fileName);

/// Lifts a CUDA program: kernels in the one-thread-per-output style become compute ops; the host
/// program gives sizes, buffers and the launch sequence (dataflow between kernels). A file that
/// launches nothing has each kernel lifted alone: integer parameters are sizes without values,
/// the launch is inferred from its guards (docs/LIFT-JSON.md, "A kernel alone"). tree-sitter
/// parses the file once, within CudaParseLimits (CudaSourceIndex.h): an oversized file or one
/// that runs past the time budget is an error at file:1:1, never a hang.
/// Quoted includes are followed beside the file and in options' -I folders, conditionals decided,
/// -D applied (SourceExpansion.h); locations name the header where the code came from one.
Result<LiftedProgram> liftCudaProgram(const std::string &source, const std::string &fileName,
                                      const SourceOptions &options = {});

/// A CUDA source by its name: .cu or .cuh, in any case.
bool isCudaFileName(const std::string &fileName);

/// Picks the frontend by extension (.te, .cu/.cuh); Unsupported error for anything else.
/// options apply to CUDA files only.
Result<LiftedProgram> liftFile(const std::string &source, const std::string &fileName, const SourceOptions &options = {});

} // namespace stitch::frontend
