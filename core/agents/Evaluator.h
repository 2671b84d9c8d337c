#pragma once
// What a schedule is worth, for the agents' rewards, their lookahead and the searches.
//   Schedule -> Evaluator::estimate (codegen + rubric, no NVRTC, cached by the schedule's JSON)
//   Schedule -> Evaluator::confirm (the same with NVRTC's registers and PTX: the full model)
//   Schedule -> MeasurementStore lookup (a real time, when this program was measured)
// The estimate is the compile-free rubric and performance model (registers estimated from the
// decisions); the full model needs an NVRTC build of each program (~0.5 s), cached by source.

#include "core/rubric/Rubric.h"
#include "core/schedule/Space.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace stitch::agents {

/// The rubric dimensions the agents read, in this order (the final performance is the time).
inline constexpr const char *kStaticDimensions[] = {"coalescing",  "arithmetic_intensity", "divergence",
                                                   "occupancy",   "instruction_mix",      "bank_conflicts"};
inline constexpr int kStaticDimensionCount = 6;

struct Score {
    bool ok = false;               ///< false: nothing could be generated or scored (error says why)
    std::string error;
    double ms = 0;                 ///< predicted (or measured, when `measured`) time of the program
    double baselineMs = 0;         ///< the input as written, modelled as the generic schedule
    bool measured = false;
    bool compiled = false;         ///< the full model (NVRTC) rather than the estimate
    bool hardViolation = false;
    double dimensions[kStaticDimensionCount] = {}; ///< 0-5, program-wide; 5 where a dimension does not apply
    std::string hardLimitSentence; ///< the hard-limits dimension's sentence when violated
};

/// A measured time for a schedule, looked up by problem and schedule (the stored H200 sets).
class MeasuredTimes {
public:
    virtual ~MeasuredTimes() = default;
    /// The time in ms, nothing when this program has no measurement, or infinity when it was
    /// tried and failed (failure() says why).
    virtual std::optional<double> lookup(const schedule::Problem &problem, const schedule::Schedule &schedule) const = 0;
    virtual std::string failure(const schedule::Problem &, const schedule::Schedule &) const
    {
        return "the measurement failed";
    }
};

class Evaluator {
public:
    explicit Evaluator(const rubric::Rubric &rubric, rubric::CompileCache *compileCache = nullptr,
                       const MeasuredTimes *measured = nullptr)
        : m_rubric(rubric), m_cache(compileCache), m_measured(measured) {}

    virtual ~Evaluator() = default;
    /// Compile-free rubric and model time (cached). Thread-safe.
    virtual Score estimate(const schedule::Problem &problem, const schedule::Schedule &schedule);
    /// The full model: NVRTC's resources and PTX (needs a compile cache; falls back to the estimate
    /// without one), then a measured time from the store where there is one (a store that says
    /// the program failed, an infinite time, makes the score not ok with its reason).
    virtual Score confirm(const schedule::Problem &problem, const schedule::Schedule &schedule);

    /// confirm() of each schedule, spread over up to `threads` threads (0: the machine's cores, at
    /// most 16): the NVRTC builds run side by side, a measurement's GPU runs one at a time. The
    /// results are cached, so confirm() of any of them afterwards costs a lookup.
    void confirmAll(const schedule::Problem &problem, const std::vector<const schedule::Schedule *> &schedules,
                    int threads = 0);

    std::size_t estimates() const;   ///< schedules estimated (cache misses)
    std::size_t cacheHits() const;

    const rubric::Rubric &rubric() const { return m_rubric; }
    rubric::CompileCache *compileCache() const { return m_cache; }

private:
    Score scoreWith(const schedule::Problem &problem, const schedule::Schedule &schedule, rubric::CompileCache *cache);

    const rubric::Rubric &m_rubric;
    rubric::CompileCache *m_cache = nullptr;
    const MeasuredTimes *m_measured = nullptr;
    mutable std::mutex m_mutex;
    std::unordered_map<std::string, Score> m_estimates;
    std::unordered_map<std::string, Score> m_confirmed;
    std::size_t m_misses = 0, m_hits = 0;
};

/// A key that tells problems apart: the graph's name, ops, sizes, arch and precision.
std::string problemKey(const schedule::Problem &problem);
/// A key that tells schedules of a problem apart: the problem's key, then every group's ops,
/// strategy and decisions (cheaper than the schedule's JSON, and as exact).
std::string scheduleKey(const schedule::Problem &problem, const schedule::Schedule &schedule);

} // namespace stitch::agents
