#pragma once
// CUPTI range profiling of hardware counters, inside the worker process.
//   Executor: profile(prepare, run the program once) -> one range per kernel launch -> MetricsReport
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
    std::vector<Range> ranges;                ///< in execution order
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
        std::size_t maxRanges = 1;        ///< kernel launches in one run of the program
        std::vector<std::string> metrics; ///< empty: standardMetrics()
    };

    /// Builds the counter configuration, enables range profiling (automatic ranges, kernel replay),
    /// calls `prepare` once, then `run` (enqueue the whole program once and wait) until CUPTI has
    /// every pass, and evaluates each range. Metrics the chip does not know are dropped and listed.
    /// Errors: Unsupported with a plain reason (CUPTI missing or too old, counters not permitted,
    /// another profiler attached, no metric known); an error of `prepare` or `run` is returned as is.
    Result<MetricRanges> profile(const Request &request, const std::function<Status()> &prepare,
                                 const std::function<Status()> &run);

    /// The libcupti that was loaded, or empty.
    std::string libraryPath() const;

    struct State; ///< the dlopen'ed entry points (MetricProfiler.cpp)

private:
    std::unique_ptr<State> m_state;
};

} // namespace stitch::runner
