#pragma once
// The interface of one rubric dimension (coalescing, arithmetic intensity, divergence, occupancy,
// instruction mix, bank conflicts, hard limits, final performance).
//   Problem + GeneratedProgram (+ CompileResult) -> ProgramFacts -> RubricDimension::evaluate
//   -> RubricScore per kernel and for the program -> radar chart / reward
// Dimensions are static analyses of the generated program (docs/RUBRIC.md); plugins add
// dimensions by implementing this interface. The analyzers live next to this file.

#include "core/arch/ArchDatabase.h"
#include "core/cuda/NvrtcCompiler.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::ir {
class Graph;
}
namespace stitch::schedule {
struct Problem;
}
namespace stitch::codegen {
struct GeneratedProgram;
}

namespace stitch::rubric {

struct ProgramFacts;

/// What a dimension may look at; pointers are null when that stage has not run yet.
struct RubricInput {
    const ir::Graph *graph = nullptr;
    const cuda::CompileResult *compiled = nullptr; ///< NVRTC: registers, spills, PTX (null: estimates)
    const ArchLimits *arch = nullptr;
    std::string cudaSource;                     ///< the generated program being scored
    const schedule::Problem *problem = nullptr; ///< graph, concrete sizes, arch
    const codegen::GeneratedProgram *program = nullptr;
    const GpuSpec *gpu = nullptr; ///< peaks; null: the arch's default GPU
    /// The analysis every dimension shares (KernelFacts.h); built from the above when null.
    const ProgramFacts *facts = nullptr;
    int kernel = -1;                           ///< index into program->kernels; -1: the whole program
    std::optional<double> measuredMs;          ///< the program's measured time, when there is one
    std::optional<double> baselineMeasuredMs;  ///< the generic schedule's measured time
    std::optional<double> baselinePredictedMs; ///< the generic schedule's predicted time (computed when absent)
};

struct RubricScore {
    std::string dimension;
    double score = 0;           ///< 0 (worst) to 5 (best)
    bool hardViolation = false; ///< resource-invalid or incorrect: the program is rejected
    bool estimated = false;     ///< from the model rather than from a measurement
    std::string evidence;       ///< the figures the score rests on
    std::string sentence;       ///< one sentence a learner can read
};

/// The score of `dimension` among `scores`; null when it is not there.
inline const RubricScore *findScore(const std::vector<RubricScore> &scores, const std::string &dimension)
{
    for (const auto &s : scores)
        if (s.dimension == dimension)
            return &s;
    return nullptr;
}

class RubricDimension {
public:
    virtual ~RubricDimension() = default;
    virtual std::string name() const = 0;
    virtual bool applies(const RubricInput &input) const = 0;
    virtual RubricScore evaluate(const RubricInput &input) const = 0;
};

} // namespace stitch::rubric
