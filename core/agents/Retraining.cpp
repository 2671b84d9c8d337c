#include "core/agents/Retraining.h"

#include "core/agents/Features.h"
#include "core/agents/Optimizer.h"
#include "core/frontend/Lift.h"
#include "core/rubric/Rubric.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <sstream>

namespace stitch::agents {

namespace {

struct LoadedTrace {
    std::string file;
    Trace trace;
    frontend::LiftedProgram lifted;
    ir::SizeBindings sizes;
    const ArchLimits *arch = nullptr;
    std::vector<Pin> pins;
    schedule::Problem problem() const
    {
        return {lifted.graph, sizes, *arch,
                trace.precision == "tf32" ? schedule::Precision::TF32 : schedule::Precision::FP32};
    }
};

Result<LoadedTrace> loadTrace(const std::string &file, const std::string &arch)
{
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return makeError(ErrorKind::Io, "cannot read trace " + file);
    std::stringstream text;
    text << in.rdbuf();
    auto trace = parseTrace(text.str(), file);
    if (!trace.ok())
        return trace.error();
    LoadedTrace t;
    t.file = file;
    t.trace = std::move(*trace);
    if (t.trace.arch != arch)
        return makeError(ErrorKind::InvalidArgument,
                         file + ": optimized for " + t.trace.arch + ", the agents being retrained are " + arch + "'s");
    t.arch = ArchDatabase::builtin().arch(arch);
    auto lifted = frontend::liftFile(t.trace.sourceText, t.trace.source);
    if (!lifted.ok())
        return annotate(lifted.error(), file + ": its program no longer lifts");
    t.lifted = std::move(*lifted);
    t.sizes = t.lifted.sizes;
    for (const auto &[n, v] : t.trace.sizes)
        t.sizes[n] = v;
    for (const auto &text : t.trace.pins) {
        auto pin = parsePin(text);
        if (!pin.ok())
            return annotate(pin.error(), file);
        t.pins.push_back(*pin);
    }
    return t;
}

/// The agents' own greedy schedule's estimate on a problem (no pins).
double agentsMs(const schedule::Problem &problem, Evaluator &evaluator, const AgentNetworks &nets)
{
    const auto greedy = greedySchedule(problem, evaluator, NetworkPolicy(nets, "retrain"));
    return greedy ? greedy->second.ms : 0;
}

} // namespace

Result<RetrainReport> retrain(const RetrainOptions &options)
{
    const auto t0 = std::chrono::steady_clock::now();
    const ArchLimits *arch = ArchDatabase::builtin().arch(options.arch);
    if (!arch)
        return makeError(ErrorKind::InvalidArgument, "unknown architecture " + options.arch);
    auto loadedNets = AgentNetworks::load(options.checkpoint, observationSize());
    if (!loadedNets.ok())
        return loadedNets.error();
    std::unique_ptr<AgentNetworks> nets = std::move(*loadedNets);
    std::vector<LoadedTrace> traces;
    for (const auto &file : options.traces) {
        auto t = loadTrace(file, options.arch);
        if (!t.ok())
            return t.error();
        traces.push_back(std::move(*t));
    }
    rubric::Rubric rubric;
    Evaluator evaluator(rubric);
    RetrainReport report;

    // Replay each trace with its pins: the states at the pinned decisions, and whether the pinned
    // program beat the agents' own.
    struct Target {
        std::size_t pin;                // into report.pins
        ImitationExample example;
    };
    std::vector<Target> targets;
    for (auto &t : traces) {
        if (t.pins.empty())
            continue;
        const schedule::Problem problem = t.problem();
        Environment env(problem, evaluator, t.pins);
        if (auto st = env.reset(); !st)
            return annotate(st.error(), t.file);
        for (std::size_t d = 0; d < t.trace.decisions.size(); ++d) {
            const TraceDecision &td = t.trace.decisions[d];
            if (env.done() || env.step().id() != td.id)
                return makeError(ErrorKind::InvalidArgument,
                                 t.file + ": no longer replays at decision " + std::to_string(d + 1) + " (" + td.id +
                                     "): the program or the decision space changed");
            const DecisionStep &step = env.step();
            const auto legal = step.legalMask();
            if (step.pinnedIndex >= 0 && std::count(legal.begin(), legal.end(), 1) >= 2) {
                PinnedOutcome o;
                o.trace = t.file;
                o.decision = td.id;
                o.value = step.options[step.pinnedIndex].text;
                report.pins.push_back(o);
                targets.push_back({report.pins.size() - 1,
                                   {static_cast<int>(learningAgent(step.agent)), observe(env), legal, step.pinnedIndex, 1.0}});
            }
            if (auto r = env.apply(td.chosen); !r.ok())
                return annotate(r.error(), t.file);
        }
        const double pinnedMs = env.current().ms;
        const double own = agentsMs(problem, evaluator, *nets);
        for (auto &o : report.pins)
            if (o.trace == t.file) {
                o.pinnedMs = pinnedMs;
                o.agentsMs = own;
                o.won = own > 0 && pinnedMs < own;
            }
    }
    std::vector<ImitationExample> imitation;
    for (const auto &target : targets) {
        PinnedOutcome &o = report.pins[target.pin];
        o.before = nets->evaluate(target.example.agent, target.example.observation, target.example.mask)
                       .probabilities[static_cast<std::size_t>(target.example.action)];
        if (o.won)
            imitation.push_back(target.example);
    }

    std::vector<double> baselines;
    if (options.heldOut) {
        auto b = heldOutBaselines(options.arch, 2000, 1, options.baselines);
        if (!b.ok())
            return b.error();
        baselines = std::move(*b);
        report.heldOutBefore = heldOutFigure(*nets, options.arch, baselines);
    }

    // PPO on the traces' problems (free of their pins) and generated ones, with the imitation term.
    std::vector<std::unique_ptr<TrainingProblem>> generated;
    for (const auto &spec : generateTrainingSpecs(options.seed, 64, heldOutSpecs())) {
        auto p = makeProblem(spec, *arch);
        if (p.ok())
            generated.push_back(std::move(*p));
    }
    std::vector<schedule::Problem> views;
    for (const auto &t : traces)
        views.push_back(t.problem());
    for (const auto &g : generated)
        views.push_back(g->problem());
    PpoConfig ppo;
    for (int u = 0; u < options.updates; ++u) {
        std::mt19937_64 rng(options.seed * 0x2545f4914f6cdd1dULL + static_cast<std::uint64_t>(u));
        auto batch = collectEpisodes(*nets, views, options.episodesPerUpdate, rng, evaluator, EpisodeSettings{});
        if (!batch.ok())
            return batch.error();
        nets->update(batch->transitions, imitation, ppo, options.seed + static_cast<std::uint64_t>(u));
        report.updates = u + 1;
    }
    for (const auto &target : targets)
        report.pins[target.pin].after =
            nets->evaluate(target.example.agent, target.example.observation, target.example.mask)
                .probabilities[static_cast<std::size_t>(target.example.action)];
    if (options.heldOut)
        report.heldOutAfter = heldOutFigure(*nets, options.arch, baselines);

    try {
        auto meta = nlohmann::json::parse(nets->metadata());
        meta["retrained_from"] = options.traces;
        meta["retrain_updates"] = meta.value("retrain_updates", 0) + options.updates;
        nets->setMetadata(meta.dump());
    } catch (const nlohmann::json::exception &) {
        // Metadata of another writer: kept as it is.
    }
    if (auto saved = nets->save(options.out.empty() ? options.checkpoint : options.out); !saved)
        return saved.error();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return report;
}

} // namespace stitch::agents
