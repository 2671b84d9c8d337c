#pragma once
// The interface of one rubric dimension (coalescing, arithmetic intensity, divergence, occupancy,
// instruction mix, bank conflicts, hard limits, final performance).
//   partial program + CompileResult -> RubricDimension::evaluate -> RubricScore -> radar chart / reward
// Only the interface lives here so far; the analyzers come with the rubric issue. Plugins add
// dimensions by implementing this.

#include "core/arch/ArchDatabase.h"
#include "core/cuda/NvrtcCompiler.h"

#include <string>

namespace stitch::ir {
class Graph;
}

namespace stitch::rubric {

/// What a dimension may look at; pointers are null when that stage has not run yet.
struct RubricInput {
    const ir::Graph *graph = nullptr;
    const cuda::CompileResult *compiled = nullptr;
    const ArchLimits *arch = nullptr;
    std::string cudaSource; ///< the generated program being scored
};

struct RubricScore {
    std::string dimension;
    double score = 0;            ///< 0 (worst) to 5 (best)
    bool hardViolation = false;  ///< resource-invalid or incorrect: the program is rejected
    bool estimated = false;      ///< from the model rather than from a measurement
    std::string evidence;        ///< the figures the score rests on
    std::string sentence;        ///< one sentence a learner can read
};

class RubricDimension {
public:
    virtual ~RubricDimension() = default;
    virtual std::string name() const = 0;
    virtual bool applies(const RubricInput &input) const = 0;
    virtual RubricScore evaluate(const RubricInput &input) const = 0;
};

} // namespace stitch::rubric
