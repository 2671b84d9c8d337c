#include "core/cuda/DriverApi.h"

// Types and versioned names only: nothing from libcuda is linked. cuda.h maps e.g. cuMemAlloc to
// cuMemAlloc_v2 with macros, so the member names and the dlsym strings below follow that mapping.
#include <cuda.h>

#include <dlfcn.h>

#include <cstdlib>

#define STITCH_STR2(x) #x
#define STITCH_STR(x) STITCH_STR2(x)

// Every driver entry point the core uses; X(name) is expanded once for the member and once for dlsym.
#define STITCH_DRIVER_FUNCTIONS(X)                                                                 \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)     \
    X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                  \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) \
    X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD32) X(cuModuleLoadData)  \
    X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute)           \
    X(cuLaunchKernel) X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize)                      \
    X(cuEventElapsedTime) X(cuEventDestroy) X(cuMemsetD8) X(cuMemsetD8Async) X(cuMemGetInfo)       \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)

namespace stitch::cuda {

struct DriverApi::Functions {
#define STITCH_MEMBER(name) decltype(&::name) name = nullptr;
    STITCH_DRIVER_FUNCTIONS(STITCH_MEMBER)
#undef STITCH_MEMBER
};

namespace {

std::string describeCode(const DriverApi &api, const char *call, CUresult code)
{
    const char *name = nullptr;
    const char *text = nullptr;
    if (api.fn().cuGetErrorName)
        api.fn().cuGetErrorName(code, &name);
    if (api.fn().cuGetErrorString)
        api.fn().cuGetErrorString(code, &text);
    std::string s = std::string(call) + " failed: " + (name ? name : "CUDA error " + std::to_string(code));
    if (text)
        s += std::string(" (") + text + ")";
    return s;
}

// The kind a failed call reports. Faults are sticky: the context is unusable afterwards, and any
// later call may return the same code, so they are recognised wherever they appear.
ErrorKind classify(CUresult code, ErrorKind fallback)
{
    switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
        return ErrorKind::Fault;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return ErrorKind::OutOfMemory;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
        return ErrorKind::ResourceLimit;
    default:
        return fallback;
    }
}

} // namespace

std::string DriverApi::describe(const char *call, int code) const
{
    return describeCode(*this, call, static_cast<CUresult>(code));
}

#define STITCH_CHECK(api, call, kind)                                                             \
    do {                                                                                           \
        const CUresult rc_ = (call);                                                               \
        if (rc_ != CUDA_SUCCESS)                                                                   \
            return makeError(classify(rc_, (kind)), describeCode((api), #call, rc_));              \
    } while (0)

// The same, naming the call ("cuStreamSynchronize") instead of echoing the expression: these
// messages reach users in fault reports.
#define STITCH_CHECK_AS(api, name, call, kind)                                                     \
    do {                                                                                           \
        const CUresult rc_ = (call);                                                               \
        if (rc_ != CUDA_SUCCESS)                                                                   \
            return makeError(classify(rc_, (kind)), describeCode((api), name, rc_));               \
    } while (0)

DriverApi::~DriverApi()
{
    if (m_handle)
        dlclose(m_handle);
}

Result<std::shared_ptr<DriverApi>> DriverApi::load()
{
    const char *overridePath = std::getenv("STITCHCUDA_LIBCUDA");
    const std::string path = overridePath && *overridePath ? overridePath : "libcuda.so.1";
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        return makeError(ErrorKind::NoDevice, "no CUDA driver: cannot load " + path + " (" +
                                                  (why ? why : "unknown reason") + ")");
    }
    std::shared_ptr<DriverApi> api(new DriverApi());
    api->m_handle = handle;
    api->m_libraryPath = path;
    api->m_fn = std::make_unique<Functions>();
    Functions &f = *api->m_fn;
#define STITCH_RESOLVE(name)                                                                       \
    f.name = reinterpret_cast<decltype(f.name)>(dlsym(handle, STITCH_STR(name)));                  \
    if (!f.name)                                                                                   \
        return makeError(ErrorKind::NoDevice,                                                      \
                         path + " lacks " STITCH_STR(name) ": driver too old for this build");
    STITCH_DRIVER_FUNCTIONS(STITCH_RESOLVE)
#undef STITCH_RESOLVE

    const CUresult init = f.cuInit(0);
    if (init != CUDA_SUCCESS)
        return makeError(ErrorKind::NoDevice, describeCode(*api, "cuInit", init));
    f.cuDriverGetVersion(&api->m_driverVersion);
    return api;
}

Result<std::vector<DeviceInfo>> DriverApi::devices() const
{
    const Functions &f = *m_fn;
    int count = 0;
    STITCH_CHECK(*this, f.cuDeviceGetCount(&count), ErrorKind::Driver);
    std::vector<DeviceInfo> out;
    for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        STITCH_CHECK(*this, f.cuDeviceGet(&dev, i), ErrorKind::Driver);
        DeviceInfo info;
        info.ordinal = i;
        char name[256] = {};
        STITCH_CHECK(*this, f.cuDeviceGetName(name, sizeof name, dev), ErrorKind::Driver);
        info.name = name;
        std::size_t mem = 0;
        STITCH_CHECK(*this, f.cuDeviceTotalMem(&mem, dev), ErrorKind::Driver);
        info.totalMemoryBytes = mem;
        const auto attr = [&](CUdevice_attribute a) {
            int v = 0;
            return f.cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
        };
        info.computeMajor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        info.computeMinor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        info.multiprocessors = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        info.clockRateKHz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
        info.memoryClockRateKHz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
        info.memoryBusWidthBits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
        info.l2CacheBytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
        info.maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
        info.maxThreadsPerMultiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
        info.sharedMemoryPerBlockOptin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
        info.sharedMemoryPerMultiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
        info.registersPerMultiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
        info.warpSize = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
        out.push_back(std::move(info));
    }
    return out;
}

Result<std::unique_ptr<Context>> DriverApi::createContext(int ordinal)
{
    auto devs = devices();
    if (!devs)
        return devs.error();
    if (ordinal < 0 || ordinal >= static_cast<int>(devs->size()))
        return makeError(ErrorKind::NoDevice, devs->empty() ? "the driver reports no GPU"
                                                            : "no GPU with ordinal " + std::to_string(ordinal));
    const Functions &f = *m_fn;
    CUdevice dev = 0;
    STITCH_CHECK(*this, f.cuDeviceGet(&dev, ordinal), ErrorKind::Driver);
    CUcontext ctx = nullptr;
    STITCH_CHECK(*this, f.cuDevicePrimaryCtxRetain(&ctx, dev), ErrorKind::Driver);
    STITCH_CHECK(*this, f.cuCtxSetCurrent(ctx), ErrorKind::Driver);
    return std::unique_ptr<Context>(new Context(shared_from_this(), dev, ctx, (*devs)[static_cast<std::size_t>(ordinal)]));
}

// --- Context -------------------------------------------------------------------------------------

Context::~Context()
{
    if (m_ctx) {
        m_api->fn().cuCtxSetCurrent(static_cast<CUcontext>(m_ctx));
        m_api->fn().cuCtxSynchronize();
        m_api->fn().cuDevicePrimaryCtxRelease(m_deviceHandle);
    }
}

Result<DeviceBuffer> Context::allocate(std::size_t bytes)
{
    const auto &f = m_api->fn();
    STITCH_CHECK(*m_api, f.cuCtxSetCurrent(static_cast<CUcontext>(m_ctx)), ErrorKind::Driver);
    CUdeviceptr ptr = 0;
    const CUresult rc = f.cuMemAlloc(&ptr, bytes);
    if (rc != CUDA_SUCCESS)
        return makeError(classify(rc, ErrorKind::Driver),
                         describeCode(*m_api, "cuMemAlloc", rc) + " for " + std::to_string(bytes) + " bytes");
    DeviceBuffer buf;
    buf.m_api = m_api;
    buf.m_ptr = ptr;
    buf.m_size = bytes;
    return buf;
}

Status Context::upload(const DeviceBuffer &dst, const void *src, std::size_t bytes)
{
    if (bytes > dst.size())
        return makeError(ErrorKind::InvalidArgument, "upload larger than the buffer");
    STITCH_CHECK(*m_api, m_api->fn().cuMemcpyHtoD(dst.address(), src, bytes), ErrorKind::Driver);
    return Ok{};
}

Status Context::download(void *dst, const DeviceBuffer &src, std::size_t bytes)
{
    if (bytes > src.size())
        return makeError(ErrorKind::InvalidArgument, "download larger than the buffer");
    const CUresult rc = m_api->fn().cuMemcpyDtoH(dst, src.address(), bytes);
    if (rc != CUDA_SUCCESS)
        return makeError(classify(rc, ErrorKind::Driver), describeCode(*m_api, "cuMemcpyDtoH", rc));
    return Ok{};
}

Status Context::fill(const DeviceBuffer &dst, std::uint32_t pattern)
{
    STITCH_CHECK(*m_api, m_api->fn().cuMemsetD32(dst.address(), pattern, dst.size() / 4), ErrorKind::Driver);
    return Ok{};
}

Status Context::fillBytes(const DeviceBuffer &dst, std::uint8_t value, const Stream *stream)
{
    const auto &f = m_api->fn();
    if (stream)
        STITCH_CHECK_AS(*m_api, "cuMemsetD8Async", f.cuMemsetD8Async(dst.address(), value, dst.size(), static_cast<CUstream>(stream->handle())),
                     ErrorKind::Driver);
    else
        STITCH_CHECK_AS(*m_api, "cuMemsetD8", f.cuMemsetD8(dst.address(), value, dst.size()), ErrorKind::Driver);
    return Ok{};
}

Result<std::unique_ptr<Stream>> Context::createStream()
{
    CUstream stream = nullptr;
    // Non-blocking: the launches do not wait on other work of the legacy stream. Work a launch
    // depends on that runs there (upload(), fill(), fillBytes() without a stream) is waited for
    // explicitly by the caller (runner::Executor synchronises the context once the buffers are
    // set up; docs/RUNNER.md, step 2).
    STITCH_CHECK_AS(*m_api, "cuStreamCreate", m_api->fn().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), ErrorKind::Driver);
    return std::unique_ptr<Stream>(new Stream(m_api, stream));
}

Result<std::unique_ptr<Event>> Context::createEvent()
{
    CUevent event = nullptr;
    STITCH_CHECK_AS(*m_api, "cuEventCreate", m_api->fn().cuEventCreate(&event, CU_EVENT_DEFAULT), ErrorKind::Driver);
    return std::unique_ptr<Event>(new Event(m_api, event));
}

Result<Context::MemoryInfo> Context::memoryInfo()
{
    MemoryInfo info;
    STITCH_CHECK_AS(*m_api, "cuMemGetInfo", m_api->fn().cuMemGetInfo(&info.freeBytes, &info.totalBytes), ErrorKind::Driver);
    return info;
}

Result<std::unique_ptr<Module>> Context::loadModule(const std::vector<char> &image)
{
    if (image.empty())
        return makeError(ErrorKind::InvalidArgument, "empty module image");
    const auto &f = m_api->fn();
    STITCH_CHECK(*m_api, f.cuCtxSetCurrent(static_cast<CUcontext>(m_ctx)), ErrorKind::Driver);
    CUmodule mod = nullptr;
    STITCH_CHECK(*m_api, f.cuModuleLoadData(&mod, image.data()), ErrorKind::Launch);
    return std::unique_ptr<Module>(new Module(m_api, mod));
}

Status Context::synchronize()
{
    const CUresult rc = m_api->fn().cuCtxSynchronize();
    if (rc != CUDA_SUCCESS)
        return makeError(classify(rc, ErrorKind::Driver), describeCode(*m_api, "cuCtxSynchronize", rc));
    return Ok{};
}

// --- Stream and Event ---------------------------------------------------------------------------

Stream::~Stream()
{
    if (m_stream)
        m_api->fn().cuStreamDestroy(static_cast<CUstream>(m_stream));
}

Status Stream::synchronize()
{
    STITCH_CHECK_AS(*m_api, "cuStreamSynchronize", m_api->fn().cuStreamSynchronize(static_cast<CUstream>(m_stream)), ErrorKind::Launch);
    return Ok{};
}

Event::~Event()
{
    if (m_event)
        m_api->fn().cuEventDestroy(static_cast<CUevent>(m_event));
}

Status Event::record(const Stream &stream)
{
    STITCH_CHECK_AS(*m_api, "cuEventRecord", m_api->fn().cuEventRecord(static_cast<CUevent>(m_event), static_cast<CUstream>(stream.handle())),
                 ErrorKind::Driver);
    return Ok{};
}

Status Event::synchronize()
{
    STITCH_CHECK_AS(*m_api, "cuEventSynchronize", m_api->fn().cuEventSynchronize(static_cast<CUevent>(m_event)), ErrorKind::Launch);
    return Ok{};
}

Result<float> Event::elapsedMs(const Event &start, const Event &stop)
{
    float ms = 0;
    STITCH_CHECK_AS(*start.m_api, "cuEventElapsedTime",
                 start.m_api->fn().cuEventElapsedTime(&ms, static_cast<CUevent>(start.m_event), static_cast<CUevent>(stop.m_event)),
                 ErrorKind::Driver);
    return ms;
}

// --- DeviceBuffer --------------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : m_api(std::move(other.m_api)), m_ptr(other.m_ptr), m_size(other.m_size)
{
    other.m_ptr = 0;
    other.m_size = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept
{
    if (this != &other) {
        if (m_ptr && m_api)
            m_api->fn().cuMemFree(m_ptr);
        m_api = std::move(other.m_api);
        m_ptr = other.m_ptr;
        m_size = other.m_size;
        other.m_ptr = 0;
        other.m_size = 0;
    }
    return *this;
}

DeviceBuffer::~DeviceBuffer()
{
    if (m_ptr && m_api)
        m_api->fn().cuMemFree(m_ptr);
}

// --- Module --------------------------------------------------------------------------------------

Module::~Module()
{
    if (m_module)
        m_api->fn().cuModuleUnload(static_cast<CUmodule>(m_module));
}

Result<KernelHandle> Module::kernel(const std::string &name)
{
    CUfunction fn = nullptr;
    const CUresult rc = m_api->fn().cuModuleGetFunction(&fn, static_cast<CUmodule>(m_module), name.c_str());
    if (rc != CUDA_SUCCESS)
        return makeError(ErrorKind::InvalidArgument,
                         "no kernel '" + name + "' in the module (use the mangled name for C++ kernels)");
    return KernelHandle{static_cast<void *>(fn), name};
}

Status Module::launch(const std::string &kernel, const LaunchConfig &c, void **args)
{
    if (auto st = launchAsync(kernel, c, args); !st)
        return st;
    STITCH_CHECK(*m_api, m_api->fn().cuCtxSynchronize(), ErrorKind::Launch);
    return Ok{};
}

Status Module::launchAsync(const std::string &kernel, const LaunchConfig &c, void **args)
{
    auto handle = this->kernel(kernel);
    if (!handle)
        return handle.error();
    return enqueue(*handle, c, args, nullptr);
}

Status Module::enqueue(const KernelHandle &kernel, const LaunchConfig &c, void **args, const Stream *stream)
{
    const auto &f = m_api->fn();
    auto cufn = static_cast<CUfunction>(kernel.function);
    // Static plus dynamic shared memory past 48 KiB needs the opt-in (a row kernel's 48 KiB of
    // prefetch slots beside its static exchange slots, run 20 call 7).
    int staticBytes = 0;
    if (c.dynamicSharedBytes > 0 &&
        f.cuFuncGetAttribute(&staticBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, cufn) != CUDA_SUCCESS)
        staticBytes = 48 * 1024; // unknown: opt in
    if (c.dynamicSharedBytes > 0 && static_cast<std::size_t>(staticBytes) + c.dynamicSharedBytes > 48 * 1024)
        STITCH_CHECK_AS(*m_api, "cuFuncSetAttribute", f.cuFuncSetAttribute(cufn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                  static_cast<int>(c.dynamicSharedBytes)),
                     ErrorKind::ResourceLimit);
    // A kernel compiled for clusters of more than 8 blocks (__cluster_dims__) opts into them (sm_90: 16).
    int clusterWidth = 0;
    if (f.cuFuncGetAttribute(&clusterWidth, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, cufn) == CUDA_SUCCESS && clusterWidth > 8)
        STITCH_CHECK_AS(*m_api, "cuFuncSetAttribute",
                        f.cuFuncSetAttribute(cufn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                        ErrorKind::ResourceLimit);
    STITCH_CHECK_AS(*m_api, "cuLaunchKernel",
                 f.cuLaunchKernel(cufn, c.gridX, c.gridY, c.gridZ, c.blockX, c.blockY, c.blockZ,
                                  c.dynamicSharedBytes, stream ? static_cast<CUstream>(stream->handle()) : nullptr,
                                  args, nullptr),
                 ErrorKind::Launch);
    return Ok{};
}

Result<float> Module::launchTimed(const std::string &kernel, const LaunchConfig &c, void **args)
{
    const auto &f = m_api->fn();
    CUevent start = nullptr, stop = nullptr;
    STITCH_CHECK(*m_api, f.cuEventCreate(&start, CU_EVENT_DEFAULT), ErrorKind::Driver);
    STITCH_CHECK(*m_api, f.cuEventCreate(&stop, CU_EVENT_DEFAULT), ErrorKind::Driver);
    struct Events {
        const DriverApi::Functions &f;
        CUevent a, b;
        ~Events() { f.cuEventDestroy(a), f.cuEventDestroy(b); }
    } guard{f, start, stop};
    STITCH_CHECK(*m_api, f.cuEventRecord(start, nullptr), ErrorKind::Driver);
    if (auto st = launchAsync(kernel, c, args); !st)
        return st.error();
    STITCH_CHECK(*m_api, f.cuEventRecord(stop, nullptr), ErrorKind::Driver);
    STITCH_CHECK(*m_api, f.cuEventSynchronize(stop), ErrorKind::Launch);
    float ms = 0;
    STITCH_CHECK(*m_api, f.cuEventElapsedTime(&ms, start, stop), ErrorKind::Driver);
    return ms;
}

} // namespace stitch::cuda
