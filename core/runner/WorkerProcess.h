#pragma once
// A child process that speaks the worker protocol: spawn, send, receive with a deadline, kill.
//   WorkerClient -> WorkerProcess::spawn (posix_spawn) -> socketpair as the child's stdin/stdout
// POSIX only. The client end is a socket so that writing to a dead worker fails with EPIPE
// instead of raising SIGPIPE in the client (the CLI and the studio keep their signal handlers).

#include "core/common/Result.h"
#include "core/runner/Protocol.h"

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace stitch::runner {

/// Polled while waiting for a worker; returning true abandons the job.
using CancelCheck = std::function<bool()>;
using Clock = std::chrono::steady_clock;

class WorkerProcess {
public:
    /// Starts `path` with `arguments`, the caller's environment plus `environment` (NAME, VALUE).
    /// Io error when the executable cannot be started.
    static Result<std::unique_ptr<WorkerProcess>> spawn(const std::string &path, const std::vector<std::string> &arguments,
                                                        const std::vector<std::pair<std::string, std::string>> &environment);
    ~WorkerProcess(); ///< kills and reaps a worker that is still running
    WorkerProcess(const WorkerProcess &) = delete;
    WorkerProcess &operator=(const WorkerProcess &) = delete;

    pid_t pid() const { return m_pid; }

    /// Sends a frame. Io error when the worker has gone; Timeout / Cancelled as for receive().
    Status send(const Frame &frame, Clock::time_point deadline, const CancelCheck &cancelled);
    /// The next frame. Errors: Timeout past the deadline, Cancelled, Io when the worker closed its
    /// end (it exited or crashed: see reap()), Parse for a corrupt stream. Stderr is collected meanwhile.
    Result<Frame> receive(Clock::time_point deadline, const CancelCheck &cancelled);

    /// SIGKILL (a hung kernel cannot be interrupted any other way), then reap.
    void kill();
    /// Waits up to `grace` for the worker to exit, kills it past that, and describes how it ended:
    /// "exited with status 3", "killed by signal 11 (Segmentation fault)".
    std::string reap(std::chrono::milliseconds grace);
    bool running() const { return m_pid > 0 && !m_reaped; }

    /// The last few KiB the worker wrote to stderr, trimmed.
    std::string stderrTail() const;

private:
    WorkerProcess() = default;
    void drainStderr();
    Status waitFor(short events, Clock::time_point deadline, const CancelCheck &cancelled);

    pid_t m_pid = -1;
    int m_socket = -1;
    int m_stderr = -1;
    bool m_reaped = false;
    std::string m_exitDescription;
    std::string m_stderrTail;
    FrameDecoder m_decoder;
    std::vector<std::byte> m_chunk; ///< read buffer, kept between frames
};

/// The stitchcuda-worker executable: $STITCHCUDA_WORKER, else next to the running program, else
/// in ../worker/ from it (the build tree's app/cli -> app/worker). Io error naming the places tried.
Result<std::string> findWorkerExecutable();

} // namespace stitch::runner
