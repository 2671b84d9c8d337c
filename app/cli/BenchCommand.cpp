// `stitchcuda bench`: the performance benchmark of issue 4 on the local GPU. For each case it
// explores the schedule space (a curated sweep of legal schedules, timed briefly), then verifies
// the fastest against the generic (one thread per output) program run on the GPU with fresh
// random inputs and poisoned outputs, and times it properly (warm-up, CUDA events, median of many,
// L2 flushed before every run). bench/report.py joins the JSON with the PyTorch/cuBLAS baselines.
#include "BenchAgents.h"
#include "Commands.h"

#include "core/arch/ArchDatabase.h"
#include "core/bench/Candidate.h"
#include "core/bench/Cases.h"
#include "core/bench/ParallelMap.h"
#include "core/bench/Sweep.h"
#include "core/codegen/Program.h"
#include "core/rubric/Calibration.h"
#include "core/rubric/MeasuredDimensions.h"
#include "core/rubric/PerfModel.h"
#include "core/runner/Runner.h"
#include "core/schedule/Space.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace stitch::cli {

namespace {

using bench::BenchCase;
using bench::scheduleText;
using Built = bench::BuiltCandidate;

bench::SweepOptions sweepOptions(const BenchOptions &options)
{
    return {options.quick, options.where, options.maxCandidates};
}

/// One CUPTI metric run of a timed candidate (no timing, no verification, zero inputs like the
/// sweep) and each kernel's rubric dimensions, static beside measured, as rows of `out`. False when
/// the run gave no counters (`why` says why); a failed run is reported and counts as given.
bool profileDimensions(runner::Runner &runner, const Built &b, const rubric::ProgramFacts &facts, const BenchCase &c,
                       int candidate, bool first, std::ostream &out, std::string &why)
{
    runner::RunRequest request;
    request.job.module = b.compiled.cubin;
    request.job.plan = b.plan;
    for (auto &buffer : request.job.plan.buffers)
        if (buffer.role == runner::BufferRole::Input)
            buffer.init.kind = runner::BufferInit::Kind::Zero;
    request.job.measure = {false, false, 0, 1, false, false, true};
    request.job.deadlineMs = 120000;
    auto r = runner.run(std::move(request));
    if (!r) {
        std::fprintf(stderr, "  %s:%s candidate %d: metric run failed: %s\n", c.family.c_str(), c.shape.c_str(),
                     candidate, r.error().message.c_str());
        return true;
    }
    if (!r->metrics || !r->metrics->available) {
        why = r->metrics ? r->metrics->message : "no metrics in the result";
        return false;
    }
    const runner::MetricsReport &m = *r->metrics;
    if (first)
        std::fprintf(stderr, "hardware metrics: chip %s, %d passes per kernel%s%s\n", m.chip.c_str(), m.passes,
                     m.message.empty() ? "" : "; ", m.message.c_str());
    for (const auto &km : m.kernels) {
        if (km.launch < 0 || static_cast<std::size_t>(km.launch) >= facts.kernels.size())
            continue;
        const rubric::KernelFacts &k = facts.kernels[static_cast<std::size_t>(km.launch)];
        for (auto &comparison : rubric::compareWithMetrics(k, facts, km.values))
            rubric::writeDimensionRow(out, {c.family, c.shape, candidate, k.name, std::move(comparison)});
    }
    return true;
}

/// Times the candidates of the sweep one by one (briefly, on zero-filled inputs) and, with
/// --calibration, writes each one's prediction and (with --metrics) its CUPTI dimensions.
class SweepTimer {
public:
    SweepTimer(runner::Runner &runner, const BenchOptions &options) : m_runner(runner), m_options(options)
    {
        // Calibration data for the rubric's performance model: every timed candidate with the model's
        // prediction (stitchcuda calibrate computes the rank correlation per case).
        if (!options.calibration.empty()) {
            m_calibration.open(options.calibration);
            rubric::writeCalibrationHeader(m_calibration);
        }
        // Static rubric dimensions beside their CUPTI counterparts, per kernel (docs/RUBRIC.md).
        if (options.metrics) {
            m_dimensions.open(rubric::dimensionsPathFor(options.calibration));
            rubric::writeDimensionHeader(m_dimensions);
        }
    }

    /// The candidate's median time in ms, or 1e30 when it did not build or run (counted in failures()).
    double time(const BenchCase &c, const schedule::Problem &problem, const schedule::Schedule &candidate,
                const Result<Built> &built, std::size_t index)
    {
        const std::string id = c.family + ":" + c.shape;
        if (!built) {
            std::fprintf(stderr, "  %s candidate %zu does not build: %s\n", id.c_str(), index, built.error().message.c_str());
            ++m_failures;
            return 1e30;
        }
        runner::RunRequest request;
        request.job.module = built->compiled.cubin;
        request.job.plan = built->plan;
        // The sweep only ranks candidates: zero-filled inputs are set on the device, so a 1 GiB
        // input is not drawn on the host for every candidate. The winner runs on random data.
        for (auto &b : request.job.plan.buffers)
            if (b.role == runner::BufferRole::Input)
                b.init.kind = runner::BufferInit::Kind::Zero;
        request.job.measure = {false, true, 2, m_options.quick ? 3 : 5, true, false, false};
        request.job.deadlineMs = 20000;
        auto r = m_runner.run(std::move(request));
        if (!r || !r->timing) {
            std::fprintf(stderr, "  %s candidate %zu failed: %s\n", id.c_str(), index,
                         r ? "no timing" : r.error().message.c_str());
            ++m_failures;
            return 1e30;
        }
        if (m_options.verbose)
            std::fprintf(stderr, "  %-28s %9.4f ms  %s\n", id.c_str(), r->timing->medianMs, scheduleText(candidate).c_str());
        if (m_calibration.is_open())
            record(c, problem, candidate, *built, static_cast<int>(index), r->timing->medianMs);
        return r->timing->medianMs;
    }

    int failures() const { return m_failures; }

private:
    void record(const BenchCase &c, const schedule::Problem &problem, const schedule::Schedule &candidate,
                const Built &built, int index, double measuredMs)
    {
        rubric::CalibrationRow row{c.family, c.shape, index, measuredMs, -1, scheduleText(candidate), {}};
        rubric::ProgramFacts facts;
        auto predicted = m_model.predictProgram(problem, built.program, &built.compiled, &facts);
        if (predicted) {
            row.predictedMs = predicted->ms;
            row.facts = rubric::calibrationFacts(facts, *predicted);
        }
        rubric::writeCalibrationRow(m_calibration, row);
        m_calibration.flush(); // a sweep cut short (timeout, crash) keeps every row it timed
        if (!m_metricsAvailable || !predicted)
            return;
        // Counters refused on the first candidate, or on 3 in a row: said once, then timing only.
        std::string why;
        const bool profiled = profileDimensions(m_runner, built, facts, c, index, m_metricsFirst, m_dimensions, why);
        m_dimensions.flush();
        if (profiled) {
            m_metricsRefused = 0;
        } else if (m_metricsFirst || ++m_metricsRefused >= 3) {
            std::fprintf(stderr, "hardware metrics are not available (%s); the bench carries on without them\n", why.c_str());
            m_metricsAvailable = false;
        } else {
            std::fprintf(stderr, "  %s:%s candidate %d: no metrics: %s\n", c.family.c_str(), c.shape.c_str(), index,
                         why.c_str());
        }
        m_metricsFirst = false;
    }

    runner::Runner &m_runner;
    const BenchOptions &m_options;
    const rubric::PerfModel m_model;
    std::ofstream m_calibration, m_dimensions;
    bool m_metricsAvailable = m_options.metrics, m_metricsFirst = true;
    int m_metricsRefused = 0;
    int m_failures = 0;
};

} // namespace

/// --list: the candidates each selected case would time, without a GPU.
int listCandidates(const BenchOptions &options)
{
    const ArchLimits *limits = ArchDatabase::builtin().arch(options.arch);
    if (!limits) {
        std::cerr << "stitchcuda: architecture " << options.arch << " is not in the database\n";
        return 2;
    }
    const auto cases = bench::selectCases(options.only, options.shapes);
    if (!cases) {
        std::cerr << "stitchcuda: " << cases.error().message << "\n";
        return 2;
    }
    for (const auto &c : *cases) {
        const std::string id = c.family + ":" + c.shape;
        schedule::Problem problem{c.graph, c.sizes, *limits, c.precision};
        auto candidates = bench::caseCandidates(id, problem, sweepOptions(options));
        if (!candidates) {
            std::cerr << candidates.error().message << "\n";
            if (candidates.error().kind == ErrorKind::InvalidArgument)
                return 2;
            continue;
        }
        std::cout << id << ": " << candidates->size() << " candidates\n";
        for (const auto &s : *candidates)
            std::cout << "  " << scheduleText(s) << "\n";
        const auto &c0 = candidates->empty() ? nullptr : &candidates->front().groups.front();
        if (c0 && c0->strategy == schedule::Strategy::Gemm &&
            std::any_of(candidates->begin(), candidates->end(), [](const schedule::Schedule &s) {
                return s.groups.front().value("math") == 0 && s.groups.front().value("store") == 0;
            }))
            std::cout << "  then store=scalar and store=copy of the math=simt candidates within 5% of the fastest (at "
                         "most 48), where legal\n";
    }
    return 0;
}

int runBench(const BenchOptions &options)
{
    if (options.list)
        return listCandidates(options);
    if (options.metrics && options.calibration.empty()) {
        std::cerr << "stitchcuda: --metrics needs --calibration FILE (the dimensions go to FILE's .dimensions.csv)\n";
        return 2;
    }
    runner::WorkerOptions worker;
    worker.deviceOrdinal = options.device;
    runner::Runner runner(worker, nullptr);
    auto device = runner.device();
    if (!device) {
        std::cerr << "stitchcuda: no GPU: " << device.error().message << "\n";
        return 1;
    }
    const std::string arch = device->device.arch;
    const ArchLimits *limits = ArchDatabase::builtin().arch(arch);
    if (!limits) {
        std::cerr << "stitchcuda: architecture " << arch << " is not in the database\n";
        return 1;
    }
    std::fprintf(stderr, "bench on %s (%s)\n", device->device.name.c_str(), arch.c_str());
    nlohmann::json cases = nlohmann::json::array();
    int failures = 0;
    SweepTimer timer(runner, options);
    const auto selection = bench::selectCases(options.only, options.shapes);
    if (!selection) {
        std::cerr << "stitchcuda: " << selection.error().message << "\n";
        return 2;
    }
    for (const auto &c : *selection) {
        const std::string id = c.family + ":" + c.shape;
        // --agents: the example source at the case's sizes and the agents' choice on it.
        std::optional<AgentsChoice> choice;
        if (options.agents >= 0) {
            auto chosen = agentsChoice(c, options, arch, runner);
            if (!chosen) {
                std::fprintf(stderr, "%s: the agents chose nothing: %s\n", id.c_str(), chosen.error().message.c_str());
                ++failures;
                continue;
            }
            choice = std::move(*chosen);
            std::fprintf(stderr, "%s: agents (budget %d, %.0f ms to decide): %s\n", id.c_str(), options.agents,
                         choice->decideMs, choice->summary.c_str());
        }
        const schedule::Problem problem =
            choice ? choice->input->problem() : schedule::Problem{c.graph, c.sizes, *limits, c.precision};
        auto found = choice ? Result<std::vector<schedule::Schedule>>(std::vector<schedule::Schedule>{choice->schedule})
                            : bench::caseCandidates(id, problem, sweepOptions(options));
        if (!found) {
            std::fprintf(stderr, "%s\n", found.error().message.c_str());
            if (found.error().kind == ErrorKind::InvalidArgument)
                return 2;
            ++failures;
            continue;
        }
        std::vector<schedule::Schedule> candidates = std::move(*found);
        if (candidates.empty()) {
            std::fprintf(stderr, "%s: skipped, no candidate matches --where\n", id.c_str());
            continue;
        }
        // Compile candidates in parallel (NVRTC is thread-safe), then time them one by one.
        std::vector<Result<Built>> built;
        std::vector<double> times;
        auto timeFrom = [&](std::size_t first) {
            auto more = bench::parallelMap(candidates.size() - first, [&](std::size_t j) {
                return bench::buildCandidate(problem, candidates[first + j], arch);
            });
            for (auto &b : more)
                built.push_back(std::move(b));
            for (std::size_t i = first; i < built.size(); ++i)
                times.push_back(timer.time(c, problem, candidates[i], built[i], i));
        };
        timeFrom(0);
        // Second round: what only timing decides (secondRound: the GEMM epilogue's store).
        std::vector<schedule::Schedule> stores;
        if (!choice)
            stores = bench::secondRound(problem, candidates, times, sweepOptions(options));
        if (!stores.empty()) {
            const std::size_t first = candidates.size();
            candidates.insert(candidates.end(), stores.begin(), stores.end());
            timeFrom(first);
        }
        const auto fastest = std::min_element(times.begin(), times.end());
        const int best = fastest == times.end() || *fastest >= 1e30 ? -1 : static_cast<int>(fastest - times.begin());
        if (best < 0)
            continue;
        // The winner: verified against the generic program on the GPU, then timed properly.
        auto reference = bench::buildCandidate(problem, bench::referenceSchedule(problem), arch);
        if (!reference) {
            std::fprintf(stderr, "%s: reference does not build: %s\n", id.c_str(), reference.error().message.c_str());
            ++failures;
            continue;
        }
        runner::RunRequest request;
        request.job.module = built[static_cast<std::size_t>(best)]->compiled.cubin;
        request.job.plan = built[static_cast<std::size_t>(best)]->plan;
        request.job.reference = runner::GpuReference{reference->compiled.cubin, reference->plan, {}};
        request.job.measure = {true, true, 3, options.repeats, true, false, false};
        request.job.measure.settleMs = options.settleMs;
        request.job.precision =
            c.precision == schedule::Precision::TF32 ? runner::PrecisionPolicy::TF32 : runner::PrecisionPolicy::FP32;
        request.job.deadlineMs = 120000;
        auto r = runner.run(std::move(request));
        if (!r) {
            std::fprintf(stderr, "%s: final run failed: %s\n", id.c_str(), r.error().message.c_str());
            ++failures;
            continue;
        }
        const bool verified = r->verification && r->verification->verified;
        double relError = 0;
        if (r->verification)
            for (const auto &o : r->verification->outputs)
                relError = std::max(relError, o.relativeError);
        const auto &t = *r->timing;
        nlohmann::json j = {{"case", c.family},
                            {"shape", c.shape},
                            {"schedule", scheduleText(candidates[static_cast<std::size_t>(best)])},
                            {"candidates", candidates.size()},
                            {"median_ms", t.medianMs},
                            {"min_ms", t.minMs},
                            {"max_ms", t.maxMs},
                            {"verified", verified},
                            {"rel_error", relError},
                            {"settle_ms", options.settleMs},
                            {"tflops", c.flops > 0 ? nlohmann::json(c.flops / (t.medianMs * 1e-3) / 1e12) : nlohmann::json()},
                            {"gbps", c.flops > 0 ? nlohmann::json() : nlohmann::json(c.bytes / (t.medianMs * 1e-3) / 1e9)}};
        if (choice) {
            j["agents_budget"] = options.agents;
            j["source"] = (std::filesystem::path(options.examples) / familyExample(c.family)).string();
            j["decide_ms"] = choice->decideMs;
            j["agents_summary"] = choice->summary;
        }
        std::fprintf(stderr, "%-28s %9.4f ms [%.4f, %.4f]  %s  %s  rel %.2g  (%zu candidates)  %s\n", id.c_str(), t.medianMs,
                     t.minMs, t.maxMs,
                     c.flops > 0 ? (std::to_string(c.flops / (t.medianMs * 1e-3) / 1e12).substr(0, 6) + " TFLOP/s").c_str()
                                 : (std::to_string(c.bytes / (t.medianMs * 1e-3) / 1e9).substr(0, 7) + " GB/s").c_str(),
                     verified ? "verified" : "WRONG", relError, candidates.size(),
                     scheduleText(candidates[static_cast<std::size_t>(best)]).c_str());
        failures += verified ? 0 : 1;
        cases.push_back(j);
        if (!options.out.empty()) // after every case, so a time limit loses nothing measured
            std::ofstream(options.out) << nlohmann::json({{"device", device->device.name}, {"arch", arch}, {"cases", cases}}).dump(2)
                                       << "\n";
    }
    nlohmann::json out = {{"device", device->device.name}, {"arch", arch}, {"cases", cases}};
    std::cout << out.dump(2) << "\n";
    return failures + timer.failures() == 0 ? 0 : 1;
}

} // namespace stitch::cli
