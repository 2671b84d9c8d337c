#include "views/RunJobs.h"

#include "core/codegen/AsWritten.h"
#include "core/codegen/LibraryReference.h"
#include "core/codegen/Program.h"
#include "core/frontend/cudalift/CudaLift.h"
#include "core/rubric/AsWrittenRubric.h"
#include "core/rubric/PerfModel.h"
#include "core/rubric/Rubric.h"
#include "core/runner/PlanFile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace stitch::views {

namespace {

/// What every program of one run shares: the device (or why there is none) and the target.
struct Context {
    runner::Runner &runner;
    const RunInput &input;
    const std::function<bool()> &cancelled;
    bool gpu = false;
    bool noDeviceKind = false; ///< the worker said no-device (Runner::run then answers estimates itself)
    std::string why;           ///< without a GPU: the runner's reason
    std::string arch;
    const ArchLimits *limits = nullptr;
};

std::string fixed(double v, int digits)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string modelSource(const std::string &arch, const std::string &calibration)
{
    return "the StitchCUDA performance model for " + arch
           + (calibration.empty() ? std::string(" (fitted to H200 measurements, docs/RUBRIC.md)") : " (" + calibration + ")");
}

runner::MeasureOptions measureOptions(const RunInput &input)
{
    runner::MeasureOptions m;
    m.verify = true;
    m.time = true;
    m.repeats = std::max(input.repeats, 3);
    m.profile = true; // CUPTI's kernel durations place the kernels on the roofline
    m.metrics = input.metrics;
    return m;
}

/// Runs the request on the GPU, or answers the model's estimate without one (marked estimated).
void execute(ProgramRun &run, runner::RunRequest request, Context &ctx, const std::optional<runner::ModelEstimate> &estimate)
{
    if (!ctx.gpu) {
        if (!estimate) {
            run.error = "not timed: no GPU here, and the model gives no estimate for it";
            return;
        }
        if (!ctx.noDeviceKind) { // the worker could not even be asked: the same answer, made here
            run.result = runner::estimatedResult(0, request.job, *estimate, ctx.why);
            return;
        }
        request.estimate = estimate;
    }
    auto r = ctx.runner.run(std::move(request), [&ctx] { return ctx.cancelled && ctx.cancelled(); });
    if (!r) {
        run.error = std::string(errorKindName(r.error().kind)) + ": " + r.error().toString();
        return;
    }
    run.result = std::move(*r);
}

/// The kernels' measured durations (CUPTI activity) and DRAM bytes (range profiling), by name in
/// launch order: a kernel launched twice takes its launches' sum.
void placeMeasured(ProgramRun &run)
{
    if (!run.result || run.result->estimated)
        return;
    std::map<std::string, double> us, dram;
    std::map<std::string, bool> hasDram;
    if (run.result->profile && run.result->profile->available)
        for (const auto &k : run.result->profile->kernels)
            us[k.name] += k.durationUs;
    if (run.result->metrics && run.result->metrics->available)
        for (const auto &k : run.result->metrics->kernels)
            if (auto it = k.derived.find("dramBytes"); it != k.derived.end()) {
                dram[k.name] += it->second;
                hasDram[k.name] = true;
            }
    for (auto &p : run.kernels) {
        if (auto it = us.find(p.kernel); it != us.end() && it->second > 0) {
            p.ms = it->second * 1e-3;
            p.measured = true;
        }
        if (hasDram[p.kernel] && dram[p.kernel] > 0) {
            p.bytes = dram[p.kernel];
            p.bytesMeasured = true;
        }
    }
}

/// CUPTI's counters as rows (the measured half of the metrics table).
void measuredMetricRows(ProgramRun &run)
{
    if (!run.result || !run.result->metrics || !run.result->metrics->available)
        return;
    for (const auto &k : run.result->metrics->kernels) {
        const std::string kernel = k.name + " #" + std::to_string(k.launch);
        for (const auto &[name, v] : k.derived)
            run.metrics.push_back({kernel, name, std::isfinite(v) ? fixed(v, 3) : "nan", true});
        for (const auto &[name, v] : k.values)
            run.metrics.push_back({kernel, name, std::isfinite(v) ? fixed(v, 2) : "nan", true});
    }
}

void rubricRows(ProgramRun &run, const std::string &kernel, const std::vector<rubric::RubricScore> &scores)
{
    for (const auto &s : scores) {
        std::string dimension = s.dimension;
        std::replace(dimension.begin(), dimension.end(), '_', ' ');
        run.metrics.push_back({kernel, dimension + " (score " + fixed(s.score, 1) + "/5)",
                               s.evidence.empty() ? s.sentence : s.evidence, false});
    }
}

/// A generated program (the optimized one, or the generic schedule): NVRTC, the model's facts and
/// rubric, then the runner with the CPU interpreter as reference.
void runGenerated(ProgramRun &run, const schedule::Problem &problem, const codegen::GeneratedProgram &program, Context &ctx)
{
    auto compiled = codegen::compileGenerated(program.source, program.name + ".cu", ctx.arch);
    if (!compiled) {
        run.error = "does not compile for " + ctx.arch + ": " + compiled.error().toString();
        return;
    }
    rubric::ProgramFacts facts;
    auto prediction = rubric::PerfModel().predictProgram(problem, program, &*compiled, &facts);
    std::optional<runner::ModelEstimate> estimate;
    if (prediction) {
        estimate = runner::ModelEstimate{prediction->ms, modelSource(ctx.arch, prediction->calibration)};
        for (std::size_t k = 0; k < facts.kernels.size() && k < prediction->kernels.size(); ++k)
            run.kernels.push_back({facts.kernels[k].name, facts.kernels[k].flops, facts.kernels[k].uniqueBytes,
                                   prediction->kernels[k].ms, false, prediction->kernels[k].bound, false});
    } else {
        run.note = "no estimate: " + prediction.error().message;
    }
    auto report = rubric::Rubric().scoreProgram(problem, program, &*compiled);
    auto plan = codegen::toLaunchPlan(program, problem.graph, problem.sizes);
    if (!plan) {
        run.error = "no launch plan: " + plan.error().toString();
        return;
    }
    if (auto st = runner::resolveKernelNames(*plan, compiled->kernels); !st) {
        run.error = "kernel names: " + st.error().toString();
        return;
    }
    runner::RunRequest request;
    request.job.module = compiled->cubin;
    request.job.plan = std::move(*plan);
    request.job.measure = measureOptions(ctx.input);
    // As `stitchcuda generate` writes it: TF32 tensor cores are checked against TF32's bound.
    if (program.schedule.precision == schedule::Precision::TF32)
        request.job.precision = runner::PrecisionPolicy::TF32;
    request.job.deadlineMs = 30000;
    runner::CpuReference reference{problem.graph, problem.sizes, {}};
    reference.carriedTensors = program.carried.carriedTensors;
    reference.uncheckedBuffers = codegen::uncheckedBuffers(program.carried, problem.graph);
    request.cpuReference = std::move(reference);
    execute(run, std::move(request), ctx, estimate);
    placeMeasured(run);
    measuredMetricRows(run);
    if (report)
        for (const auto &k : report->kernels)
            rubricRows(run, k.kernel, k.scores);
}

/// The .cu input as its host code runs it; an Unsupported refusal is the row's located reason.
/// False when it cannot run as written. Without a result (refused, or no GPU and no estimate of its
/// own code) the generic schedule stands in as "before".
bool runAsWritten(ProgramRun &run, const agents::SourceResult &source, Context &ctx)
{
    const std::string &text = source.trace.sourceText;
    const std::string file = source.trace.source.empty() ? source.lifted.sourceFile : source.trace.source;
    auto detail = frontend::cudalift::liftCudaProgramDetailed(text, file, {}, ctx.input.source);
    if (!detail) {
        run.error = "not lifted again: " + detail.error().toString();
        return false;
    }
    auto program = codegen::asWrittenProgram(detail->source, file, *detail, source.sizes);
    if (!program) {
        run.error = "cannot run as written: " + program.error().toString();
        return false;
    }
    auto reference = codegen::compileAsWritten(*program, ctx.arch);
    if (!reference) {
        run.error = "does not compile for " + ctx.arch + ": " + reference.error().toString();
        return false;
    }
    rubric::AsWrittenOptions options;
    options.arch = ctx.arch;
    options.sizes = source.sizes;
    options.source = ctx.input.source;
    // As Optimize weighs it (agents::SourceOptimizer), from the lift above.
    auto report = rubric::scoreAsWritten(*detail, file, options);
    std::optional<runner::ModelEstimate> estimate;
    if (report && report->predictedMs)
        estimate = runner::ModelEstimate{*report->predictedMs, modelSource(ctx.arch, {})};
    else if (report)
        run.note = "no estimate: " + report->timeNote;
    else
        run.note = "not scored: " + report.error().message;
    if (report) {
        for (std::size_t l = 0; l < report->kernels.size() && l < detail->launches.size(); ++l) {
            const auto &k = report->kernels[l];
            const auto launch = rubric::detail::describeLaunch(*detail, l, program->sizes, *ctx.limits);
            RooflinePoint p{k.kernel, launch.facts.flops, launch.facts.uniqueBytes, 0, false, {}, false};
            if (k.prediction) {
                p.ms = k.prediction->ms;
                p.bound = k.prediction->bound;
            }
            run.kernels.push_back(p);
            rubricRows(run, k.kernel, k.scores);
        }
    }
    runner::RunRequest request;
    request.job.module = reference->module;
    request.job.plan = reference->plan;
    request.job.measure = measureOptions(ctx.input);
    request.job.deadlineMs = 30000;
    request.cpuReference = codegen::asWrittenCpuReference(*program, detail->program.graph);
    execute(run, std::move(request), ctx, estimate);
    placeMeasured(run);
    // A kernel whose time neither the model nor CUPTI gives has no place on the roofline.
    std::erase_if(run.kernels, [](const RooflinePoint &p) { return p.ms <= 0; });
    // Measured rows go first, like the generated programs'.
    std::vector<MetricRow> staticRows = std::move(run.metrics);
    run.metrics.clear();
    measuredMetricRows(run);
    run.metrics.insert(run.metrics.end(), staticRows.begin(), staticRows.end());
    return true;
}

bool usesGemm(const schedule::Schedule &s)
{
    for (const auto &g : s.groups)
        if (g.strategy == schedule::Strategy::Gemm)
            return true;
    return false;
}

/// The library reference: no model estimate without a GPU (its kernels are cuBLAS's, not generated
/// code the model knows), so the row says why it has no time rather than showing a made-up one.
/// On a GPU, the optimized program's seed (when it ran) gives cuBLAS the same inputs.
void runLibrary(ProgramRun &run, const schedule::Problem &problem, const schedule::Schedule &schedule, Context &ctx,
                std::optional<std::uint64_t> seed)
{
    auto library = codegen::cublasReference(problem, schedule);
    if (!library) {
        run.error = "no cuBLAS reference: " + library.error().toString();
        return;
    }
    run.note = "cuBLAS computes " + library->covers + (library->note.empty() ? "" : "; " + library->note);
    if (!ctx.gpu) {
        run.error = "not timed: no GPU here, and the performance model has no estimate of cuBLAS (its kernels are the "
                    "library's, not generated code)";
        return;
    }
    runner::RunRequest request;
    request.job.plan = library->plan;
    request.job.measure = measureOptions(ctx.input);
    request.job.measure.metrics = false; // a library's kernels are not profiled (the Executor leaves them out)
    request.job.precision =
        schedule.precision == schedule::Precision::TF32 ? runner::PrecisionPolicy::TF32 : runner::PrecisionPolicy::FP32;
    request.job.deadlineMs = 30000;
    if (seed) {
        request.job.seed = *seed;
        request.job.fixedSeed = true;
    }
    request.cpuReference = library->reference;
    execute(run, std::move(request), ctx, std::nullopt);
    if (!run.result || !run.result->profile || !run.result->profile->available)
        return;
    // Every kernel CUPTI recorded is cuBLAS's (the job has no other): the library's choice, timed,
    // and the calls' sum on the roofline.
    double us = 0;
    for (const auto &k : run.result->profile->kernels) {
        us += k.durationUs;
        run.metrics.push_back({k.name, "duration (CUPTI kernel record)", fixed(k.durationUs, 2) + " us", true});
        run.metrics.push_back({k.name, "registers per thread", std::to_string(k.registers), true});
        run.metrics.push_back({k.name, "grid x block",
                               std::to_string(k.grid[0]) + "x" + std::to_string(k.grid[1]) + "x" +
                                   std::to_string(k.grid[2]) + " x " + std::to_string(k.block[0]) + "x" +
                                   std::to_string(k.block[1]) + "x" + std::to_string(k.block[2]),
                               true});
    }
    if (us > 0)
        run.kernels.push_back(
            {"cuBLAS: " + library->covers, library->flops, library->bytes, us * 1e-3, true, {}, false});
}

} // namespace

const ProgramRun *RunReport::optimized() const
{
    for (const auto &p : programs)
        if (p.role == ProgramRun::Role::Optimized)
            return &p;
    return nullptr;
}

const ProgramRun *RunReport::library() const
{
    for (const auto &p : programs)
        if (p.role == ProgramRun::Role::Library)
            return &p;
    return nullptr;
}

const ProgramRun *RunReport::before() const
{
    const ProgramRun *first = nullptr;
    for (const auto &p : programs) {
        if (p.role == ProgramRun::Role::Optimized || p.role == ProgramRun::Role::Library)
            continue;
        if (p.result)
            return &p;
        if (!first)
            first = &p;
    }
    return first;
}

DeviceStatus probeDevice(runner::Runner &runner)
{
    DeviceStatus s;
    auto info = runner.device();
    if (!info) {
        s.why = info.error().message;
        return s;
    }
    s.gpu = true;
    s.name = info->device.name;
    s.arch = info->device.arch;
    return s;
}

std::string runMsText(double ms)
{
    if (!(ms > 0) || !std::isfinite(ms))
        return "-";
    return fixed(ms, ms >= 100 ? 1 : ms >= 1 ? 3 : 4) + " ms";
}

RunReport runPrograms(const RunInput &input, runner::Runner &runner, const ArchDatabase &database,
                      const std::function<bool()> &cancelled, const std::function<void(const std::string &)> &progress)
{
    RunReport out;
    const auto say = [&](const std::string &line) {
        if (progress)
            progress(line);
    };
    if (!input.optimized) {
        out.device = "nothing to run";
        return out;
    }
    const agents::SourceResult &source = *input.optimized;
    say("asking the runner for the GPU");
    Context ctx{runner, input, cancelled};
    auto info = runner.device();
    if (info) {
        ctx.gpu = out.gpu = true;
        ctx.arch = info->device.arch;
        out.device = info->device.name + " (" + info->device.arch + ")";
    } else {
        ctx.why = info.error().message;
        ctx.noDeviceKind = info.error().kind == ErrorKind::NoDevice;
        ctx.arch = input.arch;
        out.device = "no GPU: " + ctx.why;
    }
    ctx.limits = database.arch(ctx.arch);
    if (!ctx.limits) { // a GPU newer than the database: the studio's target stands in for the model
        out.warnings.push_back(ctx.arch + " is not in the architecture database; the model uses " + input.arch + "'s limits");
        ctx.limits = database.arch(input.arch);
    }
    out.arch = ctx.arch;
    const GpuSpec *spec = info ? database.gpu(info->device.name) : nullptr;
    if (!spec)
        spec = database.defaultGpuFor(ctx.arch);
    if (spec) {
        out.gpuSpec = spec->name;
        out.peakGflops = spec->fp32Tflops * 1e3;
        out.bandwidthGBs = spec->memoryBandwidthGBs;
        if (source.program.schedule.precision == schedule::Precision::TF32)
            out.tensorGflops = spec->tf32Tflops * 1e3;
    }
    if (!ctx.limits) {
        out.warnings.push_back("no architecture limits for " + ctx.arch + ": nothing can be run or estimated");
        return out;
    }

    const ir::Graph &graph = source.lifted.graph;
    const schedule::Problem problem{graph, source.sizes, *ctx.limits, source.program.schedule.precision};
    const bool cuda = source.lifted.language == "cuda";
    bool asWritten = false;
    std::string whyNot;
    if (cuda) {
        say("the input as written");
        ProgramRun run;
        run.role = ProgramRun::Role::AsWritten;
        run.name = "as written";
        const bool ran = runAsWritten(run, source, ctx);
        asWritten = run.result.has_value();
        whyNot = ran ? "the model cannot time its own code" : "it cannot run as written";
        out.programs.push_back(std::move(run));
    }
    // The generic schedule is what the agents compare with when the code as written has no time
    // (Trace::inputMs): it stands in, said so.
    if (!asWritten && !(ctx.cancelled && ctx.cancelled())) {
        say("the generic schedule");
        ProgramRun run;
        run.role = ProgramRun::Role::Generic;
        run.name = "generic schedule";
        auto program = codegen::generateProgram(problem, rubric::genericSchedule(problem));
        if (program)
            runGenerated(run, problem, *program, ctx);
        else
            run.error = "not generated: " + program.error().toString();
        if (cuda)
            run.note = "stands in for the program as written: " + whyNot + " (see its row)";
        out.programs.push_back(std::move(run));
    }
    if (!(ctx.cancelled && ctx.cancelled())) {
        say("the optimized program");
        ProgramRun run;
        run.role = ProgramRun::Role::Optimized;
        run.name = "optimized";
        if (source.trace.keptInput && cuda) {
            run.error = "the agents kept the input as written (Stitch's notes in the Agents dock say why): there is "
                        "no other program to run";
        } else {
            runGenerated(run, problem, source.program, ctx);
            if (source.trace.keptInput) // a .te: nothing beat the generic schedule, which is what runs
                run.note = "the agents kept the generic schedule: nothing was predicted faster";
        }
        out.programs.push_back(std::move(run));
    }
    if (usesGemm(source.program.schedule) && !(ctx.cancelled && ctx.cancelled())) {
        say("the library reference (cuBLAS)");
        ProgramRun run;
        run.role = ProgramRun::Role::Library;
        run.name = "cuBLAS";
        const ProgramRun *optimized = out.optimized();
        std::optional<std::uint64_t> seed;
        if (optimized && optimized->result && !optimized->result->estimated)
            seed = optimized->result->seed;
        runLibrary(run, problem, source.program.schedule, ctx, seed);
        out.programs.push_back(std::move(run));
    }
    const auto &w = runner.warnings();
    out.warnings.insert(out.warnings.end(), w.begin(), w.end());
    return out;
}

} // namespace stitch::views
