#pragma once
// Finding and loading libcupti, shared by the two CUPTI users in the worker.
//   KernelTracer (activity records) / MetricProfiler (hardware counters) -> openCupti -> dlopen'ed libcupti
// CUPTI is never linked: a machine without it, or one where profiling is not permitted, still runs
// and times kernels, and the result says plainly why a profile is missing.

#include "core/common/Result.h"

#include <string>
#include <vector>

namespace stitch::runner {

/// Where libcupti is looked for, in order: only $STITCHCUDA_LIBCUPTI when it is set (so a test or a
/// user can point at one file, or at none), else the toolkit's found at configure time, the loader's
/// search path and the usual CUDA folders.
std::vector<std::string> cuptiCandidatePaths();

/// A dlopen'ed libcupti. The handle is never closed: CUPTI cannot be unloaded safely while a CUDA
/// context lives, and dlopen counts references, so every user shares the one copy.
struct CuptiLibrary {
    void *handle = nullptr;
    std::string path;

    /// The entry point `name`, or null.
    void *symbol(const char *name) const;
    /// "CUPTI_ERROR_X" for a CUptiResult (through cuptiGetResultString when it resolves).
    std::string resultName(int result) const;
};

/// Loads the first candidate that opens. Unsupported, naming every path tried, when none does.
Result<CuptiLibrary> openCupti(const std::vector<std::string> &candidates = cuptiCandidatePaths());

/// Why CUPTI refused, in words a user can act on, for the results that mean "not here, not now":
/// insufficient privileges, another profiler attached (39), virtualised / MIG / confidential-compute
/// devices; empty for other results.
std::string cuptiRefusalReason(int result);

} // namespace stitch::runner
