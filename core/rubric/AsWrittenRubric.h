#pragma once
// The rubric of the user's program as written: the kernels its host code launches, scored on the
// same dimensions as a generated schedule, before anything is optimized.
//   .cu -> liftCudaProgramDetailed (per launch: the symbolic thread's loads, stores, branches and loops
//   as index expressions over thread, block and loop indices) -> access streams replayed on sampled
//   warps at the bound sizes (AsWrittenFacts.cpp) + NVRTC's resources, PTX and SASS of the source as
//   written + the launch configuration -> KernelFacts -> the rubric's own dimensions (Dimensions.h)
//   -> AsWrittenReport: per kernel the scores, the dimensions it lacks with located reasons, and a
//   predicted time where the kernel maps onto a strategy the model knows (else "measure on a GPU").
// docs/RUBRIC.md "The program as written".

#include "core/common/Result.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/frontend/cudalift/CudaLift.h"
#include "core/rubric/KernelFacts.h"
#include "core/rubric/PerfModel.h"
#include "core/rubric/RubricDimension.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::rubric {

/// A dimension a kernel as written is not scored on, and why (located where the cause is).
struct MissingDimension {
    std::string dimension;
    std::string why;
    SourceLocation where;
};

struct AsWrittenKernel {
    std::string kernel;
    SourceLocation launch;    ///< the launch in the host code (a lone kernel: its name)
    std::string launchConfig; ///< "<<<(4096,1,1), (256,1,1)>>>" at the bound sizes, or why not
    bool accessModel = false; ///< the lifter evaluated the body: streams, branches, FLOPs are known
    std::string mapping;      ///< the strategy the model maps it onto, or why none
    std::vector<RubricScore> scores;
    std::vector<MissingDimension> missing;
    std::optional<KernelPrediction> prediction; ///< only where `mapping` names a strategy
    std::string timeNote;                       ///< "measure on a GPU: ..." when no prediction
};

struct AsWrittenReport {
    std::string fileName;
    std::string arch;
    bool compiled = false; ///< NVRTC compiled the device code (registers, PTX, SASS)
    std::string compileNote; ///< why not, when not
    std::vector<AsWrittenKernel> kernels; ///< one per launch, in program order
    std::vector<RubricScore> program;     ///< each dimension over the kernels that have it
    std::optional<double> predictedMs;    ///< when every kernel's time is predicted
    std::string timeNote;                 ///< "measure on a GPU: ..." otherwise
    bool hardViolation = false;
    double scoringMs = 0; ///< the analysis and scoring, NVRTC excluded
    double compileMs = 0; ///< NVRTC

    const RubricScore *programScore(const std::string &dimension) const;
    const RubricScore *kernelScore(std::size_t kernel, const std::string &dimension) const;
    const MissingDimension *missing(std::size_t kernel, const std::string &dimension) const;
};

struct AsWrittenOptions {
    std::string arch = "sm_90";
    const GpuSpec *gpu = nullptr; ///< default: the arch's datasheet GPU
    ir::SizeBindings sizes;       ///< over the sizes the source defines (these win)
    bool compile = true;          ///< NVRTC: registers, static shared memory, spills, PTX, SASS
    frontend::SourceOptions source; ///< -I / -D, as the file is compiled
};

/// Lifts `source`, compiles it with NVRTC (options.compile) and scores every launch. Errors: the
/// lifter's (syntax, no __global__ kernel), and Unsupported at file:1:1 when the host code launches
/// no kernel the rubric can find. A kernel that cannot be lifted is a partial entry, never dropped.
Result<AsWrittenReport> scoreAsWritten(const std::string &source, const std::string &fileName,
                                       const AsWrittenOptions &options = {});

/// The same from an existing lift (`detail`, of the file `fileName`): compiles detail.source with
/// NVRTC (options.compile) and scores; what optimize and the studio call, which lifted already.
Result<AsWrittenReport> scoreAsWritten(const frontend::cudalift::CudaLiftDetail &detail, const std::string &fileName,
                                       const AsWrittenOptions &options);

/// The same from an existing lift (`detail` of `source`) and compile (`compiled` null: not compiled,
/// `compileNote` says why): the benchmark times this part alone.
Result<AsWrittenReport> scoreAsWritten(const frontend::cudalift::CudaLiftDetail &detail, const std::string &fileName,
                                       const cuda::CompileResult *compiled, const AsWrittenOptions &options,
                                       const std::string &compileNote = {});

/// NVRTC on the device code of `source` as written (with the host-header constants defined), at
/// the sizes the source defines (options.sizes rewrite its size definitions where they differ).
Result<cuda::CompileResult> compileSourceAsWritten(const std::string &source, const std::string &fileName,
                                                   const frontend::cudalift::CudaLiftDetail &detail,
                                                   const AsWrittenOptions &options);

namespace detail {
/// The facts of one launch as written (AsWrittenFacts.cpp): fills `k` (launch shape, streams, lane
/// use, branches, FLOPs, bytes) from the lifter's record; returns the dimensions it cannot give.
struct AsWrittenLaunch {
    KernelFacts facts;
    std::vector<MissingDimension> missing;
    std::string launchConfig;
    bool shapeKnown = false;   ///< grid and block evaluate at the sizes
    bool genericMapping = false;
    std::string mapping;
};
AsWrittenLaunch describeLaunch(const frontend::cudalift::CudaLiftDetail &lift, std::size_t launch,
                               const ir::SizeBindings &sizes, const ArchLimits &arch);
} // namespace detail

} // namespace stitch::rubric
