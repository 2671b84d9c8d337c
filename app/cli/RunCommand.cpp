#include "Commands.h"

#include "core/arch/ArchDatabase.h"
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

/// The performance model's time for the generated program the plan names (no GPU needed).
Result<runner::ModelEstimate> estimateFromModel(const runner::PlanFile::Model &model, std::string &arch)
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
    const ArchLimits *limits = ArchDatabase::builtin().arch(sched->arch);
    if (!limits)
        return makeError(ErrorKind::InvalidArgument, "the schedule's architecture " + sched->arch + " is not in the database");
    arch = sched->arch;
    ir::SizeBindings sizes = lifted->sizes;
    for (const auto &[k, v] : model.sizes)
        sizes[k] = v;
    schedule::Problem problem{lifted->graph, sizes, *limits, sched->precision};
    auto ms = rubric::PerfModel().predictSchedule(problem, *sched);
    if (!ms)
        return ms.error();
    return runner::ModelEstimate{*ms, "the StitchCUDA performance model for " + arch + " (not calibrated; no GPU here)"};
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
        std::printf("verify   %s against the %s reference (%s, tolerance %g)\n", v.verified ? "PASSED" : "FAILED",
                    v.reference == "gpu" ? "original program (GPU)" : "CPU interpreter", v.precision.c_str(), v.tolerance);
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
        // A generated program answers with the performance model's estimate instead.
        if (e.kind == ErrorKind::NoDevice && plan->model) {
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
    auto request = runner::buildRunRequest(*plan, arch);
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
        std::cout << j.dump(2) << "\n";
    } else {
        for (const auto &w : warnings)
            std::cerr << "stitchcuda: warning: " << w << "\n";
        printText(*result, options);
    }
    return passed ? 0 : 1;
}

} // namespace stitch::cli
