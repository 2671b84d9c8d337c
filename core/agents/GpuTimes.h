#pragma once
// Measured times on the local GPU, for the agents' confirmations and final rewards.
//   Schedule -> codegen -> NVRTC (the compile cache, in parallel) -> Runner (one GPU run at a time:
//   inputs zero-filled on the device, warm-up, median of `repeats` runs, L2 flushed before each)
// A program that does not build or run is measured as infinitely slow, with its reason, so it can
// never win; its worker fault costs the worker, not the caller (core/runner). Results are kept per
// schedule for the object's life. The time ranks candidates; the winner's own verified, carefully
// timed run is the caller's (`stitchcuda bench`, `stitchcuda run`).

#include "core/agents/Evaluator.h"

#include <map>
#include <mutex>
#include <string>

namespace stitch::runner {
class Runner;
}

namespace stitch::agents {

class GpuTimes : public MeasuredTimes {
public:
    /// `runner` must outlive this object and is used only under this object's lock; `cache` (may be
    /// null) shares the full model's NVRTC builds.
    GpuTimes(runner::Runner &runner, std::string arch, rubric::CompileCache *cache = nullptr, int repeats = 5);

    std::optional<double> lookup(const schedule::Problem &problem, const schedule::Schedule &schedule) const override;
    std::string failure(const schedule::Problem &problem, const schedule::Schedule &schedule) const override;

    int measurements() const; ///< programs run on the GPU (not counting lookups of earlier ones)
    int failures() const;     ///< programs that did not build or run

private:
    struct Entry {
        double ms = 0;
        std::string error;
    };
    Entry measure(const schedule::Problem &problem, const schedule::Schedule &schedule) const;

    runner::Runner &m_runner;
    std::string m_arch;
    rubric::CompileCache *m_cache;
    int m_repeats;
    mutable std::mutex m_gpu;   ///< one run at a time on the worker
    mutable std::mutex m_mutex; ///< the results
    mutable std::map<std::string, Entry> m_results;
    mutable int m_measurements = 0, m_failures = 0;
};

} // namespace stitch::agents
