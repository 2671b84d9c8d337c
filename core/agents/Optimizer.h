#pragma once
// The optimization pipeline: the agents decide, step by step, then Stitch integrates.
//   Problem + PolicySource -> Optimizer::start -> step()* (one decision each) -> finish()
//   -> Trace (every decision, the candidates of the budget search, conflicts, the final schedule)
// One entry point for `stitchcuda optimize`, the studio and the trainer's evaluation. Greedy
// decisions take each step's most probable legal option; a budget adds policy-sampled episodes,
// every candidate estimated by the compile-free model and confirmed by the full model (NVRTC) or a
// measurement. The input as written is always a candidate: the result is never
// predicted slower than it. Replays exactly from its seed.

#include "core/agents/Environment.h"
#include "core/agents/Trace.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <vector>

namespace stitch::agents {

/// One decision as an episode took it.
struct StepRecord {
    DecisionStep step;
    std::vector<float> observation;
    PolicyOutput policy;
    int action = 0;
    double reward = 0;       ///< dense
    Score before;            ///< the schedule before the decision
    std::vector<Score> outcomes;
    std::string seen;        ///< a summary of what the agent saw: the kernel and its decisions so far
};

/// How an episode picks: the most probable legal option, or a draw from the policy.
enum class Pick { Greedy, Sample };

/// The option an episode takes at `step` with `policy`: the pin, the only legal option, the
/// argmax (ties to the first) or a draw from `rng`.
int pickOption(const DecisionStep &step, const PolicyOutput &policy, Pick pick, std::mt19937_64 &rng);

/// One decision: observes, asks `policy`, picks, applies. `seen` fills StepRecord::seen (the kernel
/// as it stood), which only traces need.
Result<StepRecord> takeStep(Environment &env, const PolicySource &policy, Pick pick, std::mt19937_64 &rng, bool seen);

/// Runs the environment (after reset) to its end with `policy`; `record` gets each step.
/// Cancelled: an error of kind Cancelled.
Status rollout(Environment &env, const PolicySource &policy, Pick pick, std::mt19937_64 &rng,
               const std::function<void(StepRecord &&)> &record, const std::atomic<bool> *cancel = nullptr);

/// The schedule of a greedy episode of `policy` on `problem` (no pins), with its estimate; nullopt
/// when the episode cannot run.
std::optional<std::pair<schedule::Schedule, Score>> greedySchedule(const schedule::Problem &problem, Evaluator &evaluator,
                                                                   const PolicySource &policy);

/// The sentence that explains a decision from its numbers (the model's times, the rubric, the
/// probabilities and the reasons the other values are illegal).
std::string rationale(const StepRecord &record);

struct OptimizeOptions {
    std::uint64_t seed = 1;
    Pick pick = Pick::Greedy;
    int budget = 0;          ///< candidates of the policy-guided search (<= 1: the agents' schedule alone)
    std::vector<Pin> pins;
    /// Candidates confirmed by the full model besides the agents' own, best estimates first; -1:
    /// every candidate of the budget (the estimate misranks what the NVRTC build shows: spills,
    /// registers past the estimate).
    int confirmTop = -1;
    /// Threads for the confirmations' NVRTC builds (0: the machine's cores, at most 16).
    int threads = 0;
};

struct OptimizeProgress {
    std::string stage;       ///< "decide", "search", "integrate", "done"
    AgentKind agent = AgentKind::Parse;
    int decisions = 0;
    int candidates = 0;      ///< of the budget search, done
    int budget = 0;
};

class Optimizer {
public:
    Optimizer(const schedule::Problem &problem, Evaluator &evaluator, const PolicySource &policy,
              OptimizeOptions options = {});

    /// Starts (again): the Parse stage as given, the first question ready.
    Status start(TraceStage parse = {});
    bool deciding() const { return !m_env.done(); }
    /// The question the next step() answers (deciding() only).
    const DecisionStep &pending() const { return m_env.step(); }
    /// One agent decision.
    Status step();
    /// The rest of the decisions, the budget search and Stitch's integration.
    Result<Trace> finish(const std::function<void(const OptimizeProgress &)> &progress = {});
    /// start + every step + finish.
    Result<Trace> run(TraceStage parse = {}, const std::function<void(const OptimizeProgress &)> &progress = {});
    /// From any thread: the running step or search ends with a Cancelled error.
    void cancel() { m_cancel = true; }

    const Trace &trace() const { return m_trace; }
    const Environment &environment() const { return m_env; }

private:
    void integrate(const std::function<void(const OptimizeProgress &)> &progress);
    void resolveConflicts(schedule::Schedule &schedule, Score &score);

    const schedule::Problem &m_problem;
    Evaluator &m_evaluator;
    const PolicySource &m_policy;
    OptimizeOptions m_options;
    Environment m_env;
    std::mt19937_64 m_rng;
    std::atomic<bool> m_cancel{false};
    Trace m_trace;
    double m_decideMs = 0;
};

/// A trace decision from an episode's step record (what the trace and the studio show).
TraceDecision traceDecision(const StepRecord &record);

} // namespace stitch::agents
