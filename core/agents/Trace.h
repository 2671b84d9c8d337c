#pragma once
// The optimization trace: every agent's every decision with what it saw, what it could choose, the
// probabilities, the rubric before and after and why. What `stitchcuda optimize --trace` writes,
// the studio steps through and `stitchcuda retrain` learns from.
//   Optimizer -> Trace -> traceToJson (schema stitchcuda-trace/1, docs/AGENTS.md) -> parseTrace

#include "core/agents/Agent.h"
#include "core/agents/Evaluator.h"
#include "core/schedule/Schedule.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::agents {

struct TraceOption {
    std::string text;
    bool legal = true;
    std::string why;
    double probability = 0;
    std::optional<double> estimatedMs; ///< the model's time of the schedule with this option (legal ones)
};

struct TraceDecision {
    AgentKind agent = AgentKind::ParallelMapping;
    std::string id;       ///< "memory_access.block_k@gemm" (the pin syntax)
    std::string group;
    std::string key;
    std::string subject;
    std::string help;
    std::string observation; ///< a summary of what the agent saw
    std::vector<TraceOption> options;
    int chosen = 0;
    int heuristic = 0;
    bool pinned = false;
    double msBefore = 0, msAfter = 0;
    double dimensionsBefore[kStaticDimensionCount] = {};
    double dimensionsAfter[kStaticDimensionCount] = {};
    double reward = 0;    ///< the dense reward
    std::string rationale;
    /// The whole schedule once this decision was taken (the open decisions completed legally):
    /// the program as it stood at this step. Empty in traces written before it was recorded.
    schedule::Schedule schedule;
};

/// A stage without a policy (Parse, and Stitch's integration): what it did, as sentences.
struct TraceStage {
    AgentKind agent = AgentKind::Parse;
    std::string summary;
    std::vector<std::string> notes;
};

/// A hard limit the combined decisions broke once compiled, sent back to the agent that owns the
/// decision that mends it.
struct TraceConflict {
    std::string group;
    std::string violation;   ///< the hard-limits sentence
    AgentKind agent = AgentKind::InstructionScheduling;
    std::string decision;    ///< id
    std::string from, to;    ///< values
    bool resolved = false;
};

/// One candidate program of the budget search.
struct TraceCandidate {
    std::string origin;      ///< "greedy", "sample 3", "input as written"
    std::string schedule;    ///< describe() of each group, "; "-joined
    double estimatedMs = 0;
    std::optional<double> confirmedMs; ///< the full model (NVRTC) or a measurement
    bool measured = false;
};

struct Trace {
    static constexpr int kVersion = 1;
    std::string source;      ///< the input file
    std::string sourceText;  ///< its text, so the trace replays (and retrains) without the file
    std::map<std::string, std::int64_t> sizes; ///< the sizes it was optimized for
    std::string arch;
    std::string precision;
    std::string policy;      ///< PolicySource::name()
    std::uint64_t seed = 1;
    std::string mode = "greedy"; ///< greedy or sample
    int budget = 0;
    std::vector<std::string> pins;

    TraceStage parse;
    std::vector<TraceDecision> decisions;
    std::vector<std::string> fusionNotes;
    TraceStage integrate;
    std::vector<TraceConflict> conflicts;
    std::vector<TraceCandidate> candidates;

    schedule::Schedule schedule;    ///< the program's schedule (the agents', or the search's best)
    double inputMs = 0;             ///< the input as written (the generic schedule by the model)
    double finalMs = 0;
    bool finalMeasured = false;
    bool finalCompiled = false;     ///< the full model (NVRTC) rather than the estimate
    bool keptInput = false;         ///< nothing was predicted faster than the input
    double decideMs = 0;            ///< wall time of the agents' decisions (greedy pass)
    /// The input's own code (a .cu as written, not its lifted form) by the model or measured, when
    /// known (weighAsWritten); with keptInput, the proposal did not beat it.
    std::optional<double> asWrittenMs;
};

/// Weighs the input's own code against the proposal (never lose to the input): when finalMs is not
/// below asWrittenMs the trace keeps the input (keptInput), and Stitch's notes say which program is
/// kept and why; `how` says where the input's time comes from ("by the model", "measured").
void weighAsWritten(Trace &trace, double asWrittenMs, const std::string &how);

/// A time as the trace's sentences write it: "2.663 ms", "133.3 us".
std::string msText(double ms);
/// v with `digits` decimals, as the trace's sentences write ratios and scores ("1.50").
std::string fixedText(double v, int digits);

std::string traceToJson(const Trace &trace);
/// Strict: another schema, a newer version ("written by a newer StitchCUDA"), a missing member: an
/// error naming the file and the member.
Result<Trace> parseTrace(const std::string &text, const std::string &fileName);

} // namespace stitch::agents
