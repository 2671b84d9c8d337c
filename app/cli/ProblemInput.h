#pragma once
// What `generate` and `rubric` (and `lift --eval` for sizes) share: a lifted file with its sizes
// bound, the target architecture and the schedule (a file, or the built-in default).

#include "Commands.h"
#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/common/Result.h"
#include "core/frontend/Lift.h"
#include "core/frontend/cudalift/CudaLift.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Space.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::cli {

/// Prints `file:line:col: error: message` (or `stitchcuda: error: ...`) and every further
/// diagnostic; returns 1, the exit code for rejected input.
int reportError(const Error &error);

/// Sizes from the source, overridden by --size NAME=VALUE; an error names what is missing.
Result<ir::SizeBindings> bindSizes(const frontend::LiftedProgram &program, const std::vector<std::string> &overrides);

/// -I / -D flags as the frontend takes them; an error names a malformed -D.
Result<frontend::SourceOptions> sourceOptions(const SourceFlags &flags);

struct ProblemInput {
    frontend::LiftedProgram lifted;
    /// .cu input: the lift with its host-side plan (lifted is its program), for the input as
    /// written and the kernels carried unchanged.
    std::optional<frontend::cudalift::CudaLiftDetail> detail;
    frontend::SourceOptions source;    ///< how the file was read (-I, -D)
    ir::SizeBindings sizes;
    const ArchLimits *arch = nullptr;
    schedule::Schedule schedule;
    /// Without a schedule file: where the model changed the heuristics' default (modelCheckedDefault).
    std::vector<std::string> scheduleNotes;

    /// Refers to this object's graph: keep the ProblemInput alive while the Problem is used.
    schedule::Problem problem() const { return {lifted.graph, sizes, *arch, schedule.precision}; }
};

/// Reads and lifts FILE, binds its sizes, resolves the architecture and reads the schedule file
/// (or makes the default schedule, with TF32 allowed when asked). On failure prints why and sets
/// exitCode (2: usage or I/O, 1: rejected input).
std::optional<ProblemInput> loadProblem(const std::string &file, const std::vector<std::string> &sizes,
                                        const std::string &arch, const std::string &schedulePath, bool tf32,
                                        int &exitCode, const SourceFlags &source = {});

/// The opaque kernels of a .cu input, to carry unchanged into the generated program (none for a
/// .te file). Errors: codegen::carryOpaqueKernels' (a kernel that would be lost).
Result<codegen::CarriedKernels> carriedKernels(const ProblemInput &input, const std::string &file);

/// Prints which kernels the generated program carries unchanged and why (and notes of kernels
/// nothing launches) to standard output.
void printCarried(const codegen::CarriedKernels &carried);

/// The file the plans' CPU reference lifts: FILE itself, or, when includes, conditionals or -D
/// changed what was lifted, DIR/NAME.lifted.cu holding that text (written here; self-contained).
Result<std::string> referenceSource(const std::string &dir, const std::string &name, const frontend::LiftedProgram &lifted,
                                    const std::string &file);

/// Writes NAME.cu, NAME.schedule.json and NAME.plan.json (the program, its schedule, and the
/// launch plan `stitchcuda run` verifies and times) to `out`; prints what it wrote or why not.
/// With `inputPlan` and a .cu input, also the input as written (writeInputPlan); a program that
/// cannot be run as written gets a note, not a failure.
bool writeGenerated(const std::string &out, const codegen::GeneratedProgram &program, const ProblemInput &input,
                    const std::string &file, bool inputPlan = false);

/// Writes NAME.input.cu (the .cu FILE with its sizes set to the input's) and NAME.input.plan.json
/// (its launches as the host code makes them, verified against the lifted graph) to `dir`;
/// returns the plan's path. Errors: codegen::asWrittenProgram's, Io.
Result<std::string> writeInputPlan(const std::string &dir, const std::string &name, const ProblemInput &input,
                                   const std::string &file);

} // namespace stitch::cli
