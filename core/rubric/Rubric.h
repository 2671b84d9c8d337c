#pragma once
// The rubric facade: every dimension per kernel and for the program, in one call.
//   Problem + GeneratedProgram (+ CompileResult) -> Rubric::scoreProgram -> RubricReport
//   -> CLI (`stitchcuda rubric`), studio radar chart, agents' reward
// Static analysis only (no GPU); a measured time, when given, replaces the final-performance estimate.

#include "core/rubric/CompileStore.h"
#include "core/rubric/Dimensions.h"
#include "core/rubric/KernelFacts.h"
#include "core/rubric/PerfModel.h"

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace stitch::rubric {

struct KernelReport {
    std::string kernel;
    std::string decisions; ///< schedule::describe of its group
    KernelPrediction prediction;
    std::vector<RubricScore> scores; ///< dimensions that apply to this kernel, in the rubric's order
};

struct RubricReport {
    std::vector<KernelReport> kernels;
    std::vector<RubricScore> program; ///< every dimension for the whole program
    double predictedMs = 0;
    double baselinePredictedMs = 0; ///< the generic schedule
    std::string calibration;        ///< ProgramPrediction::calibration: empty, or why the prediction is rough
    bool hardViolation = false;
    double scoringMs = 0; ///< wall time of scoreProgram (excluding NVRTC)

    const RubricScore *programScore(const std::string &dimension) const;
    const RubricScore *kernelScore(std::size_t kernel, const std::string &dimension) const;
};

struct ScoreOptions {
    const GpuSpec *gpu = nullptr; ///< default: the arch's datasheet GPU
    std::optional<double> measuredMs;
    std::optional<double> baselineMeasuredMs;
};

class Rubric {
public:
    /// The built-in dimensions: coalescing, arithmetic intensity, divergence, occupancy,
    /// instruction mix, bank conflicts, hard limits, final performance.
    Rubric();
    void add(std::unique_ptr<RubricDimension> dimension);
    const std::vector<std::unique_ptr<RubricDimension>> &dimensions() const { return m_dimensions; }

    /// Scores the program; `compiled` (NVRTC) adds real registers, spills and the PTX mix.
    Result<RubricReport> scoreProgram(const schedule::Problem &problem, const codegen::GeneratedProgram &program,
                                      const cuda::CompileResult *compiled = nullptr,
                                      const ScoreOptions &options = {}) const;

private:
    std::vector<std::unique_ptr<RubricDimension>> m_dimensions;
    PerfModel m_model;
    mutable std::mutex m_mutex;
    mutable std::map<std::string, double> m_baselines; ///< problem key -> generic schedule's predicted ms
};

/// NVRTC results by source hash and architecture, so re-scoring a program does not recompile it.
/// One path for the CLI's rubric, `stitchcuda calibrate` and the studio: memory first, then the
/// optional on-disk CompileStore (kept between runs), then a compile whose result goes to both.
/// The memory layer keeps the `memoryEntries` most recently used results (a result is a few hundred
/// KiB of PTX and CUBIN; calibrate reads thousands); callers keep theirs alive through the pointer.
/// Safe to call from several threads (two threads missing on the same source both compile).
class CompileCache {
public:
    /// How a miss is compiled: codegen::compileGenerated unless given (tests count the calls).
    using Compiler = std::function<Result<cuda::CompileResult>(const std::string &source, const std::string &fileName,
                                                               const std::string &arch)>;
    /// Where each result came from, for progress lines and tests.
    struct Stats {
        int memoryHits = 0;
        int storeHits = 0;
        int compiled = 0;
        int storeFailures = 0; ///< results compiled but not saved (the first error in storeError())
    };

    static constexpr std::size_t kDefaultMemoryEntries = 64;

    CompileCache() = default;
    /// `store` backs the memory layer: a stored entry is read instead of compiling, and every
    /// compile is saved there. An unreadable or damaged entry is a miss, never an error.
    explicit CompileCache(std::optional<CompileStore> store, Compiler compiler = {},
                          std::size_t memoryEntries = kDefaultMemoryEntries);

    Result<std::shared_ptr<const cuda::CompileResult>> compile(const std::string &source, const std::string &arch,
                                                               const std::string &fileName = "program.cu");
    std::size_t size() const; ///< results in memory (at most memoryEntries)
    Stats stats() const;
    /// The first failure to save to the store (the results are still returned), if any.
    std::optional<Error> storeError() const;
    const CompileStore *store() const { return m_store ? &*m_store : nullptr; }

private:
    std::optional<CompileStore> m_store;
    Compiler m_compiler;
    std::size_t m_memoryEntries = kDefaultMemoryEntries;
    mutable std::mutex m_mutex;
    /// Most recently used first; m_index points into it by key.
    std::list<std::pair<std::string, std::shared_ptr<const cuda::CompileResult>>> m_recent;
    std::map<std::string, decltype(m_recent)::iterator> m_index;
    Stats m_stats;
    std::optional<Error> m_storeError;
};

/// The program a schedule generates, compiled and scored: what `stitchcuda rubric` prints and the
/// studio's Rubric dock draws.
struct ScheduleScore {
    codegen::GeneratedProgram program;
    std::shared_ptr<const cuda::CompileResult> compiled; ///< null when scored without NVRTC
    RubricReport report;
};

/// generateProgram -> NVRTC through `cache` (none: not compiled, registers estimated, no PTX mix)
/// -> Rubric::scoreProgram. A generated program NVRTC rejects is an internal error, said so.
Result<ScheduleScore> scoreSchedule(const Rubric &rubric, const schedule::Problem &problem,
                                    const schedule::Schedule &schedule, CompileCache *cache);

} // namespace stitch::rubric
