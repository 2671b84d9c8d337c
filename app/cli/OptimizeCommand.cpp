// `stitchcuda optimize`: the agents decide the schedule (and, with a budget, search around their
// choices), Stitch integrates, and the program, its schedule, its plan and the trace are written.
#include "Commands.h"
#include "LocalGpu.h"
#include "ProblemInput.h"

#include "core/agents/Checkpoints.h"
#include "core/agents/MeasuredSets.h"
#include "core/agents/Optimizer.h"
#include "core/agents/Session.h"
#include "core/codegen/Program.h"
#include "core/rubric/AsWrittenRubric.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

namespace stitch::cli {

namespace {

bool writeFile(const std::string &path, const std::string &text)
{
    std::error_code ec;
    if (const auto parent = std::filesystem::path(path).parent_path(); !parent.empty())
        std::filesystem::create_directories(parent, ec); // a failure shows as the write's
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) {
        std::cerr << "stitchcuda: cannot write " << path << "\n";
        return false;
    }
    return true;
}

} // namespace

int runOptimize(const OptimizeOptions &options)
{
    int exitCode = 2;
    auto input = loadProblem(options.file, options.sizes, options.arch, "", options.tf32, exitCode, options.source);
    if (!input)
        return exitCode;
    std::vector<agents::Pin> pins;
    for (const auto &text : options.pins) {
        auto pin = agents::parsePin(text);
        if (!pin.ok()) {
            std::cerr << "stitchcuda: " << pin.error().message << "\n";
            return 2;
        }
        pins.push_back(*pin);
    }
    if (input->lifted.graph.ops().empty()) {
        std::cerr << "stitchcuda: " << options.file << ": nothing to optimize: no kernel could be lifted\n";
        for (const auto &o : input->lifted.opaque)
            std::cerr << "  " << o.why.toString() << "\n";
        return 1;
    }
    // The policy: the trained agents, or a named stand-in for comparisons.
    std::unique_ptr<agents::PolicySource> policy;
    agents::LoadedAgents loaded;
    std::string policyNote;
    if (options.policy == "heuristics") {
        policy = std::make_unique<agents::HeuristicPolicy>();
    } else if (options.policy == "uniform") {
        policy = std::make_unique<agents::UniformPolicy>();
    } else if (options.policy == "agents") {
        auto l = agents::loadAgents(options.checkpoint, options.arch);
        if (!l.ok()) {
            if (!options.checkpoint.empty() || l.error().kind != ErrorKind::Io) {
                std::cerr << "stitchcuda: " << l.error().message << "\n";
                return 2;
            }
            std::cerr << "stitchcuda: warning: " << l.error().message << "; the heuristics decide\n";
            policy = std::make_unique<agents::HeuristicPolicy>();
        } else {
            loaded = std::move(*l);
            policy = std::make_unique<agents::NetworkPolicy>(*loaded.networks, "agents (" + loaded.path + ")");
            policyNote = "agents " + loaded.note;
        }
    } else {
        std::cerr << "stitchcuda: --policy takes agents, heuristics or uniform\n";
        return 2;
    }

    const schedule::Problem problem = input->problem();
    rubric::Rubric rubric;
    rubric::CompileCache cache;
    std::optional<agents::MeasuredStore> measured;
    LocalGpu gpu;
    if (options.measure) {
        if (const int failed = openMeasuringGpu(options.arch, &cache, !options.measured.empty() || options.noCompile, gpu))
            return failed;
    }
    if (!options.measured.empty()) {
        auto store = agents::MeasuredStore::loadFolder(options.measured, options.arch);
        if (!store.ok()) {
            std::cerr << "stitchcuda: " << store.error().message << "\n";
            return 2;
        }
        measured = std::move(*store);
    }
    const agents::MeasuredTimes *times = gpu.times ? static_cast<const agents::MeasuredTimes *>(gpu.times.get())
                                                   : measured ? &*measured : nullptr;
    agents::Evaluator evaluator(rubric, options.noCompile ? nullptr : &cache, times);
    agents::OptimizeOptions oo;
    oo.seed = options.seed;
    oo.budget = options.budget;
    oo.pins = pins;
    agents::Optimizer optimizer(problem, evaluator, *policy, oo);
    auto trace = optimizer.run(agents::parseStage(input->lifted, input->sizes), [&](const agents::OptimizeProgress &p) {
        if (p.stage == "search" && !options.json)
            std::fprintf(stderr, "\rsearch: %d of %d candidates", p.candidates, p.budget);
    });
    if (options.budget > 1 && !options.json)
        std::fprintf(stderr, "\n");
    if (!trace.ok()) {
        std::cerr << "stitchcuda: " << trace.error().message << "\n";
        return trace.error().kind == ErrorKind::InvalidArgument ? 2 : 1;
    }
    trace->source = options.file;
    // The text lifted (includes inlined, -D applied) when it differs from the file: replays need neither.
    if (!input->lifted.expandedSource.empty())
        trace->sourceText = input->lifted.expandedSource;
    else
        readFile(options.file, trace->sourceText);
    for (const auto &[n, v] : input->sizes)
        trace->sizes[n] = v;

    // A CUDA input is scored as written (its own accesses, NVRTC's resources, its PTX); what that
    // cannot give, and a .te input, is the generic schedule's. Where the model times its own code,
    // the proposal must beat that too, or the input is kept (never lose to the input).
    std::optional<rubric::AsWrittenReport> asWritten;
    if (input->detail) {
        rubric::AsWrittenOptions o;
        o.arch = options.arch;
        o.sizes = input->sizes;
        o.compile = !options.noCompile;
        if (auto r = rubric::scoreAsWritten(*input->detail, options.file, o); r.ok())
            asWritten = std::move(*r);
        if (asWritten && asWritten->predictedMs)
            agents::weighAsWritten(*trace, *asWritten->predictedMs, "by the model");
    }

    // The input's opaque kernels run unchanged in the program; when one cannot, the input is kept.
    const auto carried = carriedKernels(*input, options.file);
    agents::recordCarried(*trace, carried);
    const codegen::CarriedKernels noneCarried;
    auto program = codegen::generateProgram(problem, trace->schedule, carried ? &*carried : &noneCarried);
    if (!program.ok()) {
        std::cerr << "stitchcuda: internal error: the chosen schedule does not generate:\n";
        return reportError(program.error());
    }
    if (!options.trace.empty() && !writeFile(options.trace, agents::traceToJson(*trace)))
        return 2;
    if (options.json) {
        std::cout << agents::traceToJson(*trace);
    } else {
        std::printf("%s: %zu op%s for %s, %s\n\n", options.file.c_str(), problem.graph.ops().size(),
                    problem.graph.ops().size() == 1 ? "" : "s", options.arch.c_str(),
                    policyNote.empty() ? policy->name().c_str() : policyNote.c_str());
        std::printf("%-24s %s\n", "Parse", trace->parse.summary.c_str());
        agents::AgentKind shown = agents::AgentKind::Parse;
        int forced = 0;
        for (const auto &d : trace->decisions) {
            int legal = 0;
            for (const auto &o : d.options)
                legal += o.legal ? 1 : 0;
            if (legal < 2 && !d.pinned) {
                ++forced;
                continue;
            }
            if (d.agent != shown) {
                shown = d.agent;
                std::printf("%s\n", agents::agentTitle(d.agent));
            }
            std::printf("  %s@%s\n      %s\n", d.key.c_str(), d.key == "fuse" ? d.subject.c_str() : d.group.c_str(),
                        d.rationale.c_str());
        }
        if (forced > 0)
            std::printf("  (%d decision%s with one legal value not shown)\n", forced, forced == 1 ? "" : "s");
        for (const auto &n : trace->fusionNotes)
            std::printf("  fusion: %s\n", n.c_str());
        std::printf("%-24s %s\n", "Stitch", trace->integrate.summary.c_str());
        for (const auto &n : trace->integrate.notes)
            std::printf("%-24s %s\n", "", n.c_str());
        // The rubric, before and after.
        const agents::Score before = evaluator.confirm(problem, rubric::genericSchedule(problem));
        const agents::Score after = evaluator.confirm(problem, trace->schedule);
        std::printf("\n%-22s %10s %10s\n", "rubric", "input", "optimized");
        for (int i = 0; i < agents::kStaticDimensionCount; ++i) {
            const rubric::RubricScore *own = asWritten ? asWritten->programScore(agents::kStaticDimensions[i]) : nullptr;
            std::printf("%-22s %9.1f%s %10.1f\n", agents::kStaticDimensions[i], own ? own->score : before.dimensions[i],
                        own || !asWritten ? " " : "*", after.dimensions[i]);
        }
        std::printf("%-22s %10s %10s  (%s; %.1f ms to decide)\n", "time",
                    agents::msText(trace->asWrittenMs ? *trace->asWrittenMs : trace->inputMs).c_str(),
                    agents::msText(trace->finalMs).c_str(),
                    trace->finalMeasured ? "measured" : trace->finalCompiled ? "model, NVRTC build" : "model, estimated",
                    trace->decideMs);
        if (gpu.times)
            std::printf("(timed on %s: %d programs; the input's lifted form is timed as the generic schedule, one "
                        "thread per output: %s)\n",
                        gpu.name.c_str(), gpu.times->measurements(), agents::msText(trace->inputMs).c_str());
        if (trace->asWrittenMs)
            std::printf("(the input's time is its own code's, by the model; as the generic schedule, one thread per "
                        "output, it is %s)\n",
                        agents::msText(trace->inputMs).c_str());
        else if (!gpu.times)
            std::printf("(the input's time is modelled as the generic schedule: one thread per output)\n");
        if (asWritten)
            std::printf("(the input's rubric is its own code's, `stitchcuda rubric %s --as-written`%s)\n",
                        options.file.c_str(), std::any_of(std::begin(agents::kStaticDimensions), std::end(agents::kStaticDimensions),
                                                          [&](const char *d) { return !asWritten->programScore(d); })
                                                  ? "; *: not derivable from the code as written, the generic schedule's"
                                                  : "");
    }
    if (!carried) {
        // A program without one of the input's kernels would lose its work: nothing is written.
        if (!options.json)
            std::printf("kept: the input as written; %s\n", carried.error().toString().c_str());
        return 0;
    }
    if (!options.json && trace->keptInput)
        std::printf("kept: the input as written; the proposal is not predicted faster (Stitch's notes above)%s\n",
                    options.out.empty() ? "" : ("; the program to use is " + program->name + ".input.cu in " + options.out).c_str());
    if (!options.out.empty() && !writeGenerated(options.out, *program, *input, options.file, /*inputPlan=*/true))
        return 2;
    return 0;
}

} // namespace stitch::cli
