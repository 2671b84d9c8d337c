#pragma once
// The agents: who decides what, the question each decision is, and where the probabilities come from.
//   Graph -> Parse (the lifter) -> Stitch (fusion) -> Parallel mapping -> Memory access
//         -> Instruction scheduling -> Stitch (conflicts, code generation) -> program
// Stitch plans the fusion first because the others decide per kernel; it integrates last. Each
// learning agent is one policy network (learning/Networks.h); the heuristic and uniform sources
// stand in for it where a comparison needs them (docs/AGENTS.md).

#include "core/agents/learning/Networks.h"
#include "core/common/Result.h"

#include <string>
#include <vector>

namespace stitch::agents {

enum class AgentKind { Parse, Stitch, ParallelMapping, MemoryAccess, InstructionScheduling };
inline constexpr AgentKind kAllAgents[] = {AgentKind::Parse, AgentKind::Stitch, AgentKind::ParallelMapping,
                                           AgentKind::MemoryAccess, AgentKind::InstructionScheduling};
const char *agentName(AgentKind agent);  ///< "parse", "stitch", "parallel_mapping", "memory_access", "instruction_scheduling"
const char *agentTitle(AgentKind agent); ///< "Parse", "Stitch", "Parallel mapping", ...
/// Accepts the name or the title; the error lists the agents.
Result<AgentKind> parseAgent(const std::string &text);
/// The network that decides for a learning agent (Parse has none).
LearningAgent learningAgent(AgentKind agent);

/// One value a decision can take.
struct Option {
    int value = 0;
    std::string text;  ///< "128", "async", "fuse"
    bool legal = true;
    std::string why;   ///< why it is illegal: the rule it breaks, or "no legal completion"
};

/// One question an agent answers.
struct DecisionStep {
    AgentKind agent = AgentKind::ParallelMapping;
    std::size_t group = 0;   ///< the kernel group it concerns (fusion: the group being grown)
    std::string groupName;
    std::string key;         ///< "fuse", "strategy", or a schedule decision ("block_m")
    std::string subject;     ///< fusion: the op that could join the group; else the group name
    std::string help;
    std::vector<Option> options; ///< at most kMaxActions
    int heuristicIndex = 0;  ///< the option the built-in heuristics take
    int pinnedIndex = -1;    ///< the option a pin fixes (-1: none)

    /// The options an agent may take: the legal ones, or the pinned one alone.
    std::vector<std::uint8_t> mask() const;
    /// The legal options, pin or not (what retraining imitates against).
    std::vector<std::uint8_t> legalMask() const;
    int legalCount() const;
    /// "memory_access.block_k@gemm" (the pin syntax)
    std::string id() const;
};

/// A decision fixed by the user: AGENT.KEY[@GROUP_OR_OP]=VALUE.
struct Pin {
    AgentKind agent = AgentKind::ParallelMapping;
    std::string key;
    std::string where; ///< a group's name or one of its ops; empty: every group with that decision
    std::string value; ///< the value's text or number
    std::string text;  ///< as given
};
/// Parses "memory_access.block_k=16" or "stitch.fuse@H=off". The agent and key are checked here
/// (an unknown one is an error naming it and the ones that exist); the value against the decision's
/// candidates when the step is reached.
Result<Pin> parsePin(const std::string &text);

/// Where an agent's probabilities over a step's options come from.
class PolicySource {
public:
    virtual ~PolicySource() = default;
    virtual std::string name() const = 0; ///< "network sm_90.agents", "heuristics", "uniform"
    virtual PolicyOutput evaluate(const DecisionStep &step, const std::vector<float> &observation) const = 0;
};

/// The trained (or untrained) networks.
class NetworkPolicy final : public PolicySource {
public:
    NetworkPolicy(const AgentNetworks &networks, std::string label) : m_networks(networks), m_label(std::move(label)) {}
    std::string name() const override { return m_label; }
    PolicyOutput evaluate(const DecisionStep &step, const std::vector<float> &observation) const override;

private:
    const AgentNetworks &m_networks;
    std::string m_label;
};

/// Today's heuristics as a policy: all the probability on the heuristics' option.
class HeuristicPolicy final : public PolicySource {
public:
    std::string name() const override { return "heuristics"; }
    PolicyOutput evaluate(const DecisionStep &step, const std::vector<float> &observation) const override;
};

/// Every legal option alike.
class UniformPolicy final : public PolicySource {
public:
    std::string name() const override { return "uniform"; }
    PolicyOutput evaluate(const DecisionStep &step, const std::vector<float> &observation) const override;
};

} // namespace stitch::agents
