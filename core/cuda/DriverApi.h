#pragma once
// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1").
//   DriverApi::load -> Device query / Context -> Module (CUBIN) -> launch -> runner's worker process
// No binary links libcuda: without a driver every call answers ErrorKind::NoDevice and the studio
// and CLI keep working. The path can be overridden with STITCHCUDA_LIBCUDA (tests use this to
// prove the no-GPU path on a machine that has a GPU).

#include "core/common/Result.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stitch::cuda {

struct DeviceInfo {
    int ordinal = 0;
    std::string name;
    int computeMajor = 0;
    int computeMinor = 0;
    int multiprocessors = 0;
    std::size_t totalMemoryBytes = 0;
    int clockRateKHz = 0;
    int memoryClockRateKHz = 0;
    int memoryBusWidthBits = 0;
    int l2CacheBytes = 0;
    int maxThreadsPerBlock = 0;
    int maxThreadsPerMultiprocessor = 0;
    int sharedMemoryPerBlockOptin = 0;
    int sharedMemoryPerMultiprocessor = 0;
    int registersPerMultiprocessor = 0;
    int warpSize = 0;

    std::string arch() const { return "sm_" + std::to_string(computeMajor) + std::to_string(computeMinor); }
};

class DriverApi;

/// Device memory owned by a Context; freed on destruction.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    DeviceBuffer(DeviceBuffer &&other) noexcept;
    DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
    ~DeviceBuffer();

    std::uint64_t address() const { return m_ptr; }
    std::size_t size() const { return m_size; }

private:
    friend class Context;
    std::shared_ptr<const DriverApi> m_api;
    std::uint64_t m_ptr = 0;
    std::size_t m_size = 0;
};

/// A kernel of a Module, looked up once so that repeated launches skip the name lookup.
/// Valid while its Module lives.
struct KernelHandle {
    void *function = nullptr; ///< the CUfunction
    std::string name;         ///< as looked up (mangled or extern "C" name)
};

/// A stream of a Context: work queued on it runs in order. Destroyed with the object.
class Stream {
public:
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;
    ~Stream();

    /// Waits for all queued work. A kernel fault surfaces here as ErrorKind::Fault.
    Status synchronize();
    void *handle() const { return m_stream; }

private:
    friend class Context;
    Stream(std::shared_ptr<const DriverApi> api, void *stream) : m_api(std::move(api)), m_stream(stream) {}
    std::shared_ptr<const DriverApi> m_api;
    void *m_stream = nullptr;
};

/// A CUDA event, recorded on a stream to time the work between two events.
class Event {
public:
    Event(const Event &) = delete;
    Event &operator=(const Event &) = delete;
    ~Event();

    Status record(const Stream &stream);
    Status synchronize();
    /// Milliseconds between two recorded, completed events (CUDA's resolution is about 0.5 us).
    static Result<float> elapsedMs(const Event &start, const Event &stop);

private:
    friend class Context;
    Event(std::shared_ptr<const DriverApi> api, void *event) : m_api(std::move(api)), m_event(event) {}
    std::shared_ptr<const DriverApi> m_api;
    void *m_event = nullptr;
};

struct LaunchConfig {
    unsigned gridX = 1, gridY = 1, gridZ = 1;
    unsigned blockX = 1, blockY = 1, blockZ = 1;
    unsigned dynamicSharedBytes = 0;
};

/// A loaded CUBIN/PTX module; kernels are looked up by mangled or plain name.
class Module {
public:
    Module(const Module &) = delete;
    Module &operator=(const Module &) = delete;
    ~Module();

    /// Launches `kernel` with the given argument pointers (one per kernel parameter, as cuLaunchKernel
    /// expects) and waits for it. Faults surface as ErrorKind::Fault; they poison the context, so
    /// untrusted kernels belong in the runner's worker process (core/runner).
    Status launch(const std::string &kernel, const LaunchConfig &config, void **args);

    /// Launches and times with CUDA events; returns milliseconds.
    Result<float> launchTimed(const std::string &kernel, const LaunchConfig &config, void **args);

    /// Looks a kernel up by mangled or extern "C" name; InvalidArgument when it is absent.
    Result<KernelHandle> kernel(const std::string &name);
    /// Queues a launch on `stream` (the legacy default stream when null) without waiting.
    /// Dynamic shared memory above 48 KiB is opted into first (ResourceLimit when refused).
    Status enqueue(const KernelHandle &kernel, const LaunchConfig &config, void **args, const Stream *stream);

private:
    friend class Context;
    Module(std::shared_ptr<const DriverApi> api, void *module) : m_api(std::move(api)), m_module(module) {}
    Status launchAsync(const std::string &kernel, const LaunchConfig &config, void **args);
    std::shared_ptr<const DriverApi> m_api;
    void *m_module = nullptr;
};

/// A primary context on one device, made current on the calling thread.
class Context {
public:
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;
    ~Context();

    const DeviceInfo &device() const { return m_device; }

    Result<DeviceBuffer> allocate(std::size_t bytes);
    Status upload(const DeviceBuffer &dst, const void *src, std::size_t bytes);
    Status download(void *dst, const DeviceBuffer &src, std::size_t bytes);
    Status fill(const DeviceBuffer &dst, std::uint32_t pattern); ///< 32-bit pattern, size/4 words
    /// Sets every byte of dst to value, queued on `stream` (null: on the legacy default stream,
    /// asynchronous to the host; createStream's streams wait for it).
    Status fillBytes(const DeviceBuffer &dst, std::uint8_t value, const Stream *stream = nullptr);
    Result<std::unique_ptr<Module>> loadModule(const std::vector<char> &image);
    /// A blocking stream: its work runs after what upload(), fill() and fillBytes() queued before it.
    Result<std::unique_ptr<Stream>> createStream();
    Result<std::unique_ptr<Event>> createEvent();
    Status synchronize();

    struct MemoryInfo {
        std::size_t freeBytes = 0;
        std::size_t totalBytes = 0;
    };
    Result<MemoryInfo> memoryInfo();

private:
    friend class DriverApi;
    Context(std::shared_ptr<const DriverApi> api, int device, void *ctx, DeviceInfo info)
        : m_api(std::move(api)), m_deviceHandle(device), m_ctx(ctx), m_device(std::move(info)) {}
    std::shared_ptr<const DriverApi> m_api;
    int m_deviceHandle = 0;
    void *m_ctx = nullptr;
    DeviceInfo m_device;
};

/// The dlopen'ed driver. Create with load(); share it (contexts and buffers keep it alive).
class DriverApi : public std::enable_shared_from_this<DriverApi> {
public:
    /// Loads libcuda.so.1 (or $STITCHCUDA_LIBCUDA) and calls cuInit. NoDevice if either fails.
    static Result<std::shared_ptr<DriverApi>> load();

    ~DriverApi();
    DriverApi(const DriverApi &) = delete;
    DriverApi &operator=(const DriverApi &) = delete;

    /// Driver version as reported by cuDriverGetVersion, e.g. 13000.
    int driverVersion() const { return m_driverVersion; }
    std::string libraryPath() const { return m_libraryPath; }

    Result<std::vector<DeviceInfo>> devices() const;
    Result<std::unique_ptr<Context>> createContext(int ordinal = 0);

    struct Functions; ///< the resolved entry points (DriverApi.cpp)
    const Functions &fn() const { return *m_fn; }
    /// "cuFoo failed: CUDA_ERROR_X (what)" for an error code.
    std::string describe(const char *call, int code) const;

private:
    DriverApi() = default;
    void *m_handle = nullptr;
    std::unique_ptr<Functions> m_fn;
    int m_driverVersion = 0;
    std::string m_libraryPath;
};

} // namespace stitch::cuda
