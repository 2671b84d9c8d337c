#pragma once
// The optimization environment the agents, the trainer, `stitchcuda optimize` and the studio all
// drive (CompilerGym's shape: a reset, a question with its legal actions, a step with its reward).
//   Problem -> reset -> [step() question, outcomes() per option, apply(option) -> dense reward]* -> schedule()
// The questions, in order: Stitch's fusion (one per producer/consumer edge the fusion analysis
// offers: fuse or not), Parallel mapping's strategy per kernel, then every decision of each kernel
// by the agent that owns its category (Parallel mapping, Memory access, Instruction scheduling).
// Illegal values are masked with their reason: a value is legal when some choice of the decisions
// still open makes the kernel legal (schedule::completeGroup), so no episode can dead-end. At every
// step the environment holds a legal, complete schedule: the decisions taken, the open ones at the
// heuristics' values (completed where those break a rule); that is what the rubric scores.

#include "core/agents/Agent.h"
#include "core/agents/Evaluator.h"
#include "core/schedule/GroupAnalysis.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stitch::agents {

/// Stitch's fusion with the first answers given: the fitting fusion edges the walk meets take
/// `answers` in order (true: fuse), the rest fuse greedily. `offered` (when given) counts the fitting
/// edges met, `next` gets the first one past the answers, `notes` says why each edge that does not
/// fit could not fuse. The environment's questions and the search's fusion variants both walk it.
std::vector<schedule::KernelGroup> fuseWithAnswers(const ir::Graph &graph, const std::vector<bool> &answers,
                                                   std::size_t *offered = nullptr,
                                                   std::optional<schedule::FusionCandidate> *next = nullptr,
                                                   std::vector<std::string> *notes = nullptr);

/// The rubric dimensions a decision of `agent` moves (the dense reward's).
std::vector<int> affectedDimensions(AgentKind agent);

/// The dense reward after each decision (docs/AGENTS.md): kDenseRewardWeight x the change of the
/// mean score (over 5) of the static dimensions the decision's agent moves, plus kTimeRewardWeight x
/// the change of the final-performance dimension's quantity, ln(time before / time after) of the
/// complete schedule by the compile-free model. The final reward: ln(input's time / final time).
inline constexpr double kDenseRewardWeight = 0.1;
inline constexpr double kTimeRewardWeight = 1.0;

class Environment {
public:
    /// `problem` and `evaluator` must outlive the environment.
    Environment(const schedule::Problem &problem, Evaluator &evaluator, std::vector<Pin> pins = {});

    /// Starts an episode. Error: the problem has no ops, a pin names a decision or group this program
    /// does not have, or the pins cannot all hold.
    Status reset();
    bool done() const { return m_phase == Phase::Done; }
    /// The current question (not done()).
    const DecisionStep &step() const { return m_step; }
    /// Each option's outcome: the complete schedule if it is taken, and its estimate (ok=false where
    /// the option is illegal).
    const std::vector<Score> &outcomes() const { return m_outcomes; }
    const std::vector<schedule::Schedule> &outcomeSchedules() const { return m_outcomeSchedules; }
    /// Takes a legal option; returns the dense reward. InvalidArgument for an illegal or unknown option.
    Result<double> apply(int option);

    /// The complete, legal schedule as it stands, and its estimate.
    const schedule::Schedule &schedule() const { return m_schedule; }
    const Score &current() const { return m_score; }
    /// The options taken so far, in order: an episode replays from these.
    const std::vector<int> &actions() const { return m_actions; }
    /// The final reward of a finished episode: ln(input's time / final time) by `score`.
    static double finalReward(const Score &score);

    const schedule::Problem &problem() const { return m_problem; }
    /// The analysis of group `g` of the current schedule (null when it does not fit its strategy).
    const schedule::GroupAnalysis *analysis(std::size_t g) const;
    /// Whether decision `key` of group `g` has been taken (or pinned).
    bool decided(std::size_t g, const std::string &key) const;
    /// Progress: questions answered, and an estimate of all (it grows as fusion settles).
    int answered() const { return static_cast<int>(m_actions.size()); }
    /// Notes for the trace: fusion edges that could not fuse, with why.
    const std::vector<std::string> &fusionNotes() const { return m_fusionNotes; }
    /// The schedule the built-in heuristics give (defaultSchedule), for comparisons.
    const schedule::Schedule &heuristicSchedule() const { return m_heuristicSchedule; }
    /// Threads that score a question's options at once (default: the machine's cores, at most 4;
    /// the outcomes are the same for any count). Takes effect from the next question.
    void setThreads(int threads) { m_threads = threads; }

private:
    enum class Phase { Fusion, Strategy, Decisions, Done };
    struct Slot { std::size_t group; std::string key; AgentKind agent; };

    const schedule::GroupAnalysis *analyze(const schedule::KernelGroup &group);
    /// Heuristic values and the pins for a group; nullopt (why set) when the pins cannot hold.
    std::optional<schedule::KernelGroup> settle(schedule::KernelGroup group, std::string &why);
    std::optional<schedule::Schedule> settleAll(const std::vector<schedule::KernelGroup> &groups, std::string &why);
    std::vector<std::string> fixedKeys(std::size_t g) const;
    const Pin *pinFor(AgentKind agent, const std::string &key, const schedule::KernelGroup &group,
                      const std::string &subject) const;
    Status prepareStep();
    Status prepareFusionStep();
    void prepareStrategyStep();
    void prepareDecisionStep();
    void buildDecisionSlots();
    /// m_outcomes from m_outcomeSchedules (those m_outcomeValid marks), on up to m_threads threads.
    void estimateOutcomes();
    /// work(0) ... work(n - 1) on up to m_threads threads.
    void parallelFor(std::size_t n, const std::function<void(std::size_t)> &work) const;

    const schedule::Problem &m_problem;
    Evaluator &m_evaluator;
    std::vector<Pin> m_pins;

    Phase m_phase = Phase::Fusion;
    std::vector<bool> m_fusionAnswers;
    std::vector<std::string> m_fusionNotes;
    std::size_t m_strategyGroup = 0;
    std::vector<Slot> m_slots;
    std::size_t m_slot = 0;
    std::vector<std::set<std::string>> m_decided;

    schedule::Schedule m_schedule;
    schedule::Schedule m_heuristicSchedule;
    Score m_score;
    DecisionStep m_step;
    std::vector<Score> m_outcomes;
    std::vector<schedule::Schedule> m_outcomeSchedules;
    std::vector<bool> m_outcomeValid;
    int m_threads = defaultThreads();
    static int defaultThreads();
    std::vector<int> m_actions;
    std::map<std::string, schedule::GroupAnalysis> m_analyses;
};

} // namespace stitch::agents
