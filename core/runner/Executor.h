#pragma once
// The in-worker executor: runs one Job on the worker's CUDA context.
//   WorkerLoop -> Executor::execute(Job) -> buffers, checked first run, GPU reference, timing, CUPTI
//   (activity trace, then hardware counters) -> JobResult
// Runs only inside stitchcuda-worker: a faulting kernel poisons the context, and the process that
// owns it is the one that dies (ARCHITECTURE.md, "untrusted kernels run out of process").

#include "core/cuda/DriverApi.h"
#include "core/runner/HostData.h"
#include "core/runner/Job.h"
#include "core/runner/JobResult.h"
#include "core/runner/L2Flush.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace stitch::runner {

class CublasLibrary;
class CublasSession;
class KernelTracer;
class MetricProfiler;

/// Executes jobs one at a time on a context it does not own. Keeps loaded modules (by SHA-256 of
/// the image), a stream and the L2 flush (L2Flush) between jobs, so a job's overhead is its own work.
class Executor {
public:
    /// `tracer` and `metrics` may be null: profiling, or hardware metrics, then report themselves unavailable.
    Executor(cuda::Context &context, DeviceIdentity device, KernelTracer *tracer, MetricProfiler *metrics = nullptr);
    ~Executor();
    Executor(const Executor &) = delete;
    Executor &operator=(const Executor &) = delete;

    /// Runs the job: allocate, fill inputs from job.seed, poison outputs, a first run with each
    /// launch synchronised (so a fault names its launch), outputs compared with the GPU reference
    /// if any, then warm-up and timed runs, then one CUPTI-traced run and one run under hardware
    /// counters if asked (after timing, so neither disturbs it). Library calls run in their place
    /// among the launches, through cuBLAS loaded at the first job that has one.
    /// Errors: InvalidArgument (bad plan or unknown kernel), Launch (refused launch or module not
    /// for this GPU), ResourceLimit, OutOfMemory, Fault (the kernel faulted: the context is lost),
    /// Unsupported (a library call, and no cuBLAS found: the message names every path tried).
    Result<JobResult> execute(const Job &job);

    /// True once an error has left the context unusable (a fault, or out of memory): the worker
    /// should answer and exit, and the client start a fresh one.
    bool contextLost() const { return m_contextLost; }

    const DeviceIdentity &device() const { return m_device; }

    /// Takes back the host buffers of outputs that have been sent, to stage the next job's data
    /// in memory that is already mapped (fresh pages cost more than the copy itself).
    void reclaim(std::vector<OutputData> &&outputs);

private:
    struct Program;

    Result<cuda::Module *> module(const std::vector<char> &image);
    Result<CublasSession *> cublas();
    Status enqueue(Program &program, std::size_t launch);
    Result<std::unique_ptr<Program>> prepare(const std::vector<char> &image, const LaunchPlan &plan, std::uint64_t seed,
                                             const std::map<std::string, const Bytes *> &presetInputs, const char *what);
    Status runChecked(Program &program, const char *what);
    Status enqueueAll(Program &program);
    Result<Bytes> download(Program &program, const std::string &buffer);
    Result<Timing> time(Program &program, const MeasureOptions &options);
    Profile profile(Program &program);
    MetricsReport metrics(Program &program, const MeasureOptions &options);
    Error noteFailure(Error error);
    Bytes takeBuffer(std::size_t bytes);
    void giveBack(Bytes &&buffer);

    cuda::Context &m_context;
    DeviceIdentity m_device;
    KernelTracer *m_tracer = nullptr;
    MetricProfiler *m_metrics = nullptr;
    std::unique_ptr<cuda::Stream> m_stream;
    std::unique_ptr<L2Flush> m_flush;
    std::vector<std::pair<std::string, std::unique_ptr<cuda::Module>>> m_modules; ///< most recent last
    std::vector<Bytes> m_spare; ///< host staging buffers kept between jobs
    std::shared_ptr<CublasLibrary> m_cublasLibrary; ///< loaded at the first library call, kept
    std::unique_ptr<CublasSession> m_cublas;        ///< its handle, on m_stream
    bool m_contextLost = false;
};

} // namespace stitch::runner
