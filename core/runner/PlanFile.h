#pragma once
// Launch-plan files: the JSON a user writes to run a CUDA program (format in docs/RUNNER.md).
//   PLAN.json -> parsePlanFile -> PlanFile -> buildRunRequest (NVRTC for the device's arch, .te lift) -> Runner
// Strict: an unknown key is an error, so a typo never silently changes what is measured.

#include "core/common/Result.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/ir/Shape.h"
#include "core/runner/Job.h"
#include "core/runner/Runner.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stitch::runner {

/// The value of "schema" in a plan file.
inline constexpr const char *kPlanSchema = "stitchcuda-plan/1";

/// The user's original program, compiled and run on the GPU as the reference.
struct PlanGpuReference {
    std::string sourcePath;
    std::vector<std::string> defines;
    LaunchPlan plan;                              ///< kernel names as written
    std::map<std::string, std::string> bufferMap; ///< candidate buffer -> reference buffer
};

/// A tensor-expression (.te) or liftable .cu program, run by the CPU interpreter as the reference.
struct PlanCpuReference {
    std::string graphPath;
    ir::SizeBindings sizes;                             ///< over the sizes the file itself declares
    std::map<std::string, std::string> tensorForBuffer; ///< buffer -> tensor
    std::map<std::string, std::string> inputTensorForBuffer; ///< in-out buffer -> graph input ("inputs")
    std::set<std::string> carriedTensors;   ///< CpuReference::carriedTensors ("carried")
    std::set<std::string> uncheckedBuffers; ///< CpuReference::uncheckedBuffers ("unchecked")
};

/// A parsed plan file; paths are resolved against the plan file's folder.
struct PlanFile {
    std::string path;
    std::string sourcePath; ///< empty in a plan of library calls alone (no kernel of its own)
    std::vector<std::string> defines;
    LaunchPlan plan; ///< kernel names as written: plain (resolved after compiling) or mangled
    std::optional<PlanGpuReference> gpuReference;
    std::optional<PlanCpuReference> cpuReference;
    MeasureOptions measure;
    PrecisionPolicy precision = PrecisionPolicy::FP32;
    int deadlineMs = 10000;
    std::optional<std::uint64_t> seed; ///< fixed inputs; absent: fresh ones every run
    /// How the program was generated (stitchcuda generate writes it): what lets a machine without
    /// a GPU answer with the performance model's estimate.
    struct Model {
        std::string graphPath;     ///< the .te / .cu the program was generated from
        std::string schedulePath;  ///< its schedule JSON
        ir::SizeBindings sizes;
    };
    std::optional<Model> model;
};

/// Parses plan text. JSON syntax errors are located file:line:column; other problems name the
/// member, e.g. "launches[0].grid: expected 1 to 3 positive integers". Kind Parse.
Result<PlanFile> parsePlanFile(const std::string &text, const std::string &path);

/// The plan as JSON text that parsePlanFile reads back to the same PlanFile. Paths are written
/// relative to the folder of `plan.path` (the file being written) when they lie under it, absolute
/// otherwise; members at their defaults are left out.
std::string planFileText(const PlanFile &plan);

/// Replaces plain kernel names (matmul_naive) with the mangled names NVRTC reported. A name that
/// is already mangled or extern "C" passes through. InvalidArgument for unknown or ambiguous names.
Status resolveKernelNames(LaunchPlan &plan, const std::vector<cuda::KernelResources> &kernels);

/// The kernels a PTX module defines (its .entry directives), names only: resources stay 0. Used
/// when NVRTC's log has no ptxas report, which happens when the CUBIN came from the CUDA cache.
std::vector<cuda::KernelResources> kernelsFromPtx(const std::string &ptx, const std::string &arch);

/// Compiles the plan's source (and the GPU reference's) with NVRTC for `arch`, resolves kernel
/// names and lifts the CPU reference graph: everything Runner::run needs. Errors: Io (a file
/// cannot be read), Compile (with every diagnostic), Parse/Unsupported (the reference graph),
/// InvalidArgument (kernel names).
Result<RunRequest> buildRunRequest(const PlanFile &plan, const std::string &arch);

} // namespace stitch::runner
