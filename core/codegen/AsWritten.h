#pragma once
// The user's CUDA program as its host code runs it, for the runner: the baseline to time and the
// GPU reference a generated program is checked against.
//   .cu text -> liftCudaProgramDetailed -> CudaLiftDetail + sizes -> asWrittenProgram -> AsWrittenProgram
//   AsWrittenProgram -> compileAsWritten (NVRTC, device code only) -> runner::GpuReference | runner::Job
// Only straight-line host programs qualify: every launch lifted, buffers filled before the first
// launch, no device-to-device copies; anything else is a located Unsupported error.

#include "core/common/Result.h"
#include "core/frontend/cudalift/CudaLift.h"
#include "core/ir/Graph.h"
#include "core/ir/Shape.h"
#include "core/runner/Job.h"
#include "core/runner/Runner.h"

#include <map>
#include <string>
#include <vector>

namespace stitch::codegen {

struct AsWrittenProgram {
    std::string fileName;
    /// The whole program with its file-scope size definitions (#define N 1024, const int N = ...)
    /// set to the bound sizes, byte for byte elsewhere: device code compiled from it uses them.
    std::string source;
    /// -D options for host-header constants device code uses (FLT_MAX, INFINITY): the device-only
    /// translation unit blanks <cfloat> and <math.h>, and NVRTC does not define them itself.
    std::vector<std::string> defines;
    /// One buffer per cudaMalloc (host names, e.g. d_A) and the launches in program order, with
    /// kernel names as written (plain); compileAsWritten resolves them to the module's names.
    runner::LaunchPlan plan;
    ir::SizeBindings sizes; ///< every size the launches use, as bound
    /// Plan buffer -> graph tensor: the final contents of outputs and in-outs, the initial
    /// contents of inputs (runner::CpuReference::tensorForBuffer).
    std::map<std::string, std::string> tensorForBuffer;
    /// In-out buffers -> the graph input their initial contents are (CpuReference::inputTensorForBuffer).
    std::map<std::string, std::string> inputTensorForBuffer;
    /// Graph tensor -> plan buffer holding it: how a generated program's buffers (named after the
    /// graph's tensors) map onto this plan's (GpuReference::bufferMap).
    std::map<std::string, std::string> bufferForTensor;
};

/// The program as written at `sizes` (over detail.program.sizes; these win). `source` and
/// `fileName` are what was lifted into `detail`. Errors, located at the launch or allocation:
/// Unsupported (a launch the lifter refused or inferred, a launch dimension or scalar argument
/// that does not evaluate at the sizes, a pointer argument with an offset, a scalar parameter type
/// the runner cannot pass, a host copy, memset or device copy after the first launch, a buffer
/// kernels use without it being an argument such as a __constant__ variable), InvalidArgument
/// (empty buffers, launch dimensions out of range).
Result<AsWrittenProgram> asWrittenProgram(const std::string &source, const std::string &fileName,
                                          const frontend::cudalift::CudaLiftDetail &detail,
                                          const ir::SizeBindings &sizes);

/// Launch `l` of detail.launches as the host program performs it at `sizes`: configuration (the
/// dynamic shared memory only as a literal), scalar arguments evaluated, buffer arguments by their
/// host names (BufferPlan::name), kernel name as written. Unsupported, located at the launch, for
/// what does not evaluate or a launch plan cannot pass (offsets into buffers, scalar types other
/// than int, long, size_t, float and double); `index` is indexCudaSource(source).
Result<runner::KernelLaunch> evaluateLaunch(const std::string &source, const frontend::cudalift::CudaLiftDetail &detail,
                                            const frontend::SourceIndex &index, std::size_t l,
                                            const ir::SizeBindings &sizes);

/// Compiles the program's device code with NVRTC for `arch` (cuda::compileProgram strips the host
/// code) and resolves the plan's kernel names: the module, plan and map a GpuReference needs, also
/// runnable on its own as a Job (module + plan). Errors: Compile, InvalidArgument (a launched
/// kernel missing from the module).
Result<runner::GpuReference> compileAsWritten(const AsWrittenProgram &program, const std::string &arch);

/// The CPU interpreter of the lifted graph as the reference for the as-written plan.
runner::CpuReference asWrittenCpuReference(const AsWrittenProgram &program, const ir::Graph &graph);

/// `source` with the file-scope size definitions among `definitions` set to `values`. Unsupported
/// when a definition device code may use differs from its value and has no literal to rewrite.
Result<std::string> resizeSource(const std::string &source,
                                 const std::vector<frontend::cudalift::SizeDefinition> &definitions,
                                 const ir::SizeBindings &values);

/// The -D options of AsWrittenProgram::defines.
std::vector<std::string> hostConstantDefines();

} // namespace stitch::codegen
