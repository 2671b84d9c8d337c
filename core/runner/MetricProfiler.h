#pragma once
// CUPTI range profiling of hardware counters, inside the worker process.
//   Executor: profile(prepare, run the program once) -> one range per profiled launch -> MetricsReport
// Uses the Range Profiler API of CUDA 12.6+ (cupti_range_profiler.h, cupti_profiler_host.h) with
// automatic ranges and kernel replay: CUPTI replays each kernel, restoring its memory, as many times
// as the counters need. libcupti is dlopen'ed (CuptiLibrary.h); where counters are not permitted the
// error says why in plain words, and the job carries on with its timing.

#include "core/common/Result.h"
#include "core/runner/CuptiLibrary.h"

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace stitch::runner {

/// One metric the worker collects: its CUPTI name (the one Nsight Compute accepts), its unit and
/// what it tells.
struct MetricInfo {
    const char *name;
    const char *unit;
    const char *meaning;
};

/// The metrics every metric run asks for (docs/RUNNER.md has the same table).
const std::vector<MetricInfo> &standardMetrics();

/// One figure computed from raw metric values, e.g. sectors per request.
struct DerivedMetricInfo {
    const char *name;
    const char *unit;
    const char *formula;
};
const std::vector<DerivedMetricInfo> &derivedMetrics();

/// The derived figures of one range. A figure is left out when an input is missing, or when its
/// denominator is zero (no global loads: no sectors per load request).
std::map<std::string, double> deriveMetrics(const std::map<std::string, double> &values);

/// Consecutive launches [begin, end) of a program, profiled inside one range-profiler window.
struct LaunchSpan {
    std::size_t begin = 0, end = 0;
    bool operator==(const LaunchSpan &) const = default;
};

/// The launches a metric run profiles, as spans of consecutive launches: those whose kernel is
/// chosen by its mangled or its demangled name, or every launch when `chosen` is empty (one span).
/// `kernels`: the mangled kernel names of the program's launches, in launch order; an empty name (a
/// library call, whose kernels are the library's) is never profiled.
std::vector<LaunchSpan> profiledLaunches(const std::vector<std::string> &kernels, const std::vector<std::string> &chosen);
/// The launch indices the spans cover, ascending: one range per index comes back.
std::vector<std::size_t> launchIndices(const std::vector<LaunchSpan> &spans);

/// What a metric run collected, before it is tied to the plan's launches.
struct MetricRanges {
    struct Range {
        std::string name;                     ///< CUPTI's range name
        std::map<std::string, double> values; ///< metric -> value
    };
    std::string chip;                         ///< e.g. "GH100"
    int passes = 0;                           ///< replay passes the config needs
    std::vector<std::string> dropped;         ///< requested metrics the chip does not know
    std::size_t rangesDropped = 0;            ///< ranges CUPTI could not store
    std::vector<Range> ranges;                ///< in execution order, one per profiled launch
};

/// Range profiling on the calling thread's current CUDA context. The worker owns one; CUPTI's
/// profiler is process-wide, so it is initialised once and deinitialised with the object.
class MetricProfiler {
public:
    /// `libraryCandidates`: where libcupti is looked for (tests pass a path that does not exist).
    explicit MetricProfiler(std::vector<std::string> libraryCandidates = cuptiCandidatePaths());
    ~MetricProfiler();
    MetricProfiler(const MetricProfiler &) = delete;
    MetricProfiler &operator=(const MetricProfiler &) = delete;

    struct Request {
        int deviceOrdinal = 0;            ///< CUDA's ordinal of the context's device (for the chip name)
        std::size_t launches = 0;         ///< kernel launches in one run of the program
        std::vector<LaunchSpan> profiled; ///< the launches to profile (profiledLaunches), ascending
        std::vector<std::string> metrics; ///< empty: standardMetrics()
    };

    /// Builds the counter configuration, enables range profiling (automatic ranges, kernel replay),
    /// calls `prepare` once, then runs the whole program (`launch` enqueues launch i, `wait` waits
    /// for the stream) until CUPTI has every pass, and evaluates each range. Profiling is started
    /// around the profiled spans only, so the other launches run without counters or replays.
    /// Metrics the chip does not know are dropped and listed.
    /// Errors: Unsupported with a plain reason (CUPTI missing or too old, counters not permitted,
    /// another profiler attached, no metric known); an error of `prepare`, `launch` or `wait` is
    /// returned as is.
    Result<MetricRanges> profile(const Request &request, const std::function<Status()> &prepare,
                                 const std::function<Status(std::size_t launch)> &launch,
                                 const std::function<Status()> &wait);

    /// The libcupti that was loaded, or empty.
    std::string libraryPath() const;

    struct State; ///< the dlopen'ed entry points (MetricProfiler.cpp)

private:
    std::unique_ptr<State> m_state;
};

} // namespace stitch::runner
