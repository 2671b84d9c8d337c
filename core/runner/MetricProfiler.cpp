#include "core/runner/MetricProfiler.h"

#include "core/cuda/NvrtcCompiler.h"

// Types and names only: libcupti is dlopen'ed, never linked.
#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#define STITCH_PROFILER_FUNCTIONS(X)                                                               \
    X(cuptiProfilerInitialize) X(cuptiProfilerDeInitialize) X(cuptiDeviceGetChipName)              \
    X(cuptiProfilerGetCounterAvailability) X(cuptiProfilerHostInitialize)                          \
    X(cuptiProfilerHostDeinitialize) X(cuptiProfilerHostGetMetricProperties)                       \
    X(cuptiProfilerHostConfigAddMetrics) X(cuptiProfilerHostGetConfigImageSize)                    \
    X(cuptiProfilerHostGetConfigImage) X(cuptiProfilerHostGetNumOfPasses)                          \
    X(cuptiProfilerHostEvaluateToGpuValues) X(cuptiRangeProfilerEnable) X(cuptiRangeProfilerDisable) \
    X(cuptiRangeProfilerGetCounterDataSize) X(cuptiRangeProfilerCounterDataImageInitialize)        \
    X(cuptiRangeProfilerSetConfig) X(cuptiRangeProfilerStart) X(cuptiRangeProfilerStop)            \
    X(cuptiRangeProfilerDecodeData) X(cuptiRangeProfilerGetCounterDataInfo)                        \
    X(cuptiRangeProfilerCounterDataGetRangeInfo)

namespace stitch::runner {

const std::vector<MetricInfo> &standardMetrics()
{
    static const std::vector<MetricInfo> metrics = {
        {"sm__warps_active.avg.pct_of_peak_sustained_active", "%",
         "achieved occupancy: warps resident per active SM cycle, of the most an SM can hold"},
        {"dram__bytes_read.sum", "bytes", "read from device memory (HBM)"},
        {"dram__bytes_write.sum", "bytes", "written to device memory"},
        {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "device-memory throughput, of its peak over the kernel's time"},
        {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sectors", "32-byte sectors fetched by global loads"},
        {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "requests", "global load requests (one per warp-wide load instruction)"},
        {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "sectors", "32-byte sectors written by global stores"},
        {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "requests", "global store requests"},
        {"smsp__sass_average_branch_targets_threads_uniform.pct", "%",
         "branch efficiency: branches whose active threads all took the same target"},
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "conflicts", "shared-memory bank conflicts of loads"},
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "conflicts", "shared-memory bank conflicts of stores"},
        {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "wavefronts", "shared-load wavefronts (1 per conflict-free load)"},
        {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "wavefronts", "shared-store wavefronts (1 per conflict-free store)"},
        {"smsp__inst_executed.sum", "warp instructions", "instructions executed"},
        {"smsp__thread_inst_executed.sum", "thread instructions",
         "instructions executed, once per active lane (/ 32 x warp instructions: active lanes per instruction)"},
        {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "thread instructions", "FP32 fused multiply-adds (2 FLOP each)"},
        {"sm__inst_executed_pipe_tensor_op_hmma.sum", "warp instructions",
         "tensor-core MMA instructions (mma.sync; on sm_90 also wgmma.mma_async, once per warp)"},
        {"smsp__sass_inst_executed_op_shared_ld.sum", "warp instructions", "shared-memory load instructions"},
        {"smsp__sass_inst_executed_op_shared_st.sum", "warp instructions", "shared-memory store instructions"},
        {"smsp__sass_inst_executed_op_global_ld.sum", "warp instructions", "global-memory load instructions"},
        {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "SM throughput: its busiest unit, of peak over the kernel's time"},
        {"gpu__time_duration.sum", "ns", "kernel duration in the profiled run"},
    };
    return metrics;
}

const std::vector<DerivedMetricInfo> &derivedMetrics()
{
    static const std::vector<DerivedMetricInfo> derived = {
        {"globalLoadSectorsPerRequest", "sectors", "l1tex__t_sectors_..._ld / l1tex__t_requests_..._ld (4: coalesced 4-byte loads; 32: one sector per lane)"},
        {"globalStoreSectorsPerRequest", "sectors", "l1tex__t_sectors_..._st / l1tex__t_requests_..._st"},
        {"dramBytes", "bytes", "dram__bytes_read + dram__bytes_write"},
        {"dramGBPerSecond", "GB/s", "(dram__bytes_read + dram__bytes_write) / gpu__time_duration"},
        {"sharedBankConflicts", "conflicts", "bank conflicts of shared loads + stores"},
        {"sharedLoadWavefrontsPerInstruction", "wavefronts", "shared-load wavefronts / shared-load instructions (1: conflict-free)"},
        {"ffmaGflops", "GFLOP/s", "2 x FFMA thread instructions / gpu__time_duration"},
        {"ffmaPct", "%", "FFMA thread instructions, of 32 x warp instructions executed"},
        {"globalLoadInstructionPct", "%", "global-load instructions, of warp instructions executed"},
        {"sharedLoadInstructionPct", "%", "shared-load instructions, of warp instructions executed"},
    };
    return derived;
}

std::map<std::string, double> deriveMetrics(const std::map<std::string, double> &v)
{
    std::map<std::string, double> out;
    auto get = [&](const char *name, double &value) {
        auto it = v.find(name);
        if (it == v.end() || !(it->second == it->second)) // absent or NaN
            return false;
        value = it->second;
        return true;
    };
    // numerator / denominator * scale, left out when either is missing or the denominator is 0.
    auto ratio = [&](const char *key, const char *num, const char *den, double scale = 1.0) {
        double n = 0, d = 0;
        if (get(num, n) && get(den, d) && d != 0.0)
            out[key] = n / d * scale;
    };
    ratio("globalLoadSectorsPerRequest", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
    ratio("globalStoreSectorsPerRequest", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
          "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum");
    double rd = 0, wr = 0, ns = 0;
    if (get("dram__bytes_read.sum", rd) && get("dram__bytes_write.sum", wr)) {
        out["dramBytes"] = rd + wr;
        if (get("gpu__time_duration.sum", ns) && ns > 0)
            out["dramGBPerSecond"] = (rd + wr) / ns; // bytes per ns = GB/s
    }
    double ld = 0, st = 0;
    if (get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", ld) &&
        get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", st))
        out["sharedBankConflicts"] = ld + st;
    ratio("sharedLoadWavefrontsPerInstruction", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
          "smsp__sass_inst_executed_op_shared_ld.sum");
    ratio("ffmaGflops", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "gpu__time_duration.sum", 2.0);
    ratio("ffmaPct", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__inst_executed.sum", 100.0 / 32.0);
    ratio("globalLoadInstructionPct", "smsp__sass_inst_executed_op_global_ld.sum", "smsp__inst_executed.sum", 100.0);
    ratio("sharedLoadInstructionPct", "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__inst_executed.sum", 100.0);
    return out;
}

std::vector<LaunchSpan> profiledLaunches(const std::vector<std::string> &kernels, const std::vector<std::string> &chosen)
{
    auto isChosen = [&](const std::string &mangled) {
        return chosen.empty() || std::find(chosen.begin(), chosen.end(), mangled) != chosen.end() ||
               std::find(chosen.begin(), chosen.end(), cuda::shortKernelName(mangled)) != chosen.end();
    };
    std::vector<LaunchSpan> spans;
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        if (kernels[i].empty() || !isChosen(kernels[i])) // empty: a library call, never profiled
            continue;
        if (!spans.empty() && spans.back().end == i)
            spans.back().end = i + 1;
        else
            spans.push_back({i, i + 1});
    }
    return spans;
}

std::vector<std::size_t> launchIndices(const std::vector<LaunchSpan> &spans)
{
    std::vector<std::size_t> out;
    for (const LaunchSpan &span : spans)
        for (std::size_t i = span.begin; i < span.end; ++i)
            out.push_back(i);
    return out;
}

struct MetricProfiler::State {
#define STITCH_MEMBER(name) decltype(&::name) name = nullptr;
    STITCH_PROFILER_FUNCTIONS(STITCH_MEMBER)
#undef STITCH_MEMBER
    std::vector<std::string> candidates;
    CuptiLibrary library;
    bool resolved = false;
    bool profilerInitialized = false;
};

namespace {

// One CUPTI failure as a sentence: the call, CUPTI's name for the result, and, when the result
// means counters are not permitted here, why.
Error cuptiError(const MetricProfiler::State &s, const char *call, CUptiResult rc)
{
    std::string msg = std::string("CUPTI ") + call + " failed: " + s.library.resultName(rc) + " (" + std::to_string(int(rc)) + ")";
    if (const std::string why = cuptiRefusalReason(rc); !why.empty())
        msg += ": " + why;
    return makeError(ErrorKind::Unsupported, msg);
}

// CUPTI's profiler loads libnvperf_host / libnvperf_target itself; when it fails to initialise,
// their absence is the likely reason, and worth naming.
std::string nvperfHint(const std::string &cuptiPath)
{
    std::string missing;
    const auto slash = cuptiPath.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string() : cuptiPath.substr(0, slash + 1);
    for (const char *lib : {"libnvperf_host.so", "libnvperf_target.so"}) {
        void *h = dlopen((dir + lib).c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
        if (!h)
            h = dlopen((dir + lib).c_str(), RTLD_LAZY | RTLD_LOCAL);
        if (!h && !dir.empty())
            h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
        if (h)
            dlclose(h);
        else
            missing += (missing.empty() ? "" : ", ") + std::string(lib);
    }
    return missing.empty() ? std::string() : "; " + missing + " not found beside " + cuptiPath + " (CUPTI's profiler needs it)";
}

// The calling thread's current context, through the driver library the worker already loaded
// (RTLD_NOLOAD: never a second copy). The executor's cuda::Context makes its context current.
CUcontext currentContext()
{
    std::vector<std::string> names;
    if (const char *env = std::getenv("STITCHCUDA_LIBCUDA"); env && *env)
        names.push_back(env);
    names.insert(names.end(), {"libcuda.so.1", "libcuda.so"});
    for (const auto &name : names) {
        void *h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (!h)
            continue;
        using GetCurrent = CUresult (*)(CUcontext *);
        auto fn = reinterpret_cast<GetCurrent>(dlsym(h, "cuCtxGetCurrent"));
        CUcontext ctx = nullptr;
        const bool ok = fn && fn(&ctx) == CUDA_SUCCESS && ctx;
        dlclose(h);
        if (ok)
            return ctx;
    }
    return nullptr;
}

// Runs `cleanup` on every way out of the profiling sequence.
template <typename F>
struct Finally {
    F cleanup;
    ~Finally() { cleanup(); }
};
template <typename F>
Finally(F) -> Finally<F>;

// One run of the whole program with the range profiler started only around the profiled spans:
// automatic ranges cover every launch between Start and Stop, so the launches outside the spans
// run without counters or replays. Each stretch of launches ends with a wait, so a window starts
// on an idle stream and stops once its kernels are done. `allPasses`: every window submitted all
// its passes.
Status runOnce(const MetricProfiler::State &s, CUpti_RangeProfiler_Object *object, const MetricProfiler::Request &request,
               const std::function<Status(std::size_t)> &launch, const std::function<Status()> &wait, bool &allPasses)
{
    std::size_t next = 0;
    auto runUpTo = [&](std::size_t end) -> Status { // enqueues the launches before `end` and waits
        for (; next < end; ++next)
            if (auto st = launch(next); !st)
                return st;
        return wait();
    };
    allPasses = true;
    for (const LaunchSpan &span : request.profiled) {
        if (next < span.begin)
            if (auto st = runUpTo(span.begin); !st)
                return st;
        CUpti_RangeProfiler_Start_Params start{};
        start.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
        start.pPriv = nullptr;
        start.pRangeProfilerObject = object;
        if (CUptiResult rc = s.cuptiRangeProfilerStart(&start); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiRangeProfilerStart", rc);
        const Status ran = runUpTo(span.end);
        CUpti_RangeProfiler_Stop_Params stop{};
        stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
        stop.pPriv = nullptr;
        stop.pRangeProfilerObject = object;
        const CUptiResult stopped = s.cuptiRangeProfilerStop(&stop);
        if (!ran)
            return ran;
        if (stopped != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiRangeProfilerStop", stopped);
        allPasses = allPasses && stop.isAllPassSubmitted != 0;
    }
    return next < request.launches ? runUpTo(request.launches) : Status(Ok{});
}

} // namespace

MetricProfiler::MetricProfiler(std::vector<std::string> libraryCandidates) : m_state(std::make_unique<State>())
{
    m_state->candidates = std::move(libraryCandidates);
}

MetricProfiler::~MetricProfiler()
{
    State &s = *m_state;
    if (s.profilerInitialized) {
        CUpti_Profiler_DeInitialize_Params p{};
        p.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        s.cuptiProfilerDeInitialize(&p);
    }
    // libcupti stays loaded: CUPTI cannot be unloaded safely while the CUDA context lives.
}

std::string MetricProfiler::libraryPath() const
{
    return m_state->library.path;
}

Result<MetricRanges> MetricProfiler::profile(const Request &request, const std::function<Status()> &prepare,
                                             const std::function<Status(std::size_t launch)> &launch,
                                             const std::function<Status()> &wait)
{
    State &s = *m_state;
    if (!s.library.handle) {
        auto lib = openCupti(s.candidates);
        if (!lib)
            return lib.error();
        s.library = *lib;
    }
    if (!s.resolved) {
#define STITCH_RESOLVE(name)                                                                       \
    s.name = reinterpret_cast<decltype(s.name)>(s.library.symbol(#name));                          \
    if (!s.name)                                                                                   \
        return makeError(ErrorKind::Unsupported, s.library.path + " lacks " #name                  \
                                                 " (the range profiler needs CUPTI from CUDA 12.6 or newer)");
        STITCH_PROFILER_FUNCTIONS(STITCH_RESOLVE)
#undef STITCH_RESOLVE
        s.resolved = true;
    }
    CUcontext ctx = currentContext();
    if (!ctx)
        return makeError(ErrorKind::Unsupported, "no current CUDA context on the profiling thread");

    if (!s.profilerInitialized) {
        CUpti_Profiler_Initialize_Params p{};
        p.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        if (CUptiResult rc = s.cuptiProfilerInitialize(&p); rc != CUPTI_SUCCESS) {
            Error e = cuptiError(s, "cuptiProfilerInitialize", rc);
            e.message += nvperfHint(s.library.path);
            return e;
        }
        s.profilerInitialized = true;
    }

    MetricRanges out;
    {
        CUpti_Device_GetChipName_Params p{};
        p.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.deviceIndex = static_cast<std::size_t>(request.deviceOrdinal);
        if (CUptiResult rc = s.cuptiDeviceGetChipName(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiDeviceGetChipName", rc);
        out.chip = p.pChipName ? p.pChipName : "";
    }

    // The counter-availability image tells the host side which counters this context may read.
    std::vector<std::uint8_t> availability;
    {
        CUpti_Profiler_GetCounterAvailability_Params p{};
        p.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.ctx = ctx;
        p.pCounterAvailabilityImage = nullptr;
        if (CUptiResult rc = s.cuptiProfilerGetCounterAvailability(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiProfilerGetCounterAvailability", rc);
        availability.resize(p.counterAvailabilityImageSize);
        p.pCounterAvailabilityImage = availability.data();
        if (CUptiResult rc = s.cuptiProfilerGetCounterAvailability(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiProfilerGetCounterAvailability", rc);
    }

    CUpti_Profiler_Host_Object *host = nullptr;
    {
        CUpti_Profiler_Host_Initialize_Params p{};
        p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        p.pChipName = out.chip.c_str();
        p.pCounterAvailabilityImage = availability.data();
        if (CUptiResult rc = s.cuptiProfilerHostInitialize(&p); rc != CUPTI_SUCCESS) {
            Error e = cuptiError(s, "cuptiProfilerHostInitialize", rc);
            e.message += nvperfHint(s.library.path);
            return e;
        }
        host = p.pHostObject;
    }
    Finally hostGuard{[&] {
        CUpti_Profiler_Host_Deinitialize_Params p{};
        p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.pHostObject = host;
        s.cuptiProfilerHostDeinitialize(&p);
    }};

    // A metric the chip does not know is dropped with a note, not a reason to measure nothing.
    std::vector<std::string> wanted = request.metrics;
    if (wanted.empty())
        for (const auto &m : standardMetrics())
            wanted.emplace_back(m.name);
    std::vector<const char *> names;
    for (const auto &m : wanted) {
        CUpti_Profiler_Host_GetMetricProperties_Params p{};
        p.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.pHostObject = host;
        p.pMetricName = m.c_str();
        if (s.cuptiProfilerHostGetMetricProperties(&p) == CUPTI_ERROR_INVALID_METRIC_NAME)
            out.dropped.push_back(m);
        else
            names.push_back(m.c_str());
    }
    if (names.empty())
        return makeError(ErrorKind::Unsupported, "none of the requested metrics is known on " + out.chip);

    std::vector<std::uint8_t> config;
    {
        CUpti_Profiler_Host_ConfigAddMetrics_Params p{};
        p.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.pHostObject = host;
        p.ppMetricNames = names.data();
        p.numMetrics = names.size();
        if (CUptiResult rc = s.cuptiProfilerHostConfigAddMetrics(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiProfilerHostConfigAddMetrics", rc);

        CUpti_Profiler_Host_GetConfigImageSize_Params sz{};
        sz.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
        sz.pPriv = nullptr;
        sz.pHostObject = host;
        if (CUptiResult rc = s.cuptiProfilerHostGetConfigImageSize(&sz); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiProfilerHostGetConfigImageSize", rc);
        config.resize(sz.configImageSize);

        CUpti_Profiler_Host_GetConfigImage_Params img{};
        img.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
        img.pPriv = nullptr;
        img.pHostObject = host;
        img.configImageSize = config.size();
        img.pConfigImage = config.data();
        if (CUptiResult rc = s.cuptiProfilerHostGetConfigImage(&img); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiProfilerHostGetConfigImage", rc);

        CUpti_Profiler_Host_GetNumOfPasses_Params np{};
        np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
        np.pPriv = nullptr;
        np.configImageSize = config.size();
        np.pConfigImage = config.data();
        if (CUptiResult rc = s.cuptiProfilerHostGetNumOfPasses(&np); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiProfilerHostGetNumOfPasses", rc);
        out.passes = static_cast<int>(np.numOfPasses);
    }

    CUpti_RangeProfiler_Object *object = nullptr;
    {
        CUpti_RangeProfiler_Enable_Params p{};
        p.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.ctx = ctx;
        if (CUptiResult rc = s.cuptiRangeProfilerEnable(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiRangeProfilerEnable", rc);
        object = p.pRangeProfilerObject;
    }
    Finally enableGuard{[&] {
        CUpti_RangeProfiler_Disable_Params p{};
        p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.pRangeProfilerObject = object;
        s.cuptiRangeProfilerDisable(&p);
    }};

    const std::size_t maxRanges = std::max<std::size_t>(launchIndices(request.profiled).size(), 1);
    std::vector<std::uint8_t> counterData;
    {
        CUpti_RangeProfiler_GetCounterDataSize_Params p{};
        p.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.pRangeProfilerObject = object;
        p.pMetricNames = names.data();
        p.numMetrics = names.size();
        p.maxNumOfRanges = maxRanges;
        p.maxNumRangeTreeNodes = static_cast<std::uint32_t>(maxRanges);
        if (CUptiResult rc = s.cuptiRangeProfilerGetCounterDataSize(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiRangeProfilerGetCounterDataSize", rc);
        counterData.assign(p.counterDataSize, 0);

        CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{};
        init.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
        init.pPriv = nullptr;
        init.pRangeProfilerObject = object;
        init.counterDataSize = counterData.size();
        init.pCounterData = counterData.data();
        if (CUptiResult rc = s.cuptiRangeProfilerCounterDataImageInitialize(&init); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiRangeProfilerCounterDataImageInitialize", rc);
    }
    {
        CUpti_RangeProfiler_SetConfig_Params p{};
        p.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.pRangeProfilerObject = object;
        p.configSize = config.size();
        p.pConfig = config.data();
        p.counterDataImageSize = counterData.size();
        p.pCounterDataImage = counterData.data();
        p.range = CUPTI_AutoRange;        // one range per kernel launch
        p.replayMode = CUPTI_KernelReplay; // CUPTI replays each kernel, saving and restoring its memory
        p.maxRangesPerPass = maxRanges;
        p.numNestingLevels = 1;
        p.minNestingLevel = 1;
        p.passIndex = 0;
        p.targetNestingLevel = 1;
        if (CUptiResult rc = s.cuptiRangeProfilerSetConfig(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiRangeProfilerSetConfig", rc);
    }

    if (prepare)
        if (auto st = prepare(); !st)
            return st.error();

    // Kernel replay finishes every pass inside one run; the loop is the API's contract (CUPTI says
    // when all passes are in) with a bound, so a CUPTI that never says so cannot hang the worker.
    const int maxRuns = std::max(out.passes, 1) + 1;
    bool allPasses = false;
    for (int r = 0; r < maxRuns && !allPasses; ++r)
        if (auto st = runOnce(s, object, request, launch, wait, allPasses); !st)
            return st.error();
    if (!allPasses)
        return makeError(ErrorKind::Unsupported, "CUPTI had not collected every pass after " + std::to_string(maxRuns) +
                                                     " runs of the program");
    {
        CUpti_RangeProfiler_DecodeData_Params p{};
        p.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.pRangeProfilerObject = object;
        if (CUptiResult rc = s.cuptiRangeProfilerDecodeData(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiRangeProfilerDecodeData", rc);
        out.rangesDropped = p.numOfRangeDropped;
    }

    std::size_t ranges = 0;
    {
        CUpti_RangeProfiler_GetCounterDataInfo_Params p{};
        p.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.pCounterDataImage = counterData.data();
        p.counterDataImageSize = counterData.size();
        if (CUptiResult rc = s.cuptiRangeProfilerGetCounterDataInfo(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiRangeProfilerGetCounterDataInfo", rc);
        ranges = p.numTotalRanges;
    }
    std::vector<double> values(names.size());
    for (std::size_t i = 0; i < ranges; ++i) {
        MetricRanges::Range range;
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params info{};
        info.structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE;
        info.pPriv = nullptr;
        info.pCounterDataImage = counterData.data();
        info.counterDataImageSize = counterData.size();
        info.rangeIndex = i;
        info.rangeDelimiter = "/";
        if (s.cuptiRangeProfilerCounterDataGetRangeInfo(&info) == CUPTI_SUCCESS && info.rangeName)
            range.name = info.rangeName;

        std::fill(values.begin(), values.end(), 0.0);
        CUpti_Profiler_Host_EvaluateToGpuValues_Params p{};
        p.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
        p.pPriv = nullptr;
        p.pHostObject = host;
        p.pCounterDataImage = counterData.data();
        p.counterDataImageSize = counterData.size();
        p.rangeIndex = i;
        p.ppMetricNames = names.data();
        p.numMetrics = names.size();
        p.pMetricValues = values.data();
        if (CUptiResult rc = s.cuptiProfilerHostEvaluateToGpuValues(&p); rc != CUPTI_SUCCESS)
            return cuptiError(s, "cuptiProfilerHostEvaluateToGpuValues", rc);
        for (std::size_t m = 0; m < names.size(); ++m)
            range.values[names[m]] = values[m];
        out.ranges.push_back(std::move(range));
    }
    return out;
}

} // namespace stitch::runner
