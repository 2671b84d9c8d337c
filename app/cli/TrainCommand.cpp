// `stitchcuda train`: PPO on generated problems (core/agents/Training.h), a progress bar, the
// reward and loss curves as CSV, a resumable checkpoint.
#include "Commands.h"
#include "LocalGpu.h"

#include "core/agents/Training.h"

#include <cstdio>
#include <iostream>

namespace stitch::cli {

int runTrain(const TrainOptions &options)
{
    agents::TrainOptions t;
    t.arch = options.arch;
    t.episodes = options.episodes;
    t.episodesPerUpdate = options.episodesPerUpdate;
    t.seed = options.seed;
    t.checkpoint = options.checkpoint.empty() ? options.arch + ".agents" : options.checkpoint;
    t.resume = options.resume;
    t.csv = options.csv.empty() ? t.checkpoint + ".csv" : options.csv;
    t.sparseOnly = options.sparseOnly;
    t.trainingProblems = options.problems;
    t.command = options.command;
    t.evalEvery = options.evalEvery;
    t.fullModel = options.fullModel || options.measure;
    // --measure: the final rewards and the held-out figure timed on this GPU (GpuTimes); its own
    // NVRTC builds, since the trainer's full model keeps its compile cache inside train().
    rubric::CompileCache measureCache(std::nullopt, {}, 256);
    LocalGpu gpu;
    if (options.measure) {
        if (const int failed = openMeasuringGpu(options.arch, &measureCache, false, gpu))
            return failed;
        t.measured = gpu.times.get();
        std::fprintf(stderr, "final rewards measured on %s\n", gpu.name.c_str());
    }
    t.init = options.init;
    t.baselines = options.baselines;
    std::fprintf(stderr, "training the agents for %s: %d episodes, seed %llu -> %s (curves: %s)\n", t.arch.c_str(),
                 t.episodes, static_cast<unsigned long long>(t.seed), t.checkpoint.c_str(), t.csv.c_str());
    agents::HeldOutFigure heldOut;
    if (t.evalEvery > 0)
        std::fprintf(stderr, "the held-out problems' search baselines (%s)...\n",
                     t.baselines.empty() ? "in memory" : t.baselines.c_str());
    auto summary = agents::train(t, [&](const agents::TrainProgress &p) {
        const int width = 30;
        const int filled = p.episodes > 0 ? width * p.episode / p.episodes : 0;
        if (p.heldOut)
            heldOut = *p.heldOut;
        std::fprintf(stderr, "\r[%s%s] %d/%d episodes  final reward %+.3f  kl %.4f  entropy %.3f  held out %.3f  %.0f s",
                     std::string(static_cast<std::size_t>(filled), '#').c_str(),
                     std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), p.episode, p.episodes,
                     p.meanFinalReward, p.stats.approxKl, p.stats.entropy, heldOut.geomean, p.seconds);
        std::fflush(stderr);
    });
    std::fprintf(stderr, "\n");
    if (!summary.ok()) {
        std::cerr << "stitchcuda: " << summary.error().message << "\n";
        return summary.error().kind == ErrorKind::Cancelled ? 1 : 2;
    }
    std::printf("trained %d episodes (%d updates) in %.0f s; last mean final reward %+.3f; checkpoint %s\n",
                summary->episodes, summary->updates, summary->seconds, summary->lastMeanFinalReward,
                t.checkpoint.c_str());
    if (gpu.times)
        std::printf("%d programs measured on %s (%d failed to build or run)\n", gpu.times->measurements(),
                    gpu.name.c_str(), gpu.times->failures());
    return 0;
}

} // namespace stitch::cli
