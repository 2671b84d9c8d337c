#include "core/agents/Search.h"

#include "core/agents/Environment.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <set>

namespace stitch::agents {

using schedule::KernelGroup;

std::vector<std::vector<KernelGroup>> fusionVariants(const ir::Graph &graph, std::size_t limit)
{
    std::vector<std::vector<KernelGroup>> out;
    std::set<std::string> seen;
    // Depth-first over the answers: a walk that runs past the answers given fuses (greedy) and
    // reports how many fitting edges it met, so each prefix is extended with "no" as well.
    std::function<void(std::vector<bool>)> visit = [&](std::vector<bool> answers) {
        if (out.size() >= limit)
            return;
        std::size_t asked = 0;
        auto groups = fuseWithAnswers(graph, answers, &asked);
        std::string key;
        for (const auto &g : groups) {
            key += "|";
            for (const auto &op : g.ops)
                key += op + ",";
        }
        if (seen.insert(key).second)
            out.push_back(groups);
        for (std::size_t i = answers.size(); i < asked && out.size() < limit; ++i) {
            std::vector<bool> next = answers;
            next.resize(i, true);
            next.push_back(false);
            visit(next);
        }
    };
    visit({});
    return out;
}

SearchResult searchBaseline(const schedule::Problem &problem, Evaluator &evaluator, int evaluations,
                            std::uint64_t seed, int confirmTop)
{
    const auto start = std::chrono::steady_clock::now();
    SearchResult result;
    std::map<std::string, std::pair<schedule::Schedule, Score>> scored;
    auto evaluate = [&](const schedule::Schedule &s) -> const Score & {
        const std::string key = schedule::toJson(s);
        auto it = scored.find(key);
        if (it == scored.end())
            it = scored.emplace(key, std::make_pair(s, evaluator.estimate(problem, s))).first;
        return it->second.second;
    };
    // The fusion variants, each group at the heuristics' values.
    struct Variant {
        schedule::Schedule schedule;
        std::vector<schedule::GroupAnalysis> analyses;
    };
    std::vector<Variant> variants;
    for (auto &groups : fusionVariants(problem.graph)) {
        Variant v;
        v.schedule.arch = problem.arch.name;
        v.schedule.precision = problem.precision;
        bool ok = true;
        for (auto &g : groups) {
            auto a = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
            if (!a.ok() || !schedule::applyHeuristics(*a, g, problem).ok()) {
                ok = false;
                break;
            }
            v.analyses.push_back(std::move(*a));
            v.schedule.groups.push_back(g);
        }
        if (ok) {
            evaluate(v.schedule);
            variants.push_back(std::move(v));
        }
    }
    if (variants.empty())
        return result;
    std::uint32_t draw = static_cast<std::uint32_t>(seed);
    auto randomPhase = [&](int until) {
        for (int misses = 0; static_cast<int>(scored.size()) < until && misses < 50;) {
            const Variant &v = variants[draw % variants.size()];
            schedule::Schedule s = v.schedule;
            for (std::size_t g = 0; g < s.groups.size(); ++g) {
                auto one = schedule::sampleLegal(v.analyses[g], s.groups[g], problem, 1, ++draw * 2654435761u);
                if (!one.empty())
                    s.groups[g] = one.front();
            }
            const std::size_t before = scored.size();
            evaluate(s);
            misses = scored.size() == before ? misses + 1 : 0;
        }
    };
    randomPhase(evaluations * 3 / 5);
    // Greedy local search from the best three.
    auto ranked = [&] {
        std::vector<const std::pair<schedule::Schedule, Score> *> r;
        for (const auto &[k, v] : scored)
            if (v.second.ok && !v.second.hardViolation)
                r.push_back(&v);
        std::sort(r.begin(), r.end(), [](auto *a, auto *b) { return a->second.ms < b->second.ms; });
        return r;
    };
    auto starts = ranked();
    starts.resize(std::min<std::size_t>(starts.size(), 3));
    std::vector<schedule::Schedule> seeds;
    for (auto *s : starts)
        seeds.push_back(s->first);
    for (schedule::Schedule current : seeds) {
        Score currentScore = evaluate(current);
        for (bool improved = true; improved && static_cast<int>(scored.size()) < evaluations;) {
            improved = false;
            for (std::size_t g = 0; g < current.groups.size(); ++g) {
                auto a = schedule::analyzeGroup(problem.graph, current.groups[g].ops, current.groups[g].strategy);
                if (!a.ok())
                    continue;
                for (const auto &d : schedule::decisionDefs(current.groups[g].strategy))
                    for (int v : d.candidates) {
                        if (v == current.groups[g].value(d.key) || static_cast<int>(scored.size()) >= evaluations)
                            continue;
                        KernelGroup changed = current.groups[g];
                        changed.set(d.key, v);
                        auto done = schedule::completeGroup(*a, changed, problem, {d.key}, 2000);
                        if (!done)
                            continue;
                        schedule::Schedule trial = current;
                        trial.groups[g] = *done;
                        const Score s = evaluate(trial);
                        if (s.ok && !s.hardViolation && s.ms < currentScore.ms) {
                            current = trial;
                            currentScore = s;
                            improved = true;
                        }
                    }
            }
        }
    }
    randomPhase(evaluations);
    result.evaluations = static_cast<int>(scored.size());
    auto best = ranked();
    if (best.empty())
        return result;
    result.best = best.front()->first;
    result.bestEstimate = best.front()->second;
    result.bestScore = result.bestEstimate;
    // The best few by the estimate, and the heuristics' schedule (the first variant), confirmed.
    std::vector<const std::pair<schedule::Schedule, Score> *> confirm(
        best.begin(), best.begin() + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(best.size()), confirmTop));
    if (confirmTop > 0)
        confirm.push_back(&scored.at(schedule::toJson(variants.front().schedule)));
    std::vector<const schedule::Schedule *> schedules;
    for (const auto *candidate : confirm)
        schedules.push_back(&candidate->first);
    evaluator.confirmAll(problem, schedules);
    bool confirmedAny = false;
    for (const auto *candidate : confirm) {
        const Score s = evaluator.confirm(problem, candidate->first);
        result.confirmed += s.ok ? 1 : 0;
        if (s.ok && !s.hardViolation && (!confirmedAny || s.ms < result.bestScore.ms)) {
            result.best = candidate->first;
            result.bestScore = s;
            result.bestEstimate = candidate->second;
            confirmedAny = true;
        }
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

} // namespace stitch::agents
