// `stitchcuda calibrate CSV`: checks the rubric's performance model against stored measurements,
// without a GPU. Every candidate of a `stitchcuda bench --calibration` file is generated again,
// compiled with NVRTC and predicted by the current model; the table gives Spearman's rho of
// predicted against measured times per case (issue 5: >= 0.85 per problem over >= 200 schedules).
#include "BenchCases.h"
#include "Commands.h"
#include "Parallel.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/rubric/Calibration.h"
#include "core/rubric/CompileStore.h"
#include "core/rubric/Dimensions.h"
#include "core/rubric/MeasuredDimensions.h"
#include "core/rubric/PerfModel.h"
#include "core/rubric/Rubric.h"
#include "core/schedule/Space.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <tuple>

namespace stitch::cli {

void reportStoreFailures(const rubric::CompileCache &cache);

namespace {

/// A measured candidate generated and compiled again from its recorded schedule.
struct Rebuilt {
    schedule::Problem problem;
    codegen::GeneratedProgram program;
    std::shared_ptr<const cuda::CompileResult> compiled;
};

/// The bench table's cases and those at the other shapes `rows` name (bench --shape); a row whose
/// family or shape is not valid is left to rebuild(), which says so for that row.
std::vector<BenchCase> casesFor(const std::vector<rubric::CalibrationRow> &rows)
{
    auto cases = allCases();
    for (const auto &r : rows)
        (void)addCase(cases, r.family, r.shape);
    return cases;
}

/// `cache` (backed by the --cache store, if any) keeps NVRTC results between runs.
Result<Rebuilt> rebuild(const rubric::CalibrationRow &measured, const std::vector<BenchCase> &cases,
                        const ArchLimits &arch, rubric::CompileCache &cache)
{
    const BenchCase *c = findCase(cases, measured.family, measured.shape);
    if (!c)
        return Error{ErrorKind::InvalidArgument, "no bench case " + measured.family + ":" + measured.shape};
    schedule::Problem problem{c->graph, c->sizes, arch, c->precision};
    auto base = schedule::defaultSchedule(problem);
    if (!base)
        return base.error();
    auto s = schedule::applyDescriptions(*base, measured.schedule);
    if (!s)
        return s.error();
    auto program = codegen::generateProgram(problem, *s);
    if (!program)
        return program.error();
    auto compiled = cache.compile(program->source, arch.name, program->name + ".cu");
    if (!compiled)
        return compiled.error();
    return Rebuilt{problem, std::move(*program), std::move(*compiled)};
}

/// Re-predicts one measured candidate; the row keeps its measurement.
Result<rubric::CalibrationRow> repredict(const rubric::CalibrationRow &measured, const std::vector<BenchCase> &cases,
                                         const ArchLimits &arch, const rubric::PerfModel &model,
                                         rubric::CompileCache &cache)
{
    auto built = rebuild(measured, cases, arch, cache);
    if (!built)
        return built.error();
    rubric::ProgramFacts facts;
    auto predicted = model.predictProgram(built->problem, built->program, built->compiled.get(), &facts);
    if (!predicted)
        return predicted.error();
    rubric::CalibrationRow row = measured;
    row.predictedMs = predicted->ms;
    row.facts = rubric::calibrationFacts(facts, *predicted);
    return row;
}

/// calibrate --by: the residual groups of every problem (rubric::groupResiduals), one table.
void printResiduals(const std::vector<rubric::CalibrationRow> &rows, const std::vector<std::string> &by)
{
    std::vector<std::string> keys;
    for (const auto &text : by)
        for (std::size_t at = 0; at <= text.size();) {
            const std::size_t comma = std::min(text.find(',', at), text.size());
            if (comma > at)
                keys.push_back(text.substr(at, comma - at));
            at = comma + 1;
        }
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

/// One --vary option: a model constant and the values to try.
struct Varied {
    std::string name;
    std::vector<double> values;
};

Result<Varied> parseVary(const std::string &text, const std::string &option = "--vary")
{
    const auto eq = text.find('=');
    auto bad = [&](const std::string &why) {
        return Error{ErrorKind::InvalidArgument, option + " " + text + ": " + why + " (expected NAME=V1,V2,...)"};
    };
    if (eq == std::string::npos || eq == 0)
        return bad("no NAME=");
    Varied v{text.substr(0, eq), {}};
    std::string rest = text.substr(eq + 1);
    std::size_t at = 0;
    while (at <= rest.size()) {
        const auto comma = std::min(rest.find(',', at), rest.size());
        const std::string item = rest.substr(at, comma - at);
        char *end = nullptr;
        const double value = std::strtod(item.c_str(), &end);
        if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(value))
            return bad("'" + item + "' is not a number");
        v.values.push_back(value);
        at = comma + 1;
    }
    rubric::PerfModel::Params probe;
    if (auto st = probe.set(v.name, v.values.front()); !st)
        return st.error();
    return v;
}

/// calibrate --vary: every candidate generated, compiled and analysed once, then predicted under each
/// combination of the varied constants; one line of rho per problem (and their minimum) per combination.
int runVary(const std::vector<rubric::CalibrationRow> &measured, const std::vector<Varied> &varied,
            const rubric::PerfModel::Params &base, const ArchLimits &arch, rubric::CompileCache &cache,
            const std::string &file)
{
    const auto cases = casesFor(measured);
    std::vector<std::string> errors(measured.size());
    std::vector<rubric::ProgramFacts> facts(measured.size());
    const auto failed = parallelMap(measured.size(), [&](std::size_t i) -> std::string {
        auto built = rebuild(measured[i], cases, arch, cache);
        if (!built)
            return built.error().message;
        auto f = rubric::analyzeProgram(built->problem, built->program, built->compiled.get());
        if (!f)
            return f.error().message;
        facts[i] = std::move(*f);
        return {};
    });
    reportStoreFailures(cache);
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < measured.size(); ++i) {
        if (failed[i].empty()) {
            kept.push_back(i);
            continue;
        }
        std::fprintf(stderr, "%s:%d: candidate %d of %s:%s: %s (left out)\n", file.c_str(), static_cast<int>(i) + 2,
                     measured[i].candidate, measured[i].family.c_str(), measured[i].shape.c_str(), failed[i].c_str());
    }
    std::size_t combinations = 1;
    for (const auto &v : varied)
        combinations *= v.values.size();
    bool header = true;
    for (std::size_t c = 0; c < combinations; ++c) {
        rubric::PerfModel::Params params = base;
        std::string label;
        for (std::size_t n = 0, rest = c; n < varied.size(); ++n) {
            const double value = varied[n].values[rest % varied[n].values.size()];
            rest /= varied[n].values.size();
            (void)params.set(varied[n].name, value); // checked by parseVary
            char text[32];
            std::snprintf(text, sizeof text, "%g", value);
            label += (label.empty() ? "" : " ") + varied[n].name + "=" + text;
        }
        const rubric::PerfModel model(params);
        std::vector<rubric::CalibrationRow> rows;
        for (const std::size_t i : kept) {
            rubric::CalibrationRow row = measured[i];
            row.predictedMs = model.predict(facts[i]).ms;
            rows.push_back(std::move(row));
        }
        const auto summary = rubric::summarizeCalibration(rows);
        if (header) {
            std::printf("| constants |");
            for (const auto &s : summary)
                std::printf(" %s %s (%d) |", s.family.c_str(), s.shape.c_str(), s.schedules);
            std::printf(" lowest |\n|---|");
            for (std::size_t s = 0; s <= summary.size(); ++s)
                std::printf("---|");
            std::printf("\n");
            header = false;
        }
        double lowest = 1;
        std::printf("| %s |", label.c_str());
        for (const auto &s : summary) {
            std::printf(" %.3f |", s.rho);
            lowest = std::min(lowest, s.rho);
        }
        std::printf(" %.3f |\n", lowest);
        std::fflush(stdout);
    }
    return kept.size() == measured.size() ? 0 : 1;
}

} // namespace

/// The static side of every dimension row derived again with the current rubric from the
/// candidates' schedules (the calibration CSV of the same run); the measured side is kept.
/// Coalescing and bank conflicts keep the run's values (see below).
Status restaticDimensions(std::vector<rubric::DimensionRow> &rows, const std::vector<rubric::CalibrationRow> &candidates,
                          const ArchLimits &arch, rubric::CompileCache &cache)
{
    const auto cases = casesFor(candidates);
    std::map<std::tuple<std::string, std::string, int>, std::size_t> index;
    for (std::size_t i = 0; i < candidates.size(); ++i)
        index[{candidates[i].family, candidates[i].shape, candidates[i].candidate}] = i;
    std::vector<std::size_t> needed;
    for (const auto &r : rows) {
        auto it = index.find({r.family, r.shape, r.candidate});
        if (it == index.end())
            return Error{ErrorKind::InvalidArgument, "candidate " + std::to_string(r.candidate) + " of " + r.family +
                                                         ":" + r.shape + " is not in the calibration CSV"};
        if (std::find(needed.begin(), needed.end(), it->second) == needed.end())
            needed.push_back(it->second);
    }
    // candidate -> kernel -> dimension -> the static side
    std::vector<std::map<std::string, std::map<std::string, rubric::DimensionComparison>>> statics(candidates.size());
    std::vector<std::string> errors(candidates.size());
    const auto failed = parallelMap(needed.size(), [&](std::size_t n) -> std::string {
        const std::size_t i = needed[n];
        auto built = rebuild(candidates[i], cases, arch, cache);
        if (!built)
            return built.error().message;
        auto facts = rubric::analyzeProgram(built->problem, built->program, built->compiled.get());
        if (!facts)
            return facts.error().message;
        rubric::PerfModel().predict(*facts); // the expected achieved occupancy
        for (const auto &k : facts->kernels)
            for (const auto &c : rubric::compareWithMetrics(k, *facts, {}))
                statics[i][k.name][c.dimension] = c;
        return {};
    });
    for (std::size_t n = 0; n < needed.size(); ++n)
        errors[needed[n]] = failed[n];
    for (auto &r : rows) {
        const std::size_t i = index.at({r.family, r.shape, r.candidate});
        if (!errors[i].empty())
            return Error{ErrorKind::InvalidArgument, r.family + ":" + r.shape + " candidate " +
                                                         std::to_string(r.candidate) + ": " + errors[i]};
        auto k = statics[i].find(r.kernel);
        if (k == statics[i].end())
            continue;
        // Coalescing and bank conflicts scale the measured requests by the static ideal per
        // request of the run: their two sides change together, so they keep the run's values.
        const std::string base = r.comparison.dimension.substr(0, r.comparison.dimension.find(':'));
        if (base == "coalescing" || base == "bank_conflicts")
            continue;
        auto d = k->second.find(r.comparison.dimension);
        if (d == k->second.end())
            continue;
        r.comparison.staticScore = d->second.staticScore;
        r.comparison.staticValue = d->second.staticValue;
    }
    return Ok{};
}

/// Says once, after the run, that some results were not kept (each was still compiled and used).
void reportStoreFailures(const rubric::CompileCache &cache)
{
    if (const auto error = cache.storeError())
        std::fprintf(stderr, "stitchcuda: %d results not kept in the cache: %s\n", cache.stats().storeFailures,
                     error->toString().c_str());
}

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
            const Status st = restaticDimensions(*rows, *candidates, *arch, cache);
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
    for (const auto &text : options.set) {
        auto v = parseVary(text, "--set");
        if (v && v->values.size() != 1)
            v = Error{ErrorKind::InvalidArgument, "--set " + text + ": one value (NAME=V)"};
        if (!v) {
            std::cerr << "stitchcuda: " << v.error().toString() << "\n";
            return 2;
        }
        (void)params.set(v->name, v->values.front()); // checked by parseVary
    }
    if (!options.vary.empty()) {
        std::vector<Varied> varied;
        for (const auto &text : options.vary) {
            auto v = parseVary(text);
            if (!v) {
                std::cerr << "stitchcuda: " << v.error().toString() << "\n";
                return 2;
            }
            varied.push_back(std::move(*v));
        }
        return runVary(*measured, varied, params, *arch, cache, options.file);
    }
    const auto cases = casesFor(*measured);
    const rubric::PerfModel model(params);
    auto rows = parallelMap(measured->size(),
                            [&](std::size_t j) { return repredict((*measured)[j], cases, *arch, model, cache); });
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
