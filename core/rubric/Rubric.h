#pragma once
// The rubric facade: every dimension per kernel and for the program, in one call.
//   Problem + GeneratedProgram (+ CompileResult) -> Rubric::scoreProgram -> RubricReport
//   -> CLI (`stitchcuda rubric`), studio radar chart, agents' reward
// Static analysis only (no GPU); a measured time, when given, replaces the final-performance estimate.

#include "core/rubric/Dimensions.h"
#include "core/rubric/KernelFacts.h"
#include "core/rubric/PerfModel.h"

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
class CompileCache {
public:
    Result<std::shared_ptr<const cuda::CompileResult>> compile(const std::string &source, const std::string &arch,
                                                               const std::string &fileName = "program.cu");
    std::size_t size() const;

private:
    mutable std::mutex m_mutex;
    std::map<std::string, std::shared_ptr<const cuda::CompileResult>> m_results;
};

} // namespace stitch::rubric
