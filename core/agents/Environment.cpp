#include "core/agents/Environment.h"

#include "core/common/Parallel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <thread>

namespace stitch::agents {

using schedule::Category;
using schedule::KernelGroup;
using schedule::Strategy;

std::vector<int> affectedDimensions(AgentKind agent)
{
    // Indices into kStaticDimensions: coalescing 0, arithmetic_intensity 1, divergence 2,
    // occupancy 3, instruction_mix 4, bank_conflicts 5.
    switch (agent) {
    case AgentKind::Stitch: return {0, 1, 3};
    case AgentKind::ParallelMapping: return {1, 2, 3};
    case AgentKind::MemoryAccess: return {0, 1, 5};
    case AgentKind::InstructionScheduling: return {3, 4};
    case AgentKind::Parse: break;
    }
    return {};
}

namespace {

double affectedMean(const Score &s, AgentKind agent)
{
    const auto dims = affectedDimensions(agent);
    if (dims.empty())
        return 0;
    double sum = 0;
    for (int d : dims)
        sum += s.dimensions[d];
    return sum / static_cast<double>(dims.size());
}

AgentKind agentOf(Category c)
{
    switch (c) {
    case Category::Fusion: return AgentKind::Stitch;
    case Category::ParallelMapping: return AgentKind::ParallelMapping;
    case Category::MemoryAccess: return AgentKind::MemoryAccess;
    case Category::InstructionScheduling: return AgentKind::InstructionScheduling;
    }
    return AgentKind::ParallelMapping;
}

bool groupHas(const KernelGroup &g, const std::string &name)
{
    return g.name == name || std::find(g.ops.begin(), g.ops.end(), name) != g.ops.end();
}

} // namespace

int Environment::defaultThreads()
{
    return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
}

std::vector<KernelGroup> fuseWithAnswers(const ir::Graph &graph, const std::vector<bool> &answers, std::size_t *offered,
                                         std::optional<schedule::FusionCandidate> *next, std::vector<std::string> *notes)
{
    std::size_t asked = 0;
    if (next)
        next->reset();
    auto groups = schedule::fuseGroups(graph, [&](const schedule::FusionCandidate &c) {
        if (!c.fits) {
            if (notes)
                notes->push_back(c.op + " cannot join the kernel of " + c.groupOps.front() + ": " + c.why);
            return false;
        }
        const std::size_t index = asked++;
        if (index < answers.size())
            return static_cast<bool>(answers[index]);
        if (next && index == answers.size())
            *next = c;
        return true; // the rest greedily
    });
    if (offered)
        *offered = asked;
    return groups;
}

Environment::Environment(const schedule::Problem &problem, Evaluator &evaluator, std::vector<Pin> pins)
    : m_problem(problem), m_evaluator(evaluator), m_pins(std::move(pins))
{
}

double Environment::finalReward(const Score &score)
{
    if (!score.ok || score.ms <= 0 || score.baselineMs <= 0)
        return -1;
    return std::log(score.baselineMs / score.ms) - (score.hardViolation ? 1.0 : 0.0);
}

const schedule::GroupAnalysis *Environment::analyze(const KernelGroup &group)
{
    std::string key = std::to_string(static_cast<int>(group.strategy));
    for (const auto &op : group.ops)
        key += "|" + op;
    if (auto it = m_analyses.find(key); it != m_analyses.end())
        return &it->second;
    auto a = schedule::analyzeGroup(m_problem.graph, group.ops, group.strategy);
    if (!a.ok())
        return nullptr;
    return &m_analyses.emplace(key, std::move(*a)).first->second;
}

const schedule::GroupAnalysis *Environment::analysis(std::size_t g) const
{
    if (g >= m_schedule.groups.size())
        return nullptr;
    return const_cast<Environment *>(this)->analyze(m_schedule.groups[g]);
}

bool Environment::decided(std::size_t g, const std::string &key) const
{
    return g < m_decided.size() && m_decided[g].contains(key);
}

const Pin *Environment::pinFor(AgentKind agent, const std::string &key, const KernelGroup &group,
                               const std::string &subject) const
{
    for (const Pin &p : m_pins) {
        if (p.agent != agent || p.key != key)
            continue;
        if (p.where.empty() || groupHas(group, p.where) || p.where == subject)
            return &p;
    }
    return nullptr;
}

std::optional<KernelGroup> Environment::settle(KernelGroup group, std::string &why)
{
    const schedule::GroupAnalysis *a = analyze(group);
    if (!a) {
        why = std::string("the ops do not fit the ") + schedule::strategyName(group.strategy) + " strategy";
        return std::nullopt;
    }
    if (auto st = schedule::applyHeuristics(*a, group, m_problem); !st) {
        why = st.error().message;
        return std::nullopt;
    }
    std::vector<std::string> fixed;
    for (const auto &d : schedule::decisionDefs(group.strategy)) {
        const Pin *p = pinFor(agentOf(d.category), d.key, group, group.name);
        if (!p)
            continue;
        auto v = d.parseValue(p->value);
        if (!v.ok()) {
            why = "pin " + p->text + ": " + v.error().message;
            return std::nullopt;
        }
        group.set(d.key, *v);
        fixed.push_back(d.key);
    }
    if (fixed.empty())
        return group;
    auto done = schedule::completeGroup(*a, group, m_problem, fixed);
    if (!done) {
        why = "the pinned values cannot all hold in kernel " + group.name;
        return std::nullopt;
    }
    return done;
}

std::optional<schedule::Schedule> Environment::settleAll(const std::vector<KernelGroup> &groups, std::string &why)
{
    schedule::Schedule s;
    s.arch = m_problem.arch.name;
    s.precision = m_problem.precision;
    for (const KernelGroup &g : groups) {
        auto settled = settle(g, why);
        if (!settled)
            return std::nullopt;
        s.groups.push_back(std::move(*settled));
    }
    return s;
}

std::vector<std::string> Environment::fixedKeys(std::size_t g) const
{
    std::vector<std::string> keys(m_decided[g].begin(), m_decided[g].end());
    const KernelGroup &group = m_schedule.groups[g];
    for (const auto &d : schedule::decisionDefs(group.strategy))
        if (pinFor(agentOf(d.category), d.key, group, group.name))
            keys.push_back(d.key);
    return keys;
}

Status Environment::reset()
{
    if (m_problem.graph.ops().empty())
        return makeError(ErrorKind::InvalidArgument, "the program has no ops to optimize");
    // Every pin must name something this program has: a fusion edge's op, or a group's decision.
    auto greedy = schedule::fuseGreedy(m_problem.graph);
    for (const Pin &p : m_pins) {
        if (p.where.empty())
            continue;
        const bool known = m_problem.graph.findOp(p.where) != nullptr ||
                           std::any_of(greedy.begin(), greedy.end(), [&](const KernelGroup &g) { return g.name == p.where; });
        if (!known)
            return makeError(ErrorKind::InvalidArgument,
                             "pin " + p.text + ": this program has no op or kernel named '" + p.where + "'");
    }
    auto heuristics = schedule::defaultSchedule(m_problem);
    if (!heuristics.ok())
        return heuristics.error();
    m_heuristicSchedule = *heuristics;
    m_phase = Phase::Fusion;
    m_fusionAnswers.clear();
    m_fusionNotes.clear();
    m_strategyGroup = 0;
    m_slots.clear();
    m_slot = 0;
    m_actions.clear();
    std::string why;
    auto start = settleAll(greedy, why);
    if (!start)
        return makeError(ErrorKind::InvalidArgument, why);
    m_schedule = *start;
    m_decided.assign(m_schedule.groups.size(), {});
    m_score = m_evaluator.estimate(m_problem, m_schedule);
    return prepareStep();
}

Status Environment::prepareStep()
{
    for (;;) {
        switch (m_phase) {
        case Phase::Fusion:
            if (auto st = prepareFusionStep(); !st)
                return st;
            if (m_phase != Phase::Fusion)
                continue;
            return Ok{};
        case Phase::Strategy:
            if (m_strategyGroup >= m_schedule.groups.size()) {
                m_phase = Phase::Decisions;
                buildDecisionSlots();
                continue;
            }
            prepareStrategyStep();
            return Ok{};
        case Phase::Decisions:
            if (m_slot >= m_slots.size()) {
                m_phase = Phase::Done;
                continue;
            }
            prepareDecisionStep();
            return Ok{};
        case Phase::Done: return Ok{};
        }
    }
}

Status Environment::prepareFusionStep()
{
    std::optional<schedule::FusionCandidate> next;
    std::vector<std::string> notes;
    auto groups = fuseWithAnswers(m_problem.graph, m_fusionAnswers, nullptr, &next, &notes);
    if (!next) {
        m_fusionNotes = std::move(notes);
        std::string why;
        auto settled = settleAll(groups, why);
        if (!settled)
            return makeError(ErrorKind::InvalidArgument, why);
        m_schedule = *settled;
        m_decided.assign(m_schedule.groups.size(), {});
        m_score = m_evaluator.estimate(m_problem, m_schedule);
        m_phase = Phase::Strategy;
        return Ok{};
    }
    m_step = {};
    m_step.agent = AgentKind::Stitch;
    m_step.key = "fuse";
    m_step.subject = next->op;
    m_step.groupName = next->groupOps.front();
    for (std::size_t g = 0; g < m_schedule.groups.size(); ++g)
        if (groupHas(m_schedule.groups[g], next->groupOps.front()))
            m_step.group = g;
    m_step.help = "fuse " + next->op + " into the kernel that computes " + next->groupOps.back() + " (" +
                  schedule::strategyName(next->strategyIfFused) + "), or give it a kernel of its own";
    m_outcomes.clear();
    m_outcomeSchedules.clear();
    m_outcomeValid.clear();
    for (int answer : {1, 0}) {
        Option o{answer, answer ? "fuse" : "separate", true, {}};
        std::vector<bool> answers = m_fusionAnswers;
        answers.push_back(answer != 0);
        std::string why;
        auto s = settleAll(fuseWithAnswers(m_problem.graph, answers), why);
        if (!s) {
            o.legal = false;
            o.why = why;
        }
        m_outcomeValid.push_back(s.has_value());
        m_outcomeSchedules.push_back(s ? *s : schedule::Schedule{});
        m_step.options.push_back(o);
    }
    estimateOutcomes();
    m_step.heuristicIndex = 0; // the heuristics fuse greedily
    KernelGroup grown;
    grown.ops = next->groupOps;
    grown.name = next->groupOps.front();
    if (const Pin *p = pinFor(AgentKind::Stitch, "fuse", grown, next->op)) {
        const bool on = p->value == "fuse" || p->value == "on" || p->value == "1" || p->value == "yes";
        const bool off = p->value == "separate" || p->value == "off" || p->value == "0" || p->value == "no";
        if (!on && !off)
            return makeError(ErrorKind::InvalidArgument,
                             "pin " + p->text + ": stitch.fuse takes fuse (on) or separate (off)");
        m_step.pinnedIndex = on ? 0 : 1;
    }
    return Ok{};
}

void Environment::prepareStrategyStep()
{
    const std::size_t g = m_strategyGroup;
    const KernelGroup &group = m_schedule.groups[g];
    m_step = {};
    m_step.agent = AgentKind::ParallelMapping;
    m_step.group = g;
    m_step.groupName = group.name;
    m_step.subject = group.name;
    m_step.key = "strategy";
    m_step.help = "how the kernel maps onto the GPU: tiled GEMM, row reduction, element-wise, or one thread per output";
    m_outcomes.clear();
    m_outcomeSchedules.clear();
    m_outcomeValid.clear();
    for (Strategy s : schedule::kAllStrategies) {
        Option o{static_cast<int>(s), schedule::strategyName(s), true, {}};
        KernelGroup candidate = group;
        candidate.strategy = s;
        candidate.values.clear();
        auto a = schedule::analyzeGroup(m_problem.graph, candidate.ops, s);
        std::optional<schedule::Schedule> sched;
        // A pin on a decision of this kernel's strategy (or named for this kernel) needs a strategy
        // that has that decision.
        std::string pinNeeds;
        for (const Pin &p : m_pins) {
            if (p.key == "fuse" || p.key == "strategy" || schedule::findDecision(s, p.key))
                continue;
            const bool named = !p.where.empty() && (groupHas(group, p.where) || p.where == group.name);
            if (named || (p.where.empty() && schedule::findDecision(group.strategy, p.key)))
                pinNeeds = "pin " + p.text + " needs a strategy with " + p.key;
        }
        if (!pinNeeds.empty()) {
            o.legal = false;
            o.why = pinNeeds;
        } else if (!a.ok()) {
            o.legal = false;
            o.why = a.error().message;
        } else {
            std::string why;
            auto settled = settle(candidate, why);
            if (!settled) {
                o.legal = false;
                o.why = why;
            } else {
                sched = m_schedule;
                sched->groups[g] = *settled;
            }
        }
        if (s == group.strategy)
            m_step.heuristicIndex = static_cast<int>(m_step.options.size());
        m_outcomeValid.push_back(sched.has_value());
        m_outcomeSchedules.push_back(sched ? *sched : schedule::Schedule{});
        m_step.options.push_back(o);
    }
    estimateOutcomes();
    if (const Pin *p = pinFor(AgentKind::ParallelMapping, "strategy", group, group.name)) {
        for (std::size_t i = 0; i < m_step.options.size(); ++i)
            if (m_step.options[i].text == p->value)
                m_step.pinnedIndex = static_cast<int>(i);
    }
}

void Environment::buildDecisionSlots()
{
    m_slots.clear();
    m_slot = 0;
    for (Category c : {Category::ParallelMapping, Category::MemoryAccess, Category::InstructionScheduling})
        for (std::size_t g = 0; g < m_schedule.groups.size(); ++g)
            for (const auto &d : schedule::decisionDefs(m_schedule.groups[g].strategy))
                if (d.category == c)
                    m_slots.push_back({g, d.key, agentOf(c)});
}

void Environment::prepareDecisionStep()
{
    const Slot &slot = m_slots[m_slot];
    const KernelGroup &group = m_schedule.groups[slot.group];
    const schedule::DecisionDef *def = schedule::findDecision(group.strategy, slot.key);
    const schedule::GroupAnalysis *a = analysis(slot.group);
    m_step = {};
    m_step.agent = slot.agent;
    m_step.group = slot.group;
    m_step.groupName = group.name;
    m_step.subject = group.name;
    m_step.key = slot.key;
    m_step.help = def->help;
    m_outcomes.clear();
    m_outcomeSchedules.clear();
    m_outcomeValid.clear();
    std::vector<std::string> fixed = fixedKeys(slot.group);
    fixed.push_back(slot.key);
    const auto direct = schedule::legalValues(*a, group, slot.key, m_problem);
    const KernelGroup *heuristic = m_heuristicSchedule.group(group.name);
    const bool sameKernel = heuristic && heuristic->strategy == group.strategy && heuristic->ops == group.ops;
    const int heuristicValue = sameKernel ? heuristic->value(slot.key) : group.value(slot.key);
    const Pin *pin = pinFor(slot.agent, slot.key, group, group.name);
    // Each value's completion and its program's estimate: independent, on the worker threads.
    const std::size_t n = std::min<std::size_t>(def->candidates.size(), static_cast<std::size_t>(kMaxActions));
    std::vector<std::optional<KernelGroup>> done(n);
    m_outcomes.assign(n, Score{});
    m_outcomeSchedules.assign(n, schedule::Schedule{});
    m_outcomeValid.assign(n, false);
    parallelFor(n, [&](std::size_t i) {
        KernelGroup candidate = group;
        candidate.set(slot.key, def->candidates[i]);
        done[i] = schedule::completeGroup(*a, candidate, m_problem, fixed);
        if (!done[i])
            return;
        schedule::Schedule s = m_schedule;
        s.groups[slot.group] = *done[i];
        m_outcomes[i] = m_evaluator.estimate(m_problem, s);
        m_outcomeSchedules[i] = std::move(s);
        m_outcomeValid[i] = true;
    });
    for (std::size_t i = 0; i < n; ++i) {
        const int v = def->candidates[i];
        Option o{v, def->valueText(v), true, {}};
        if (!done[i]) {
            o.legal = false;
            for (const auto &d : direct)
                if (d.value == v && !d.legal)
                    o.why = d.why;
            if (o.why.empty())
                o.why = "no legal completion of " + group.name + " with the decisions already taken";
        }
        if (v == heuristicValue)
            m_step.heuristicIndex = static_cast<int>(i);
        if (pin && v == group.value(slot.key))
            m_step.pinnedIndex = static_cast<int>(i);
        m_step.options.push_back(o);
    }
    if (!m_step.options[m_step.heuristicIndex].legal) // the heuristics' value no longer fits: any legal one
        for (std::size_t i = 0; i < m_step.options.size(); ++i)
            if (m_step.options[i].legal) {
                m_step.heuristicIndex = static_cast<int>(i);
                break;
            }
}

void Environment::parallelFor(std::size_t n, const std::function<void(std::size_t)> &work) const
{
    // Independent work per option, spread over the threads the environment may use.
    stitch::parallelFor(n, m_threads, work);
}

void Environment::estimateOutcomes()
{
    m_outcomes.assign(m_outcomeSchedules.size(), Score{});
    parallelFor(m_outcomeSchedules.size(), [&](std::size_t i) {
        if (m_outcomeValid[i])
            m_outcomes[i] = m_evaluator.estimate(m_problem, m_outcomeSchedules[i]);
    });
}

Result<double> Environment::apply(int option)
{
    if (done())
        return makeError(ErrorKind::InvalidArgument, "the episode is over");
    if (option < 0 || option >= static_cast<int>(m_step.options.size()))
        return makeError(ErrorKind::InvalidArgument, m_step.id() + ": no option " + std::to_string(option));
    const Option &o = m_step.options[option];
    if (!o.legal)
        return makeError(ErrorKind::InvalidArgument, m_step.id() + "=" + o.text + " is illegal: " + o.why);
    if (m_step.pinnedIndex >= 0 && option != m_step.pinnedIndex)
        return makeError(ErrorKind::InvalidArgument, m_step.id() + " is pinned to " +
                                                         m_step.options[m_step.pinnedIndex].text);
    const Score before = m_score;
    const Score &after = m_outcomes[option];
    // The rubric's static dimensions this agent moves, and its final-performance dimension as the
    // change of the model's log time (potential-based: the episode's sum is ln(start / final)).
    double reward = kDenseRewardWeight * (affectedMean(after, m_step.agent) - affectedMean(before, m_step.agent)) / 5.0;
    if (before.ok && after.ok && before.ms > 0 && after.ms > 0)
        reward += kTimeRewardWeight * std::log(before.ms / after.ms);
    if (after.hardViolation)
        reward -= 1.0;
    m_actions.push_back(option);
    switch (m_phase) {
    case Phase::Fusion:
        m_fusionAnswers.push_back(o.value != 0);
        break;
    case Phase::Strategy:
        m_schedule = m_outcomeSchedules[option];
        m_score = after;
        m_decided[m_strategyGroup].insert("strategy");
        ++m_strategyGroup;
        break;
    case Phase::Decisions:
        m_schedule = m_outcomeSchedules[option];
        m_score = after;
        m_decided[m_slots[m_slot].group].insert(m_slots[m_slot].key);
        ++m_slot;
        break;
    case Phase::Done: break;
    }
    if (m_phase == Phase::Fusion) {
        m_schedule = m_outcomeSchedules[option];
        m_score = after;
    }
    if (auto st = prepareStep(); !st)
        return st.error();
    return reward;
}

} // namespace stitch::agents
