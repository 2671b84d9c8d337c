#include "core/agents/Evaluator.h"

#include "core/common/Parallel.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace stitch::agents {

std::string problemKey(const schedule::Problem &problem)
{
    std::string key = problem.graph.name() + "|" + problem.arch.name + "|" + schedule::precisionName(problem.precision);
    for (const auto &[n, v] : problem.sizes)
        key += "|" + n + "=" + std::to_string(v);
    for (const auto &op : problem.graph.ops())
        key += "|" + op.name;
    return key;
}

std::string scheduleKey(const schedule::Problem &problem, const schedule::Schedule &s)
{
    std::string key = problemKey(problem);
    key += "|" + s.arch + "|" + schedule::precisionName(s.precision);
    for (const auto &g : s.groups) {
        key += "\n" + g.name + "[" + schedule::strategyName(g.strategy) + "]";
        for (const auto &op : g.ops)
            key += op + ",";
        for (const auto &d : schedule::decisionDefs(g.strategy))
            key += std::to_string(g.value(d.key)) + ",";
    }
    return key;
}

Score Evaluator::scoreWith(const schedule::Problem &problem, const schedule::Schedule &schedule,
                           rubric::CompileCache *cache)
{
    Score s;
    auto scored = rubric::scoreSchedule(m_rubric, problem, schedule, cache);
    if (!scored.ok()) {
        s.error = scored.error().message;
        return s;
    }
    const rubric::RubricReport &r = scored->report;
    s.ok = std::isfinite(r.predictedMs) && r.predictedMs > 0;
    if (!s.ok)
        s.error = "the performance model gave no time";
    s.ms = r.predictedMs;
    s.baselineMs = r.baselinePredictedMs;
    s.compiled = scored->compiled != nullptr;
    s.hardViolation = r.hardViolation;
    for (int d = 0; d < kStaticDimensionCount; ++d) {
        const rubric::RubricScore *score = r.programScore(kStaticDimensions[d]);
        s.dimensions[d] = score ? score->score : 5.0;
    }
    if (const rubric::RubricScore *hard = r.programScore("hard_limits"); hard && hard->hardViolation)
        s.hardLimitSentence = hard->sentence;
    return s;
}

Score Evaluator::estimate(const schedule::Problem &problem, const schedule::Schedule &schedule)
{
    const std::string key = scheduleKey(problem, schedule);
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_estimates.find(key); it != m_estimates.end()) {
            ++m_hits;
            return it->second;
        }
    }
    Score s = scoreWith(problem, schedule, nullptr);
    std::lock_guard lock(m_mutex);
    ++m_misses;
    m_estimates.emplace(key, s);
    return s;
}

Score Evaluator::confirm(const schedule::Problem &problem, const schedule::Schedule &schedule)
{
    const std::string key = scheduleKey(problem, schedule);
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_confirmed.find(key); it != m_confirmed.end())
            return it->second;
    }
    Score s = m_cache ? scoreWith(problem, schedule, m_cache) : estimate(problem, schedule);
    if (s.ok && m_measured) {
        if (auto ms = m_measured->lookup(problem, schedule)) {
            s.measured = true;
            if (std::isfinite(*ms)) {
                s.ms = *ms;
            } else {
                s.ok = false;
                s.error = m_measured->failure(problem, schedule);
            }
        }
    }
    std::lock_guard lock(m_mutex);
    m_confirmed.emplace(key, s);
    return s;
}

void Evaluator::confirmAll(const schedule::Problem &problem, const std::vector<const schedule::Schedule *> &schedules,
                           int threads)
{
    if (threads <= 0)
        threads = static_cast<int>(std::min(16u, std::max(1u, std::thread::hardware_concurrency())));
    parallelFor(schedules.size(), threads, [&](std::size_t i) { confirm(problem, *schedules[i]); });
}

std::size_t Evaluator::estimates() const
{
    std::lock_guard lock(m_mutex);
    return m_misses;
}

std::size_t Evaluator::cacheHits() const
{
    std::lock_guard lock(m_mutex);
    return m_hits;
}

} // namespace stitch::agents
