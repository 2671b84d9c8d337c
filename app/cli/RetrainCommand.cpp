// `stitchcuda retrain`: the agents learn from traces with the user's overrides (Retraining.h).
#include "Commands.h"

#include "core/agents/Checkpoints.h"
#include "core/agents/Retraining.h"

#include <cstdio>
#include <iostream>

namespace stitch::cli {

int runRetrain(const RetrainOptions &options)
{
    agents::RetrainOptions r;
    r.traces = options.traces;
    r.arch = options.arch;
    r.updates = options.updates;
    r.seed = options.seed;
    r.baselines = options.baselines;
    r.heldOut = !options.noHeldOut;
    r.csv = options.csv;
    r.checkpoint = options.checkpoint;
    if (r.checkpoint.empty()) {
        auto found = agents::findCheckpoint(options.arch);
        if (!found) {
            std::cerr << "stitchcuda: no trained agents for " << options.arch << ": give --checkpoint\n";
            return 2;
        }
        r.checkpoint = *found;
    }
    r.out = options.out.empty() ? r.checkpoint : options.out;
    std::fprintf(stderr, "retraining %s from %zu trace%s (%d updates) -> %s\n", r.checkpoint.c_str(), r.traces.size(),
                 r.traces.size() == 1 ? "" : "s", r.updates, r.out.c_str());
    auto report = agents::retrain(r);
    if (!report.ok()) {
        std::cerr << "stitchcuda: " << report.error().message << "\n";
        return report.error().kind == ErrorKind::Io || report.error().kind == ErrorKind::Parse ? 2 : 1;
    }
    if (report->pins.empty())
        std::printf("no overrides in the traces: PPO only\n");
    for (const auto &p : report->pins)
        std::printf("%s=%s: the pinned program %s (%.4f ms against the agents' %.4f ms); p %.3f -> %.3f\n",
                    p.decision.c_str(), p.value.c_str(), p.won ? "won" : "lost, not imitated", p.pinnedMs, p.agentsMs,
                    p.before, p.after);
    if (r.heldOut)
        std::printf("held out (greedy / search baseline, geometric mean): %.3f -> %.3f (lowest %.3f -> %.3f)\n",
                    report->heldOutBefore.geomean, report->heldOutAfter.geomean, report->heldOutBefore.lowest,
                    report->heldOutAfter.lowest);
    std::printf("%d updates in %.0f s; wrote %s\n", report->updates, report->seconds, r.out.c_str());
    return 0;
}

} // namespace stitch::cli
