#pragma once
// Code generation: a graph and a schedule become one complete CUDA program.
//   Graph + Schedule (+ sizes) -> validateSchedule -> generateProgram -> GeneratedProgram
//   GeneratedProgram -> NVRTC (kernels) | nvcc (kernels + host launcher) | toLaunchPlan -> runner
// Deterministic: the same graph, schedule and sizes give byte-identical source.

#include "core/codegen/Carry.h"
#include "core/codegen/Kernels.h"
#include "core/common/Result.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/ir/Graph.h"
#include "core/ir/Shape.h"
#include "core/runner/Job.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Space.h"

#include <map>
#include <string>
#include <vector>

namespace stitch::codegen {

struct GeneratedKernel {
    KernelCode code;
    schedule::KernelGroup group;
    int stage = 0; ///< its ops' ir::ComputeOp::stage (Carry.h)
};

/// One line for a kernel: its group's decisions (schedule::describe), named first when it is a
/// group's second kernel (split K's sum, transpose_b's pass over B): "C_sum, of C [gemm] ...".
std::string describeKernel(const GeneratedKernel &kernel);

struct GeneratedProgram {
    std::string name;                       ///< graph name as a C identifier
    std::string source;                     ///< kernels, then the host launcher (#ifndef __CUDACC_RTC__)
    std::vector<GeneratedKernel> kernels;   ///< in launch order
    std::vector<ir::TensorId> buffers;      ///< device memory: inputs, outputs, stored intermediates
    schedule::Schedule schedule;            ///< what generated it
    CarriedKernels carried;                 ///< the input's opaque kernels, run unchanged between stages (Carry.h)
    /// The stage (ir::ComputeOp::stage) of each kernel's ops, like kernels.
    std::vector<int> kernelStages() const;
};

/// Validates the schedule for the problem, then generates. InvalidArgument (with every rule
/// broken) for an illegal schedule: nothing is generated.
/// With `carried` (carryOpaqueKernels of the lifted .cu), the program also holds the input's opaque
/// kernels unchanged, launched in the input's order, its launcher passes them their buffers, and
/// toLaunchPlan plans them.
Result<GeneratedProgram> generateProgram(const schedule::Problem &problem, const schedule::Schedule &schedule,
                                         const CarriedKernels *carried = nullptr);

/// NVRTC compile of generated source (kernels only: the host launcher is skipped through
/// __CUDACC_RTC__) with the toolkit headers on the include path.
/// Compiles a generated program with NVRTC (for cuda::archForSource(source, arch): sm_90a where a
/// kernel uses wgmma).
Result<cuda::CompileResult> compileGenerated(const std::string &source, const std::string &fileName,
                                             const std::string &arch, bool lineInfo = false);

/// The runner's launch plan for the program at the problem's sizes: inputs random, outputs
/// checked, stored intermediates as scratch; kernel names as generated (extern "C"). Carried
/// kernels run in their place, graph tensors that share memory with them share a plan buffer
/// (CarriedKernels::bufferFor) and the buffers only they use are added.
Result<runner::LaunchPlan> toLaunchPlan(const GeneratedProgram &program, const ir::Graph &graph, const ir::SizeBindings &sizes);

} // namespace stitch::codegen
