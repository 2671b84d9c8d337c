// `stitchcuda calibrate CSV`: checks the rubric's performance model against stored measurements,
// without a GPU. Every candidate of a `stitchcuda bench --calibration` file is generated again,
// compiled with NVRTC and predicted by the current model (core/bench/Calibrate.h); the table gives
// Spearman's rho of predicted against measured times per case (issue 5: >= 0.85 per problem over
// >= 200 schedules).
#include "Commands.h"

#include "core/arch/ArchDatabase.h"
#include "core/bench/Calibrate.h"
#include "core/rubric/Calibration.h"
#include "core/rubric/CompileStore.h"
#include "core/rubric/Dimensions.h"
#include "core/rubric/MeasuredDimensions.h"
#include "core/rubric/PerfModel.h"
#include "core/rubric/Rubric.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

namespace stitch::cli {

namespace {

/// Says once, after the run, that some results were not kept (each was still compiled and used).
void reportStoreFailures(const rubric::CompileCache &cache)
{
    if (const auto error = cache.storeError())
        std::fprintf(stderr, "stitchcuda: %d results not kept in the cache: %s\n", cache.stats().storeFailures,
                     error->toString().c_str());
}

/// calibrate --by: the residual groups of every problem (rubric::groupResiduals), one table.
void printResiduals(const std::vector<rubric::CalibrationRow> &rows, const std::vector<std::string> &by)
{
    const std::vector<std::string> keys = bench::splitKeys(by);
    if (keys.empty())
        return;
    std::printf("\n| case | shape | group | schedules | median ln(predicted / measured), less the problem's | spread (sd) |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const auto &g : rubric::groupResiduals(rows, keys))
        std::printf("| %s | %s | %s | %d | %+.3f | %.3f |\n", g.family.c_str(), g.shape.c_str(), g.values.c_str(),
                    g.schedules, g.median, g.spread);
}

void printSummary(const std::vector<rubric::CalibrationRow> &rows)
{
    std::printf("| case | shape | schedules | Spearman rho (predicted vs measured) | even candidates | odd candidates "
                "| target >= 0.85 |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    int total = 0;
    for (const auto &s : rubric::summarizeCalibration(rows)) {
        total += s.schedules;
        std::printf("| %s | %s | %d | %.3f | %.3f | %.3f | %s |\n", s.family.c_str(), s.shape.c_str(), s.schedules, s.rho,
                    s.rhoEven, s.rhoOdd, !std::isnan(s.rho) && s.rho >= 0.85 ? "met" : "missed");
    }
    std::printf("\n%d schedules in all\n", total);
}

/// The agreement of static and measured dimensions (a bench --metrics .dimensions.csv).
int printDimensions(const std::vector<rubric::DimensionRow> *rows)
{
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

/// calibrate --vary: every candidate generated, compiled and analysed once, then predicted under each
/// combination of the varied constants; one line of rho per problem (and their minimum) per combination.
int runVary(const std::vector<rubric::CalibrationRow> &measured, const std::vector<bench::Constant> &varied,
            const rubric::PerfModel::Params &base, const ArchLimits &arch, rubric::CompileCache &cache,
            const std::string &file)
{
    auto analysed = bench::analyseRows(measured, arch, cache);
    reportStoreFailures(cache);
    bool complete = true;
    for (std::size_t i = 0; i < measured.size(); ++i) {
        if (analysed.failed[i].empty())
            continue;
        complete = false;
        std::fprintf(stderr, "%s:%d: candidate %d of %s:%s: %s (left out)\n", file.c_str(), static_cast<int>(i) + 2,
                     measured[i].candidate, measured[i].family.c_str(), measured[i].shape.c_str(),
                     analysed.failed[i].c_str());
    }
    bool header = true;
    bench::varyConstants(measured, analysed, varied, base, [&](const bench::VariedFit &fit) {
        if (header) {
            std::printf("| constants |");
            for (const auto &s : fit.summary)
                std::printf(" %s %s (%d) |", s.family.c_str(), s.shape.c_str(), s.schedules);
            std::printf(" lowest |\n|---|");
            for (std::size_t s = 0; s <= fit.summary.size(); ++s)
                std::printf("---|");
            std::printf("\n");
            header = false;
        }
        std::printf("| %s |", fit.label.c_str());
        for (const auto &s : fit.summary)
            std::printf(" %.3f |", s.rho);
        std::printf(" %.3f |\n", fit.lowest);
        std::fflush(stdout);
    });
    return complete ? 0 : 1;
}

} // namespace

int runCalibrate(const CalibrateOptions &options)
{
    // One compile path with the rubric: memory, then the --cache store, then NVRTC (saved to the store).
    rubric::CompileCache cache(options.cache.empty() ? std::nullopt : std::optional<rubric::CompileStore>(options.cache));
    if (!options.dimensions.empty()) {
        auto rows = rubric::readDimensions(options.dimensions);
        if (!rows) {
            std::cerr << "stitchcuda: " << rows.error().toString() << "\n";
            return 1;
        }
        if (!options.file.empty()) {
            const ArchLimits *arch = ArchDatabase::builtin().arch(options.arch);
            auto candidates = rubric::readCalibration(options.file);
            if (!arch || !candidates) {
                std::cerr << "stitchcuda: "
                          << (arch ? candidates.error().toString() : "architecture " + options.arch + " is not in the database")
                          << "\n";
                return arch ? 1 : 2;
            }
            const Status st = bench::restaticDimensions(*rows, *candidates, *arch, cache);
            reportStoreFailures(cache);
            if (!st) {
                std::cerr << "stitchcuda: " << st.error().toString() << "\n";
                return 1;
            }
            if (!options.out.empty()) {
                std::ofstream out(options.out);
                rubric::writeDimensionHeader(out);
                for (const auto &r : *rows)
                    rubric::writeDimensionRow(out, r);
            }
        }
        return printDimensions(&*rows);
    }
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
        printResiduals(*measured, options.by);
        return 0;
    }
    const ArchLimits *arch = ArchDatabase::builtin().arch(options.arch);
    if (!arch) {
        std::cerr << "stitchcuda: architecture " << options.arch << " is not in the database\n";
        return 2;
    }
    rubric::PerfModel::Params params;
    if (auto st = bench::applySettings(params, options.set); !st) {
        std::cerr << "stitchcuda: " << st.error().toString() << "\n";
        return 2;
    }
    if (!options.vary.empty()) {
        std::vector<bench::Constant> varied;
        for (const auto &text : options.vary) {
            auto v = bench::parseConstant(text);
            if (!v) {
                std::cerr << "stitchcuda: " << v.error().toString() << "\n";
                return 2;
            }
            varied.push_back(std::move(*v));
        }
        return runVary(*measured, varied, params, *arch, cache, options.file);
    }
    auto rows = bench::repredictRows(*measured, *arch, rubric::PerfModel(params), cache);
    reportStoreFailures(cache);
    int failures = 0;
    std::vector<rubric::CalibrationRow> done;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (!rows[i]) {
            std::fprintf(stderr, "%s:%d: candidate %d of %s:%s: %s\n", options.file.c_str(), static_cast<int>(i) + 2,
                         (*measured)[i].candidate, (*measured)[i].family.c_str(), (*measured)[i].shape.c_str(),
                         rows[i].error().message.c_str());
            ++failures;
            continue;
        }
        done.push_back(std::move(*rows[i]));
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
    printResiduals(done, options.by);
    return failures ? 1 : 0;
}

} // namespace stitch::cli
