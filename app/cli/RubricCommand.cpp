// `stitchcuda rubric`: graph + schedule -> generated program -> NVRTC -> every rubric dimension
// per kernel and for the program, with its evidence and a sentence for the learner.
//   FILE (+ schedule) -> generateProgram -> cuda::compile -> rubric::Rubric::scoreProgram -> text / JSON
#include "Commands.h"
#include "ProblemInput.h"
#include "RubricAsWritten.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/frontend/Lift.h"
#include "core/rubric/Alternatives.h"
#include "core/rubric/Rubric.h"
#include "core/schedule/Space.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace stitch::cli {

namespace {

nlohmann::json scoreJson(const rubric::RubricScore &s)
{
    return {{"dimension", s.dimension}, {"score", s.score},       {"hardViolation", s.hardViolation},
            {"estimated", s.estimated}, {"evidence", s.evidence}, {"sentence", s.sentence}};
}

void printScore(const rubric::RubricScore &s, const char *indent)
{
    std::printf("%s%-22s %3.1f/5%s%s\n", indent, s.dimension.c_str(), s.score, s.estimated ? " (estimated)" : "",
                s.hardViolation ? "  HARD VIOLATION" : "");
    std::printf("%s    %s\n", indent, s.sentence.c_str());
    std::printf("%s    evidence: %s\n", indent, s.evidence.c_str());
}

nlohmann::json alternativesJson(const std::vector<rubric::GroupDecisions> &groups)
{
    auto ms = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json out = nlohmann::json::array();
    for (const auto &g : groups) {
        nlohmann::json gj = {{"kernel", g.name}, {"strategy", g.strategy}, {"estimatedMs", ms(g.estimatedMs)}};
        gj["decisions"] = nlohmann::json::array();
        for (const auto &row : g.rows) {
            nlohmann::json rj = {{"key", row.key}, {"agent", row.category}, {"value", row.value}};
            rj["options"] = nlohmann::json::array();
            for (std::size_t i = 0; i < row.options.size(); ++i) {
                const auto &o = row.options[i];
                nlohmann::json oj = {{"value", o.value}, {"text", o.text}, {"legal", o.legal}};
                if (!o.legal)
                    oj["why"] = o.why;
                else
                    oj["estimatedMs"] = ms(i < row.estimatedMs.size() ? row.estimatedMs[i] : NAN);
                rj["options"].push_back(oj);
            }
            gj["decisions"].push_back(rj);
        }
        out.push_back(gj);
    }
    return out;
}

/// Each decision on a line: its value, then each other legal value's estimated time against the
/// schedule's, then the illegal ones with why.
void printAlternatives(const std::vector<rubric::GroupDecisions> &groups)
{
    for (const auto &g : groups) {
        std::printf("\nalternatives for %s [%s]: the model's time with each other value (registers estimated, "
                    "not compiled; %.1f us as it is)\n",
                    g.name.c_str(), g.strategy.c_str(), g.estimatedMs * 1e3);
        for (const auto &row : g.rows) {
            std::string legal, illegal;
            std::string current;
            for (std::size_t i = 0; i < row.options.size(); ++i) {
                const auto &o = row.options[i];
                if (o.value == row.value) {
                    current = o.text;
                } else if (o.legal) {
                    const double v = i < row.estimatedMs.size() ? row.estimatedMs[i] : NAN;
                    char buf[64];
                    if (std::isfinite(v) && g.estimatedMs > 0)
                        std::snprintf(buf, sizeof buf, " %s %.1f us (%+.0f%%)", o.text.c_str(), v * 1e3,
                                      (v / g.estimatedMs - 1) * 100);
                    else
                        std::snprintf(buf, sizeof buf, " %s (not generated)", o.text.c_str());
                    legal += buf;
                } else {
                    illegal += "\n      " + o.text + ": " + o.why;
                }
            }
            std::printf("  %-14s %-24s [%s]%s%s\n", row.key.c_str(), row.category.c_str(), current.c_str(),
                        legal.c_str(), illegal.c_str());
        }
    }
}

} // namespace

/// The program as written (a .cu file): nullopt and `exitCode` set when it cannot be scored.
static std::optional<rubric::AsWrittenReport> scoreInputAsWritten(const RubricOptions &options, int &exitCode,
                                                           std::optional<Error> &error)
{
    exitCode = 2;
    std::string text;
    if (!readFile(options.file, text))
        return std::nullopt;
    rubric::AsWrittenOptions o;
    o.arch = options.arch;
    o.compile = !options.noCompile;
    auto source = sourceOptions(options.source);
    if (!source) {
        std::cerr << "stitchcuda: " << source.error().message << "\n";
        return std::nullopt;
    }
    o.source = std::move(*source);
    for (const std::string &item : options.sizes) {
        const auto eq = item.find('=');
        std::int64_t value = -1;
        if (eq != std::string::npos && eq > 0) {
            try {
                value = std::stoll(item.substr(eq + 1));
            } catch (const std::exception &) {
                value = -1;
            }
        }
        if (value < 0) {
            std::cerr << "stitchcuda: --size expects NAME=VALUE with VALUE >= 0, got '" << item << "'\n";
            return std::nullopt;
        }
        o.sizes[item.substr(0, eq)] = value;
    }
    auto report = rubric::scoreAsWritten(text, options.file, o);
    if (!report.ok()) {
        error = report.error();
        exitCode = 1;
        return std::nullopt;
    }
    return std::move(*report);
}

int runRubric(const RubricOptions &options)
{
    int exitCode = 2;
    std::optional<rubric::AsWrittenReport> asWritten;
    std::optional<Error> asWrittenError;
    if (frontend::isCudaFileName(options.file)) {
        asWritten = scoreInputAsWritten(options, exitCode, asWrittenError);
        if (!asWritten && (options.asWritten || !asWrittenError))
            return asWrittenError ? reportError(*asWrittenError) : exitCode;
    } else if (options.asWritten) {
        std::cerr << "stitchcuda: --as-written scores a CUDA program (.cu); " << options.file
                  << " is not one: its rubric is the generated program's\n";
        return 2;
    }
    if (options.asWritten) {
        if (options.json)
            std::cout << asWrittenJson(*asWritten).dump(2) << "\n";
        else
            printAsWritten(*asWritten);
        return asWritten->hardViolation ? 1 : 0;
    }

    auto input = loadProblem(options.file, options.sizes, options.arch, options.schedule, options.tf32, exitCode,
                             options.source);
    // Nothing lifted (every kernel opaque): no schedule to generate; the program as written is the report.
    std::string noSchedule;
    if (!input)
        noSchedule = "none: the file does not lift (the error above)";
    else if (input->lifted.graph.ops().empty()) {
        noSchedule = "none: no kernel was lifted";
        for (const auto &o : input->lifted.opaque)
            noSchedule += "; " + o.name + " at " + o.why.location.file + ":" + std::to_string(o.why.location.line) +
                          ":" + std::to_string(o.why.location.column) + ": " + o.why.message;
    }
    if (!noSchedule.empty()) {
        if (!asWritten) {
            if (!input)
                return exitCode;
            std::cerr << options.file << ": error: nothing to score: " << noSchedule << "\n";
            return 1;
        }
        if (options.json) {
            nlohmann::json j = asWrittenJson(*asWritten);
            j["schedule"] = noSchedule;
            std::cout << j.dump(2) << "\n";
        } else {
            printSideBySide(*asWritten, nullptr, noSchedule);
            printAsWritten(*asWritten);
        }
        return asWritten->hardViolation ? 1 : 0;
    }
    const schedule::Schedule &sched = input->schedule;
    const schedule::Problem problem = input->problem();
    rubric::CompileCache cache;
    rubric::Rubric rubric;
    auto scored = rubric::scoreSchedule(rubric, problem, sched, options.noCompile ? nullptr : &cache);
    if (!scored.ok())
        return reportError(scored.error());
    const bool compiled = scored->compiled != nullptr;
    const rubric::RubricReport &r = scored->report;
    std::vector<rubric::GroupDecisions> alternatives;
    if (options.alternatives)
        alternatives = rubric::describeDecisions(sched, problem, &rubric);

    if (options.json) {
        nlohmann::json j;
        j["schema"] = "stitchcuda-rubric/2";
        j["program"] = "schedule"; // which program: "schedule" here, "as_written" (asWritten, --as-written)
        j["file"] = options.file;
        j["arch"] = options.arch;
        j["compiled"] = compiled;
        j["predictedMs"] = r.predictedMs;
        if (!r.calibration.empty())
            j["calibration"] = r.calibration;
        j["genericPredictedMs"] = r.baselinePredictedMs;
        j["hardViolation"] = r.hardViolation;
        j["scoringMs"] = r.scoringMs;
        nlohmann::json kernels = nlohmann::json::array();
        for (const auto &k : r.kernels) {
            nlohmann::json kj = {{"kernel", k.kernel},
                                 {"decisions", k.decisions},
                                 {"predictedMs", k.prediction.ms},
                                 {"bound", k.prediction.bound}};
            kj["scores"] = nlohmann::json::array();
            for (const auto &s : k.scores)
                kj["scores"].push_back(scoreJson(s));
            kernels.push_back(kj);
        }
        j["kernels"] = kernels;
        j["scores"] = nlohmann::json::array(); // the program's score per dimension
        for (const auto &s : r.program)
            j["scores"].push_back(scoreJson(s));
        if (options.alternatives)
            j["alternatives"] = alternativesJson(alternatives);
        if (asWritten)
            j["asWritten"] = asWrittenJson(*asWritten);
        else if (asWrittenError)
            j["asWrittenError"] = asWrittenError->toString();
        std::cout << j.dump(2) << "\n";
        return r.hardViolation ? 1 : 0;
    }

    if (asWritten) {
        printSideBySide(*asWritten, &r, {});
        printAsWritten(*asWritten);
        std::printf("\ndefault schedule\n");
    } else if (asWrittenError) {
        std::printf("as written: not scored: %s\n\n", asWrittenError->toString().c_str());
    }
    std::printf("%s: %zu kernel%s for %s%s; predicted %.1f us (generic schedule %.1f us); scored in %.2f ms\n",
                options.file.c_str(), r.kernels.size(), r.kernels.size() == 1 ? "" : "s", options.arch.c_str(),
                compiled ? "" : " (not compiled: registers estimated, no instruction mix)", r.predictedMs * 1e3,
                r.baselinePredictedMs * 1e3, r.scoringMs);
    if (!r.calibration.empty())
        std::printf("note: %s; the figures are rough\n", r.calibration.c_str());
    for (const auto &n : input->scheduleNotes)
        std::printf("note: %s\n", n.c_str());
    for (const auto &k : r.kernels) {
        std::printf("\n%s: %s  (predicted %.1f us, %s-bound)\n", k.kernel.c_str(), k.decisions.c_str(),
                    k.prediction.ms * 1e3, k.prediction.bound.c_str());
        for (const auto &s : k.scores)
            printScore(s, "  ");
    }
    std::printf("\nprogram\n");
    for (const auto &s : r.program)
        printScore(s, "  ");
    printAlternatives(alternatives);
    std::printf("\nStatic scores; how each agrees with the H200's CUPTI counters and how well the model ranks\n"
                "measured times is in docs/RUBRIC.md (Calibration on the GPU).\n");
    return r.hardViolation ? 1 : 0;
}

} // namespace stitch::cli
