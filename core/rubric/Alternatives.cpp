#include "core/rubric/Alternatives.h"

#include "core/schedule/GroupAnalysis.h"

#include <limits>

namespace stitch::rubric {

std::vector<GroupDecisions> describeDecisions(const schedule::Schedule &sched, const schedule::Problem &problem,
                                              const Rubric *rubric)
{
    const double none = std::numeric_limits<double>::quiet_NaN();
    auto estimate = [&](const schedule::Schedule &s) {
        if (!rubric)
            return none;
        auto scored = scoreSchedule(*rubric, problem, s, nullptr);
        return scored.ok() ? scored->report.predictedMs : none;
    };
    const double current = estimate(sched);
    std::vector<GroupDecisions> out;
    for (std::size_t gi = 0; gi < sched.groups.size(); ++gi) {
        const schedule::KernelGroup &g = sched.groups[gi];
        auto analysis = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
        if (!analysis.ok())
            continue;
        GroupDecisions gd{g.name, schedule::strategyName(g.strategy), {}, current};
        for (const auto &d : schedule::decisionDefs(g.strategy)) {
            DecisionRow row{d.key, schedule::categoryName(d.category), d.help, g.value(d.key),
                            schedule::legalValues(*analysis, g, d.key, problem), {}};
            for (const auto &o : row.options) {
                if (!o.legal || o.value == row.value) {
                    row.estimatedMs.push_back(o.value == row.value ? current : none);
                    continue;
                }
                schedule::Schedule alternative = sched;
                alternative.groups[gi].set(d.key, o.value);
                row.estimatedMs.push_back(estimate(alternative));
            }
            gd.rows.push_back(std::move(row));
        }
        out.push_back(std::move(gd));
    }
    return out;
}

} // namespace stitch::rubric
