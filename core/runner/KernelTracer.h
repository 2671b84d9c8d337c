#pragma once
// CUPTI activity tracing of kernel launches, inside the worker process.
//   Executor: start() -> run the program once -> stop() -> KernelProfile per launch -> JobResult::profile
// libcupti is loaded with dlopen on first use, so neither core nor the worker links it, and a
// machine without it (or with another profiler attached) still runs and times kernels.

#include "core/common/Result.h"
#include "core/runner/JobResult.h"

#include <memory>
#include <string>
#include <vector>

namespace stitch::runner {

/// Collects one CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL record per kernel run between start() and
/// stop(). CUPTI's activity callbacks are process-wide, so at most one KernelTracer may exist in a
/// process (the worker owns it); a second one reports itself unavailable.
class KernelTracer {
public:
    KernelTracer();
    ~KernelTracer();
    KernelTracer(const KernelTracer &) = delete;
    KernelTracer &operator=(const KernelTracer &) = delete;

    /// Loads CUPTI if needed and enables kernel activity records. The error says plainly why
    /// profiling is unavailable, e.g. "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39):
    /// another profiler (Nsight Compute / Systems) is attached".
    Status start();
    /// Flushes, disables tracing and returns the kernels in start-time order.
    Result<std::vector<KernelProfile>> stop();

    /// The libcupti that was loaded, or empty.
    std::string libraryPath() const;

    struct State; ///< the dlopen'ed entry points and the collected records (KernelTracer.cpp)

private:
    std::unique_ptr<State> m_state;
};

} // namespace stitch::runner
