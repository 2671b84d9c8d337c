#pragma once
// Kernels the lifter keeps opaque, carried unchanged into the generated program, so that it
// computes everything the input did (a kernel is never silently dropped).
//   CudaLiftDetail (opaque launches, opaqueUses) + sizes -> carryOpaqueKernels -> CarriedKernels
//   generateProgram(problem, schedule, &carried) -> the generated kernels and the carried ones,
//   launched in the input's order: the ops of stage s (ir::ComputeOp::stage), then the s-th
//   opaque launch, then stage s + 1 (launchOrder).
// The carried device code is the input's own (host code blanked, file-scope sizes set to the bound
// values) inside `namespace stitch_input`, so its names never meet the generated kernels'.
// Buffers: a carried kernel works in place on the memory the input gave it, so the graph tensors
// standing for one buffer before and after it share one plan buffer (planBuffer); buffers only
// carried kernels touch get their own (buffers). The CPU interpreter cannot run a carried kernel:
// what one wrote, and everything computed from it, is left unchecked (uncheckedBuffers).

#include "core/common/Result.h"
#include "core/ir/Graph.h"
#include "core/ir/Shape.h"
#include "core/runner/Job.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {
struct CudaLiftDetail; // core/frontend/cudalift/CudaLift.h, whose includes reach tree-sitter's headers
} // namespace stitch::frontend::cudalift

namespace stitch::codegen {

/// The namespace the carried device code lives in within a generated program.
inline constexpr const char *kCarriedNamespace = "stitch_input";

struct CarriedLaunch {
    std::string kernel;          ///< as written, e.g. histogram
    int afterStage = 0;          ///< runs after the kernels of ops of stage <= afterStage, before the rest
    runner::KernelLaunch launch; ///< kernel: its name in the generated module; buffer arguments: plan buffers
    SourceLocation where;        ///< the launch in the input
    std::string why;             ///< why the kernel stays opaque (the lifter's reason)
};

struct CarriedKernels {
    std::string fileName;                          ///< the input
    std::vector<std::string> includes;             ///< system headers the section needs (#include lines)
    std::string section;                           ///< namespace stitch_input { the input's device code }, then #undef of its macros
    std::vector<CarriedLaunch> launches;           ///< in the input's order
    std::map<std::string, std::string> planBuffer; ///< graph tensor -> the plan buffer it shares with others
    std::vector<runner::BufferSpec> buffers;       ///< buffers no graph tensor stands for
    std::set<std::string> carriedTensors;          ///< graph inputs that are what a carried kernel wrote
    std::set<std::string> written;                 ///< plan buffers a carried kernel may write
    std::vector<Diagnostic> notes;                 ///< opaque kernels nothing launches: nothing to carry

    bool empty() const { return launches.empty(); }
    /// The plan buffer holding graph tensor `tensor`: planBuffer's entry, else the tensor itself.
    std::string bufferFor(const std::string &tensor) const;
};

/// Every opaque launch of the lifted program, ready to run unchanged at `sizes` (over the lifted
/// program's own sizes). `source` is the lifted text (detail.source). Errors, located at the launch,
/// never a kernel dropped: Unsupported when an opaque kernel's launch cannot be replayed (host code
/// the grammar cannot read may launch it, an argument that does not evaluate, an offset into a
/// buffer: evaluateLaunch's reasons), naming the kernel and why it stays opaque.
Result<CarriedKernels> carryOpaqueKernels(const frontend::cudalift::CudaLiftDetail &detail,
                                          const std::string &fileName, const ir::SizeBindings &sizes);

/// The plan buffers whose final contents the CPU interpreter of `graph` cannot compute: those a
/// carried kernel may write and every buffer of a tensor computed from what one wrote.
std::set<std::string> uncheckedBuffers(const CarriedKernels &carried, const ir::Graph &graph);

/// One step of a generated program with carried kernels: a generated kernel or a carried launch.
struct LaunchStep {
    bool carried = false;
    std::size_t index = 0; ///< into GeneratedProgram::kernels or CarriedKernels::launches
};

/// The launch sequence: generated kernels in order, each carried launch before the first kernel of
/// a later stage. `kernelStages[i]` is the stage of kernel i's ops.
std::vector<LaunchStep> launchOrder(const std::vector<int> &kernelStages, const CarriedKernels &carried);

} // namespace stitch::codegen
