#pragma once
// The default schedule, checked by the performance model against one thread per output.
//   Problem -> schedule::defaultSchedule (the heuristics) -> modelCheckedDefault -> Schedule
// The heuristics pick each group's strategy by its pattern (an element-wise op gets the
// element-wise kernel, vector accesses and all). For a small or shifted-read op the model can
// expect the simplest kernel, one thread per output (the generic strategy, what most hand-written
// kernels are), to be faster; the default then takes that form for the group, so it never proposes
// a kernel the model expects to lose to the simplest one (issue 31, "never lose to the input").

#include "core/common/Result.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Space.h"

#include <string>
#include <vector>

namespace stitch::rubric {

/// defaultSchedule, then each one-op group whose generic form the model (estimate, no NVRTC)
/// predicts faster for the whole program takes that form, and each generic group the block shape
/// (threads_per_row, then threads) predicted fastest; `notes` (optional) gets a sentence per group
/// changed, with both times. Errors: defaultSchedule's.
Result<schedule::Schedule> modelCheckedDefault(const schedule::Problem &problem, std::vector<std::string> *notes = nullptr);

} // namespace stitch::rubric
