#include "core/runner/WorkerLoop.h"

#include "core/cuda/DriverApi.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/runner/Executor.h"
#include "core/runner/KernelTracer.h"
#include "core/runner/MetricProfiler.h"
#include "core/runner/Protocol.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace stitch::runner {

namespace {

Status send(int fd, const Frame &frame)
{
    return writeFrame(fd, frame);
}

int sayNoDevice(int outFd, const Error &error, const WorkerLoopOptions &options)
{
    WorkerHello hello;
    hello.pid = static_cast<int>(::getpid());
    hello.workerVersion = options.workerVersion;
    hello.error = error;
    return send(outFd, encodeHello(hello)) ? 0 : 2;
}

DeviceIdentity identify(const cuda::DriverApi &api, const cuda::DeviceInfo &d)
{
    DeviceIdentity id;
    id.name = d.name;
    id.arch = d.arch();
    id.ordinal = d.ordinal;
    id.driverVersion = api.driverVersion();
    const auto nv = cuda::nvrtcVersion();
    id.toolkitVersion = std::to_string(nv.major) + "." + std::to_string(nv.minor);
    id.multiprocessors = d.multiprocessors;
    id.l2CacheBytes = static_cast<std::uint64_t>(d.l2CacheBytes);
    id.memoryBytes = d.totalMemoryBytes;
    return id;
}

} // namespace

int runWorkerLoop(int inFd, int outFd, const WorkerLoopOptions &options)
{
    auto api = cuda::DriverApi::load();
    if (!api)
        return sayNoDevice(outFd, api.error(), options);
    auto context = (*api)->createContext(options.deviceOrdinal);
    if (!context)
        return sayNoDevice(outFd, context.error(), options);
    // Declared after the context, so CUPTI is flushed and deinitialised before the context goes away.
    KernelTracer tracer;
    MetricProfiler metrics;
    Executor executor(**context, identify(**api, (*context)->device()), &tracer, &metrics);

    WorkerHello hello;
    hello.pid = static_cast<int>(::getpid());
    hello.workerVersion = options.workerVersion;
    hello.device = executor.device();
    if (!send(outFd, encodeHello(hello)))
        return 2;

    FrameDecoder decoder;
    for (;;) {
        auto frame = readFrame(inFd, decoder);
        if (!frame) {
            std::fprintf(stderr, "stitchcuda-worker: %s\n", frame.error().toString().c_str());
            return 2;
        }
        if (!*frame)
            return 0; // the client closed the pipe
        const std::string type = messageType(**frame);
        if (type == "shutdown")
            return 0;
        JobReply reply;
        if (frame->value().header.contains("id") && frame->value().header["id"].is_number_unsigned())
            reply.jobId = frame->value().header["id"].get<std::uint64_t>();
        auto decoded = decodeJobMessage(**frame);
        if (!decoded) {
            reply.result = decoded.error();
        } else {
            const auto began = std::chrono::steady_clock::now();
            reply.result = executor.execute(decoded->second);
            if (reply.result) {
                reply.result->jobId = decoded->first;
                reply.result->workerPid = hello.pid;
                reply.result->workerMs =
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
            }
        }
        reply.recycle = executor.contextLost();
        if (!send(outFd, encodeReply(reply)))
            return 2;
        if (reply.result)
            executor.reclaim(std::move(reply.result->outputs));
        if (reply.recycle)
            return 0;
    }
}

int workerMain(int argc, char **argv, const std::string &version)
{
    WorkerLoopOptions options;
    options.workerVersion = version;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--device" && i + 1 < argc) {
            options.deviceOrdinal = std::atoi(argv[++i]);
        } else if (arg == "--version") {
            std::printf("stitchcuda-worker %s (protocol %d)\n", version.c_str(), kProtocolVersion);
            return 0;
        } else {
            std::fprintf(stderr,
                         "usage: stitchcuda-worker [--device N]\n"
                         "Runs jobs for stitchcuda and the studio over stdin/stdout (protocol %d, docs/RUNNER.md).\n"
                         "It is started by its clients, not by hand.\n",
                         kProtocolVersion);
            return 2;
        }
    }
    // The protocol leaves on a private descriptor; fd 1 becomes stderr for anything else.
    const int outFd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (outFd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        std::perror("stitchcuda-worker: cannot set up the protocol stream");
        return 2;
    }
    // A client that goes away must not kill the worker mid-write with SIGPIPE; the write fails instead.
    ::signal(SIGPIPE, SIG_IGN);
    return runWorkerLoop(STDIN_FILENO, outFd, options);
}

} // namespace stitch::runner
