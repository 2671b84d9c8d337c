#pragma once
// `stitchcuda bench --agents N`: "ours" is what `stitchcuda optimize --budget N` chooses on the
// case's naive source (examples/*.te), not the bench's sweep or a pinned schedule.

#include "core/bench/Cases.h"
#include "Commands.h"
#include "ProblemInput.h"

#include "core/common/Result.h"

#include <memory>
#include <string>

namespace stitch::runner {
class Runner;
}

namespace stitch::cli {

struct AgentsChoice {
    std::unique_ptr<ProblemInput> input; ///< the example, lifted at the case's sizes (the Problem refers to it)
    schedule::Schedule schedule;         ///< the agents' choice
    std::string summary;                 ///< the Stitch stage's summary (chosen candidate, times)
    double decideMs = 0;
};

/// The example a bench family is written in (examples/matmul.te for gemm, ...).
std::string familyExample(const std::string &family);

/// Lifts the case's example from `options.examples` at the case's sizes and runs the agents on it
/// (the shipped checkpoint for `arch`), their budget search's candidates timed on `runner`'s GPU.
Result<AgentsChoice> agentsChoice(const bench::BenchCase &c, const BenchOptions &options, const std::string &arch,
                                  runner::Runner &runner);

} // namespace stitch::cli
