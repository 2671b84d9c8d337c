#include "core/runner/WorkerProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

extern char **environ;

namespace stitch::runner {

namespace {

constexpr std::size_t kStderrTailBytes = 4096;
constexpr int kPollSliceMs = 20; ///< how often a cancel check runs while waiting

std::string errnoText(const std::string &what)
{
    return what + ": " + std::strerror(errno);
}

void setNonBlocking(int fd)
{
    const int flags = ::fcntl(fd, F_GETFL, 0);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

std::string describeStatus(int status)
{
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const char *name = ::strsignal(sig);
        return "killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
    }
    return "ended with status " + std::to_string(status);
}

} // namespace

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(const std::string &path, const std::vector<std::string> &arguments,
                                                            const std::vector<std::pair<std::string, std::string>> &environment)
{
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return makeError(ErrorKind::Io, errnoText("socketpair"));
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(sv[0]), ::close(sv[1]);
        return makeError(ErrorKind::Io, errnoText("pipe"));
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, sv[1], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, sv[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);

    std::vector<std::string> argStrings{path};
    argStrings.insert(argStrings.end(), arguments.begin(), arguments.end());
    std::vector<char *> argv;
    for (auto &a : argStrings)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    std::vector<std::string> envStrings;
    for (char **e = environ; e && *e; ++e) {
        const std::string entry = *e;
        const auto name = entry.substr(0, entry.find('='));
        const bool overridden = std::any_of(environment.begin(), environment.end(), [&](const auto &kv) { return kv.first == name; });
        if (!overridden)
            envStrings.push_back(entry);
    }
    for (const auto &[name, value] : environment)
        envStrings.push_back(name + "=" + value);
    std::vector<char *> envp;
    for (auto &e : envStrings)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    // The worker starts with default signal handling and nothing blocked, whatever the client
    // (a Qt application, a test runner) has set up for itself.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(sv[1]);
    ::close(err[1]);
    if (rc != 0) {
        ::close(sv[0]), ::close(err[0]);
        return makeError(ErrorKind::Io, "cannot start the worker " + path + ": " + std::strerror(rc));
    }
    std::unique_ptr<WorkerProcess> p(new WorkerProcess());
    p->m_pid = pid;
    p->m_socket = sv[0];
    p->m_stderr = err[0];
    setNonBlocking(p->m_socket);
    setNonBlocking(p->m_stderr);
    return p;
}

WorkerProcess::~WorkerProcess()
{
    if (running())
        kill();
    if (m_socket >= 0)
        ::close(m_socket);
    if (m_stderr >= 0)
        ::close(m_stderr);
}

void WorkerProcess::drainStderr()
{
    if (m_stderr < 0)
        return;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(m_stderr, buf, sizeof buf);
        if (n > 0) {
            m_stderrTail.append(buf, static_cast<std::size_t>(n));
            if (m_stderrTail.size() > kStderrTailBytes)
                m_stderrTail.erase(0, m_stderrTail.size() - kStderrTailBytes);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) { // the worker closed stderr (it exited)
            ::close(m_stderr);
            m_stderr = -1;
        }
        return;
    }
}

Status WorkerProcess::waitFor(short events, Clock::time_point deadline, const CancelCheck &cancelled)
{
    for (;;) {
        if (cancelled && cancelled())
            return makeError(ErrorKind::Cancelled, "cancelled");
        const auto now = Clock::now();
        if (now >= deadline)
            return makeError(ErrorKind::Timeout, "deadline passed");
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
        pollfd fds[2] = {{m_socket, events, 0}, {m_stderr, POLLIN, 0}};
        const int n = ::poll(fds, m_stderr >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left, kPollSliceMs)));
        if (n < 0 && errno != EINTR)
            return makeError(ErrorKind::Io, errnoText("poll"));
        if (n <= 0)
            continue;
        if (m_stderr >= 0 && fds[1].revents)
            drainStderr();
        if (fds[0].revents)
            return Ok{};
    }
}

Status WorkerProcess::send(const Frame &frame, Clock::time_point deadline, const CancelCheck &cancelled)
{
    const auto head = encodeFrameHead(frame.header, frame.payload.size());
    for (const auto &[data, size] : {std::pair{head.data(), head.size()}, std::pair{frame.payload.data(), frame.payload.size()}}) {
        std::size_t sent = 0;
        while (sent < size) {
            const ssize_t n = ::send(m_socket, data + sent, size - sent, MSG_NOSIGNAL);
            if (n > 0) {
                sent += static_cast<std::size_t>(n);
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                if (auto st = waitFor(POLLOUT, deadline, cancelled); !st)
                    return st;
                continue;
            }
            return makeError(ErrorKind::Io, errnoText("the worker stopped reading"));
        }
    }
    return Ok{};
}

Result<Frame> WorkerProcess::receive(Clock::time_point deadline, const CancelCheck &cancelled)
{
    std::vector<std::byte> &chunk = m_chunk;
    if (chunk.empty())
        chunk.resize(1 << 18);
    for (;;) {
        auto frame = m_decoder.next();
        if (!frame)
            return frame.error();
        if (*frame)
            return std::move(**frame);
        const ssize_t n = ::recv(m_socket, chunk.data(), chunk.size(), 0);
        if (n > 0) {
            m_decoder.append(chunk.data(), static_cast<std::size_t>(n));
            continue;
        }
        if (n == 0) {
            drainStderr();
            return makeError(ErrorKind::Io, "the worker closed its end of the pipe");
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return makeError(ErrorKind::Io, errnoText("read from the worker"));
        if (auto st = waitFor(POLLIN, deadline, cancelled); !st)
            return st.error();
    }
}

void WorkerProcess::kill()
{
    if (!running())
        return;
    ::kill(m_pid, SIGKILL);
    reap(std::chrono::milliseconds(5000));
}

std::string WorkerProcess::reap(std::chrono::milliseconds grace)
{
    if (m_reaped)
        return m_exitDescription;
    const auto until = Clock::now() + grace;
    bool killed = false;
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
        if (r == m_pid) {
            m_reaped = true;
            m_exitDescription = describeStatus(status);
            drainStderr();
            return m_exitDescription;
        }
        if (r < 0 && errno != EINTR) {
            m_reaped = true;
            m_exitDescription = errnoText("waitpid");
            return m_exitDescription;
        }
        if (!killed && Clock::now() >= until) {
            ::kill(m_pid, SIGKILL);
            killed = true;
        }
        drainStderr();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

std::string WorkerProcess::stderrTail() const
{
    std::string s = m_stderrTail;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

Result<std::string> findWorkerExecutable()
{
    namespace fs = std::filesystem;
    if (const char *env = std::getenv("STITCHCUDA_WORKER"); env && *env) {
        if (::access(env, X_OK) == 0)
            return std::string(env);
        return makeError(ErrorKind::Io, std::string("STITCHCUDA_WORKER=") + env + " is not an executable");
    }
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    std::string tried;
    if (!ec) {
        const fs::path dir = self.parent_path();
        for (const fs::path &candidate : {dir / "stitchcuda-worker", dir / ".." / "worker" / "stitchcuda-worker"}) {
            if (::access(candidate.c_str(), X_OK) == 0)
                return fs::weakly_canonical(candidate, ec).string();
            tried += (tried.empty() ? "" : ", ") + candidate.lexically_normal().string();
        }
    }
    return makeError(ErrorKind::Io, "cannot find stitchcuda-worker (tried " + tried + "); set STITCHCUDA_WORKER");
}

} // namespace stitch::runner
