// `stitchcuda rubric FILE.cu --as-written` and the as-written column of the default output: the
// user's program as its host code launches it, scored on the rubric's dimensions.
//   FILE.cu -> rubric::scoreAsWritten -> text (per kernel, missing dimensions located) / JSON
#include "RubricAsWritten.h"

#include <cstdio>

namespace stitch::cli {

namespace {

std::string located(const SourceLocation &l)
{
    return l.file + ":" + std::to_string(l.line) + ":" + std::to_string(l.column);
}

nlohmann::json scoreJson(const rubric::RubricScore &s)
{
    return {{"dimension", s.dimension}, {"score", s.score},       {"hardViolation", s.hardViolation},
            {"estimated", s.estimated}, {"evidence", s.evidence}, {"sentence", s.sentence}};
}

std::string cell(const rubric::RubricScore *s)
{
    if (!s)
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f/5%s", s->score, s->hardViolation ? " !" : "");
    return buf;
}

std::string microseconds(double ms)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f us", ms * 1e3);
    return buf;
}

} // namespace

nlohmann::json asWrittenJson(const rubric::AsWrittenReport &r)
{
    nlohmann::json j;
    j["schema"] = "stitchcuda-rubric/2";
    j["program"] = "as_written";
    j["file"] = r.fileName;
    j["arch"] = r.arch;
    j["compiled"] = r.compiled;
    if (!r.compileNote.empty())
        j["compileNote"] = r.compileNote;
    j["predictedMs"] = r.predictedMs ? nlohmann::json(*r.predictedMs) : nlohmann::json(nullptr);
    if (!r.timeNote.empty())
        j["timeNote"] = r.timeNote;
    j["hardViolation"] = r.hardViolation;
    j["scoringMs"] = r.scoringMs;
    j["compileMs"] = r.compileMs;
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto &k : r.kernels) {
        nlohmann::json kj = {{"kernel", k.kernel},          {"launch", located(k.launch)},
                             {"launchConfig", k.launchConfig}, {"accessModel", k.accessModel},
                             {"mapping", k.mapping}};
        if (k.prediction) {
            kj["predictedMs"] = k.prediction->ms;
            kj["bound"] = k.prediction->bound;
        } else {
            kj["predictedMs"] = nullptr;
            kj["timeNote"] = k.timeNote;
        }
        kj["scores"] = nlohmann::json::array();
        for (const auto &s : k.scores)
            kj["scores"].push_back(scoreJson(s));
        kj["missing"] = nlohmann::json::array();
        for (const auto &m : k.missing)
            kj["missing"].push_back({{"dimension", m.dimension}, {"why", m.why}, {"at", located(m.where)}});
        kernels.push_back(kj);
    }
    j["kernels"] = kernels;
    j["scores"] = nlohmann::json::array();
    for (const auto &s : r.program)
        j["scores"].push_back(scoreJson(s));
    return j;
}

void printAsWritten(const rubric::AsWrittenReport &r)
{
    std::printf("%s as written: %zu kernel launch%s for %s%s; %s; scored in %.2f ms (NVRTC %.0f ms)\n",
                r.fileName.c_str(), r.kernels.size(), r.kernels.size() == 1 ? "" : "es", r.arch.c_str(),
                r.compiled ? "" : (" (not compiled: " + r.compileNote + ")").c_str(),
                r.predictedMs ? ("predicted " + microseconds(*r.predictedMs)).c_str() : r.timeNote.c_str(),
                r.scoringMs, r.compileMs);
    for (const auto &k : r.kernels) {
        std::printf("\n%s %s at %s  (%s; %s)\n", k.kernel.c_str(), k.launchConfig.c_str(), located(k.launch).c_str(),
                    k.mapping.c_str(),
                    k.prediction ? ("predicted " + microseconds(k.prediction->ms) + ", " + k.prediction->bound + "-bound").c_str()
                                 : k.timeNote.c_str());
        for (const auto &s : k.scores) {
            std::printf("  %-22s %3.1f/5%s%s\n", s.dimension.c_str(), s.score, s.estimated ? " (estimated)" : "",
                        s.hardViolation ? "  HARD VIOLATION" : "");
            std::printf("      %s\n      evidence: %s\n", s.sentence.c_str(), s.evidence.c_str());
        }
        for (const auto &m : k.missing)
            std::printf("  %-22s not scored: %s: %s\n", m.dimension.c_str(), located(m.where).c_str(), m.why.c_str());
    }
    std::printf("\nprogram as written\n");
    for (const auto &s : r.program)
        std::printf("  %-22s %3.1f/5  %s\n", s.dimension.c_str(), s.score, s.sentence.c_str());
}

void printSideBySide(const rubric::AsWrittenReport &before, const rubric::RubricReport *after,
                     const std::string &afterNote)
{
    std::printf("%-24s %-14s %-14s\n", "dimension", "as written", "default schedule");
    for (const char *dim : {"coalescing", "arithmetic_intensity", "divergence", "occupancy", "instruction_mix",
                            "bank_conflicts", "hard_limits", "final_performance"})
        std::printf("%-24s %-14s %-14s\n", dim, cell(before.programScore(dim)).c_str(),
                    after ? cell(after->programScore(dim)).c_str() : "-");
    std::printf("%-24s %-14s %-14s\n", "predicted time",
                before.predictedMs ? microseconds(*before.predictedMs).c_str() : "measure on a GPU",
                after ? microseconds(after->predictedMs).c_str() : "-");
    if (!before.predictedMs)
        std::printf("  as written: %s\n", before.timeNote.c_str());
    if (!after)
        std::printf("  default schedule: %s\n", afterNote.c_str());
    else if (before.predictedMs && after->predictedMs >= *before.predictedMs)
        std::printf("  the default schedule is not predicted faster than the program as written: keep the input\n");
    std::printf("  (-: not scored; as written, final_performance is its time: the generic baseline is a generated "
                "program)\n\n");
}

} // namespace stitch::cli
