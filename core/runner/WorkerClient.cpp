#include "core/runner/WorkerClient.h"

#include "core/runner/Protocol.h"

namespace stitch::runner {

namespace {

std::string withStderr(std::string message, const std::string &tail)
{
    if (!tail.empty())
        message += "; its last words on stderr: " + (tail.size() > 600 ? "..." + tail.substr(tail.size() - 600) : tail);
    return message;
}

} // namespace

WorkerClient::WorkerClient(WorkerOptions options) : m_options(std::move(options)) {}

WorkerClient::~WorkerClient()
{
    shutdown();
}

std::optional<int> WorkerClient::workerPid() const
{
    const int pid = m_pid.load();
    return pid ? std::optional<int>(pid) : std::nullopt;
}

void WorkerClient::shutdown()
{
    std::lock_guard lock(m_mutex);
    if (m_process && m_process->running()) {
        // Best effort: a worker that does not read it is killed by reap() below.
        (void)m_process->send(encodeShutdown(), Clock::now() + std::chrono::milliseconds(500), {});
        m_process->reap(std::chrono::milliseconds(2000));
    }
    m_process.reset();
    m_pid = 0;
    m_info.reset();
}

Error WorkerClient::dropWorker(Error error, const std::string &what, bool kill)
{
    if (m_process) {
        if (kill)
            m_process->kill();
        const std::string ended = m_process->reap(std::chrono::milliseconds(2000));
        error.message = withStderr(what + " (worker " + std::to_string(m_process->pid()) + " " + ended + ")", m_process->stderrTail());
    } else {
        error.message = what;
    }
    m_process.reset();
    m_pid = 0;
    m_info.reset();
    return error;
}

Result<WorkerInfo> WorkerClient::start()
{
    std::lock_guard lock(m_mutex);
    return startLocked();
}

Result<WorkerInfo> WorkerClient::startLocked()
{
    if (m_process && m_process->running() && m_info)
        return *m_info;
    m_process.reset();
    m_pid = 0;
    m_info.reset();

    std::string path = m_options.workerPath;
    if (path.empty()) {
        auto found = findWorkerExecutable();
        if (!found)
            return found.error();
        path = *found;
    }
    std::vector<std::string> args = {"--device", std::to_string(m_options.deviceOrdinal)};
    args.insert(args.end(), m_options.extraArguments.begin(), m_options.extraArguments.end());
    auto process = WorkerProcess::spawn(path, args, m_options.environment);
    if (!process)
        return process.error();
    m_process = std::move(*process);
    m_pid = static_cast<int>(m_process->pid());
    ++m_started;

    auto frame = m_process->receive(Clock::now() + std::chrono::milliseconds(m_options.startupTimeoutMs), {});
    if (!frame) {
        const Error &e = frame.error();
        if (e.kind == ErrorKind::Timeout)
            return dropWorker(e, "the worker did not say hello within " + std::to_string(m_options.startupTimeoutMs) + " ms", true);
        if (e.kind == ErrorKind::Io)
            return dropWorker(makeError(ErrorKind::Io, ""), "the worker exited before saying hello", false);
        return dropWorker(e, e.message, true);
    }
    auto hello = decodeHello(*frame);
    if (!hello)
        return dropWorker(hello.error(), hello.error().message, true);
    if (hello->error) {
        // A worker without a GPU says why and exits; its reason is the answer, verbatim.
        Error e = *hello->error;
        m_process->reap(std::chrono::milliseconds(2000));
        m_process.reset();
        m_pid = 0;
        return e;
    }
    WorkerInfo info;
    info.pid = hello->pid;
    info.workerVersion = hello->workerVersion;
    info.device = *hello->device;
    m_info = info;
    return info;
}

Result<JobResult> WorkerClient::submit(const Job &job, std::uint64_t jobId, const CancelCheck &cancelled)
{
    std::lock_guard lock(m_mutex);
    if (auto info = startLocked(); !info)
        return info.error();
    const std::string jobName = "job " + std::to_string(jobId);
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(std::int64_t{job.deadlineMs} + std::int64_t{m_options.deadlineMarginMs});

    auto failure = [&](const Error &e) -> Error {
        switch (e.kind) {
        case ErrorKind::Timeout:
            return dropWorker(e, jobName + " ran past its deadline of " + std::to_string(job.deadlineMs) + " ms; killed", true);
        case ErrorKind::Cancelled:
            return dropWorker(e, jobName + " was cancelled; killed", true);
        case ErrorKind::Io:
            return dropWorker(makeError(ErrorKind::Fault, ""), "the worker died while running " + jobName, false);
        default:
            return dropWorker(e, jobName + ": " + e.message, true);
        }
    };

    if (auto st = m_process->send(encodeJobMessage(jobId, job), deadline, cancelled); !st)
        return failure(st.error());
    auto frame = m_process->receive(deadline, cancelled);
    if (!frame)
        return failure(frame.error());
    auto reply = decodeReply(*frame);
    if (!reply)
        return failure(reply.error());
    if (reply->jobId != jobId)
        return failure(makeError(ErrorKind::Parse, "protocol error: answer for job " + std::to_string(reply->jobId)));
    if (reply->recycle) {
        // The worker answered and is exiting: its context is gone. Reap it; the next job gets a fresh one.
        m_process->reap(std::chrono::milliseconds(5000));
        m_process.reset();
        m_pid = 0;
        m_info.reset();
    }
    if (!reply->result)
        return annotate(reply->result.error(), jobName);
    return std::move(reply->result);
}

} // namespace stitch::runner
