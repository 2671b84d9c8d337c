#pragma once
// One bench candidate made runnable: the generated program, its launch plan and its CUBIN.
//   Problem + Schedule -> GeneratedProgram -> LaunchPlan + CUBIN (NVRTC) -> runner (app/cli/BenchCommand.cpp)

#include "core/codegen/Program.h"
#include "core/common/Result.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/runner/Job.h"
#include "core/schedule/Space.h"

#include <string>

namespace stitch::bench {

struct BuiltCandidate {
    codegen::GeneratedProgram program;
    runner::LaunchPlan plan;
    /// The CUBIN the runner loads, and its PTX, ptxas figures and machine code for the model's
    /// prediction (the SASS scan reads the same CUBIN).
    cuda::CompileResult compiled;
};

/// Generates, plans and compiles `s` for `arch` (NVRTC; thread-safe).
Result<BuiltCandidate> buildCandidate(const schedule::Problem &problem, const schedule::Schedule &s, const std::string &arch);

/// Every op in its own generic kernel, float64 sums: the independent reference the bench verifies
/// against (the reference's own rounding stays far below the FP32 bound).
schedule::Schedule referenceSchedule(const schedule::Problem &problem);

/// The schedule as the bench prints and records it: each group's description, joined by "; ".
std::string scheduleText(const schedule::Schedule &s);

} // namespace stitch::bench
