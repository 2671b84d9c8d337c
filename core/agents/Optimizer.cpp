#include "core/agents/Optimizer.h"

#include "core/agents/Features.h"
#include "core/rubric/CheckedDefault.h"
#include "core/rubric/PerfModel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace stitch::agents {

std::string fixedText(double v, int digits)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

namespace {

std::string percent(double ratio)
{
    const double p = (ratio - 1.0) * 100.0;
    return (p >= 0 ? "+" : "") + fixedText(p, 1) + "%";
}

std::string describeSchedule(const schedule::Schedule &s)
{
    std::string out;
    for (const auto &g : s.groups)
        out += (out.empty() ? "" : "; ") + schedule::describe(g);
    return out;
}

Error cancelled() { return makeError(ErrorKind::Cancelled, "optimization cancelled"); }

} // namespace

std::string msText(double ms)
{
    return ms >= 1 ? fixedText(ms, 3) + " ms" : fixedText(ms * 1000.0, 1) + " us";
}

int pickOption(const DecisionStep &step, const PolicyOutput &policy, Pick pick, std::mt19937_64 &rng)
{
    const auto mask = step.mask();
    if (step.pinnedIndex >= 0)
        return step.pinnedIndex;
    const int n = static_cast<int>(std::min<std::size_t>(step.options.size(), mask.size()));
    if (step.legalCount() == 1)
        return static_cast<int>(std::find(mask.begin(), mask.end(), 1) - mask.begin());
    if (pick == Pick::Sample) {
        // The generator's own output, no library distribution: the same draw on every platform.
        const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
        double total = 0;
        for (int i = 0; i < n; ++i)
            total += mask[i] ? policy.probabilities[i] : 0.0;
        double acc = 0;
        int last = -1;
        for (int i = 0; i < n; ++i) {
            if (!mask[i])
                continue;
            last = i;
            acc += policy.probabilities[i] / total;
            if (u < acc)
                return i;
        }
        return last;
    }
    int best = -1;
    for (int i = 0; i < n; ++i)
        if (mask[i] && (best < 0 || policy.probabilities[i] > policy.probabilities[best]))
            best = i;
    return best;
}

Result<StepRecord> takeStep(Environment &env, const PolicySource &policy, Pick pick, std::mt19937_64 &rng, bool seen)
{
    StepRecord r;
    r.step = env.step();
    r.observation = observe(env);
    r.policy = policy.evaluate(r.step, r.observation);
    r.action = pickOption(r.step, r.policy, pick, rng);
    r.before = env.current();
    r.outcomes = env.outcomes();
    if (seen && r.step.group < env.schedule().groups.size())
        r.seen = schedule::describe(env.schedule().groups[r.step.group]);
    auto reward = env.apply(r.action);
    if (!reward.ok())
        return reward.error();
    r.reward = *reward;
    return r;
}

Status rollout(Environment &env, const PolicySource &policy, Pick pick, std::mt19937_64 &rng,
               const std::function<void(StepRecord &&)> &record, const std::atomic<bool> *cancel)
{
    while (!env.done()) {
        if (cancel && *cancel)
            return cancelled();
        auto r = takeStep(env, policy, pick, rng, static_cast<bool>(record));
        if (!r.ok())
            return r.error();
        if (record)
            record(std::move(*r));
    }
    return Ok{};
}

std::optional<std::pair<schedule::Schedule, Score>> greedySchedule(const schedule::Problem &problem, Evaluator &evaluator,
                                                                   const PolicySource &policy)
{
    Environment env(problem, evaluator);
    std::mt19937_64 rng(1); // greedy: never drawn from
    if (!env.reset().ok() || !rollout(env, policy, Pick::Greedy, rng, {}).ok())
        return std::nullopt;
    return std::make_pair(env.schedule(), env.current());
}

std::string rationale(const StepRecord &r)
{
    const DecisionStep &s = r.step;
    const Option &chosen = s.options[r.action];
    const Score &after = r.outcomes[r.action];
    std::string out = s.key + "=" + chosen.text;
    if (s.pinnedIndex >= 0)
        out += " (pinned by the user)";
    else if (s.legalCount() == 1)
        out += " (the only legal value)";
    else
        out += " (p=" + fixedText(r.policy.probabilities[r.action], 2) + ")";
    if (after.ok)
        out += ": " + msText(after.ms) + " by the model";
    // The dimensions this decision moved.
    std::string moved;
    for (int d : affectedDimensions(s.agent)) {
        const double b = r.before.dimensions[d], a = after.dimensions[d];
        if (std::abs(a - b) >= 0.05)
            moved += (moved.empty() ? "" : ", ") + std::string(kStaticDimensions[d]) + " " + fixedText(b, 1) + " -> " +
                     fixedText(a, 1) + "/5";
    }
    if (!moved.empty())
        out += ", " + moved;
    // The best legal alternative by the model.
    int alt = -1;
    for (std::size_t i = 0; i < s.options.size(); ++i)
        if (static_cast<int>(i) != r.action && s.options[i].legal && r.outcomes[i].ok &&
            (alt < 0 || r.outcomes[i].ms < r.outcomes[alt].ms))
            alt = static_cast<int>(i);
    if (alt >= 0 && after.ok) {
        const Score &o = r.outcomes[alt];
        out += "; " + s.key + "=" + s.options[alt].text + " " + msText(o.ms) + " (" + percent(o.ms / after.ms) + ")";
        for (int d : affectedDimensions(s.agent))
            if (std::abs(o.dimensions[d] - after.dimensions[d]) >= 0.5) {
                out += ", " + std::string(kStaticDimensions[d]) + " " + fixedText(o.dimensions[d], 1) + "/5";
                break;
            }
    }
    // One illegal value and its reason.
    int illegal = 0;
    std::string example;
    for (const auto &o : s.options)
        if (!o.legal && s.pinnedIndex < 0) {
            if (++illegal == 1)
                example = o.why.rfind(s.key + "=", 0) == 0 ? o.why : s.key + "=" + o.text + ": " + o.why;
        }
    if (illegal > 0)
        out += "; " + std::to_string(illegal) + " value" + (illegal > 1 ? "s" : "") + " illegal (" + example + ")";
    return out + ".";
}

TraceDecision traceDecision(const StepRecord &r)
{
    TraceDecision d;
    d.agent = r.step.agent;
    d.id = r.step.id();
    d.group = r.step.groupName;
    d.key = r.step.key;
    d.subject = r.step.subject;
    d.help = r.step.help;
    d.observation = r.seen;
    for (std::size_t i = 0; i < r.step.options.size(); ++i) {
        const Option &o = r.step.options[i];
        TraceOption t{o.text, o.legal, o.why, i < r.policy.probabilities.size() ? r.policy.probabilities[i] : 0.0, {}};
        if (o.legal && r.outcomes[i].ok)
            t.estimatedMs = r.outcomes[i].ms;
        d.options.push_back(t);
    }
    d.chosen = r.action;
    d.heuristic = r.step.heuristicIndex;
    d.pinned = r.step.pinnedIndex >= 0;
    d.msBefore = r.before.ms;
    d.msAfter = r.outcomes[r.action].ms;
    for (int i = 0; i < kStaticDimensionCount; ++i) {
        d.dimensionsBefore[i] = r.before.dimensions[i];
        d.dimensionsAfter[i] = r.outcomes[r.action].dimensions[i];
    }
    d.reward = r.reward;
    d.rationale = rationale(r);
    return d;
}

Optimizer::Optimizer(const schedule::Problem &problem, Evaluator &evaluator, const PolicySource &policy,
                     OptimizeOptions options)
    : m_problem(problem), m_evaluator(evaluator), m_policy(policy), m_options(std::move(options)),
      m_env(problem, evaluator, m_options.pins), m_rng(m_options.seed)
{
}

Status Optimizer::start(TraceStage parse)
{
    m_cancel = false;
    m_rng.seed(m_options.seed);
    m_trace = {};
    m_trace.arch = m_problem.arch.name;
    m_trace.precision = schedule::precisionName(m_problem.precision);
    m_trace.policy = m_policy.name();
    m_trace.seed = m_options.seed;
    m_trace.mode = m_options.pick == Pick::Greedy ? "greedy" : "sample";
    m_trace.budget = m_options.budget;
    for (const auto &p : m_options.pins)
        m_trace.pins.push_back(p.text);
    parse.agent = AgentKind::Parse;
    m_trace.parse = std::move(parse);
    m_decideMs = 0;
    return m_env.reset();
}

Status Optimizer::step()
{
    if (m_env.done())
        return makeError(ErrorKind::InvalidArgument, "every decision is taken");
    if (m_cancel)
        return cancelled();
    const auto t0 = std::chrono::steady_clock::now();
    auto r = takeStep(m_env, m_policy, m_options.pick, m_rng, true);
    if (!r.ok())
        return r.error();
    m_trace.decisions.push_back(traceDecision(*r));
    m_trace.decisions.back().schedule = m_env.schedule();
    m_decideMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return Ok{};
}

Result<Trace> Optimizer::run(TraceStage parse, const std::function<void(const OptimizeProgress &)> &progress)
{
    if (auto st = start(std::move(parse)); !st)
        return st.error();
    return finish(progress);
}

Result<Trace> Optimizer::finish(const std::function<void(const OptimizeProgress &)> &progress)
{
    while (m_env.done() == false) {
        const AgentKind agent = m_env.step().agent;
        if (auto st = step(); !st)
            return st.error();
        if (progress)
            progress({"decide", agent, static_cast<int>(m_trace.decisions.size()), 0, m_options.budget});
    }
    m_trace.fusionNotes = m_env.fusionNotes();
    m_trace.decideMs = m_decideMs;
    if (m_cancel)
        return cancelled();
    integrate(progress);
    if (m_cancel)
        return cancelled();
    if (progress)
        progress({"done", AgentKind::Stitch, static_cast<int>(m_trace.decisions.size()),
                  static_cast<int>(m_trace.candidates.size()), m_options.budget});
    return m_trace;
}

void Optimizer::integrate(const std::function<void(const OptimizeProgress &)> &progress)
{
    // The candidates: the agents' schedule, then episodes sampled from the policy (budget search).
    struct Candidate {
        std::string origin;
        schedule::Schedule schedule;
        Score estimate;
    };
    std::vector<Candidate> candidates{{"agents", m_env.schedule(), m_env.current()}};
    std::set<std::string> seen{schedule::toJson(m_env.schedule())};
    // Half the budget deviates from the agents' episode at one decision, to the option their policy
    // ranks next (the likeliest first; beam search of width one over the agents' top choices), and
    // lets them decide the rest; the other half samples whole episodes from the policy, but for its
    // last slot (budgets of 4 and more, no pins): the heuristics' schedule.
    struct Deviation {
        std::size_t step;
        int option;
        double probability;
    };
    std::vector<Deviation> deviations;
    for (std::size_t d = 0; d < m_trace.decisions.size(); ++d) {
        const TraceDecision &td = m_trace.decisions[d];
        if (td.pinned)
            continue;
        for (std::size_t o = 0; o < td.options.size(); ++o)
            if (td.options[o].legal && static_cast<int>(o) != td.chosen)
                deviations.push_back({d, static_cast<int>(o), td.options[o].probability});
    }
    std::stable_sort(deviations.begin(), deviations.end(),
                     [](const Deviation &a, const Deviation &b) { return a.probability > b.probability; });
    const int deviationBudget = (m_options.budget - 1 + 1) / 2;
    std::mt19937_64 searchRng(m_options.seed ^ 0x9e3779b97f4a7c15ULL);
    for (int i = 1; i < m_options.budget && !m_cancel; ++i) {
        Environment env(m_problem, m_evaluator, m_options.pins);
        if (!env.reset().ok())
            continue;
        std::string origin;
        bool ok = true;
        if (i == m_options.budget - 1 && m_options.budget >= 4 && m_options.pins.empty()) {
            // The last slot: the default schedule (the heuristics', checked by the model: the default
            // `rubric` and the studio show), a strong prior the search then has to beat, not a value
            // the agents must reach.
            if (auto h = rubric::modelCheckedDefault(m_problem); h && seen.insert(schedule::toJson(*h)).second)
                candidates.push_back({"heuristics", *h, m_evaluator.estimate(m_problem, *h)});
            if (progress)
                progress({"search", AgentKind::Stitch, static_cast<int>(m_trace.decisions.size()), i + 1, m_options.budget});
            continue;
        }
        if (i <= deviationBudget && static_cast<std::size_t>(i - 1) < deviations.size()) {
            const Deviation &dev = deviations[static_cast<std::size_t>(i - 1)];
            for (std::size_t d = 0; d < dev.step && ok; ++d)
                ok = env.apply(m_trace.decisions[d].chosen).ok();
            ok = ok && env.apply(dev.option).ok();
            origin = m_trace.decisions[dev.step].id + "=" + m_trace.decisions[dev.step].options[dev.option].text;
            std::mt19937_64 unused(0);
            ok = ok && rollout(env, m_policy, Pick::Greedy, unused, {}, &m_cancel).ok();
        } else {
            origin = "sample " + std::to_string(i);
            ok = rollout(env, m_policy, Pick::Sample, searchRng, {}, &m_cancel).ok();
        }
        if (ok && seen.insert(schedule::toJson(env.schedule())).second)
            candidates.push_back({origin, env.schedule(), env.current()});
        if (progress)
            progress({"search", AgentKind::Stitch, static_cast<int>(m_trace.decisions.size()), i + 1, m_options.budget});
    }
    std::stable_sort(candidates.begin() + 1, candidates.end(), [](const Candidate &a, const Candidate &b) {
        return a.estimate.ok && (!b.estimate.ok || a.estimate.ms < b.estimate.ms);
    });
    // Confirm the agents' schedule and the best few others with the full model.
    if (progress)
        progress({"integrate", AgentKind::Stitch, static_cast<int>(m_trace.decisions.size()),
                  static_cast<int>(candidates.size()), m_options.budget});
    int best = -1;
    Score bestScore;
    const int confirmTop = m_options.confirmTop < 0 ? static_cast<int>(candidates.size()) : m_options.confirmTop;
    // The confirmations side by side first (NVRTC builds in parallel; a measurement's GPU runs one
    // at a time), then read back in order from the evaluator's cache.
    std::vector<const schedule::Schedule *> toConfirm;
    for (std::size_t i = 0; i < candidates.size(); ++i)
        if (static_cast<int>(i) <= confirmTop && candidates[i].estimate.ok)
            toConfirm.push_back(&candidates[i].schedule);
    if (!m_cancel)
        m_evaluator.confirmAll(m_problem, toConfirm, m_options.threads);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        TraceCandidate tc{candidates[i].origin, describeSchedule(candidates[i].schedule), candidates[i].estimate.ms, {}, false};
        if (static_cast<int>(i) <= confirmTop && candidates[i].estimate.ok && !m_cancel) {
            Score s = m_evaluator.confirm(m_problem, candidates[i].schedule);
            if (s.hardViolation)
                resolveConflicts(candidates[i].schedule, s);
            if (s.ok) {
                tc.confirmedMs = s.ms;
                tc.measured = s.measured;
                if (!s.hardViolation && (best < 0 || s.ms < bestScore.ms)) {
                    best = static_cast<int>(i);
                    bestScore = s;
                }
            }
        }
        m_trace.candidates.push_back(tc);
    }
    // The input as written: the generic schedule (one thread per output, as lifted).
    const schedule::Schedule input = rubric::genericSchedule(m_problem);
    const Score inputScore = m_evaluator.confirm(m_problem, input);
    m_trace.inputMs = inputScore.ok ? inputScore.ms : m_env.current().baselineMs;
    m_trace.candidates.push_back({"input as written", describeSchedule(input), m_env.current().baselineMs,
                                  inputScore.ok ? std::optional<double>(inputScore.ms) : std::nullopt,
                                  inputScore.measured});
    std::string why;
    if (best < 0 || (inputScore.ok && bestScore.ms >= inputScore.ms)) {
        m_trace.keptInput = true;
        m_trace.schedule = input;
        m_trace.finalMs = inputScore.ms;
        m_trace.finalMeasured = inputScore.measured;
        m_trace.finalCompiled = inputScore.compiled;
        why = best < 0 ? "no candidate could be confirmed" : "no candidate is predicted faster than the input as written";
    } else {
        m_trace.schedule = candidates[best].schedule;
        m_trace.finalMs = bestScore.ms;
        m_trace.finalMeasured = bestScore.measured;
        m_trace.finalCompiled = bestScore.compiled;
    }
    TraceStage &st = m_trace.integrate;
    st.agent = AgentKind::Stitch;
    const std::string chosen = m_trace.keptInput ? "the input as written" : candidates[best].origin;
    st.summary = std::to_string(m_trace.schedule.groups.size()) + " kernel" +
                 (m_trace.schedule.groups.size() == 1 ? "" : "s") + ", " + chosen + ": " + msText(m_trace.finalMs) +
                 (m_trace.finalMeasured ? " measured" : m_trace.finalCompiled ? " by the model (NVRTC build)" : " estimated") +
                 ", input as written " + msText(m_trace.inputMs) + " (" +
                 fixedText(m_trace.inputMs / std::max(m_trace.finalMs, 1e-12), 2) + "x)";
    if (!why.empty())
        st.notes.push_back("kept the input as written: " + why);
    st.notes.push_back(std::to_string(candidates.size()) + " candidate schedule" + (candidates.size() == 1 ? "" : "s") +
                       " (" + std::to_string(std::max(m_options.budget, 1)) + " episodes), " +
                       std::to_string(std::min<int>(static_cast<int>(candidates.size()), confirmTop + 1)) +
                       " confirmed by the full model");
    for (const auto &c : m_trace.conflicts)
        st.notes.push_back("conflict in " + c.group + ": " + c.violation + " -> " + c.decision + " " + c.from + " -> " +
                           c.to + (c.resolved ? "" : " (not resolved)"));
}

void Optimizer::resolveConflicts(schedule::Schedule &sched, Score &score)
{
    // A hard limit that only the compiled program shows (registers, spills): Stitch sends it back to
    // the agents, the last decisions first, each trying its other legal values in the order of its
    // policy's probabilities, until the compiled program keeps every limit.
    constexpr int kTries = 16;
    int tries = 0;
    for (auto it = m_trace.decisions.rbegin(); it != m_trace.decisions.rend() && tries < kTries; ++it) {
        if (it->pinned || it->key == "fuse" || it->key == "strategy")
            continue;
        schedule::KernelGroup *g = nullptr;
        for (auto &group : sched.groups)
            if (group.name == it->group)
                g = &group;
        const schedule::DecisionDef *def = g ? schedule::findDecision(g->strategy, it->key) : nullptr;
        if (!def)
            continue;
        const auto analysis = schedule::analyzeGroup(m_problem.graph, g->ops, g->strategy);
        if (!analysis.ok())
            continue;
        std::vector<int> order;
        for (std::size_t i = 0; i < it->options.size(); ++i)
            if (it->options[i].legal && static_cast<int>(i) != it->chosen)
                order.push_back(static_cast<int>(i));
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return it->options[a].probability > it->options[b].probability; });
        for (int i : order) {
            if (++tries > kTries)
                break;
            auto v = def->parseValue(it->options[i].text);
            if (!v.ok())
                continue;
            schedule::KernelGroup changed = *g;
            changed.set(it->key, *v);
            auto done = schedule::completeGroup(*analysis, changed, m_problem, {it->key});
            if (!done)
                continue;
            schedule::Schedule trial = sched;
            for (auto &group : trial.groups)
                if (group.name == it->group)
                    group = *done;
            Score s = m_evaluator.confirm(m_problem, trial);
            if (s.ok && !s.hardViolation) {
                m_trace.conflicts.push_back({it->group, score.hardLimitSentence, it->agent, it->id,
                                             it->options[it->chosen].text, it->options[i].text, true});
                sched = trial;
                score = s;
                return;
            }
        }
    }
    m_trace.conflicts.push_back({sched.groups.empty() ? "" : sched.groups.front().name, score.hardLimitSentence,
                                 AgentKind::Stitch, "", "", "", false});
}

} // namespace stitch::agents
