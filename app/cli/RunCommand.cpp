#include "Commands.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/LibraryReference.h"
#include "core/frontend/Lift.h"
#include "core/rubric/PerfModel.h"
#include "core/runner/JobJson.h"
#include "core/schedule/Schedule.h"
#include "core/runner/PlanFile.h"
#include "core/runner/Runner.h"
#include "core/storage/MeasurementStore.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>

namespace stitch::cli {

namespace {

constexpr const char *kRunSchema = "stitchcuda-run/1";

int fail(const RunOptions &options, const Error &error, int exitCode, const std::vector<std::string> &warnings = {})
{
    if (options.json) {
        nlohmann::json j = {{"schema", kRunSchema}, {"plan", options.file}, {"ok", false},
                            {"error", runner::errorToJson(error)}, {"warnings", warnings}};
        std::cout << j.dump(2) << "\n";
        return exitCode;
    }
    for (const auto &w : warnings)
        std::cerr << "stitchcuda: warning: " << w << "\n";
    // "no GPU: ..." is the whole story; other errors name their kind (fault, timeout, ...).
    const std::string prefix = error.location ? error.location->toString() + ": error: "
                               : error.kind == ErrorKind::NoDevice ? "stitchcuda: "
                                                                   : "stitchcuda: " + std::string(errorKindName(error.kind)) + ": ";
    if (error.diagnostics.empty())
        std::cerr << prefix << error.message << "\n";
    for (const auto &d : error.diagnostics)
        std::cerr << d.toString() << "\n";
    return exitCode;
}

std::string dims(const unsigned d[3])
{
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

std::string versionText(int v)
{
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

/// The generated program a plan's "model" names: its graph, sizes and schedule.
struct ModelProgram {
    ir::Graph graph;
    ir::SizeBindings sizes;
    const ArchLimits *arch = nullptr;
    schedule::Schedule schedule;

    schedule::Problem problem() const { return {graph, sizes, *arch, schedule.precision}; }
};

Result<ModelProgram> loadModel(const runner::PlanFile::Model &model)
{
    std::string graphText, scheduleText;
    if (!readFile(model.graphPath, graphText) || !readFile(model.schedulePath, scheduleText))
        return makeError(ErrorKind::Io, "cannot read the model's graph or schedule");
    auto lifted = frontend::liftFile(graphText, model.graphPath);
    if (!lifted)
        return lifted.error();
    auto sched = schedule::parseSchedule(scheduleText, model.schedulePath);
    if (!sched)
        return sched.error();
    ModelProgram program{lifted->graph, lifted->sizes, ArchDatabase::builtin().arch(sched->arch), *sched};
    if (!program.arch)
        return makeError(ErrorKind::InvalidArgument, "the schedule's architecture " + sched->arch + " is not in the database");
    for (const auto &[k, v] : model.sizes)
        program.sizes[k] = v;
    return program;
}

/// The performance model's time for the generated program the plan names (no GPU needed).
Result<runner::ModelEstimate> estimateFromModel(const runner::PlanFile::Model &model, std::string &arch)
{
    auto program = loadModel(model);
    if (!program)
        return program.error();
    arch = program->schedule.arch;
    auto ms = rubric::PerfModel().predictSchedule(program->problem(), program->schedule);
    if (!ms)
        return ms.error();
    return runner::ModelEstimate{*ms, "the StitchCUDA performance model for " + arch + " (fitted to H200 measurements, docs/RUBRIC.md; no GPU here)"};
}

/// --cublas: the plan's GEMM kernels as cuBLAS calls over the same buffers and seed, verified
/// against the CPU interpreter of what cuBLAS computes (codegen::cublasReference).
Result<runner::RunRequest> cublasRequest(const runner::PlanFile &plan, std::string &covers)
{
    if (!plan.model)
        return makeError(ErrorKind::InvalidArgument,
                         "--cublas needs a plan written by stitchcuda generate or optimize (its \"model\" names the "
                         "graph and schedule whose GEMMs cuBLAS computes)");
    auto program = loadModel(*plan.model);
    if (!program)
        return program.error();
    auto library = codegen::cublasReference(program->problem(), program->schedule);
    if (!library)
        return annotate(library.error(), "no cuBLAS reference");
    covers = library->covers + (library->note.empty() ? "" : "; " + library->note);
    runner::RunRequest request;
    request.job.plan = library->plan;
    request.job.measure = plan.measure;
    request.job.measure.metrics = false; // a library's kernels are not profiled (the Executor leaves them out)
    request.job.precision = program->schedule.precision == schedule::Precision::TF32 ? runner::PrecisionPolicy::TF32
                                                                                       : runner::PrecisionPolicy::FP32;
    request.job.deadlineMs = plan.deadlineMs;
    if (plan.seed) {
        request.job.seed = *plan.seed;
        request.job.fixedSeed = true;
    }
    request.cpuReference = library->reference;
    return request;
}

std::string cell(const std::map<std::string, double> &values, const char *name, double scale, const char *format)
{
    auto it = values.find(name);
    if (it == values.end() || it->second != it->second)
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, format, it->second * scale);
    return buf;
}

void printMetrics(const runner::MetricsReport &m)
{
    if (!m.available) {
        std::printf("metrics  unavailable: %s\n", m.message.c_str());
        return;
    }
    std::printf("metrics  %zu kernel launch%s on %s (CUPTI range profiling, %d replay pass%s per kernel)%s%s\n", m.kernels.size(),
                m.kernels.size() == 1 ? "" : "es", m.chip.c_str(), m.passes, m.passes == 1 ? "" : "es",
                m.message.empty() ? "" : ": ", m.message.c_str());
    std::printf("  %-24s %9s %6s %6s %10s %10s %6s %8s %8s %7s %10s %9s\n", "kernel #launch", "time [us]", "occ %", "SM %",
                "DRAM rd MB", "DRAM wr MB", "DRAM %", "ld sect", "st sect", "branch", "smem bank", "inst [M]");
    std::printf("  %-24s %9s %6s %6s %10s %10s %6s %8s %8s %7s %10s %9s\n", "", "", "", "", "", "", "", "/req", "/req", "eff %",
                "conflicts", "");
    for (const auto &k : m.kernels) {
        const auto &v = k.values;
        const auto &d = k.derived;
        const std::string label = k.name + " #" + std::to_string(k.launch);
        std::printf("  %-24s %9s %6s %6s %10s %10s %6s %8s %8s %7s %10s %9s\n", label.c_str(),
                    cell(v, "gpu__time_duration.sum", 1e-3, "%.2f").c_str(),
                    cell(v, "sm__warps_active.avg.pct_of_peak_sustained_active", 1, "%.1f").c_str(),
                    cell(v, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 1, "%.1f").c_str(),
                    cell(v, "dram__bytes_read.sum", 1e-6, "%.3f").c_str(), cell(v, "dram__bytes_write.sum", 1e-6, "%.3f").c_str(),
                    cell(v, "dram__throughput.avg.pct_of_peak_sustained_elapsed", 1, "%.1f").c_str(),
                    cell(d, "globalLoadSectorsPerRequest", 1, "%.2f").c_str(), cell(d, "globalStoreSectorsPerRequest", 1, "%.2f").c_str(),
                    cell(v, "smsp__sass_average_branch_targets_threads_uniform.pct", 1, "%.1f").c_str(),
                    cell(d, "sharedBankConflicts", 1, "%.0f").c_str(), cell(v, "smsp__inst_executed.sum", 1e-6, "%.3f").c_str());
    }
    std::printf("  (every metric and derived figure: --json; their meaning: docs/RUNNER.md)\n");
}

void printText(const runner::JobResult &r, const RunOptions &options)
{
    if (r.estimated) {
        std::printf("%s: %s, job %llu\n", options.file.c_str(), r.device.name.c_str(),
                    static_cast<unsigned long long>(r.jobId));
        std::printf("verify   not run: no GPU here\n");
        std::printf("time     %.4f ms ESTIMATED by %s, not measured\n", r.timing ? r.timing->medianMs : 0.0,
                    r.estimateSource.c_str());
        return;
    }
    std::printf("%s on %s (%s, driver %s, toolkit %s), job %llu, seed %llu\n", options.file.c_str(), r.device.name.c_str(),
                r.device.arch.c_str(), versionText(r.device.driverVersion).c_str(), r.device.toolkitVersion.c_str(),
                static_cast<unsigned long long>(r.jobId), static_cast<unsigned long long>(r.seed));
    if (r.verification) {
        const auto &v = *r.verification;
        // Every output unchecked (all of them come from kernels carried unchanged): nothing verified, and said so.
        const bool nothingChecked = v.outputs.empty() && !v.unchecked.empty();
        std::printf("verify   %s against the %s reference (%s, tolerance %g)\n",
                    nothingChecked ? "NOT CHECKED" : v.verified ? "PASSED" : "FAILED",
                    v.reference == "gpu" ? "original program (GPU)" : "CPU interpreter", v.precision.c_str(), v.tolerance);
        for (const auto &u : v.unchecked)
            std::printf("  %-12s not checked: written by a kernel carried unchanged, or computed from what one wrote\n",
                        u.c_str());
        for (const auto &o : v.outputs) {
            std::printf("  %-12s rel %.3g  max abs %.3g  %llu of %llu elements off", o.buffer.c_str(), o.relativeError,
                        o.maxAbsError, static_cast<unsigned long long>(o.mismatchCount), static_cast<unsigned long long>(o.elements));
            if (o.unwrittenCount)
                std::printf(", %llu never written", static_cast<unsigned long long>(o.unwrittenCount));
            if (o.nanCount)
                std::printf(", %llu NaN/inf", static_cast<unsigned long long>(o.nanCount));
            std::printf("\n");
            for (const auto &m : o.firstMismatches) {
                std::string at = "[" + std::to_string(m.index) + "]";
                if (!m.coords.empty()) {
                    at = "[";
                    for (std::size_t i = 0; i < m.coords.size(); ++i)
                        at += (i ? ", " : "") + std::to_string(m.coords[i]);
                    at += "]";
                }
                std::printf("    %s%-14s got %-14.8g expected %.8g\n", o.buffer.c_str(), at.c_str(), m.got, m.expected);
            }
        }
    } else if (r.estimated) {
        std::printf("verify   not run: no GPU here\n");
    } else {
        std::printf("verify   not requested (no reference in the plan)\n");
    }
    if (r.estimated && r.timing) {
        std::printf("time     %.4f ms ESTIMATED by %s, not measured\n", r.timing->medianMs, r.estimateSource.c_str());
    } else if (r.timing) {
        const auto &t = *r.timing;
        std::printf("time     median %.4f ms  (min %.4f, max %.4f; %d runs after %d warm-up, %s)\n", t.medianMs, t.minMs, t.maxMs,
                    t.repeats, t.warmup,
                    t.l2FlushBytes ? ("L2 flushed with " + std::to_string(t.l2FlushBytes >> 20) + " MiB").c_str() : "L2 not flushed");
    }
    if (r.profile) {
        const auto &p = *r.profile;
        if (!p.available) {
            std::printf("profile  unavailable: %s\n", p.message.c_str());
        } else {
            std::printf("profile  %zu kernel%s (CUPTI)%s%s\n", p.kernels.size(), p.kernels.size() == 1 ? "" : "s",
                        p.message.empty() ? "" : ": ", p.message.c_str());
            std::printf("  %-28s %10s %5s %9s %9s %12s %12s\n", "kernel", "time [us]", "regs", "smem [B]", "dyn [B]", "grid", "block");
            for (const auto &k : p.kernels)
                std::printf("  %-28s %10.2f %5d %9d %9d %12s %12s\n", k.name.c_str(), k.durationUs, k.registers,
                            k.staticSharedBytes, k.dynamicSharedBytes, dims(k.grid).c_str(), dims(k.block).c_str());
        }
    }
    if (r.metrics)
        printMetrics(*r.metrics);
    std::printf("cache    %s (program %s)\n", r.fromCache ? ("hit, measured " + r.measuredAt).c_str() : "measured now",
                r.programHash.substr(0, 16).c_str());
}

} // namespace

int runRun(const RunOptions &options)
{
    std::string text;
    if (!readFile(options.file, text))
        return 2;
    auto plan = runner::parsePlanFile(text, options.file);
    if (!plan)
        return fail(options, plan.error(), 1);
    if (options.profile)
        plan->measure.profile = true;
    if (options.metrics || !options.metricsKernels.empty())
        plan->measure.metrics = true;
    if (!options.metricsKernels.empty())
        plan->measure.metricsKernels = options.metricsKernels;

    std::vector<std::string> warnings;
    std::unique_ptr<storage::MeasurementStore> store;
    if (!options.noCache) {
        auto opened = storage::MeasurementStore::open(storage::MeasurementStore::defaultPath());
        if (opened)
            store = std::move(*opened);
        else
            warnings.push_back("measurement cache unavailable, measuring without it: " + opened.error().message);
    }
    runner::WorkerOptions worker;
    worker.deviceOrdinal = options.device;
    runner::Runner runner(worker, std::move(store));

    auto device = runner.device();
    std::string arch;
    std::optional<runner::ModelEstimate> estimate;
    if (!device) {
        Error e = device.error();
        // A generated program answers with the performance model's estimate instead (cuBLAS has none).
        if (e.kind == ErrorKind::NoDevice && plan->model && !options.cublas) {
            auto predicted = estimateFromModel(*plan->model, arch);
            if (!predicted)
                return fail(options, predicted.error(), 1, warnings);
            estimate = *predicted;
        } else {
            if (e.kind == ErrorKind::NoDevice)
                e.message = "no GPU: " + e.message;
            return fail(options, e, e.kind == ErrorKind::Io ? 2 : 1, warnings);
        }
    } else {
        arch = device->device.arch;
    }
    std::string covers;
    auto request = options.cublas ? cublasRequest(*plan, covers) : runner::buildRunRequest(*plan, arch);
    if (!request)
        return fail(options, request.error(), request.error().kind == ErrorKind::Io ? 2 : 1, warnings);
    request->remeasure = options.remeasure;
    request->estimate = estimate;

    auto result = runner.run(std::move(*request));
    warnings.insert(warnings.end(), runner.warnings().begin(), runner.warnings().end());
    if (!result)
        return fail(options, result.error(), 1, warnings);
    const bool passed = !result->verification || result->verification->verified;
    if (options.json) {
        nlohmann::json j = {{"schema", kRunSchema}, {"plan", options.file}, {"ok", passed},
                            {"result", runner::resultToJson(*result, nullptr)}, {"warnings", warnings}};
        if (options.cublas)
            j["cublas"] = covers; // what cuBLAS computed in place of the plan's program
        std::cout << j.dump(2) << "\n";
    } else {
        for (const auto &w : warnings)
            std::cerr << "stitchcuda: warning: " << w << "\n";
        if (options.cublas)
            std::printf("cuBLAS   in place of the plan's program: %s\n", covers.c_str());
        printText(*result, options);
    }
    return passed ? 0 : 1;
}

} // namespace stitch::cli
