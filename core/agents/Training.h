#pragma once
// Rubric-based agentic RL: the agents learn from the rubric after every decision and from the
// program's time at the end (PPO, maskable; docs/AGENTS.md).
//   generated problems -> episodes (Environment + the networks, sampled) -> dense rewards (rubric)
//   + final reward (ln speedup over the input) -> GAE -> AgentNetworks::update -> checkpoint, CSV
// Deterministic for a seed and thread count: each update's episodes draw from a generator seeded by
// (seed, update), so a resumed run continues exactly as an uninterrupted one.

#include "core/agents/Evaluator.h"
#include "core/agents/Problems.h"
#include "core/agents/learning/Networks.h"

#include <atomic>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace stitch::agents {

struct TrainOptions {
    std::string arch = "sm_90";
    int episodes = 2000;          ///< in all, counting those of a resumed checkpoint
    int episodesPerUpdate = 16;
    std::uint64_t seed = 1;
    std::string checkpoint;       ///< written after every update (and read with resume)
    bool resume = false;
    std::string csv;              ///< one row per update: the reward and loss curves
    bool sparseOnly = false;      ///< the ablation: the final reward alone, no rubric reward
    /// Fine-tuning against the full model: the final reward and the held-out figure by the NVRTC
    /// build (Evaluator::confirm, cached by source), the dense reward without its time term (the
    /// estimate's, which the full model corrects).
    bool fullModel = false;
    /// Measured rewards (`train --measure`): with fullModel, every final time, the held-out
    /// baselines and figure are measured here (GpuTimes on the local GPU). Not owned; may be null.
    const MeasuredTimes *measured = nullptr;
    std::string init;             ///< start from this checkpoint's weights (and optimizer state)
    int trainingProblems = 256;   ///< the generated problems episodes draw from
    int hidden = 128;
    double gamma = 1.0, lambda = 0.95;
    PpoConfig ppo;
    bool annealLearningRate = true; ///< linearly to zero at the last update
    std::string command;          ///< stored in the checkpoint's metadata
    /// Every this many updates, the agents' greedy schedules on the held-out problems against the
    /// search baseline (compile-free estimates): the CSV's held_out column. 0: never.
    int evalEvery = 0;
    int baselineEvaluations = 2000;
    /// The search baselines, kept between runs (computed and written when missing or made with
    /// other settings); empty: computed in memory.
    std::string baselines;
};

/// The held-out figure: the geometric mean (and the lowest) over the held-out problems of the
/// search baseline's estimated time over the agents' greedy schedule's.
struct HeldOutFigure {
    double geomean = 0, lowest = 0;
    int problems = 0;
};

struct TrainProgress {
    int episode = 0, episodes = 0, update = 0;
    double meanFinalReward = 0;   ///< ln speedup over the input, mean of the update's episodes
    double meanReturn = 0;
    UpdateStats stats;
    double seconds = 0;
    std::optional<HeldOutFigure> heldOut; ///< on evaluation updates
};

struct TrainSummary {
    int episodes = 0, updates = 0;
    double seconds = 0;
    double lastMeanFinalReward = 0;
};

Result<TrainSummary> train(const TrainOptions &options, const std::function<void(const TrainProgress &)> &progress = {},
                           const std::atomic<bool> *cancel = nullptr);

/// One update's episodes: `episodes` problems drawn from `problems` by `rng`, each decided by the
/// networks' sampled policy; the decisions that had a choice, with GAE advantages over the dense
/// rewards (none when `sparseOnly`) and the final reward.
struct EpisodeBatch {
    std::vector<Transition> transitions;
    double meanFinalReward = 0, meanReturn = 0;
};
/// How episodes are rewarded.
struct EpisodeSettings {
    bool sparseOnly = false;   ///< no dense reward at all (the ablation)
    bool timeShaping = true;   ///< the dense reward's ln(time before / after) term (the estimate's)
    bool fullModel = false;    ///< the final reward by Evaluator::confirm (NVRTC build or measurement)
    double gamma = 1.0, lambda = 0.95;
};
Result<EpisodeBatch> collectEpisodes(const AgentNetworks &networks, const std::vector<schedule::Problem> &problems,
                                     int episodes, std::mt19937_64 &rng, Evaluator &evaluator,
                                     const EpisodeSettings &settings);

/// The search baselines of the held-out problems: read from `path` when it holds them for these
/// settings, else computed (searchBaseline, estimates only) and written there (when not empty).
/// With `fullModel`, the search's best three are confirmed by the full model (NVRTC) and the best
/// confirmed time is the baseline.
/// With `measured`, those three are measured instead (and the file's settings say so).
Result<std::vector<double>> heldOutBaselines(const std::string &arch, int evaluations, std::uint64_t seed,
                                             const std::string &path, bool fullModel = false,
                                             const MeasuredTimes *measured = nullptr);
/// The agents' greedy schedules on the held-out problems against `baselines` (estimates, or with
/// `fullModel` the full model's times).
HeldOutFigure heldOutFigure(const AgentNetworks &networks, const std::string &arch, const std::vector<double> &baselines,
                            bool fullModel = false, const MeasuredTimes *measured = nullptr);

/// The CSV header train (and retrain) write: one row per update, read back by TrainingLog.h.
const char *trainingCsvHeader();
/// One update's row under trainingCsvHeader() (no newline); the held-out columns empty when
/// `progress.heldOut` is not set.
std::string trainingCsvRow(const TrainProgress &progress);

} // namespace stitch::agents
