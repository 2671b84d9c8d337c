#pragma once
// The interface every optimization agent implements (Parse, Parallel mapping, Memory access,
// Instruction scheduling, Stitch).
//   Graph + decisions so far -> Agent::decisionPoints -> Agent::decide -> Decision -> rubric -> reward
// Only the interface lives here so far: the agents themselves come with their own issue. Randomness
// enters through the context's generator so every run can be replayed from its seed.

#include "core/arch/ArchDatabase.h"

#include <random>
#include <string>
#include <vector>

namespace stitch::ir {
class Graph;
}

namespace stitch::agents {

/// What an agent may read when it decides.
struct AgentContext {
    const ir::Graph &graph;
    const ArchLimits &arch;
    std::mt19937_64 &rng; ///< the only source of randomness
};

/// One value an agent could choose, with the reason when it is excluded.
struct DecisionOption {
    std::string value;        ///< e.g. "BM=128"
    bool legal = true;
    std::string whyIllegal;   ///< e.g. "needs 72 KiB of shared memory, sm_75 allows 64 KiB"
};

/// A question an agent answers, such as "block tile of group 0".
struct DecisionPoint {
    std::string agent;
    std::string name;
    std::vector<DecisionOption> options;
};

/// The answer, with the policy's probabilities so the studio can explain it.
struct Decision {
    std::string point;
    std::size_t chosen = 0;
    std::vector<double> probabilities; ///< one per option of the point, summing to 1
    bool overriddenByUser = false;
};

class Agent {
public:
    virtual ~Agent() = default;
    virtual std::string name() const = 0;
    /// Whether this agent has anything to decide for the graph (e.g. Stitch needs two kernels).
    virtual bool applies(const AgentContext &context) const = 0;
    /// The questions this agent answers for the graph, with legal and illegal options.
    virtual std::vector<DecisionPoint> decisionPoints(const AgentContext &context) const = 0;
    virtual Decision decide(const AgentContext &context, const DecisionPoint &point) = 0;
};

} // namespace stitch::agents
