#include "core/bench/Calibrate.h"

#include "core/bench/ParallelMap.h"
#include "core/rubric/Dimensions.h"
#include "core/schedule/Space.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

namespace stitch::bench {

std::vector<BenchCase> casesFor(const std::vector<rubric::CalibrationRow> &rows)
{
    auto cases = allCases();
    for (const auto &r : rows)
        (void)addCase(cases, r.family, r.shape);
    return cases;
}

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

namespace {

/// The measured candidate rebuilt and analysed: the facts the model predicts from.
Result<rubric::ProgramFacts> analyseRow(const rubric::CalibrationRow &measured, const std::vector<BenchCase> &cases,
                                        const ArchLimits &arch, rubric::CompileCache &cache)
{
    auto built = rebuild(measured, cases, arch, cache);
    if (!built)
        return built.error();
    return rubric::analyzeProgram(built->problem, built->program, built->compiled.get());
}

} // namespace

std::vector<Result<rubric::CalibrationRow>> repredictRows(const std::vector<rubric::CalibrationRow> &measured,
                                                          const ArchLimits &arch, const rubric::PerfModel &model,
                                                          rubric::CompileCache &cache)
{
    const auto cases = casesFor(measured);
    return parallelMap(measured.size(), [&](std::size_t j) -> Result<rubric::CalibrationRow> {
        auto built = rebuild(measured[j], cases, arch, cache);
        if (!built)
            return built.error();
        rubric::ProgramFacts facts;
        auto predicted = model.predictProgram(built->problem, built->program, built->compiled.get(), &facts);
        if (!predicted)
            return predicted.error();
        rubric::CalibrationRow row = measured[j];
        row.predictedMs = predicted->ms;
        row.facts = rubric::calibrationFacts(facts, *predicted);
        return row;
    });
}

Result<Constant> parseConstant(const std::string &text, const std::string &option)
{
    const auto eq = text.find('=');
    auto bad = [&](const std::string &why) {
        return Error{ErrorKind::InvalidArgument, option + " " + text + ": " + why + " (expected NAME=V1,V2,...)"};
    };
    if (eq == std::string::npos || eq == 0)
        return bad("no NAME=");
    Constant v{text.substr(0, eq), {}};
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

Status applySettings(rubric::PerfModel::Params &params, const std::vector<std::string> &settings)
{
    for (const auto &text : settings) {
        auto v = parseConstant(text, "--set");
        if (v && v->values.size() != 1)
            v = Error{ErrorKind::InvalidArgument, "--set " + text + ": one value (NAME=V)"};
        if (!v)
            return v.error();
        (void)params.set(v->name, v->values.front()); // checked by parseConstant
    }
    return Ok{};
}

AnalysedRows analyseRows(const std::vector<rubric::CalibrationRow> &measured, const ArchLimits &arch,
                         rubric::CompileCache &cache)
{
    const auto cases = casesFor(measured);
    AnalysedRows out;
    out.facts.resize(measured.size());
    out.failed = parallelMap(measured.size(), [&](std::size_t i) -> std::string {
        auto f = analyseRow(measured[i], cases, arch, cache);
        if (!f)
            return f.error().message;
        out.facts[i] = std::move(*f);
        return {};
    });
    return out;
}

void varyConstants(const std::vector<rubric::CalibrationRow> &measured, AnalysedRows &analysed,
                   const std::vector<Constant> &varied, const rubric::PerfModel::Params &base,
                   const std::function<void(const VariedFit &)> &each)
{
    std::size_t combinations = 1;
    for (const auto &v : varied)
        combinations *= v.values.size();
    for (std::size_t c = 0; c < combinations; ++c) {
        rubric::PerfModel::Params params = base;
        VariedFit fit;
        for (std::size_t n = 0, rest = c; n < varied.size(); ++n) {
            const double value = varied[n].values[rest % varied[n].values.size()];
            rest /= varied[n].values.size();
            (void)params.set(varied[n].name, value); // checked by parseConstant
            char text[32];
            std::snprintf(text, sizeof text, "%g", value);
            fit.label += (fit.label.empty() ? "" : " ") + varied[n].name + "=" + text;
        }
        const rubric::PerfModel model(params);
        std::vector<rubric::CalibrationRow> rows;
        for (std::size_t i = 0; i < measured.size(); ++i) {
            if (!analysed.failed[i].empty())
                continue;
            rubric::CalibrationRow row = measured[i];
            row.predictedMs = model.predict(analysed.facts[i]).ms;
            rows.push_back(std::move(row));
        }
        fit.summary = rubric::summarizeCalibration(rows);
        for (const auto &s : fit.summary)
            fit.lowest = std::min(fit.lowest, s.rho);
        each(fit);
    }
}

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
        auto facts = analyseRow(candidates[i], cases, arch, cache);
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

std::vector<std::string> splitKeys(const std::vector<std::string> &texts)
{
    std::vector<std::string> keys;
    for (const auto &text : texts)
        for (std::size_t at = 0; at <= text.size();) {
            const std::size_t comma = std::min(text.find(',', at), text.size());
            if (comma > at)
                keys.push_back(text.substr(at, comma - at));
            at = comma + 1;
        }
    return keys;
}

} // namespace stitch::bench
