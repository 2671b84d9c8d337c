// `stitchcuda evaluate-agents`: the agents against the search baseline on the held-out problems,
// beside today's heuristics and the untrained networks (the table in docs/AGENTS.md).
#include "Commands.h"
#include "LocalGpu.h"

#include "core/agents/Checkpoints.h"
#include "core/agents/MeasuredSets.h"
#include "core/agents/Features.h"
#include "core/agents/Optimizer.h"
#include "core/agents/Problems.h"
#include "core/agents/Search.h"
#include "core/rubric/Calibration.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace stitch::cli {

namespace {

/// The greedy episode's schedule under `policy`, confirmed.
agents::Score greedy(const schedule::Problem &problem, agents::Evaluator &evaluator, const agents::PolicySource &policy,
                     double *decideMs = nullptr)
{
    const auto t0 = std::chrono::steady_clock::now();
    const auto g = agents::greedySchedule(problem, evaluator, policy);
    if (decideMs)
        *decideMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return g ? evaluator.confirm(problem, g->first) : agents::Score{};
}

/// Each measured set: the candidate the agents rank first (their log-likelihood of it) against the
/// set's measured best.
int rankMeasured(const EvaluateAgentsOptions &options, const agents::PolicySource &policy, agents::Evaluator &evaluator,
                 const std::string &checkpoint)
{
    std::printf("agents: %s; each set's candidates ranked by the agents' log-likelihood (ties: the model)\n\n",
                checkpoint.c_str());
    std::printf("| measured set | candidates (reachable) | measured best | agents' first | best / first |\n");
    std::printf("|---|---|---|---|---|\n");
    double logs = 0;
    int n = 0;
    for (const auto &file : options.measured) {
        auto sets = agents::rankMeasuredSets(file, policy, evaluator, options.arch);
        if (!sets.ok()) {
            // A folder of results holds other CSVs too (clocks, dimensions): said, and passed over.
            std::cerr << "stitchcuda: skipped " << file << ": " << sets.error().message << "\n";
            continue;
        }
        for (const auto &s : *sets) {
            std::printf("| %s %s:%s | %d (%d) | %.4f ms | %.4f ms | %.3f |\n", s.file.c_str(), s.family.c_str(),
                        s.shape.c_str(), s.candidates, s.reachable, s.bestMs, s.firstMs, s.ratio());
            std::fflush(stdout);
            logs += std::log(s.ratio());
            ++n;
        }
    }
    if (n > 0)
        std::printf("| geometric mean over %d sets | | | | %.3f |\n", n, std::exp(logs / n));
    return 0;
}

/// How the compile-free estimate the agents train on and the full model (NVRTC) rank the same
/// schedules: random legal ones of each held-out problem (the heuristics' fusion).
int rankAgreement(const std::vector<agents::ProblemSpec> &specs, const ArchLimits &arch, int count, std::uint64_t seed)
{
    rubric::Rubric rubric;
    rubric::CompileCache cache;
    agents::Evaluator evaluator(rubric, &cache);
    std::printf("| problem | schedules | Spearman rho (estimate vs full model) |\n|---|---|---|\n");
    for (const auto &spec : specs) {
        auto tp = agents::makeProblem(spec, arch);
        if (!tp.ok())
            return 1;
        const schedule::Problem problem = (*tp)->problem();
        auto base = schedule::defaultSchedule(problem);
        if (!base.ok())
            return 1;
        std::vector<double> estimated, full;
        for (int i = 0; i < count; ++i) {
            schedule::Schedule s = *base;
            for (auto &g : s.groups) {
                auto a = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
                if (!a.ok())
                    continue;
                auto one = schedule::sampleLegal(*a, g, problem, 1, static_cast<std::uint32_t>(seed * 7919 + i));
                if (!one.empty())
                    g = one.front();
            }
            const agents::Score e = evaluator.estimate(problem, s), c = evaluator.confirm(problem, s);
            if (e.ok && c.ok) {
                estimated.push_back(e.ms);
                full.push_back(c.ms);
            }
        }
        std::printf("| %s | %zu | %.3f |\n", spec.text().c_str(), estimated.size(), rubric::spearman(estimated, full));
        std::fflush(stdout);
    }
    return 0;
}

} // namespace

int runEvaluateAgents(const EvaluateAgentsOptions &options)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(options.arch);
    if (!arch) {
        std::cerr << "stitchcuda: unknown architecture '" << options.arch << "'\n";
        return 2;
    }
    std::vector<agents::ProblemSpec> specs;
    if (!options.problems.empty()) {
        for (const auto &text : options.problems) {
            auto spec = agents::parseProblemSpec(text);
            if (!spec.ok()) {
                std::cerr << "stitchcuda: " << spec.error().message << "\n";
                return 2;
            }
            specs.push_back(*spec);
        }
    } else {
        for (const auto &s : agents::heldOutSpecs()) {
            bool keep = options.only.empty();
            for (const auto &o : options.only)
                keep = keep || s.text().find(o) != std::string::npos;
            if (keep)
                specs.push_back(s);
        }
    }
    if (options.rankAgreement > 0)
        return rankAgreement(specs, *arch, options.rankAgreement, options.seed);
    auto loaded = agents::loadAgents(options.checkpoint, options.arch);
    if (!loaded.ok()) {
        std::cerr << "stitchcuda: " << loaded.error().message << "\n";
        return 2;
    }
    const agents::NetworkPolicy trained(*loaded->networks, "agents");
    const auto untrainedNets = agents::AgentNetworks::create({agents::observationSize(), loaded->networks->config().hidden,
                                                              options.seed});
    const agents::NetworkPolicy untrained(*untrainedNets, "untrained");
    const agents::HeuristicPolicy heuristics;

    rubric::Rubric rubric;
    rubric::CompileCache cache(std::nullopt, {}, options.measure ? 512 : rubric::CompileCache::kDefaultMemoryEntries);
    LocalGpu gpu;
    if (options.measure) {
        if (const int failed = openMeasuringGpu(options.arch, &cache, !options.measured.empty() || options.noCompile, gpu))
            return failed;
    }
    agents::Evaluator evaluator(rubric, options.noCompile ? nullptr : &cache, gpu.times.get());
    if (!options.measured.empty())
        return rankMeasured(options, trained, evaluator, loaded->path);
    const int confirmTop = options.measure ? options.measuredSearch : 8;
    if (options.measure)
        std::printf("agents: %s (%s); search baseline: %d evaluations by the estimate, the best %d (and the heuristics') "
                    "timed on %s; every time below measured there\n\n",
                    loaded->path.c_str(), loaded->note.c_str(), options.evaluations, confirmTop, gpu.name.c_str());
    else
        std::printf("agents: %s (%s); search baseline: %d evaluations; times by the %s\n\n", loaded->path.c_str(),
                    loaded->note.c_str(), options.evaluations,
                    options.noCompile ? "compile-free estimate" : "full model (NVRTC build) where confirmed");
    std::printf("| problem | search baseline | heuristics | untrained | agents (greedy) | agents, budget %d | decide |\n",
                options.budget);
    std::printf("|---|---|---|---|---|---|---|\n");
    double logH = 0, logU = 0, logG = 0, logB = 0, minG = 1e9, minB = 1e9;
    int n = 0;
    for (const auto &spec : specs) {
        auto tp = agents::makeProblem(spec, *arch);
        if (!tp.ok()) {
            std::cerr << "stitchcuda: " << spec.text() << ": " << tp.error().message << "\n";
            return 1;
        }
        const schedule::Problem problem = (*tp)->problem();
        const agents::SearchResult base =
            agents::searchBaseline(problem, evaluator, options.evaluations, options.seed, confirmTop);
        if (!base.bestScore.ok) {
            std::cerr << "stitchcuda: " << spec.text() << ": the search found no schedule\n";
            return 1;
        }
        auto defaults = schedule::defaultSchedule(problem);
        const agents::Score h = defaults.ok() ? evaluator.confirm(problem, *defaults) : agents::Score{};
        const agents::Score u = greedy(problem, evaluator, untrained);
        double decideMs = 0;
        const agents::Score g = greedy(problem, evaluator, trained, &decideMs);
        agents::OptimizeOptions oo;
        oo.seed = options.seed;
        oo.budget = options.budget;
        agents::Optimizer opt(problem, evaluator, trained, oo);
        auto trace = opt.run();
        const double b = trace.ok() ? trace->finalMs : 0;
        auto ratio = [&](double ms) { return ms > 0 ? base.bestScore.ms / ms : 0.0; };
        const double rh = ratio(h.ms), ru = ratio(u.ms), rg = ratio(g.ms), rb = ratio(b);
        std::printf("| %s | %.4f ms (%d, %d %s) | %.3f | %.3f | %.3f | %.3f | %.1f ms |\n", spec.text().c_str(),
                    base.bestScore.ms, base.evaluations, base.confirmed, options.measure ? "measured" : "confirmed", rh,
                    ru, rg, rb, decideMs);
        std::fflush(stdout);
        logH += std::log(std::max(rh, 1e-9));
        logU += std::log(std::max(ru, 1e-9));
        logG += std::log(std::max(rg, 1e-9));
        logB += std::log(std::max(rb, 1e-9));
        minG = std::min(minG, rg);
        minB = std::min(minB, rb);
        ++n;
    }
    if (n > 0)
        std::printf("| geometric mean (lowest) | 1 | %.3f | %.3f | %.3f (%.3f) | %.3f (%.3f) | |\n", std::exp(logH / n),
                    std::exp(logU / n), std::exp(logG / n), minG, std::exp(logB / n), minB);
    std::printf("\nratios: the search baseline's time over each schedule's (1 = as fast as the baseline)\n");
    if (gpu.times)
        std::printf("%d programs timed on %s, %d of them failed to build or run\n", gpu.times->measurements(),
                    gpu.name.c_str(), gpu.times->failures());
    return 0;
}

} // namespace stitch::cli
