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

Result<LoadedTrace> prepareTrace(const std::string &file, Trace trace, const std::string &arch)
{
    LoadedTrace t;
    t.file = file;
    t.trace = std::move(trace);
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
    return prepareTrace(file, std::move(*trace), arch);
}

/// The agents' own greedy schedule's estimate on a problem (no pins).
double agentsMs(const schedule::Problem &problem, Evaluator &evaluator, const AgentNetworks &nets)
{
    const auto greedy = greedySchedule(problem, evaluator, NetworkPolicy(nets, "retrain"));
    return greedy ? greedy->second.ms : 0;
}

/// A pinned decision that had a choice, as the replay reached it.
struct PinnedState {
    std::string decision, value;
    ImitationExample example; ///< the state, the legal values (unmasked by the pin) and the pinned one
};

/// Replays `t` with its pins: the state at each pinned decision with two legal values or more;
/// `finalMs` gets the pinned program's time.
Result<std::vector<PinnedState>> replayPins(const LoadedTrace &t, Evaluator &evaluator, double *finalMs)
{
    const schedule::Problem problem = t.problem();
    Environment env(problem, evaluator, t.pins);
    if (auto st = env.reset(); !st)
        return annotate(st.error(), t.file);
    std::vector<PinnedState> states;
    for (std::size_t d = 0; d < t.trace.decisions.size(); ++d) {
        const TraceDecision &td = t.trace.decisions[d];
        if (env.done() || env.step().id() != td.id)
            return makeError(ErrorKind::InvalidArgument,
                             t.file + ": no longer replays at decision " + std::to_string(d + 1) + " (" + td.id +
                                 "): the program or the decision space changed");
        const DecisionStep &step = env.step();
        const auto legal = step.legalMask();
        if (step.pinnedIndex >= 0 && std::count(legal.begin(), legal.end(), 1) >= 2)
            states.push_back({td.id, step.options[static_cast<std::size_t>(step.pinnedIndex)].text,
                              {static_cast<int>(learningAgent(step.agent)), observe(env), legal, step.pinnedIndex, 1.0}});
        if (auto r = env.apply(td.chosen); !r.ok())
            return annotate(r.error(), t.file);
    }
    if (finalMs)
        *finalMs = env.current().ms;
    return states;
}

double probabilityOf(const AgentNetworks &nets, const ImitationExample &e)
{
    return nets.evaluate(e.agent, e.observation, e.mask).probabilities[static_cast<std::size_t>(e.action)];
}

Error cancelledError() { return makeError(ErrorKind::Cancelled, "retraining cancelled"); }

} // namespace

Result<std::vector<PinnedProbability>> pinnedProbabilities(const Trace &trace, const AgentNetworks &networks,
                                                           const std::string &name)
{
    auto t = prepareTrace(name, trace, trace.arch);
    if (!t.ok())
        return t.error();
    rubric::Rubric rubric;
    Evaluator evaluator(rubric);
    auto states = replayPins(*t, evaluator, nullptr);
    if (!states.ok())
        return states.error();
    std::vector<PinnedProbability> out;
    for (const auto &s : *states)
        out.push_back({s.decision, s.value, probabilityOf(networks, s.example)});
    return out;
}

const char *retrainStageName(RetrainStage stage)
{
    switch (stage) {
    case RetrainStage::Replay:
        return "replaying the traces";
    case RetrainStage::HeldOutBefore:
        return "the held-out figure before";
    case RetrainStage::Update:
        return "PPO updates";
    case RetrainStage::HeldOutAfter:
        return "the held-out figure after";
    case RetrainStage::Saving:
        return "saving the checkpoint";
    }
    return "";
}

Result<RetrainReport> retrain(const RetrainOptions &options, const std::function<void(const RetrainProgress &)> &progress,
                              const std::atomic<bool> *cancel)
{
    const auto cancelled = [cancel] { return cancel && cancel->load(); };
    const auto announce = [&](RetrainStage stage) {
        if (progress) {
            RetrainProgress p;
            p.stage = stage;
            p.updates = options.updates;
            progress(p);
        }
    };
    announce(RetrainStage::Replay);
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
    for (const auto &loaded : options.loaded) {
        auto t = prepareTrace(loaded.name, loaded.trace, options.arch);
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
        if (cancelled())
            return cancelledError();
        if (t.pins.empty())
            continue;
        double pinnedMs = 0;
        auto states = replayPins(t, evaluator, &pinnedMs);
        if (!states.ok())
            return states.error();
        const double own = agentsMs(t.problem(), evaluator, *nets);
        for (auto &state : *states) {
            PinnedOutcome o;
            o.trace = t.file;
            o.decision = state.decision;
            o.value = state.value;
            o.pinnedMs = pinnedMs;
            o.agentsMs = own;
            o.won = own > 0 && pinnedMs < own;
            report.pins.push_back(o);
            targets.push_back({report.pins.size() - 1, std::move(state.example)});
        }
    }
    std::vector<ImitationExample> imitation;
    for (const auto &target : targets) {
        PinnedOutcome &o = report.pins[target.pin];
        o.before = probabilityOf(*nets, target.example);
        if (o.won)
            imitation.push_back(target.example);
    }

    std::vector<double> baselines;
    if (options.heldOut) {
        announce(RetrainStage::HeldOutBefore);
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
    std::ofstream csv;
    if (!options.csv.empty()) {
        csv.open(options.csv, std::ios::trunc);
        if (!csv)
            return makeError(ErrorKind::Io, "cannot write " + options.csv);
        csv << trainingCsvHeader() << "\n" << std::flush;
    }
    PpoConfig ppo;
    const auto ppoStart = std::chrono::steady_clock::now();
    for (int u = 0; u < options.updates; ++u) {
        if (cancelled())
            return cancelledError();
        std::mt19937_64 rng(options.seed * 0x2545f4914f6cdd1dULL + static_cast<std::uint64_t>(u));
        auto batch = collectEpisodes(*nets, views, options.episodesPerUpdate, rng, evaluator, EpisodeSettings{});
        if (!batch.ok())
            return batch.error();
        const UpdateStats stats = nets->update(batch->transitions, imitation, ppo, options.seed + static_cast<std::uint64_t>(u));
        report.updates = u + 1;
        RetrainProgress p;
        p.stage = RetrainStage::Update;
        p.updates = options.updates;
        p.row.update = u + 1;
        p.row.episode = (u + 1) * options.episodesPerUpdate;
        p.row.episodes = options.updates * options.episodesPerUpdate;
        p.row.meanFinalReward = batch->meanFinalReward;
        p.row.meanReturn = batch->meanReturn;
        p.row.stats = stats;
        // The last update's row carries the held-out figure after, as train's evaluation rows do.
        if (u + 1 == options.updates && options.heldOut) {
            announce(RetrainStage::HeldOutAfter);
            report.heldOutAfter = heldOutFigure(*nets, options.arch, baselines);
            p.row.heldOut = report.heldOutAfter;
        }
        p.row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ppoStart).count();
        if (csv)
            csv << trainingCsvRow(p.row) << "\n" << std::flush;
        if (progress)
            progress(p);
    }
    for (const auto &target : targets)
        report.pins[target.pin].after = probabilityOf(*nets, target.example);
    if (options.heldOut && options.updates <= 0)
        report.heldOutAfter = report.heldOutBefore;
    if (cancelled())
        return cancelledError();
    announce(RetrainStage::Saving);

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
