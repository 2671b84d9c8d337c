#include "core/runner/CuptiLibrary.h"

#include "core/runner/LibraryPaths.h"

// Types and names only: libcupti is dlopen'ed, never linked.
#include <cupti_result.h>

#include <dlfcn.h>

#include <cstdlib>

namespace stitch::runner {

std::vector<std::string> cuptiCandidatePaths()
{
    return libraryCandidates("STITCHCUDA_LIBCUPTI",
                             {
#ifdef STITCHCUDA_CUPTI_LIBRARY
                                 STITCHCUDA_CUPTI_LIBRARY,
#endif
                                 "libcupti.so", "libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so",
                                 "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"});
}

void *CuptiLibrary::symbol(const char *name) const
{
    return handle ? dlsym(handle, name) : nullptr;
}

std::string CuptiLibrary::resultName(int result) const
{
    using GetResultString = CUptiResult(CUPTIAPI *)(CUptiResult, const char **);
    const char *text = nullptr;
    if (auto fn = reinterpret_cast<GetResultString>(symbol("cuptiGetResultString")))
        fn(static_cast<CUptiResult>(result), &text);
    return text ? text : "CUPTI error " + std::to_string(result);
}

Result<CuptiLibrary> openCupti(const std::vector<std::string> &candidates)
{
    std::string tried;
    for (const auto &p : candidates) {
        if (void *h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL))
            return CuptiLibrary{h, p};
        tried += (tried.empty() ? "" : ", ") + p;
    }
    return makeError(ErrorKind::Unsupported, "CUPTI not found (tried " + tried + "; set STITCHCUDA_LIBCUPTI)");
}

std::string cuptiRefusalReason(int result)
{
    switch (static_cast<CUptiResult>(result)) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return "GPU performance counters are restricted to administrators on this machine "
               "(NVreg_RestrictProfilingToAdminUsers=1; see https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        return "another profiler (Nsight Compute, Nsight Systems or a CUPTI tool) is attached";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        return "profiling is not supported on this virtualised GPU";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
        return "hardware counters are not available on a MIG instance";
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
        return "profiling is disabled in confidential-computing mode";
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
        return "profiling is not supported on this device configuration";
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
        return "the legacy CUPTI event/metric API was initialised in this process first";
    default:
        return {};
    }
}

} // namespace stitch::runner
