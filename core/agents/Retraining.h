#pragma once
// Retraining from the user's overrides: the agents learn the pinned values that won.
//   traces (stitchcuda optimize --pin ... --trace) -> replay each with its pins -> imitation
//   examples at the pinned decisions (the override's outcome against the agents' own schedule)
//   -> PPO on the traces' problems and generated ones, plus the imitation term -> checkpoint
// Reports each pinned value's probability before and after, and the held-out figure before and
// after (it must not fall by more than one point: docs/AGENTS.md).

#include "core/agents/Trace.h"
#include "core/agents/Training.h"

#include <string>
#include <vector>

namespace stitch::agents {

struct RetrainOptions {
    std::vector<std::string> traces;  ///< trace files
    std::string checkpoint;           ///< the agents to start from (written to `out`)
    std::string out;
    std::string arch = "sm_90";
    int updates = 20;
    int episodesPerUpdate = 16;
    std::uint64_t seed = 1;
    std::string baselines;            ///< the held-out search baselines (Training.h)
    bool heldOut = true;              ///< measure the held-out figure before and after
};

struct PinnedOutcome {
    std::string trace;
    std::string decision;             ///< id
    std::string value;
    bool won = false;                 ///< the pinned program is faster than the agents' own
    double pinnedMs = 0, agentsMs = 0;
    double before = 0, after = 0;     ///< the value's probability at its decision
};

struct RetrainReport {
    std::vector<PinnedOutcome> pins;
    HeldOutFigure heldOutBefore, heldOutAfter;
    int updates = 0;
    double seconds = 0;
};

Result<RetrainReport> retrain(const RetrainOptions &options);

} // namespace stitch::agents
