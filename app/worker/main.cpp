// stitchcuda-worker: the one process that owns a GPU's CUDA context. The CLI and the studio start
// it as a child and send it jobs over stdin/stdout (core/runner/Protocol.h, docs/RUNNER.md); a
// kernel that faults or hangs costs this process, never theirs. Links core only.
#include "core/runner/WorkerLoop.h"

int main(int argc, char **argv)
{
    return stitch::runner::workerMain(argc, argv, STITCHCUDA_VERSION);
}
