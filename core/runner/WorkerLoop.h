#pragma once
// The body of stitchcuda-worker: owns the GPU and answers jobs over its stdin/stdout.
//   client frame (job) -> runWorkerLoop -> Executor -> frame (result) -> client
// Everything the worker does lives here, so app/worker/main.cpp stays a few lines long.

#include <string>

namespace stitch::runner {

struct WorkerLoopOptions {
    int deviceOrdinal = 0;
    std::string workerVersion; ///< announced in the hello
};

/// Loads the driver, creates a context on the device and says hello (or says why it cannot and
/// returns). Then answers jobs until a shutdown message, the end of the input, or a job that left
/// the context unusable (a fault or out of memory): the worker answers that job and returns, and
/// the client starts a fresh worker. Returns the process exit code: 0 normally, 2 on a broken stream.
int runWorkerLoop(int inFd, int outFd, const WorkerLoopOptions &options);

/// Parses the worker's command line (--device N, --version, --help) and runs the loop on
/// stdin/stdout. Before anything else it moves the protocol stream off file descriptor 1 and
/// points 1 at stderr, so a stray printf from a library cannot corrupt a frame.
int workerMain(int argc, char **argv, const std::string &version);

} // namespace stitch::runner
