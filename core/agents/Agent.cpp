#include "core/agents/Agent.h"

#include "core/schedule/Schedule.h"

#include <algorithm>

namespace stitch::agents {

const char *agentName(AgentKind agent)
{
    switch (agent) {
    case AgentKind::Parse: return "parse";
    case AgentKind::Stitch: return "stitch";
    case AgentKind::ParallelMapping: return "parallel_mapping";
    case AgentKind::MemoryAccess: return "memory_access";
    case AgentKind::InstructionScheduling: return "instruction_scheduling";
    }
    return "?";
}

const char *agentTitle(AgentKind agent)
{
    switch (agent) {
    case AgentKind::Parse: return "Parse";
    case AgentKind::Stitch: return "Stitch";
    case AgentKind::ParallelMapping: return "Parallel mapping";
    case AgentKind::MemoryAccess: return "Memory access";
    case AgentKind::InstructionScheduling: return "Instruction scheduling";
    }
    return "?";
}

Result<AgentKind> parseAgent(const std::string &text)
{
    std::string names;
    for (AgentKind a : kAllAgents) {
        if (text == agentName(a) || text == agentTitle(a))
            return a;
        names += (names.empty() ? "" : ", ") + std::string(agentName(a));
    }
    return makeError(ErrorKind::InvalidArgument, "unknown agent '" + text + "' (the agents: " + names + ")");
}

LearningAgent learningAgent(AgentKind agent)
{
    switch (agent) {
    case AgentKind::Stitch: return LearningAgent::Stitch;
    case AgentKind::MemoryAccess: return LearningAgent::MemoryAccess;
    case AgentKind::InstructionScheduling: return LearningAgent::InstructionScheduling;
    case AgentKind::Parse:
    case AgentKind::ParallelMapping: break;
    }
    return LearningAgent::ParallelMapping;
}

std::vector<std::uint8_t> DecisionStep::mask() const
{
    std::vector<std::uint8_t> m(kMaxActions, 0);
    for (std::size_t i = 0; i < options.size() && i < m.size(); ++i)
        m[i] = options[i].legal && (pinnedIndex < 0 || pinnedIndex == static_cast<int>(i)) ? 1 : 0;
    return m;
}

std::vector<std::uint8_t> DecisionStep::legalMask() const
{
    std::vector<std::uint8_t> m(kMaxActions, 0);
    for (std::size_t i = 0; i < options.size() && i < m.size(); ++i)
        m[i] = options[i].legal ? 1 : 0;
    return m;
}

int DecisionStep::legalCount() const
{
    const auto m = mask();
    return static_cast<int>(std::count(m.begin(), m.end(), 1));
}

std::string DecisionStep::id() const
{
    const std::string where = key == "fuse" ? subject : groupName;
    return std::string(agentName(agent)) + "." + key + (where.empty() ? "" : "@" + where);
}

namespace {

/// Which agent owns a key: "fuse" (Stitch), "strategy" (Parallel mapping), or a schedule decision.
Result<AgentKind> ownerOf(const std::string &key)
{
    if (key == "fuse")
        return AgentKind::Stitch;
    if (key == "strategy")
        return AgentKind::ParallelMapping;
    for (auto s : schedule::kAllStrategies)
        if (const auto *d = schedule::findDecision(s, key)) {
            switch (d->category) {
            case schedule::Category::Fusion: return AgentKind::Stitch;
            case schedule::Category::ParallelMapping: return AgentKind::ParallelMapping;
            case schedule::Category::MemoryAccess: return AgentKind::MemoryAccess;
            case schedule::Category::InstructionScheduling: return AgentKind::InstructionScheduling;
            }
        }
    std::string keys = "fuse, strategy";
    std::vector<std::string> seen;
    for (auto s : schedule::kAllStrategies)
        for (const auto &d : schedule::decisionDefs(s))
            if (std::find(seen.begin(), seen.end(), d.key) == seen.end()) {
                seen.push_back(d.key);
                keys += ", " + d.key;
            }
    return makeError(ErrorKind::InvalidArgument, "unknown decision '" + key + "' (the decisions: " + keys + ")");
}

} // namespace

Result<Pin> parsePin(const std::string &text)
{
    auto bad = [&](const std::string &why) {
        return makeError(ErrorKind::InvalidArgument,
                         "--pin " + text + ": " + why + " (the form is AGENT.DECISION[@KERNEL_OR_OP]=VALUE, "
                         "e.g. memory_access.block_k=16)");
    };
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq + 1 == text.size())
        return bad("no value");
    std::string lhs = text.substr(0, eq);
    Pin pin;
    pin.text = text;
    pin.value = text.substr(eq + 1);
    if (const auto at = lhs.find('@'); at != std::string::npos) {
        pin.where = lhs.substr(at + 1);
        lhs = lhs.substr(0, at);
        if (pin.where.empty())
            return bad("nothing after '@'");
    }
    const auto dot = lhs.find('.');
    if (dot == std::string::npos)
        return bad("no agent");
    auto agent = parseAgent(lhs.substr(0, dot));
    if (!agent.ok())
        return bad(agent.error().message);
    pin.agent = *agent;
    pin.key = lhs.substr(dot + 1);
    auto owner = ownerOf(pin.key);
    if (!owner.ok())
        return bad(owner.error().message);
    if (*owner != pin.agent)
        return bad("decision '" + pin.key + "' belongs to " + agentName(*owner) + ", not " + agentName(pin.agent));
    // A value the decision can never take is refused now, not when its step comes.
    if (pin.key != "fuse" && pin.key != "strategy") {
        bool known = false;
        std::string why;
        for (auto s : schedule::kAllStrategies)
            if (const auto *d = schedule::findDecision(s, pin.key)) {
                auto v = d->parseValue(pin.value);
                known = known || v.ok();
                if (!v.ok())
                    why = v.error().message;
            }
        if (!known)
            return bad(why);
    } else if (pin.key == "strategy" && !schedule::parseStrategy(pin.value).ok()) {
        return bad(schedule::parseStrategy(pin.value).error().message);
    }
    return pin;
}

PolicyOutput NetworkPolicy::evaluate(const DecisionStep &step, const std::vector<float> &observation) const
{
    return m_networks.evaluate(static_cast<int>(learningAgent(step.agent)), observation, step.mask());
}

PolicyOutput HeuristicPolicy::evaluate(const DecisionStep &step, const std::vector<float> &) const
{
    PolicyOutput out;
    out.probabilities.assign(kMaxActions, 0.0);
    const auto mask = step.mask();
    int pick = step.pinnedIndex >= 0 ? step.pinnedIndex : step.heuristicIndex;
    if (pick < 0 || pick >= kMaxActions || !mask[pick])
        pick = static_cast<int>(std::find(mask.begin(), mask.end(), 1) - mask.begin());
    out.probabilities[pick] = 1.0;
    return out;
}

PolicyOutput UniformPolicy::evaluate(const DecisionStep &step, const std::vector<float> &) const
{
    PolicyOutput out;
    out.probabilities.assign(kMaxActions, 0.0);
    const auto mask = step.mask();
    const int n = static_cast<int>(std::count(mask.begin(), mask.end(), 1));
    for (int i = 0; i < kMaxActions; ++i)
        out.probabilities[i] = mask[i] ? 1.0 / n : 0.0;
    return out;
}

} // namespace stitch::agents
