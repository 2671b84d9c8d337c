#pragma once
// `--measure` of optimize, train, evaluate-agents and bench --agents: the local GPU as the agents'
// clock (core/agents/GpuTimes.h), started once per command.

#include "core/agents/GpuTimes.h"
#include "core/common/Result.h"
#include "core/runner/Runner.h"

#include <memory>
#include <string>

namespace stitch::cli {

struct LocalGpu {
    std::unique_ptr<runner::Runner> runner;
    std::unique_ptr<agents::GpuTimes> times;
    std::string name; ///< the GPU's name, for reports
};

/// Starts the worker on GPU `device` and checks that it is an `arch` GPU. Errors: NoDevice with the
/// worker's reason ("no GPU: ..."), InvalidArgument when the GPU is another architecture.
Result<LocalGpu> openLocalGpu(const std::string &arch, rubric::CompileCache *cache, int device = 0, int repeats = 5);

/// openLocalGpu for a command's --measure: on failure prints why and returns the exit code (2 for
/// another architecture or when `otherTimes`, the command also asked for --measured or --no-compile;
/// 1 for no GPU); 0 when `gpu` is open.
int openMeasuringGpu(const std::string &arch, rubric::CompileCache *cache, bool otherTimes, LocalGpu &gpu);

} // namespace stitch::cli
