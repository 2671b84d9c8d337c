// The performance model's parameters as data: the shipped files (resources/model/perfmodel-*.json,
// embedded), their reader, the nearest calibrated architecture, and the parameters by name.
#include "core/rubric/PerfModel.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <limits>
#include <map>

namespace stitch::resources {
const char *perfModelSm90();
}

namespace stitch::rubric {

namespace {

/// Every parameter of Params by name (names(), set(), get() and the file reader read this list).
const std::vector<std::pair<const char *, double PerfModel::Params::*>> &paramTable()
{
    using P = PerfModel::Params;
    static const std::vector<std::pair<const char *, double P::*>> table = {
        {"launchUs", &P::launchUs},
        {"l2BandwidthFactor", &P::l2BandwidthFactor},
        {"l2RereadShare", &P::l2RereadShare},
        {"memoryLatencyNs", &P::memoryLatencyNs},
        {"fmaLatencyCycles", &P::fmaLatencyCycles},
        {"schedulersPerSm", &P::schedulersPerSm},
        {"sharedBytesPerClock", &P::sharedBytesPerClock},
        {"dramEfficiency", &P::dramEfficiency},
        {"issueEfficiency", &P::issueEfficiency},
        {"blockLaunchUs", &P::blockLaunchUs},
        {"barrierUs", &P::barrierUs},
        {"clusterBarrierUs", &P::clusterBarrierUs},
        {"clusterBlockUs", &P::clusterBlockUs},
        {"clusterBlocksPerSm", &P::clusterBlocksPerSm},
        {"gemmFullHidingWarps", &P::gemmFullHidingWarps},
        {"gemmIterationUs", &P::gemmIterationUs},
        {"gemmPipeExponent", &P::gemmPipeExponent},
        {"registerLoopFactor", &P::registerLoopFactor},
        {"asyncStoreFactor", &P::asyncStoreFactor},
        {"streamKSharedCost", &P::streamKSharedCost},
        {"warpLatencySpread", &P::warpLatencySpread},
        {"waveDriftExponent", &P::waveDriftExponent},
        {"asyncTileLatencyUs", &P::asyncTileLatencyUs},
        {"asyncTwoStageFactor", &P::asyncTwoStageFactor},
        {"asyncTileUs", &P::asyncTileUs},
        {"asyncChainExponent", &P::asyncChainExponent},
        {"asyncHidingWarps", &P::asyncHidingWarps},
        {"asyncTwoStageHidingWarps", &P::asyncTwoStageHidingWarps},
        {"asyncHidingExponent", &P::asyncHidingExponent},
        {"asyncReplayExponent", &P::asyncReplayExponent},
        {"asyncTwoStageHidingExponent", &P::asyncTwoStageHidingExponent},
        {"asyncBlockWarps", &P::asyncBlockWarps},
        {"asyncSpillIssue", &P::asyncSpillIssue},
        {"asyncSpilledLoopCost", &P::asyncSpilledLoopCost},
        {"asyncLoopOtherIssue", &P::asyncLoopOtherIssue},
        {"onceFetchCycles", &P::onceFetchCycles},
        {"onceIssueCycles", &P::onceIssueCycles},
        {"onceLatencyCycles", &P::onceLatencyCycles},
        {"onceTileExponent", &P::onceTileExponent},
        {"instructionCacheKiB", &P::instructionCacheKiB},
        {"refetchCyclesPerLine", &P::refetchCyclesPerLine},
        {"asyncFillUs", &P::asyncFillUs},
        {"asyncLevel", &P::asyncLevel},
        {"mmaIssuePerClock", &P::mmaIssuePerClock},
        {"mmaHidingExponent", &P::mmaHidingExponent},
        {"mmaBlockWarps", &P::mmaBlockWarps},
        {"wgmmaTileBubbleUs", &P::wgmmaTileBubbleUs},
    };
    return table;
}

const std::vector<std::pair<const char *, double IssueReplayParams::*>> &replayTable()
{
    using R = IssueReplayParams;
    static const std::vector<std::pair<const char *, double R::*>> table = {
        {"sharedLatencyCycles", &R::sharedLatencyCycles}, {"localLatencyCycles", &R::localLatencyCycles},
        {"globalLatencyCycles", &R::globalLatencyCycles}, {"sourceReadCycles", &R::sourceReadCycles},
        {"sharedBytesPerCycle", &R::sharedBytesPerCycle}, {"mioQueueCycles", &R::mioQueueCycles},
        {"barrierCycles", &R::barrierCycles},             {"bankConflictCycles", &R::bankConflictCycles},
        {"instructionCacheBytes", &R::instructionCacheBytes}, {"instructionMissCycles", &R::instructionMissCycles},
    };
    return table;
}

/// Reads `section` of the file: every one of `names`, each {"value": number, "provenance": text},
/// and nothing else.
Result<std::map<std::string, double>> readSection(const nlohmann::json &j, const char *section,
                                                  const std::vector<std::string> &names)
{
    const std::string where = std::string("performance model: ") + section;
    const auto s = j.find(section);
    if (s == j.end() || !s->is_object())
        return Error{ErrorKind::Parse, where + ": expected an object"};
    std::map<std::string, double> out;
    for (const auto &name : names) {
        const auto p = s->find(name);
        if (p == s->end() || !p->is_object())
            return Error{ErrorKind::Parse, where + "." + name + " is missing"};
        const auto v = p->find("value");
        if (v == p->end() || !v->is_number())
            return Error{ErrorKind::Parse, where + "." + name + ".value: expected a number"};
        const auto why = p->find("provenance");
        if (why == p->end() || !why->is_string() || why->get<std::string>().empty())
            return Error{ErrorKind::Parse, where + "." + name + ".provenance: say where the value came from"};
        out[name] = v->get<double>();
    }
    for (const auto &item : s->items())
        if (!out.contains(item.key()))
            return Error{ErrorKind::Parse, where + "." + item.key() + " is not a parameter of the model"};
    return out;
}

template <class T>
std::vector<std::string> tableNames(const std::vector<std::pair<const char *, double T::*>> &table)
{
    std::vector<std::string> out;
    for (const auto &entry : table)
        out.emplace_back(entry.first);
    return out;
}

int computeCapability(const std::string &arch)
{
    // "sm_90" -> 90, "sm_90a" -> 90; anything else sorts last.
    if (arch.rfind("sm_", 0) != 0)
        return std::numeric_limits<int>::max() / 2;
    return std::atoi(arch.c_str() + 3);
}

} // namespace

PerfModel::Params::Params() : Params(calibratedModels().front().params) {}

IssueReplayParams::IssueReplayParams() : IssueReplayParams(calibratedModels().front().replay) {}

std::vector<std::string> PerfModel::Params::names()
{
    return tableNames(paramTable());
}

Status PerfModel::Params::set(const std::string &name, double value)
{
    for (const auto &[known, member] : paramTable())
        if (name == known) {
            this->*member = value;
            return Ok{};
        }
    std::string list;
    for (const auto &n : names())
        list += (list.empty() ? "" : ", ") + n;
    return Error{ErrorKind::InvalidArgument, "unknown model constant '" + name + "' (known: " + list + ")"};
}

std::optional<double> PerfModel::Params::get(const std::string &name) const
{
    for (const auto &[known, member] : paramTable())
        if (name == known)
            return this->*member;
    return std::nullopt;
}

Result<CalibratedModel> parsePerfModel(const std::string &text)
{
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return Error{ErrorKind::Parse, "performance model: not a JSON object"};
    if (j.value("schema", "") != "stitchcuda-perf-model/1")
        return Error{ErrorKind::Parse, "performance model: schema is not stitchcuda-perf-model/1"};
    CalibratedModel m;
    m.arch = j.value("arch", "");
    m.gpu = j.value("gpu", "");
    if (m.arch.rfind("sm_", 0) != 0 || m.gpu.empty())
        return Error{ErrorKind::Parse, "performance model: arch (\"sm_NN\") and gpu name the target it was fitted on"};
    auto params = readSection(j, "parameters", tableNames(paramTable()));
    if (!params)
        return params.error();
    for (const auto &[name, member] : paramTable())
        m.params.*member = params->at(name);
    auto replay = readSection(j, "issue_replay", tableNames(replayTable()));
    if (!replay)
        return replay.error();
    for (const auto &[name, member] : replayTable())
        m.replay.*member = replay->at(name);
    return m;
}

const std::vector<CalibratedModel> &calibratedModels()
{
    static const std::vector<CalibratedModel> models = [] {
        std::vector<CalibratedModel> out;
        for (const char *text : {resources::perfModelSm90()}) {
            auto m = parsePerfModel(text);
            if (!m) // the embedded files are checked by the tests; a broken build must not pass silently
                std::abort();
            out.push_back(std::move(*m));
        }
        return out;
    }();
    return models;
}

const CalibratedModel &calibratedModelFor(const ArchLimits &arch, std::string *note)
{
    const auto &models = calibratedModels();
    const int want = arch.computeMajor * 10 + arch.computeMinor;
    const CalibratedModel *best = &models.front();
    for (const auto &m : models) {
        const int have = computeCapability(m.arch), bestHave = computeCapability(best->arch);
        const int d = std::abs(have - want), bestD = std::abs(bestHave - want);
        if (d < bestD || (d == bestD && have > bestHave))
            best = &m;
    }
    if (note)
        *note = computeCapability(best->arch) == want
                    ? std::string()
                    : "uncalibrated for " + arch.name + ": the model's parameters are " + best->arch + "'s (" + best->gpu + ")";
    return *best;
}

} // namespace stitch::rubric
