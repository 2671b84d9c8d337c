#pragma once
// The rubric of the alternatives: every decision of a schedule with its candidate values, why each
// illegal one is illegal given the other decisions, and the performance model's time for the
// schedule with each legal value instead.
//   Schedule + Problem -> describeDecisions -> `stitchcuda rubric --alternatives`, the studio's Decisions dock

#include "core/rubric/Rubric.h"
#include "core/schedule/Space.h"

#include <string>
#include <vector>

namespace stitch::rubric {

/// One decision of one group, with its candidate values judged against the others.
struct DecisionRow {
    std::string key;
    std::string category; ///< schedule::categoryName: the agent that decides it
    std::string help;
    int value = 0;
    std::vector<schedule::ValueOption> options;
    /// The performance model's time for the schedule with each option instead (same order; NaN
    /// where the option is illegal or nothing could be generated), registers estimated, on the same
    /// terms as GroupDecisions::estimatedMs.
    std::vector<double> estimatedMs;
};

struct GroupDecisions {
    std::string name;     ///< the kernel
    std::string strategy; ///< schedule::strategyName
    std::vector<DecisionRow> rows;
    double estimatedMs = 0; ///< the schedule as it is (NaN without a rubric)
};

/// Every decision of every group of `schedule` with its legal values for `problem` (a group the
/// analysis rejects is left out); with `rubric`, each legal alternative's predicted time too (one
/// generation and static score per alternative, no NVRTC).
std::vector<GroupDecisions> describeDecisions(const schedule::Schedule &schedule, const schedule::Problem &problem,
                                              const Rubric *rubric = nullptr);

} // namespace stitch::rubric
