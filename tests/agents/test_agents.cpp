// The agents' environment, pipeline, trace and training on real problems (no GPU).
#include "core/agents/Checkpoints.h"
#include "core/agents/Features.h"
#include "core/agents/Optimizer.h"
#include "core/agents/Problems.h"
#include "core/agents/Retraining.h"
#include "core/agents/MeasuredSets.h"
#include "core/agents/Search.h"
#include "core/agents/Training.h"
#include "core/codegen/Program.h"
#include "AgentsTestSupport.h"
#include "core/ir/Interpreter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

namespace stitch::agents {
namespace {

namespace fs = std::filesystem;

using namespace stitch::agents::testing;

TEST(AgentsEnvironment, EveryIllegalValueHasAReasonAndEveryLegalOneCompletes)
{
    Fixture f;
    for (const char *spec : {"gemm:1024x1024x1024", "gemm_bias_gelu:1000x3000x700", "softmax:4096x1000", "chain:512x256"}) {
        auto p = problem(spec);
        const schedule::Problem prob = p->problem();
        Environment env(prob, f.evaluator);
        ASSERT_TRUE(env.reset().ok()) << spec;
        int steps = 0;
        while (!env.done()) {
            const DecisionStep &s = env.step();
            ASSERT_LE(s.options.size(), static_cast<std::size_t>(kMaxActions));
            ASSERT_GE(s.legalCount(), 1) << s.id();
            for (std::size_t i = 0; i < s.options.size(); ++i) {
                if (!s.options[i].legal) {
                    EXPECT_FALSE(s.options[i].why.empty()) << s.id() << "=" << s.options[i].text;
                    continue;
                }
                EXPECT_TRUE(env.outcomes()[i].ok) << s.id() << "=" << s.options[i].text;
                EXPECT_TRUE(schedule::validateSchedule(env.outcomeSchedules()[i], prob).ok())
                    << s.id() << "=" << s.options[i].text;
            }
            ASSERT_TRUE(env.apply(s.heuristicIndex).ok()) << s.id();
            ++steps;
        }
        EXPECT_GT(steps, 2) << spec;
        EXPECT_TRUE(schedule::validateSchedule(env.schedule(), prob).ok()) << spec;
    }
}

TEST(AgentsEnvironment, TheHeuristicsPolicyReproducesTheDefaultSchedule)
{
    Fixture f;
    for (const char *spec : {"gemm:2048x2048x512", "layernorm:65536x512", "chain:8192x8192"}) {
        auto p = problem(spec);
        const schedule::Problem prob = p->problem();
        Environment env(prob, f.evaluator);
        ASSERT_TRUE(env.reset().ok());
        std::mt19937_64 rng(1);
        ASSERT_TRUE(rollout(env, HeuristicPolicy(), Pick::Greedy, rng, {}).ok());
        EXPECT_EQ(schedule::toJson(env.schedule()), schedule::toJson(env.heuristicSchedule())) << spec;
    }
}

TEST(AgentsEnvironment, RandomEpisodesAlwaysEndLegal)
{
    Fixture f;
    auto p = problem("gemm_bias_gelu:2048x12288x768");
    const schedule::Problem prob = p->problem();
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        Environment env(prob, f.evaluator);
        ASSERT_TRUE(env.reset().ok());
        std::mt19937_64 rng(seed);
        ASSERT_TRUE(rollout(env, UniformPolicy(), Pick::Sample, rng, {}).ok());
        EXPECT_TRUE(schedule::validateSchedule(env.schedule(), prob).ok()) << "seed " << seed;
        EXPECT_TRUE(env.current().ok);
    }
}

TEST(AgentsEnvironment, IllegalOrUnknownActionsAreRefused)
{
    Fixture f;
    auto p = problem("gemm:1024x1024x1024");
    const schedule::Problem prob = p->problem();
    Environment env(prob, f.evaluator);
    ASSERT_TRUE(env.reset().ok());
    while (!env.done() && env.step().legalCount() == static_cast<int>(env.step().options.size()))
        ASSERT_TRUE(env.apply(env.step().heuristicIndex).ok());
    ASSERT_FALSE(env.done());
    const auto mask = env.step().mask();
    const int illegal = static_cast<int>(std::find(mask.begin(), mask.end(), 0) - mask.begin());
    auto r = env.apply(illegal);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("illegal"), std::string::npos) << r.error().message;
    EXPECT_FALSE(env.apply(kMaxActions + 3).ok());
}

TEST(AgentsPins, ParseAndReject)
{
    auto ok = parsePin("memory_access.block_k@matmul=16");
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(ok->agent, AgentKind::MemoryAccess);
    EXPECT_EQ(ok->key, "block_k");
    EXPECT_EQ(ok->where, "matmul");
    EXPECT_EQ(ok->value, "16");
    auto agent = parsePin("memory.block_k=16");
    ASSERT_FALSE(agent.ok());
    EXPECT_NE(agent.error().message.find("unknown agent 'memory'"), std::string::npos) << agent.error().message;
    auto key = parsePin("memory_access.block_q=16");
    ASSERT_FALSE(key.ok());
    EXPECT_NE(key.error().message.find("unknown decision 'block_q'"), std::string::npos);
    auto owner = parsePin("parallel_mapping.block_k=16");
    ASSERT_FALSE(owner.ok());
    EXPECT_NE(owner.error().message.find("belongs to memory_access"), std::string::npos);
    auto value = parsePin("memory_access.block_k=12");
    ASSERT_FALSE(value.ok());
    EXPECT_NE(value.error().message.find("12"), std::string::npos);
    EXPECT_FALSE(parsePin("memory_access.block_k").ok());
}

TEST(AgentsPins, APinHoldsAndTheAgentsUpstreamRespectIt)
{
    Fixture f;
    auto p = problem("gemm:4096x4096x4096");
    const schedule::Problem prob = p->problem();
    auto pin = parsePin("memory_access.block_k=32");
    ASSERT_TRUE(pin.ok());
    auto threads = parsePin("parallel_mapping.thread_m=16");
    ASSERT_TRUE(threads.ok());
    OptimizeOptions options;
    options.pins = {*pin, *threads};
    const UniformPolicy policy;
    options.pick = Pick::Sample;
    for (std::uint64_t seed : {1, 2, 3}) {
        options.seed = seed;
        Optimizer opt(prob, f.evaluator, policy, options);
        ASSERT_TRUE(opt.start().ok());
        while (opt.deciding())
            ASSERT_TRUE(opt.step().ok());
        const schedule::Schedule &s = opt.environment().schedule();
        ASSERT_EQ(s.groups.size(), 1u);
        EXPECT_EQ(s.groups[0].value("block_k"), 32);
        EXPECT_EQ(s.groups[0].value("thread_m"), 16);
        EXPECT_TRUE(schedule::validateSchedule(s, prob).ok());
        bool pinnedSeen = false;
        for (const auto &d : opt.trace().decisions)
            pinnedSeen = pinnedSeen || (d.pinned && d.key == "block_k");
        EXPECT_TRUE(pinnedSeen);
    }
}

TEST(AgentsPins, APinOnAnUnknownKernelIsAnError)
{
    Fixture f;
    auto p = problem("gemm:1024x1024x1024");
    const schedule::Problem prob = p->problem();
    auto pin = parsePin("memory_access.block_k@nosuch=16");
    ASSERT_TRUE(pin.ok());
    Environment env(prob, f.evaluator, {*pin});
    auto st = env.reset();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("no op or kernel named 'nosuch'"), std::string::npos) << st.error().message;
}

TEST(AgentsFusion, FusionIsADecisionAndEveryVariantGeneratesAndCompiles)
{
    Fixture f;
    auto p = problem("chain:512x256");
    const schedule::Problem prob = p->problem();
    {
        Environment env(prob, f.evaluator);
        ASSERT_TRUE(env.reset().ok());
        ASSERT_FALSE(env.done());
        EXPECT_EQ(env.step().agent, AgentKind::Stitch);
        EXPECT_EQ(env.step().key, "fuse");
    }
    auto off = parsePin("stitch.fuse=off");
    ASSERT_TRUE(off.ok());
    Environment separate(prob, f.evaluator, {*off});
    ASSERT_TRUE(separate.reset().ok());
    std::mt19937_64 rng(1);
    ASSERT_TRUE(rollout(separate, HeuristicPolicy(), Pick::Greedy, rng, {}).ok());
    EXPECT_EQ(separate.schedule().groups.size(), 5u);
    for (const char *spec : {"chain:512x256", "gemm_bias_gelu:256x512x128", "gemm_softmax:256x256x64", "layernorm:64x768"}) {
        auto q = problem(spec);
        const schedule::Problem qp = q->problem();
        const auto variants = fusionVariants(qp.graph);
        EXPECT_GE(variants.size(), 2u) << spec;
        for (const auto &groups : variants) {
            schedule::Schedule s;
            s.arch = "sm_90";
            for (auto g : groups) {
                auto a = schedule::analyzeGroup(qp.graph, g.ops, g.strategy);
                ASSERT_TRUE(a.ok()) << spec;
                ASSERT_TRUE(schedule::applyHeuristics(*a, g, qp).ok()) << spec;
                s.groups.push_back(g);
            }
            auto program = codegen::generateProgram(qp, s);
            ASSERT_TRUE(program.ok()) << spec << ": " << (program.ok() ? "" : program.error().message);
            auto compiled = codegen::compileGenerated(program->source, program->name + ".cu", "sm_90", true);
            EXPECT_TRUE(compiled.ok()) << spec << " with " << groups.size() << " kernels";
        }
    }
}

/// Runs a fusion's kernels one after another in the interpreter, each as a graph of its own ops
/// (every tensor kept, with its id; the group's results outputs, the rest inputs, those of later
/// groups zero: a group that read one would differ), and returns the final values.
ir::TensorValues runPartition(const ir::Graph &graph, const ir::SizeBindings &sizes,
                              const std::vector<schedule::KernelGroup> &groups, const ir::TensorValues &inputs)
{
    ir::TensorValues values = inputs;
    for (const auto &t : graph.tensors())
        if (!values.contains(t.name)) {
            auto extents = t.shape.evaluate(sizes);
            EXPECT_TRUE(extents.ok());
            values[t.name] = ir::TensorData(static_cast<std::size_t>(ir::elementCount(*extents)), 0.0);
        }
    for (const auto &g : groups) {
        ir::Graph part(graph.name() + "_" + g.name);
        std::set<std::string> computed;
        for (const auto &op : g.ops)
            computed.insert(graph.findOp(op)->output.name);
        for (const auto &t : graph.tensors())
            part.addTensor(t.name, t.dtype, t.shape, computed.contains(t.name) ? ir::TensorRole::Output : ir::TensorRole::Input);
        for (const auto &op : g.ops)
            part.addOp(*graph.findOp(op));
        ir::TensorValues in;
        for (const auto &t : graph.tensors())
            if (!computed.contains(t.name))
                in[t.name] = values[t.name];
        auto out = ir::interpret(part, sizes, in);
        EXPECT_TRUE(out.ok()) << g.name << ": " << (out.ok() ? "" : out.error().message);
        if (!out.ok())
            return {};
        for (const auto &name : computed)
            values[name] = out->at(name);
    }
    return values;
}

TEST(AgentsFusion, EveryVariantsPartitionEvaluatesLikeTheWholeGraph)
{
    for (const char *spec : {"chain:16x8", "gemm_bias_gelu:8x12x4", "gemm_softmax:8x8x4", "layernorm:4x16", "rmsnorm:4x10"}) {
        auto q = problem(spec);
        const ir::Graph &graph = q->lifted.graph;
        const ir::SizeBindings &sizes = q->lifted.sizes;
        ir::TensorValues inputs;
        std::mt19937_64 rng(3);
        for (const auto *t : graph.inputs()) {
            auto extents = t->shape.evaluate(sizes);
            ASSERT_TRUE(extents.ok());
            ir::TensorData d(static_cast<std::size_t>(ir::elementCount(*extents)));
            for (auto &v : d)
                v = static_cast<double>(rng() % 2001) / 1000.0 - 1.0;
            inputs[t->name] = d;
        }
        auto whole = ir::interpret(graph, sizes, inputs);
        ASSERT_TRUE(whole.ok()) << spec;
        const auto variants = fusionVariants(graph);
        EXPECT_GE(variants.size(), 2u) << spec;
        std::set<std::size_t> kernelCounts;
        for (const auto &groups : variants) {
            const ir::TensorValues parts = runPartition(graph, sizes, groups, inputs);
            for (const auto *t : graph.outputs()) {
                ASSERT_TRUE(parts.contains(t->name)) << spec;
                EXPECT_EQ(parts.at(t->name), whole->at(t->name)) << spec << ", " << groups.size() << " kernels: " << t->name;
            }
            kernelCounts.insert(groups.size());
        }
        EXPECT_GE(kernelCounts.size(), 2u) << spec << ": fused and unfused variants alike";
    }
}

TEST(AgentsTrace, ReplaysFromItsSeedAndRoundTrips)
{
    Fixture f;
    auto p = problem("gemm_bias_gelu:1000x3000x700");
    const schedule::Problem prob = p->problem();
    const UniformPolicy policy;
    OptimizeOptions options;
    options.pick = Pick::Sample;
    options.seed = 42;
    options.budget = 3;
    options.confirmTop = 0;
    std::string first;
    for (int run = 0; run < 2; ++run) {
        Optimizer opt(prob, f.evaluator, policy, options);
        auto trace = opt.run();
        ASSERT_TRUE(trace.ok()) << trace.error().message;
        trace->decideMs = 0; // wall time: the one figure that is not replayed
        const std::string text = traceToJson(*trace);
        if (run == 0)
            first = text;
        else
            EXPECT_EQ(text, first);
        auto parsed = parseTrace(text, "t.json");
        ASSERT_TRUE(parsed.ok()) << parsed.error().message;
        EXPECT_EQ(traceToJson(*parsed), text);
        // The chosen options replayed in a fresh environment give the same schedule.
        Environment env(prob, f.evaluator);
        ASSERT_TRUE(env.reset().ok());
        for (const auto &d : parsed->decisions) {
            ASSERT_FALSE(env.done());
            ASSERT_EQ(env.step().id(), d.id);
            ASSERT_TRUE(env.apply(d.chosen).ok());
        }
        EXPECT_TRUE(env.done());
        EXPECT_FALSE(parsed->decisions.empty());
        for (const auto &d : parsed->decisions)
            EXPECT_FALSE(d.rationale.empty());
    }
}

TEST(AgentsTrace, NewerOrBrokenTracesAreRefused)
{
    auto newer = parseTrace(R"({"schema": "stitchcuda-trace/2", "version": 2})", "new.json");
    ASSERT_FALSE(newer.ok());
    EXPECT_NE(newer.error().message.find("newer"), std::string::npos) << newer.error().message;
    auto broken = parseTrace("{", "broken.json");
    ASSERT_FALSE(broken.ok());
    EXPECT_NE(broken.error().message.find("broken.json"), std::string::npos);
    auto missing = parseTrace(R"({"schema": "stitchcuda-trace/1", "version": 1})", "m.json");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("missing member"), std::string::npos);
}

TEST(AgentsTrace, TheInputsOwnCodeIsWeighedAndKeptWhenTheProposalIsNotFaster)
{
    Trace t;
    t.finalMs = 2.0;
    t.inputMs = 8.0;
    weighAsWritten(t, 3.0, "by the model");
    EXPECT_FALSE(t.keptInput) << "2 ms beats the input's own 3 ms";
    ASSERT_EQ(t.asWrittenMs, 3.0);
    EXPECT_NE(t.integrate.notes.back().find("1.50x faster than the input's own code (3.000 ms, by the model)"),
              std::string::npos)
        << t.integrate.notes.back();

    Trace slow;
    slow.finalMs = 2.0;
    slow.inputMs = 8.0;
    weighAsWritten(slow, 1.5, "by the model");
    EXPECT_TRUE(slow.keptInput) << "a hand-tuned input faster than the proposal is kept";
    EXPECT_NE(slow.integrate.notes.back().find("kept the input as written"), std::string::npos);
    // Round trip; a trace written before as_written_ms existed still reads.
    auto parsed = parseTrace(traceToJson(slow), "slow.json");
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(parsed->asWrittenMs, 1.5);
    EXPECT_TRUE(parsed->keptInput);
    auto j = nlohmann::json::parse(traceToJson(t));
    j.erase("as_written_ms");
    auto older = parseTrace(j.dump(), "older.json");
    ASSERT_TRUE(older.ok()) << older.error().message;
    EXPECT_FALSE(older->asWrittenMs);
}

/// The full model reports a hard limit for one value of one decision (as NVRTC's registers might),
/// which the estimate does not see.
class OverLimit final : public Evaluator {
public:
    OverLimit(const rubric::Rubric &r, std::string key, int value) : Evaluator(r), m_key(std::move(key)), m_value(value) {}
    Score confirm(const schedule::Problem &problem, const schedule::Schedule &schedule) override
    {
        Score s = estimate(problem, schedule);
        for (const auto &g : schedule.groups)
            if (g.strategy == schedule::Strategy::Gemm && g.value(m_key) == m_value) {
                s.hardViolation = true;
                s.hardLimitSentence = "255 registers per thread: the launch needs more than the SM has";
            }
        return s;
    }

private:
    std::string m_key;
    int m_value;
};

TEST(AgentsStitch, AHardLimitTheCompiledProgramBreaksGoesBackToTheOwningAgent)
{
    rubric::Rubric rubric;
    auto p = problem("gemm:2048x2048x2048");
    const schedule::Problem prob = p->problem();
    Evaluator plain(rubric);
    Environment env(prob, plain);
    ASSERT_TRUE(env.reset().ok());
    std::mt19937_64 rng(1);
    ASSERT_TRUE(rollout(env, HeuristicPolicy(), Pick::Greedy, rng, {}).ok());
    const int minBlocks = env.schedule().groups[0].value("min_blocks");
    OverLimit over(rubric, "min_blocks", minBlocks);
    const HeuristicPolicy policy;
    Optimizer opt(prob, over, policy, {});
    auto trace = opt.run();
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    ASSERT_FALSE(trace->conflicts.empty());
    EXPECT_TRUE(trace->conflicts.front().resolved);
    EXPECT_FALSE(trace->keptInput);
    EXPECT_NE(trace->schedule.groups[0].value("min_blocks"), minBlocks);
    EXPECT_TRUE(schedule::validateSchedule(trace->schedule, prob).ok());
}

TEST(AgentsOptimize, NeverReturnsAProgramSlowerThanTheInput)
{
    Fixture f;
    for (const char *spec : {"gemm:1024x1024x1024", "softmax:32768x8192", "bias_relu:3000x1000"}) {
        auto p = problem(spec);
        const schedule::Problem prob = p->problem();
        const UniformPolicy policy;
        OptimizeOptions options;
        options.pick = Pick::Sample;
        options.confirmTop = 0;
        Optimizer opt(prob, f.evaluator, policy, options);
        auto trace = opt.run();
        ASSERT_TRUE(trace.ok());
        EXPECT_LE(trace->finalMs, trace->inputMs) << spec;
        EXPECT_EQ(trace->keptInput, trace->finalMs == trace->inputMs && trace->schedule == rubric::genericSchedule(prob));
    }
}

TEST(AgentsProblems, SpecsParseAndTheHeldOutAreNeverGenerated)
{
    EXPECT_FALSE(parseProblemSpec("gemm:10x10").ok());
    EXPECT_FALSE(parseProblemSpec("conv:10x10").ok());
    EXPECT_FALSE(parseProblemSpec("softmax:10xq").ok());
    ASSERT_GE(heldOutSpecs().size(), 10u);
    const auto specs = generateTrainingSpecs(7, 2000, heldOutSpecs());
    for (const auto &s : specs)
        for (const auto &h : heldOutSpecs())
            ASSERT_FALSE(s == h) << s.text();
    for (const auto &family : problemFamilies()) {
        const bool drawn = std::any_of(specs.begin(), specs.end(), [&](const ProblemSpec &s) { return s.family == family; });
        EXPECT_TRUE(drawn) << family;
    }
    for (const auto &h : heldOutSpecs())
        EXPECT_TRUE(makeProblem(h, sm90()).ok()) << h.text();
}

TEST(AgentsTraining, TheSameSeedGivesTheSameCheckpointAndResumeContinuesIt)
{
    const fs::path dir = fs::temp_directory_path() / ("stitch-train-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto run = [&](const std::string &name, int episodes, bool resume) {
        TrainOptions t;
        t.episodes = episodes;
        t.episodesPerUpdate = 2;
        t.trainingProblems = 4;
        t.hidden = 16;
        t.seed = 5;
        t.checkpoint = (dir / name).string();
        t.resume = resume;
        auto s = train(t);
        EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    };
    run("a.agents", 4, false);
    run("b.agents", 4, false);
    run("c.agents", 2, false);
    run("c.agents", 4, true);
    auto a = AgentNetworks::load((dir / "a.agents").string(), observationSize());
    auto b = AgentNetworks::load((dir / "b.agents").string(), observationSize());
    auto c = AgentNetworks::load((dir / "c.agents").string(), observationSize());
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    std::vector<float> obs(static_cast<std::size_t>(observationSize()), 0.25f);
    std::vector<std::uint8_t> mask(kMaxActions, 1);
    for (int agent = 0; agent < kLearningAgents; ++agent) {
        const auto pa = (*a)->evaluate(agent, obs, mask), pb = (*b)->evaluate(agent, obs, mask),
                   pc = (*c)->evaluate(agent, obs, mask);
        EXPECT_EQ(pa.probabilities, pb.probabilities);
        EXPECT_EQ(pa.value, pb.value);
        EXPECT_EQ(pa.probabilities, pc.probabilities);
    }
    fs::remove_all(dir);
}

TEST(AgentsRetraining, AnOverrideThatWonGainsProbability)
{
    const fs::path dir = fs::temp_directory_path() / ("stitch-retrain-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string checkpoint = (dir / "start.agents").string();
    auto nets = AgentNetworks::create({observationSize(), 32, 3});
    nets->setMetadata("{}");
    ASSERT_TRUE(nets->save(checkpoint).ok());
    // The user's trace: the heuristics decide, with the strategy pinned to gemm.
    auto spec = parseProblemSpec("gemm:1024x1024x1024");
    ASSERT_TRUE(spec.ok());
    auto p = makeProblem(*spec, sm90());
    ASSERT_TRUE(p.ok());
    const schedule::Problem prob = (*p)->problem();
    Fixture f;
    auto pin = parsePin("parallel_mapping.strategy=gemm");
    ASSERT_TRUE(pin.ok());
    OptimizeOptions options;
    options.pins = {*pin};
    options.confirmTop = 0;
    const HeuristicPolicy heuristics;
    Optimizer opt(prob, f.evaluator, heuristics, options);
    auto trace = opt.run();
    ASSERT_TRUE(trace.ok());
    trace->source = "gemm.te";
    trace->sourceText = teSource(*spec);
    for (const auto &[n, v] : prob.sizes)
        trace->sizes[n] = v;
    const std::string traceFile = (dir / "trace.json").string();
    {
        std::ofstream out(traceFile);
        out << traceToJson(*trace);
    }
    RetrainOptions r;
    r.traces = {traceFile};
    r.checkpoint = checkpoint;
    r.out = (dir / "after.agents").string();
    r.updates = 3;
    r.episodesPerUpdate = 4;
    r.heldOut = false;
    auto report = retrain(r);
    ASSERT_TRUE(report.ok()) << report.error().message;
    ASSERT_EQ(report->pins.size(), 1u);
    EXPECT_EQ(report->pins[0].value, "gemm");
    EXPECT_TRUE(report->pins[0].won) << report->pins[0].pinnedMs << " vs " << report->pins[0].agentsMs;
    EXPECT_GT(report->pins[0].after, report->pins[0].before);
    EXPECT_TRUE(AgentNetworks::load(r.out, observationSize()).ok());
    // A trace whose program changed no longer replays: said so, nothing written.
    trace->decisions.front().id = "parallel_mapping.strategy@elsewhere";
    {
        std::ofstream out(traceFile);
        out << traceToJson(*trace);
    }
    r.out = (dir / "never.agents").string();
    auto stale = retrain(r);
    ASSERT_FALSE(stale.ok());
    EXPECT_NE(stale.error().message.find("no longer replays"), std::string::npos) << stale.error().message;
    EXPECT_FALSE(fs::exists(r.out));
    fs::remove_all(dir);
}

TEST(AgentsMeasured, StoredTimesAreFoundAndSetsRankedByTheAgents)
{
    const fs::path dir = fs::temp_directory_path() / ("stitch-measured-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    // Two measured candidates of the bench's GEMM 1024^3: the store answers their times.
    auto bp = benchProblem("gemm", "1024x1024x1024");
    ASSERT_TRUE(bp.ok());
    const schedule::Problem prob{bp->graph, bp->sizes, sm90(), bp->precision};
    auto base = schedule::defaultSchedule(prob);
    ASSERT_TRUE(base.ok());
    schedule::Schedule other = *base;
    other.groups[0].set("smem_pad", other.groups[0].value("smem_pad") == 0 ? 4 : 0);
    ASSERT_TRUE(schedule::validateSchedule(other, prob).ok());
    {
        std::ofstream csv(dir / "set.csv");
        rubric::writeCalibrationHeader(csv);
        rubric::writeCalibrationRow(csv, {"gemm", "1024x1024x1024", 0, 0.050, -1, schedule::describe(base->groups[0]), {}});
        rubric::writeCalibrationRow(csv, {"gemm", "1024x1024x1024", 1, 0.040, -1, schedule::describe(other.groups[0]), {}});
        rubric::writeCalibrationRow(csv, {"gemm", "1024x1024x1024", 1, 0.044, -1, schedule::describe(other.groups[0]), {}});
    }
    auto store = MeasuredStore::loadFolder(dir.string(), "sm_90");
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE(store->lookup(prob, *base).has_value());
    EXPECT_DOUBLE_EQ(*store->lookup(prob, *base), 0.050);
    EXPECT_DOUBLE_EQ(*store->lookup(prob, other), 0.044); // the median of 0.040 and 0.044: the upper
    Fixture f;
    auto sets = rankMeasuredSets((dir / "set.csv").string(), HeuristicPolicy(), f.evaluator, "sm_90");
    ASSERT_TRUE(sets.ok()) << sets.error().message;
    ASSERT_EQ(sets->size(), 1u);
    EXPECT_EQ((*sets)[0].reachable, 3);
    EXPECT_DOUBLE_EQ((*sets)[0].bestMs, 0.040);
    EXPECT_DOUBLE_EQ((*sets)[0].firstMs, 0.050); // the heuristics rank their own schedule first
    Evaluator measured(f.rubric, nullptr, &*store);
    const Score s = measured.confirm(prob, other);
    EXPECT_TRUE(s.measured);
    EXPECT_DOUBLE_EQ(s.ms, 0.044);
    fs::remove_all(dir);
}

TEST(AgentsCheckpoints, ADamagedCheckpointIsAnErrorNamingTheFile)
{
    const fs::path path = fs::temp_directory_path() / ("stitch-bad-" + std::to_string(::getpid()) + ".agents");
    {
        std::ofstream out(path);
        out << "not a checkpoint\n";
    }
    auto loaded = loadAgents(path.string(), "sm_90");
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().message.find(path.string()), std::string::npos) << loaded.error().message;
    fs::remove(path);
    auto missing = loadAgents("/nonexistent/x.agents", "sm_90");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("/nonexistent/x.agents"), std::string::npos);
}

} // namespace
} // namespace stitch::agents
