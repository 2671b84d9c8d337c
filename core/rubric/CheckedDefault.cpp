#include "core/rubric/CheckedDefault.h"

#include "core/rubric/PerfModel.h"

#include <cstdio>
#include <string>

namespace stitch::rubric {

namespace {

/// The block shape of generic group `i` the model predicts fastest: threads_per_row first (flat, or
/// tiles along the innermost dimension, as 2-D launches are), then threads for that shape. `best`
/// is the program's predicted time with the group as it is, updated.
void chooseGenericBlock(const PerfModel &model, const schedule::Problem &problem, schedule::Schedule &chosen,
                        std::size_t i, double &best, std::vector<std::string> *notes)
{
    const schedule::KernelGroup before = chosen.groups[i];
    const double beforeMs = best;
    for (const char *key : {"threads_per_row", "threads"}) {
        const auto *def = schedule::findDecision(schedule::Strategy::Generic, key);
        const schedule::KernelGroup start = chosen.groups[i];
        for (int v : def->candidates) {
            if (v == start.value(key))
                continue;
            schedule::Schedule candidate = chosen;
            candidate.groups[i] = start;
            candidate.groups[i].set(key, v);
            if (!schedule::validateSchedule(candidate, problem))
                continue;
            auto ms = model.predictSchedule(problem, candidate);
            if (ms && *ms < best) {
                best = *ms;
                chosen.groups[i] = candidate.groups[i];
            }
        }
    }
    const schedule::KernelGroup &g = chosen.groups[i];
    if (!notes || g == before)
        return;
    auto shape = [](const schedule::KernelGroup &k) {
        const int threads = k.value("threads"), tpr = k.value("threads_per_row");
        return tpr > 0 ? std::to_string(tpr) + " x " + std::to_string(threads / tpr) + " threads along its last dimension"
                       : std::to_string(threads) + " threads over the flattened domain";
    };
    char text[320];
    std::snprintf(text, sizeof text, "%s: blocks of %s are predicted faster than blocks of %s: %.1f us against %.1f us for the program",
                  g.name.c_str(), shape(g).c_str(), shape(before).c_str(), best * 1e3, beforeMs * 1e3);
    notes->push_back(text);
}

} // namespace

Result<schedule::Schedule> modelCheckedDefault(const schedule::Problem &problem, std::vector<std::string> *notes)
{
    auto chosen = schedule::defaultSchedule(problem);
    if (!chosen)
        return chosen.error();
    const PerfModel model;
    auto best = model.predictSchedule(problem, *chosen);
    if (!best)
        return *chosen; // nothing to weigh it with: the heuristics' schedule as it is
    const schedule::Schedule generic = genericSchedule(problem);
    for (std::size_t i = 0; i < chosen->groups.size(); ++i) {
        schedule::KernelGroup &g = chosen->groups[i];
        if (g.ops.size() != 1 || g.strategy == schedule::Strategy::Generic)
            continue;
        const schedule::KernelGroup *simple = nullptr;
        for (const auto &s : generic.groups)
            if (s.ops == g.ops)
                simple = &s;
        if (!simple)
            continue;
        schedule::Schedule candidate = *chosen;
        candidate.groups[i].strategy = simple->strategy;
        candidate.groups[i].values = simple->values;
        if (!schedule::validateSchedule(candidate, problem))
            continue;
        auto ms = model.predictSchedule(problem, candidate);
        if (!ms || *ms >= *best)
            continue;
        if (notes) {
            char text[256];
            std::snprintf(text, sizeof text, "%s: one thread per output (generic) is predicted faster than the %s kernel: %.1f us against %.1f us for the program",
                          g.name.c_str(), schedule::strategyName(g.strategy), *ms * 1e3, *best * 1e3);
            notes->push_back(text);
        }
        g = candidate.groups[i];
        best = ms;
    }
    for (std::size_t i = 0; i < chosen->groups.size(); ++i)
        if (chosen->groups[i].strategy == schedule::Strategy::Generic)
            chooseGenericBlock(model, problem, *chosen, i, *best, notes);
    return *chosen;
}

} // namespace stitch::rubric
