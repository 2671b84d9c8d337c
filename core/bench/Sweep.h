// `stitchcuda bench`'s candidates (Sweep.cpp): the first round's sweep and the second round.
//   BenchCase -> Problem -> default schedule -> sweep (--where, --max-candidates) -> timed -> second round
#pragma once

#include "core/common/Result.h"
#include "core/schedule/Space.h"

#include <string>
#include <vector>

namespace stitch::bench {

/// What narrows a case's candidates (the bench's --quick, --where and --max-candidates).
struct SweepOptions {
    bool quick = false;                ///< fewer candidates
    std::vector<std::string> where;    ///< KEY=VALUE: only candidates whose main group has these decisions
    int maxCandidates = 0;             ///< 0: the whole sweep
};

/// The case's candidates: the sweep around its default schedule, narrowed by --where and capped by
/// --max-candidates. An InvalidArgument error is the user's (a bad --where).
Result<std::vector<schedule::Schedule>> caseCandidates(const std::string &id, const schedule::Problem &problem,
                                                       const SweepOptions &options);

/// The second round, after the first was timed (`ms[i]` for `timed[i]`; 1e30: failed): what only
/// a measurement decides, narrowed by --where. Today the GEMM epilogue's `store` (storeVariants).
std::vector<schedule::Schedule> secondRound(const schedule::Problem &problem,
                                             const std::vector<schedule::Schedule> &timed,
                                             const std::vector<double> &ms, const SweepOptions &options);

} // namespace stitch::bench
