#pragma once
// One call from source text to the agents' program: what the studio's Optimize runs (and what
// `stitchcuda optimize` does step by step in app/cli/OptimizeCommand.cpp).
//   text -> frontend::liftFile (Parse) -> sizes bound -> the shipped agents (or a checkpoint) ->
//   Optimizer (decisions, budget search, integration) -> Trace + codegen::GeneratedProgram
// Thread: any; cancel() from another thread ends it with a Cancelled error.

#include "core/agents/Optimizer.h"
#include "core/codegen/Program.h"
#include "core/frontend/Lift.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace stitch::agents {

/// The Parse stage's record: what was lifted, the launches, sizes and the opaque kernels with
/// their located reasons.
TraceStage parseStage(const frontend::LiftedProgram &lifted, const ir::SizeBindings &sizes);

/// Stitch's record of the input's opaque kernels (codegen::carryOpaqueKernels): each one carried
/// unchanged is named with why; when one cannot be carried, the proposal would lose its work, so
/// the trace keeps the input (Trace::keptInput) and the notes say why.
void recordCarried(Trace &trace, const Result<codegen::CarriedKernels> &carried);

struct SourceRequest {
    std::string text;
    std::string fileName;          ///< picks the frontend (.te, .cu) and locates diagnostics
    std::string arch = "sm_90";
    ir::SizeBindings sizes;        ///< over the file's own
    bool tf32 = false;
    OptimizeOptions options;       ///< budget, pins, seed
    std::string checkpoint;        ///< empty: the shipped agents for `arch` (the heuristics when none)
    frontend::SourceOptions source; ///< -I / -D for a .cu
    /// A .cu's own code is timed by the model (NVRTC build) and the proposal must beat it, or the
    /// input is kept (Trace::keptInput, weighAsWritten).
    bool weighAsWritten = true;
};

struct SourceResult {
    frontend::LiftedProgram lifted;
    /// .cu: the input's opaque kernels as the program carries them (empty when it cannot: then the
    /// trace keeps the input and program holds the lifted kernels only, for inspection).
    codegen::CarriedKernels carried;
    ir::SizeBindings sizes;
    Trace trace;
    codegen::GeneratedProgram program;
    std::string policy;            ///< which agents decided ("agents (path)", or the heuristics and why)
};

class SourceOptimizer {
public:
    /// Errors: the frontend's (located), InvalidArgument (a size without a value, an unknown
    /// architecture, nothing liftable), the checkpoint's, Cancelled.
    Result<SourceResult> run(const SourceRequest &request,
                             const std::function<void(const OptimizeProgress &)> &progress = {});
    /// Cancels the run in flight, or the next one when none has started yet.
    void cancel();

private:
    std::atomic<bool> m_cancelled{false};
    std::mutex m_mutex;            ///< guards m_running: cancel() never reaches a finished optimizer
    Optimizer *m_running = nullptr;
};

} // namespace stitch::agents
