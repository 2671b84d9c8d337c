// `stitchcuda calibrate CSV`: checks the rubric's performance model against stored measurements,
// without a GPU. Every candidate of a `stitchcuda bench --calibration` file is generated again,
// compiled with NVRTC and predicted by the current model; the table gives Spearman's rho of
// predicted against measured times per case (issue 5: >= 0.85 per problem over >= 200 schedules).
#include "BenchCases.h"
#include "Commands.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/rubric/Calibration.h"
#include "core/rubric/Dimensions.h"
#include "core/rubric/MeasuredDimensions.h"
#include "core/rubric/PerfModel.h"
#include "core/schedule/Space.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <thread>

namespace stitch::cli {

namespace {

/// Re-predicts one measured candidate; the row keeps its measurement.
Result<rubric::CalibrationRow> repredict(const rubric::CalibrationRow &measured, const std::vector<BenchCase> &cases,
                                         const ArchLimits &arch, const rubric::PerfModel &model)
{
    const BenchCase *c = findCase(cases, measured.family, measured.shape);
    if (!c)
        return Error{ErrorKind::InvalidArgument, "no bench case " + measured.family + ":" + measured.shape};
    schedule::Problem problem{c->graph, c->sizes, arch, schedule::Precision::FP32};
    auto base = schedule::defaultSchedule(problem);
    if (!base)
        return base.error();
    auto s = schedule::applyDescriptions(*base, measured.schedule);
    if (!s)
        return s.error();
    auto program = codegen::generateProgram(problem, *s);
    if (!program)
        return program.error();
    auto compiled = codegen::compileGenerated(program->source, program->name + ".cu", arch.name);
    if (!compiled)
        return compiled.error();
    rubric::ProgramFacts facts;
    auto predicted = model.predictProgram(problem, *program, &*compiled, &facts);
    if (!predicted)
        return predicted.error();
    rubric::CalibrationRow row = measured;
    row.predictedMs = predicted->ms;
    row.facts = rubric::calibrationFacts(facts, *predicted);
    return row;
}

void printSummary(const std::vector<rubric::CalibrationRow> &rows)
{
    std::printf("| case | shape | schedules | Spearman rho (predicted vs measured) | target >= 0.85 |\n");
    std::printf("|---|---|---|---|---|\n");
    int total = 0;
    for (const auto &s : rubric::summarizeCalibration(rows)) {
        total += s.schedules;
        std::printf("| %s | %s | %d | %.3f | %s |\n", s.family.c_str(), s.shape.c_str(), s.schedules, s.rho,
                    !std::isnan(s.rho) && s.rho >= 0.85 ? "met" : "missed");
    }
    std::printf("\n%d schedules in all\n", total);
}

/// The agreement of static and measured dimensions (a bench --metrics .dimensions.csv).
int printDimensions(const std::string &path)
{
    auto rows = rubric::readDimensions(path);
    if (!rows) {
        std::cerr << "stitchcuda: " << rows.error().toString() << "\n";
        return 1;
    }
    const auto summary = rubric::summarizeDimensions(*rows);
    std::printf("| dimension | kernels compared | within one point | share (target >= 90%%) | mean abs(static - measured) "
                "| not comparable |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const auto &a : summary)
        std::printf("| %s | %d | %d | %s | %s | %d |\n", a.dimension.c_str(), a.compared, a.withinOnePoint,
                    a.compared ? (rubric::fmt(100 * a.share(), 1) + "% " + (a.share() >= 0.9 ? "met" : "missed")).c_str()
                               : "-",
                    a.compared ? rubric::fmt(a.meanAbsDifference, 2).c_str() : "-", a.notComparable);
    int compared = 0, within = 0;
    for (const auto &a : summary)
        if (a.dimension.find(':') == std::string::npos) { // the dimensions, not their second views
            compared += a.compared;
            within += a.withinOnePoint;
        }
    std::printf("\n%zu rows; the dimensions (second views left out): %d of %d comparisons within one point (%s)\n",
                rows->size(), within, compared, compared ? (rubric::fmt(100.0 * within / compared, 1) + "%").c_str() : "-");
    std::printf("\nhard_limits and final_performance have no counter counterpart (a kernel that ran passed the limits; "
                "measured times are the ranking calibration).\n");
    for (const auto &a : summary) {
        if (a.notComparable > 0)
            std::printf("\n%s: %d not comparable, e.g. %s\n", a.dimension.c_str(), a.notComparable,
                        a.firstReason.c_str());
        if (a.worst.empty() || a.worst.front().comparison.staticScore == a.worst.front().comparison.measuredScore)
            continue;
        std::printf("\n%s, worst cases:\n", a.dimension.c_str());
        for (const auto &r : a.worst) {
            const auto &c = r.comparison;
            if (c.staticScore == c.measuredScore)
                continue;
            std::printf("  %s:%s candidate %d %s: static %.1f, measured %.1f (%s: %s | %s)%s%s\n", r.family.c_str(),
                        r.shape.c_str(), r.candidate, r.kernel.c_str(), c.staticScore, c.measuredScore,
                        c.quantity.c_str(), rubric::fmt(c.staticValue, 3).c_str(),
                        rubric::fmt(c.measuredValue, 3).c_str(), c.note.empty() ? "" : "; ", c.note.c_str());
        }
    }
    return 0;
}

} // namespace

int runCalibrate(const CalibrateOptions &options)
{
    if (!options.dimensions.empty())
        return printDimensions(options.dimensions);
    if (options.file.empty()) {
        std::cerr << "stitchcuda: calibrate needs a bench --calibration CSV, or --dimensions FILE\n";
        return 2;
    }
    auto measured = rubric::readCalibration(options.file);
    if (!measured) {
        std::cerr << "stitchcuda: " << measured.error().toString() << "\n";
        return 1;
    }
    if (options.summaryOnly) {
        printSummary(*measured);
        return 0;
    }
    const ArchLimits *arch = ArchDatabase::builtin().arch(options.arch);
    if (!arch) {
        std::cerr << "stitchcuda: architecture " << options.arch << " is not in the database\n";
        return 2;
    }
    const auto cases = allCases();
    const rubric::PerfModel model;
    std::vector<rubric::CalibrationRow> rows(measured->size());
    std::vector<std::string> errors(measured->size());
    // NVRTC is thread-safe: compile on every core.
    const std::size_t parallel = std::max(1u, std::thread::hardware_concurrency());
    for (std::size_t i = 0; i < measured->size(); i += parallel) {
        std::vector<std::future<void>> jobs;
        for (std::size_t j = i; j < std::min(measured->size(), i + parallel); ++j)
            jobs.push_back(std::async(std::launch::async, [&, j] {
                auto r = repredict((*measured)[j], cases, *arch, model);
                if (r)
                    rows[j] = std::move(*r);
                else
                    errors[j] = r.error().message;
            }));
        for (auto &f : jobs)
            f.get();
    }
    int failures = 0;
    std::vector<rubric::CalibrationRow> done;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (!errors[i].empty()) {
            std::fprintf(stderr, "%s:%d: candidate %d of %s:%s: %s\n", options.file.c_str(), static_cast<int>(i) + 2,
                         (*measured)[i].candidate, (*measured)[i].family.c_str(), (*measured)[i].shape.c_str(),
                         errors[i].c_str());
            ++failures;
            continue;
        }
        done.push_back(std::move(rows[i]));
    }
    if (!options.out.empty()) {
        std::ofstream out(options.out);
        if (!out) {
            std::cerr << "stitchcuda: " << options.out << ": cannot write\n";
            return 1;
        }
        rubric::writeCalibrationHeader(out);
        for (const auto &r : done)
            rubric::writeCalibrationRow(out, r);
    }
    printSummary(done);
    return failures ? 1 : 0;
}

} // namespace stitch::cli
