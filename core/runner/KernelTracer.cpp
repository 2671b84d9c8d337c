#include "core/runner/KernelTracer.h"

#include "core/cuda/NvrtcCompiler.h"
#include "core/runner/CuptiLibrary.h"

// Types and names only: libcupti is dlopen'ed, never linked.
#include <cupti_activity.h>
#include <cupti_result.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

#define STITCH_CUPTI_FUNCTIONS(X)                                                                  \
    X(cuptiActivityRegisterCallbacks) X(cuptiActivityEnable) X(cuptiActivityDisable)               \
    X(cuptiActivityFlushAll) X(cuptiActivityGetNextRecord)

namespace stitch::runner {

struct KernelTracer::State {
#define STITCH_MEMBER(name) decltype(&::name) name = nullptr;
    STITCH_CUPTI_FUNCTIONS(STITCH_MEMBER)
#undef STITCH_MEMBER
    CuptiLibrary library;
    bool callbacksRegistered = false;
    bool active = false;
    std::mutex mutex;
    struct Record {
        std::uint64_t start = 0;
        KernelProfile profile;
    };
    std::vector<Record> records;
};

namespace {

// CUPTI's buffer callbacks carry no user pointer, so the tracer that owns them is reached through
// this one process-wide slot; the KernelTracer constructor claims it and the destructor frees it.
std::atomic<KernelTracer::State *> g_tracer{nullptr};

constexpr std::size_t kBufferBytes = std::size_t{4} << 20;

void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size, size_t *maxNumRecords)
{
    *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t validSize)
{
    KernelTracer::State *state = g_tracer.load();
    if (state && buffer) {
        std::lock_guard lock(state->mutex);
        CUpti_Activity *record = nullptr;
        while (state->cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
            if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
                continue;
            // Newer CUPTI versions append fields to the kernel record; the ones read here keep
            // their place, and records are walked with cuptiActivityGetNextRecord, not by size.
            const auto *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
            KernelTracer::State::Record r;
            r.start = k->start;
            r.profile.mangledName = k->name ? k->name : "";
            r.profile.name = cuda::shortKernelName(r.profile.mangledName);
            r.profile.durationUs = k->end > k->start ? static_cast<double>(k->end - k->start) / 1000.0 : 0.0;
            r.profile.registers = k->registersPerThread;
            r.profile.staticSharedBytes = k->staticSharedMemory;
            r.profile.dynamicSharedBytes = k->dynamicSharedMemory;
            r.profile.localBytesPerThread = static_cast<int>(k->localMemoryPerThread);
            r.profile.grid[0] = static_cast<unsigned>(k->gridX), r.profile.grid[1] = static_cast<unsigned>(k->gridY);
            r.profile.grid[2] = static_cast<unsigned>(k->gridZ);
            r.profile.block[0] = static_cast<unsigned>(k->blockX), r.profile.block[1] = static_cast<unsigned>(k->blockY);
            r.profile.block[2] = static_cast<unsigned>(k->blockZ);
            state->records.push_back(std::move(r));
        }
    }
    std::free(buffer);
}

std::string describe(const KernelTracer::State &s, const char *call, CUptiResult rc)
{
    std::string msg = std::string("CUPTI ") + call + " failed: " + s.library.resultName(rc) + " (" + std::to_string(int(rc)) + ")";
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        msg += ": another profiler (Nsight Compute, Nsight Systems or a CUPTI tool) is attached, and its replays slow the timed runs";
    else if (const std::string why = cuptiRefusalReason(rc); !why.empty())
        msg += ": " + why;
    return msg;
}

} // namespace

KernelTracer::KernelTracer() : m_state(std::make_unique<State>())
{
    // A second tracer does not claim the slot; its start() reports that CUPTI is taken.
    State *expected = nullptr;
    g_tracer.compare_exchange_strong(expected, m_state.get());
}

KernelTracer::~KernelTracer()
{
    State *mine = m_state.get();
    if (mine->active && mine->cuptiActivityDisable)
        mine->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (mine->library.handle && mine->cuptiActivityFlushAll)
        mine->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    g_tracer.compare_exchange_strong(mine, nullptr);
    // libcupti stays loaded: CUPTI cannot be unloaded safely while the CUDA context lives.
}

std::string KernelTracer::libraryPath() const
{
    return m_state->library.path;
}

Status KernelTracer::start()
{
    State &s = *m_state;
    if (g_tracer.load() != &s)
        return makeError(ErrorKind::Unsupported, "another kernel tracer owns CUPTI in this process");
    if (!s.library.handle) {
        auto lib = openCupti();
        if (!lib)
            return lib.error();
        s.library = *lib;
#define STITCH_RESOLVE(name)                                                                       \
    s.name = reinterpret_cast<decltype(s.name)>(s.library.symbol(#name));                          \
    if (!s.name)                                                                                   \
        return makeError(ErrorKind::Unsupported, s.library.path + " lacks " #name);
        STITCH_CUPTI_FUNCTIONS(STITCH_RESOLVE)
#undef STITCH_RESOLVE
    }
    if (!s.callbacksRegistered) {
        if (CUptiResult rc = s.cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted); rc != CUPTI_SUCCESS)
            return makeError(ErrorKind::Unsupported, describe(s, "cuptiActivityRegisterCallbacks", rc));
        s.callbacksRegistered = true;
    }
    {
        std::lock_guard lock(s.mutex);
        s.records.clear();
    }
    if (CUptiResult rc = s.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); rc != CUPTI_SUCCESS)
        return makeError(ErrorKind::Unsupported, describe(s, "cuptiActivityEnable", rc));
    s.active = true;
    return Ok{};
}

Result<std::vector<KernelProfile>> KernelTracer::stop()
{
    State &s = *m_state;
    if (!s.active)
        return makeError(ErrorKind::InvalidArgument, "kernel tracing was not started");
    const CUptiResult flush = s.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    s.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    s.active = false;
    if (flush != CUPTI_SUCCESS)
        return makeError(ErrorKind::Unsupported, describe(s, "cuptiActivityFlushAll", flush));
    std::vector<State::Record> records;
    {
        std::lock_guard lock(s.mutex);
        records.swap(s.records);
    }
    std::stable_sort(records.begin(), records.end(), [](const auto &a, const auto &b) { return a.start < b.start; });
    std::vector<KernelProfile> out;
    out.reserve(records.size());
    for (auto &r : records)
        out.push_back(std::move(r.profile));
    return out;
}

} // namespace stitch::runner
