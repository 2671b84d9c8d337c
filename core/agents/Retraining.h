#pragma once
// Retraining from the user's overrides: the agents learn the pinned values that won.
//   traces (stitchcuda optimize --pin ... --trace) -> replay each with its pins -> imitation
//   examples at the pinned decisions (the override's outcome against the agents' own schedule)
//   -> PPO on the traces' problems and generated ones, plus the imitation term -> checkpoint
// Reports each pinned value's probability before and after, and the held-out figure before and
// after (it must not fall by more than one point: docs/AGENTS.md).
// Progress per update (the curves train's CSV has), cancellable between updates; deterministic for
// a seed (the networks run on one intra-op thread): the same traces and seed give the same weights.

#include "core/agents/Trace.h"
#include "core/agents/Training.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace stitch::agents {

/// A trace already in memory (the studio's last Optimize); `name` stands for its file in errors
/// and in the report.
struct RetrainTrace {
    std::string name;
    Trace trace;
};

struct RetrainOptions {
    std::vector<std::string> traces;  ///< trace files
    std::vector<RetrainTrace> loaded; ///< traces in memory, learnt from after the files
    std::string checkpoint;           ///< the agents to start from (written to `out`)
    std::string out;
    std::string arch = "sm_90";
    int updates = 20;
    int episodesPerUpdate = 16;
    std::uint64_t seed = 1;
    std::string baselines;            ///< the held-out search baselines (Training.h)
    bool heldOut = true;              ///< measure the held-out figure before and after
    std::string csv;                  ///< one row per update, as train writes (TrainingLog.h); empty: none
};

/// Where a retraining run is: each stage is announced as it starts, each update when it is done.
enum class RetrainStage { Replay, HeldOutBefore, Update, HeldOutAfter, Saving };
const char *retrainStageName(RetrainStage stage); ///< "replaying the traces", ...

struct RetrainProgress {
    RetrainStage stage = RetrainStage::Replay;
    int updates = 0;                  ///< in the run
    /// Stage Update: the update just done (row.update of `updates`), its rewards and losses.
    TrainProgress row;
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

/// A pinned value's probability at its decision: what retraining reports before and after.
struct PinnedProbability {
    std::string decision;             ///< id
    std::string value;
    double probability = 0;
};
/// Replays `trace` with its pins and asks `networks` at each pinned decision that had a choice how
/// likely the pinned value is (among the legal values, the pin unmasked): the figure retrain's
/// report gives before (the networks it starts from) and after (the ones it wrote). `name` names
/// the trace in errors (one that no longer lifts or replays).
Result<std::vector<PinnedProbability>> pinnedProbabilities(const Trace &trace, const AgentNetworks &networks,
                                                           const std::string &name = "trace");

/// Errors: a trace that cannot be read or no longer replays, the checkpoint's, Io when the CSV or
/// the checkpoint cannot be written, Cancelled (`cancel` is checked between traces and updates;
/// the checkpoint is not written then, the CSV keeps the updates done). `progress` is called on the calling thread.
Result<RetrainReport> retrain(const RetrainOptions &options,
                              const std::function<void(const RetrainProgress &)> &progress = {},
                              const std::atomic<bool> *cancel = nullptr);

} // namespace stitch::agents
