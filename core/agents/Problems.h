#pragma once
// The problems the agents train and are judged on.
//   ProblemSpec ("gemm:1024x1024x512") -> teSource -> liftTensorExpressions -> TrainingProblem
//   generateTrainingSpecs (random shapes of every family the code generator optimizes)
//   heldOutSpecs (resources/agents/heldout.txt: fixed before any training run, never trained on)

#include "core/arch/ArchDatabase.h"
#include "core/common/Result.h"
#include "core/frontend/Lift.h"
#include "core/schedule/Space.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stitch::agents {

/// A family and its shape: gemm MxNxK, gemm_bias_gelu / gemm_bias_relu MxNxK, gemm_softmax MxNxK
/// (two kernels), softmax / layernorm / rmsnorm / chain / bias_relu MxN.
struct ProblemSpec {
    std::string family;
    std::vector<std::int64_t> shape;
    std::string text() const; ///< "gemm:1024x1024x512"
    bool operator==(const ProblemSpec &) const = default;
};

/// The families, in the order the generator draws them.
const std::vector<std::string> &problemFamilies();
/// "gemm:1000x3000x700"; an error names the families and the shape each takes.
Result<ProblemSpec> parseProblemSpec(const std::string &text);
/// The tensor-expression program of a spec (docs/TE.md).
std::string teSource(const ProblemSpec &spec);

/// A lifted problem with its sizes and target, ready for an Environment.
struct TrainingProblem {
    std::string name;
    frontend::LiftedProgram lifted;
    const ArchLimits *arch = nullptr;
    schedule::Precision precision = schedule::Precision::FP32;
    schedule::Problem problem() const { return {lifted.graph, lifted.sizes, *arch, precision}; }
};
Result<std::unique_ptr<TrainingProblem>> makeProblem(const ProblemSpec &spec, const ArchLimits &arch);

/// `count` random specs from `seed` (every family, shapes log-uniform from 64 to 8192 per GEMM
/// dimension, rows of 32 to 2^19 elements and up to 2^27 elements per row problem, a third aligned to 128, a third to 4, a third
/// not), none equal to one in `exclude`.
std::vector<ProblemSpec> generateTrainingSpecs(std::uint64_t seed, int count, const std::vector<ProblemSpec> &exclude);

/// Reads a list of specs, one a line, '#' comments; errors are file:line.
Result<std::vector<ProblemSpec>> readSpecList(const std::string &text, const std::string &fileName);
/// The held-out list shipped in resources/agents/heldout.txt (compiled in).
const std::vector<ProblemSpec> &heldOutSpecs();

} // namespace stitch::agents
