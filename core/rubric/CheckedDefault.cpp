#include "core/rubric/CheckedDefault.h"

#include "core/rubric/PerfModel.h"

#include <cstdio>

namespace stitch::rubric {

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
    return *chosen;
}

} // namespace stitch::rubric
