#include "core/agents/MeasuredSets.h"

#include "core/agents/Features.h"
#include "core/bench/Cases.h"
#include "core/storage/TextFile.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace stitch::agents {

namespace {

/// Problem and schedule, independent of the graph's name (the bench's canonical programs and the
/// generated families name their graphs differently but their ops alike).
std::string storeKey(const schedule::Problem &problem, const schedule::Schedule &schedule)
{
    std::string key = problem.arch.name + "|" + schedule::precisionName(problem.precision);
    for (const auto &[n, v] : problem.sizes)
        key += "|" + n + "=" + std::to_string(v);
    for (const auto &op : problem.graph.ops())
        key += "|" + op.name + ":" + op.output.name;
    for (const auto &g : schedule.groups)
        key += "\n" + schedule::describe(g);
    return key;
}

/// The candidate's group with exactly these ops.
const schedule::KernelGroup *sameOps(const schedule::Schedule &s, const std::vector<std::string> &ops)
{
    for (const auto &g : s.groups)
        if (g.ops == ops)
            return &g;
    return nullptr;
}

const schedule::KernelGroup *holding(const schedule::Schedule &s, const std::string &op)
{
    for (const auto &g : s.groups)
        if (std::find(g.ops.begin(), g.ops.end(), op) != g.ops.end())
            return &g;
    return nullptr;
}

} // namespace

Result<BenchProblem> benchProblem(const std::string &family, const std::string &shape)
{
    auto c = bench::makeCase(family, shape);
    if (!c)
        return c.error();
    return BenchProblem{std::move(c->graph), std::move(c->sizes), c->precision};
}

void MeasuredStore::add(const rubric::CalibrationRow &row, const std::string &archName)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(archName);
    auto bp = benchProblem(row.family, row.shape);
    if (!arch || !bp.ok() || !(row.measuredMs > 0))
        return;
    const schedule::Problem problem{bp->graph, bp->sizes, *arch, bp->precision};
    auto base = schedule::defaultSchedule(problem);
    if (!base.ok())
        return;
    auto s = schedule::applyDescriptions(*base, row.schedule);
    if (!s.ok())
        return;
    m_times[storeKey(problem, *s)].push_back(row.measuredMs);
}

Result<MeasuredStore> MeasuredStore::loadFolder(const std::string &folder, const std::string &arch)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        return makeError(ErrorKind::Io, folder + ": not a folder of measurements");
    MeasuredStore store;
    std::vector<std::string> files;
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (isCsvPath(it->path().string()))
            files.push_back(it->path().string());
    std::sort(files.begin(), files.end());
    for (const auto &f : files) {
        auto rows = rubric::readCalibration(f);
        if (!rows.ok())
            continue; // not a calibration CSV
        ++store.m_files;
        for (const auto &r : *rows)
            store.add(r, arch);
    }
    return store;
}

std::optional<double> MeasuredStore::lookup(const schedule::Problem &problem, const schedule::Schedule &schedule) const
{
    auto it = m_times.find(storeKey(problem, schedule));
    if (it == m_times.end())
        return std::nullopt;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double candidateLogLikelihood(Environment &env, const PolicySource &policy, const schedule::Schedule &candidate)
{
    const double unreachable = -std::numeric_limits<double>::infinity();
    if (!env.reset().ok())
        return unreachable;
    double logp = 0;
    while (!env.done()) {
        const DecisionStep &step = env.step();
        int option = -1;
        if (step.key == "fuse") {
            const auto *g = holding(candidate, step.subject);
            const bool fused = g && std::find(g->ops.begin(), g->ops.end(), step.groupName) != g->ops.end();
            option = fused ? 0 : 1;
        } else {
            const auto &current = env.schedule().groups[step.group];
            const auto *g = sameOps(candidate, current.ops);
            if (!g)
                return unreachable;
            for (std::size_t i = 0; i < step.options.size(); ++i) {
                const bool match = step.key == "strategy" ? step.options[i].value == static_cast<int>(g->strategy)
                                                          : step.options[i].value == g->value(step.key);
                if (match)
                    option = static_cast<int>(i);
            }
        }
        const auto mask = step.mask();
        if (option < 0 || !mask[option])
            return unreachable;
        const PolicyOutput out = policy.evaluate(step, observe(env));
        logp += std::log(std::max(out.probabilities[option], 1e-300));
        if (!env.apply(option).ok())
            return unreachable;
    }
    return env.schedule() == candidate ? logp : unreachable;
}

Result<std::vector<MeasuredSetRank>> rankMeasuredSets(const std::string &file, const PolicySource &policy,
                                                      Evaluator &evaluator, const std::string &archName)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(archName);
    if (!arch)
        return makeError(ErrorKind::InvalidArgument, "unknown architecture " + archName);
    auto rows = rubric::readCalibration(file);
    if (!rows.ok())
        return rows.error();
    std::map<std::pair<std::string, std::string>, std::vector<const rubric::CalibrationRow *>> sets;
    for (const auto &r : *rows)
        if (r.measuredMs > 0)
            sets[{r.family, r.shape}].push_back(&r);
    std::vector<MeasuredSetRank> out;
    for (const auto &[key, members] : sets) {
        auto bp = benchProblem(key.first, key.second);
        if (!bp.ok())
            continue;
        const schedule::Problem problem{bp->graph, bp->sizes, *arch, bp->precision};
        auto base = schedule::defaultSchedule(problem);
        if (!base.ok())
            continue;
        MeasuredSetRank rank{file, key.first, key.second, static_cast<int>(members.size()), 0, 0, 0, {}};
        double bestLogp = -std::numeric_limits<double>::infinity(), bestEstimate = 0;
        rank.bestMs = std::numeric_limits<double>::infinity();
        for (const auto *r : members) {
            rank.bestMs = std::min(rank.bestMs, r->measuredMs);
            auto s = schedule::applyDescriptions(*base, r->schedule);
            if (!s.ok())
                continue;
            Environment env(problem, evaluator);
            const double logp = candidateLogLikelihood(env, policy, *s);
            if (!std::isfinite(logp))
                continue;
            ++rank.reachable;
            const double estimate = evaluator.estimate(problem, *s).ms;
            if (logp > bestLogp + 1e-9 || (std::abs(logp - bestLogp) <= 1e-9 && estimate < bestEstimate)) {
                bestLogp = logp;
                bestEstimate = estimate;
                rank.firstMs = r->measuredMs;
                rank.first = r->schedule;
            }
        }
        if (rank.reachable > 0)
            out.push_back(rank);
    }
    return out;
}

} // namespace stitch::agents
