#include "core/agents/Training.h"

#include "core/agents/Features.h"
#include "core/agents/Optimizer.h"
#include "core/agents/Search.h"
#include "core/rubric/Rubric.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

namespace stitch::agents {

const char *trainingCsvHeader()
{
    return "update,episode,mean_final_reward,mean_return,policy_loss,value_loss,entropy,approx_kl,clip_fraction,"
           "explained_variance,samples,seconds,held_out,held_out_lowest";
}

std::string trainingCsvRow(const TrainProgress &p)
{
    const UpdateStats &stats = p.stats;
    char line[512];
    std::snprintf(line, sizeof line, "%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f,%d,%.1f,", p.update, p.episode,
                  p.meanFinalReward, p.meanReturn, stats.policyLoss, stats.valueLoss, stats.entropy, stats.approxKl,
                  stats.clipFraction, stats.explainedVariance, stats.samples, p.seconds);
    std::string row = line;
    if (p.heldOut) {
        std::snprintf(line, sizeof line, "%.4f,%.4f", p.heldOut->geomean, p.heldOut->lowest);
        row += line;
    } else {
        row += ",";
    }
    return row;
}

Result<std::vector<double>> heldOutBaselines(const std::string &archName, int evaluations, std::uint64_t seed,
                                             const std::string &path, bool fullModel, const MeasuredTimes *measured)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(archName);
    if (!arch)
        return makeError(ErrorKind::InvalidArgument, "unknown architecture " + archName);
    const auto &specs = heldOutSpecs();
    nlohmann::json settings{{"arch", archName}, {"evaluations", evaluations}, {"seed", seed}};
    if (fullModel)
        settings["model"] = measured ? "measured on the local GPU, the search's best three"
                                     : "full (NVRTC build), the search's best three confirmed";
    std::vector<std::string> names;
    for (const auto &s : specs)
        names.push_back(s.text());
    settings["problems"] = names;
    if (!path.empty()) {
        std::ifstream in(path);
        if (in) {
            try {
                const auto j = nlohmann::json::parse(in);
                if (j.at("settings") == settings)
                    return j.at("best_ms").get<std::vector<double>>();
            } catch (const nlohmann::json::exception &) {
                // Unreadable: computed again and rewritten below.
            }
        }
    }
    rubric::Rubric rubric;
    rubric::CompileCache cache;
    Evaluator evaluator(rubric, fullModel ? &cache : nullptr, fullModel ? measured : nullptr);
    std::vector<double> best;
    for (const auto &spec : specs) {
        auto p = makeProblem(spec, *arch);
        if (!p.ok())
            return p.error();
        const SearchResult r = searchBaseline((*p)->problem(), evaluator, evaluations, seed, fullModel ? 3 : 0);
        best.push_back(r.bestScore.ok ? r.bestScore.ms : 0.0);
    }
    if (!path.empty()) {
        std::ofstream out(path);
        out << nlohmann::json{{"settings", settings}, {"best_ms", best}}.dump(2) << "\n";
        if (!out)
            return makeError(ErrorKind::Io, "cannot write " + path);
    }
    return best;
}

HeldOutFigure heldOutFigure(const AgentNetworks &networks, const std::string &archName, const std::vector<double> &baselines,
                            bool fullModel, const MeasuredTimes *measured)
{
    HeldOutFigure f;
    const ArchLimits *arch = ArchDatabase::builtin().arch(archName);
    const auto &specs = heldOutSpecs();
    if (!arch || baselines.size() != specs.size())
        return f;
    rubric::Rubric rubric;
    rubric::CompileCache cache;
    Evaluator evaluator(rubric, fullModel ? &cache : nullptr, fullModel ? measured : nullptr);
    const NetworkPolicy policy(networks, "held-out");
    double logs = 0;
    f.lowest = 1e9;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        auto p = makeProblem(specs[i], *arch);
        if (!p.ok() || baselines[i] <= 0)
            continue;
        const schedule::Problem problem = (*p)->problem();
        const auto greedy = greedySchedule(problem, evaluator, policy);
        if (!greedy || !greedy->second.ok)
            continue;
        const Score final = fullModel ? evaluator.confirm(problem, greedy->first) : greedy->second;
        if (!final.ok)
            continue;
        const double ratio = baselines[i] / final.ms;
        logs += std::log(ratio);
        f.lowest = std::min(f.lowest, ratio);
        ++f.problems;
    }
    f.geomean = f.problems ? std::exp(logs / f.problems) : 0;
    return f;
}

Result<EpisodeBatch> collectEpisodes(const AgentNetworks &nets, const std::vector<schedule::Problem> &problems,
                                     int episodes, std::mt19937_64 &rng, Evaluator &evaluator,
                                     const EpisodeSettings &settings)
{
    const bool sparseOnly = settings.sparseOnly;
    const double gamma = settings.gamma, lambda = settings.lambda;
    EpisodeBatch out;
    if (problems.empty())
        return out;
    NetworkPolicy policy(nets, "training");
    double finalSum = 0, returnSum = 0;
    for (int e = 0; e < episodes; ++e) {
        const schedule::Problem &problem = problems[rng() % problems.size()];
        Environment env(problem, evaluator);
        if (auto st = env.reset(); !st)
            return annotate(st.error(), "episode on " + problem.graph.name());
        std::vector<StepRecord> steps;
        auto st = rollout(env, policy, Pick::Sample, rng, [&](StepRecord &&r) { steps.push_back(std::move(r)); });
        if (!st)
            return annotate(st.error(), "episode on " + problem.graph.name());
        const double final =
            Environment::finalReward(settings.fullModel ? evaluator.confirm(problem, env.schedule()) : env.current());
        finalSum += final;
        // Rewards, then GAE backwards over the whole episode (forced steps included).
        const std::size_t n = steps.size();
        std::vector<double> rewards(n), advantages(n);
        for (std::size_t i = 0; i < n; ++i) {
            rewards[i] = sparseOnly ? 0.0 : steps[i].reward;
            const Score &before = steps[i].before, &after = steps[i].outcomes[steps[i].action];
            if (!sparseOnly && !settings.timeShaping && before.ok && after.ok && before.ms > 0 && after.ms > 0)
                rewards[i] -= kTimeRewardWeight * std::log(before.ms / after.ms);
        }
        if (n > 0)
            rewards[n - 1] += final;
        double next = 0, gae = 0;
        for (std::size_t i = n; i-- > 0;) {
            const double delta = rewards[i] + gamma * next - steps[i].policy.value;
            gae = delta + gamma * lambda * gae;
            advantages[i] = gae;
            next = steps[i].policy.value;
        }
        double ret = 0;
        for (double r : rewards)
            ret += r;
        returnSum += ret;
        for (std::size_t i = 0; i < n; ++i) {
            const StepRecord &r = steps[i];
            if (r.step.legalCount() < 2 || r.step.pinnedIndex >= 0)
                continue; // nothing was chosen
            Transition t;
            t.agent = static_cast<int>(learningAgent(r.step.agent));
            t.observation = r.observation;
            t.mask = r.step.mask();
            t.action = r.action;
            t.logProb = std::log(std::max(r.policy.probabilities[r.action], 1e-12));
            t.value = r.policy.value;
            t.advantage = advantages[i];
            t.ret = advantages[i] + r.policy.value;
            out.transitions.push_back(std::move(t));
        }
    }
    out.meanFinalReward = finalSum / episodes;
    out.meanReturn = returnSum / episodes;
    return out;
}

Result<TrainSummary> train(const TrainOptions &options, const std::function<void(const TrainProgress &)> &progress,
                           const std::atomic<bool> *cancel)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(options.arch);
    if (!arch)
        return makeError(ErrorKind::InvalidArgument, "unknown architecture " + options.arch);
    // The problems: generated, never a held-out one.
    std::vector<std::unique_ptr<TrainingProblem>> problems;
    for (const auto &spec : generateTrainingSpecs(options.seed, options.trainingProblems, heldOutSpecs())) {
        auto p = makeProblem(spec, *arch);
        if (!p.ok())
            return annotate(p.error(), "training problem " + spec.text());
        problems.push_back(std::move(*p));
    }
    std::vector<schedule::Problem> views;
    for (const auto &p : problems)
        views.push_back(p->problem());

    std::unique_ptr<AgentNetworks> nets;
    int startUpdate = 0;
    if (options.resume) {
        auto loaded = AgentNetworks::load(options.checkpoint, observationSize());
        if (!loaded.ok())
            return loaded.error();
        nets = std::move(*loaded);
        try {
            const auto meta = nlohmann::json::parse(nets->metadata());
            startUpdate = meta.value("updates", 0);
            if (meta.value("seed", std::uint64_t{0}) != options.seed)
                return makeError(ErrorKind::InvalidArgument, options.checkpoint + ": trained with seed " +
                                                                 std::to_string(meta.value("seed", 0)) +
                                                                 ", not " + std::to_string(options.seed));
        } catch (const nlohmann::json::exception &) {
            return makeError(ErrorKind::Parse, options.checkpoint + ": its metadata is not JSON");
        }
    } else if (!options.init.empty()) {
        auto loaded = AgentNetworks::load(options.init, observationSize());
        if (!loaded.ok())
            return loaded.error();
        nets = std::move(*loaded);
    } else {
        nets = AgentNetworks::create({observationSize(), options.hidden, options.seed});
    }

    std::ofstream csv;
    if (!options.csv.empty()) {
        csv.open(options.csv, options.resume ? std::ios::app : std::ios::trunc);
        if (!csv)
            return makeError(ErrorKind::Io, "cannot write " + options.csv);
        if (!options.resume)
            csv << trainingCsvHeader() << "\n";
    }

    std::vector<double> baselines;
    if (options.evalEvery > 0) {
        auto b = heldOutBaselines(options.arch, options.baselineEvaluations, 1, options.baselines, options.fullModel,
                                  options.measured);
        if (!b.ok())
            return b.error();
        baselines = std::move(*b);
    }
    rubric::Rubric rubric;
    // The full model's NVRTC builds, kept for the run (a few hundred KiB each).
    rubric::CompileCache compileCache(std::nullopt, {}, options.fullModel ? 4096 : 1);
    Evaluator evaluator(rubric, options.fullModel ? &compileCache : nullptr, options.fullModel ? options.measured : nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    TrainSummary summary;
    const int updates = (options.episodes + options.episodesPerUpdate - 1) / options.episodesPerUpdate;
    for (int u = startUpdate; u < updates; ++u) {
        if (cancel && *cancel)
            return makeError(ErrorKind::Cancelled, "training cancelled");
        std::mt19937_64 rng(options.seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(u));
        EpisodeSettings settings;
        settings.sparseOnly = options.sparseOnly;
        settings.timeShaping = !options.fullModel;
        settings.fullModel = options.fullModel;
        settings.gamma = options.gamma;
        settings.lambda = options.lambda;
        auto collected = collectEpisodes(*nets, views, options.episodesPerUpdate, rng, evaluator, settings);
        if (!collected.ok())
            return collected.error();
        const std::vector<Transition> &batch = collected->transitions;
        // The learning rate anneals linearly to zero over the run (CleanRL's anneal_lr): the last
        // updates settle rather than swing.
        PpoConfig ppo = options.ppo;
        if (options.annealLearningRate)
            ppo.learningRate *= 1.0 - static_cast<double>(u) / static_cast<double>(updates);
        const UpdateStats stats = nets->update(batch, {}, ppo, options.seed + static_cast<std::uint64_t>(u));
        summary.updates = u + 1;
        summary.episodes = (u + 1) * options.episodesPerUpdate;
        summary.lastMeanFinalReward = collected->meanFinalReward;
        summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        nlohmann::json meta{{"format", "stitchcuda-agents/1"},
                            {"arch", options.arch},
                            {"seed", options.seed},
                            {"updates", u + 1},
                            {"episodes", summary.episodes},
                            {"episodes_per_update", options.episodesPerUpdate},
                            {"sparse_only", options.sparseOnly},
                            {"full_model", options.fullModel},
                            {"measured", options.fullModel && options.measured != nullptr},
                            {"init", options.init},
                            {"observation", observationSchema()},
                            {"command", options.command}};
        nets->setMetadata(meta.dump());
        if (!options.checkpoint.empty())
            if (auto saved = nets->save(options.checkpoint); !saved)
                return saved.error();
        TrainProgress p{summary.episodes, updates * options.episodesPerUpdate, u + 1, summary.lastMeanFinalReward,
                        collected->meanReturn, stats, summary.seconds, std::nullopt};
        if (options.evalEvery > 0 && ((u + 1) % options.evalEvery == 0 || u + 1 == updates))
            p.heldOut = heldOutFigure(*nets, options.arch, baselines, options.fullModel, options.measured);
        if (csv)
            csv << trainingCsvRow(p) << "\n" << std::flush;
        if (progress)
            progress(p);
    }
    return summary;
}

} // namespace stitch::agents
