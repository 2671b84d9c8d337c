#pragma once
// The client side of one GPU's worker: submit a job, get a JobResult or a typed error.
//   Runner / studio runner thread -> WorkerClient::submit -> WorkerProcess (stitchcuda-worker) -> JobResult
// One WorkerClient per GPU. A job that faults, hangs past its deadline, runs out of memory or
// crashes the worker costs that worker process only: the client reports the typed error and
// starts a fresh worker for the next job.

#include "core/common/Result.h"
#include "core/runner/Job.h"
#include "core/runner/JobResult.h"
#include "core/runner/WorkerProcess.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stitch::runner {

struct WorkerOptions {
    std::string workerPath;                  ///< empty: findWorkerExecutable()
    int deviceOrdinal = 0;
    std::vector<std::string> extraArguments; ///< appended after --device N
    std::vector<std::pair<std::string, std::string>> environment; ///< added to the inherited environment
    int startupTimeoutMs = 60000;            ///< spawn + driver load + context creation + hello
    int deadlineMarginMs = 2000;             ///< added to a job's deadline for transfers
};

/// What the running worker announced.
struct WorkerInfo {
    int pid = 0;
    std::string workerVersion;
    DeviceIdentity device;
};

class WorkerClient {
public:
    explicit WorkerClient(WorkerOptions options = {});
    ~WorkerClient(); ///< asks the worker to shut down, kills it if it does not
    WorkerClient(const WorkerClient &) = delete;
    WorkerClient &operator=(const WorkerClient &) = delete;

    /// Starts the worker if none runs and returns its hello. NoDevice when the worker has no GPU
    /// (the message is the worker's reason), Io when it cannot be started, Timeout when it does not
    /// say hello in time, Unsupported for a worker of another protocol version.
    Result<WorkerInfo> start();

    /// Runs a job under `jobId`, blocking until the result, the job's deadline (plus the margin)
    /// or `cancelled`. Thread-safe (jobs are serialised: one worker runs one job at a time).
    /// Errors: as the worker reports them (InvalidArgument, Launch, ResourceLimit, OutOfMemory,
    /// Fault), Timeout (worker killed), Cancelled (worker killed), Fault when the worker died
    /// without answering, Parse for a corrupt stream, NoDevice/Io/Unsupported from start().
    Result<JobResult> submit(const Job &job, std::uint64_t jobId, const CancelCheck &cancelled = {});

    /// Stops the worker (shutdown message, then SIGKILL after a grace period).
    void shutdown();

    /// The pid of the running worker, if one runs. Does not wait for a running job.
    std::optional<int> workerPid() const;
    /// How many worker processes this client has started (a fault costs one).
    int workersStarted() const { return m_started.load(); }

private:
    Result<WorkerInfo> startLocked();
    Error dropWorker(Error error, const std::string &what, bool kill);

    WorkerOptions m_options;
    mutable std::mutex m_mutex;
    std::unique_ptr<WorkerProcess> m_process;
    std::optional<WorkerInfo> m_info;
    std::atomic<int> m_pid{0};     ///< of the running worker, 0 when none; readable during a job
    std::atomic<int> m_started{0};
};

} // namespace stitch::runner
