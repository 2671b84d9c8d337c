// `stitchcuda bench`'s candidates (BenchSweep.cpp): the first round's sweep and the second round.
#pragma once

#include "Commands.h"

#include "core/common/Result.h"
#include "core/schedule/Space.h"

#include <string>
#include <vector>

namespace stitch::cli {

/// The case's candidates: the sweep around its default schedule, narrowed by --where and capped by
/// --max-candidates. An InvalidArgument error is the user's (a bad --where).
Result<std::vector<schedule::Schedule>> caseCandidates(const std::string &id, const schedule::Problem &problem,
                                                       const BenchOptions &options);

/// The second round, after the first was timed (`ms[i]` for `timed[i]`; 1e30: failed): what only
/// a measurement decides, narrowed by --where. Today the GEMM epilogue's `store` (storeVariants).
std::vector<schedule::Schedule> secondRound(const schedule::Problem &problem,
                                             const std::vector<schedule::Schedule> &timed,
                                             const std::vector<double> &ms, const BenchOptions &options);

} // namespace stitch::cli
