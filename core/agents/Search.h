#pragma once
// The search baseline the agents are judged against (docs/AGENTS.md).
//   Problem -> fusion variants x (heuristics, random legal schedules, greedy local search from the
//   best) -> >= `evaluations` distinct schedules estimated -> the best `confirmTop` and the
//   heuristics' schedule confirmed by the full model (the evaluator's: NVRTC build or measurement)
// Random legal schedules come from schedule::sampleLegal per kernel; the local search changes one
// decision at a time (the others completed to a legal kernel) and keeps every improvement.

#include "core/agents/Evaluator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stitch::agents {

/// Every fusion of the program the fusion walk allows (each offered edge fused or not), at most `limit`.
std::vector<std::vector<schedule::KernelGroup>> fusionVariants(const ir::Graph &graph, std::size_t limit = 8);

struct SearchResult {
    schedule::Schedule best;
    Score bestScore;          ///< confirmed (full model) when a compile cache was given
    Score bestEstimate;
    int evaluations = 0;      ///< distinct schedules estimated
    int confirmed = 0;        ///< of them, confirmed (full model or measurement) without failing
    double seconds = 0;
};

SearchResult searchBaseline(const schedule::Problem &problem, Evaluator &evaluator, int evaluations,
                            std::uint64_t seed, int confirmTop = 8);

} // namespace stitch::agents
