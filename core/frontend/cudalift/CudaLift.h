#pragma once
// The CUDA lifter with everything it learned about the program, for tests and runners.
//   .cu text -> liftCudaProgramDetailed -> {LiftedProgram, buffer plans, launch plans, size definitions}
//   launch plans + buffer plans -> run the ORIGINAL kernels (GPU test) and compare with the graph
// liftCudaProgram (core/frontend/Lift.h) returns the LiftedProgram part of this.

#include "core/frontend/Lift.h"
#include "core/frontend/cudalift/Assembly.h"
#include "core/frontend/cudalift/HostProgram.h"
#include "core/frontend/cudalift/KernelModel.h"
#include "core/frontend/cudalift/Preprocessor.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// One launch as the host program performs it, with sizes as expressions over size variables.
struct LaunchPlan {
    std::string kernel;
    std::array<ir::Expr, 3> grid;
    std::array<ir::Expr, 3> block;
    std::vector<KernelArgument> arguments; ///< Buffer arguments index CudaLiftDetail::buffers
    bool lifted = false;
};

/// What the symbolic thread of one launch did to memory, kept for the rubric of the program as
/// written (core/rubric/AsWrittenRubric.h): present when the kernel body could be evaluated, even
/// if the launch was later refused while assembling the graph (an index no shape expresses).
/// Index expressions and loop ranges have derived sizes inlined (over CudaLiftDetail::definedSizes).
struct LaunchAccesses {
    KernelEffects effects; ///< accesses, branches, stores, pending reductions, loops
    /// The lifter refused the kernel for the graph (LiftedProgram::opaque says why) and this record
    /// comes from a second, record-only evaluation (KernelExec::setRecordOnly): addresses, not values.
    bool recordOnly = false;
};

struct CudaLiftDetail {
    LiftedProgram program;
    std::vector<BufferPlan> buffers;          ///< one per cudaMalloc, in program order
    std::vector<LaunchPlan> launches;         ///< in program order
    std::vector<SizeDefinition> sizes;        ///< named sizes, with where their values are written
    std::vector<HostEvent> events;            ///< copies, memsets and launches, in program order
    /// One per launch (like launches): nullopt where the kernel body was refused (LiftedProgram::opaque says why).
    std::vector<std::optional<LaunchAccesses>> accesses;
    /// Every named size's value, those only device code uses included (program.sizes: the graph's and launches').
    ir::SizeBindings definedSizes;
    /// The text that was lifted: the file's, or with its includes, conditionals and -D expanded
    /// (SourceExpansion.h), followed by the instances of the templates it calls (Templates.h);
    /// every byte offset above (SourceRange::beginByte, ...) indexes it, and it compiles on its own
    /// (its #line directives name the files).
    std::string source;
    std::vector<std::string> includedFiles; ///< headers inlined into source
    /// How each opaque launch meets the graph's tensors, per buffer (Assembly.h); LaunchPlan::kernel
    /// and arguments give the rest of what carrying it unchanged needs (codegen/Carry.h).
    std::vector<OpaqueBufferUse> opaqueUses;
    /// The kernels were lifted alone: no host code launches them (launches are inferred).
    bool loneKernels = false;
    /// The first host statement the grammar could not read: kernels it may launch are unknown.
    std::optional<Refusal> unreadableHost;
};

/// liftCudaProgram with the host-side plan. Errors: Parse (a file over CudaParseLimits' size cap),
/// Timeout when tree-sitter runs past its budget (the file is probably not CUDA), and Unsupported
/// when the file has no __global__ kernel. What the grammar cannot read never fails the file: it
/// is a located warning, and a kernel containing it stays opaque with that reason.
/// options: -I and -D as the compiler would be given them (quoted includes are always looked for
/// beside the file).
Result<CudaLiftDetail> liftCudaProgramDetailed(const std::string &source, const std::string &fileName,
                                               const CudaParseLimits &limits = {}, const SourceOptions &options = {});

/// A file lifted by its extension (liftFile), with the host-side plan when it is CUDA: what the
/// optimizer and `stitchcuda generate` need to carry opaque kernels and to run the input as written.
struct LiftedFile {
    LiftedProgram program;
    std::optional<CudaLiftDetail> detail; ///< .cu / .cuh only
};
Result<LiftedFile> liftFileDetailed(const std::string &source, const std::string &fileName,
                                    const SourceOptions &options = {});

} // namespace stitch::frontend::cudalift
