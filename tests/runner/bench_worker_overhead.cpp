// Worker overhead per job: client wall time of WorkerClient::submit minus the GPU time of the
// job's kernels, over many small jobs on a warm worker. Target: median < 2 ms.
//   bench_worker_overhead [--jobs N] [--worker PATH]   (default: $STITCHCUDA_WORKER, else the one built alongside)
// Exit 0 when the median meets the target, 1 when it does not, 77 when there is no GPU (skipped).
#include "core/cuda/NvrtcCompiler.h"
#include "core/runner/WorkerClient.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace stitch;
using namespace stitch::runner;

namespace {

struct Stats {
    double median = 0, p95 = 0, max = 0;
};

Stats stats(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    Stats s;
    s.median = v[v.size() / 2];
    s.p95 = v[std::min(v.size() - 1, v.size() * 95 / 100)];
    s.max = v.back();
    return s;
}

Job makeJob(const std::vector<char> &module, const std::string &kernel, std::uint64_t n)
{
    Job job;
    job.module = module;
    job.plan.buffers = {BufferSpec{"A", ir::DType::F32, n, {}, BufferRole::Input, {}},
                        BufferSpec{"C", ir::DType::F32, n, {}, BufferRole::Output, {}}};
    KernelLaunch l;
    l.kernel = kernel;
    l.config.blockX = 256;
    l.config.gridX = static_cast<unsigned>((n + 255) / 256);
    l.args = {KernelArg::buffer("A"), KernelArg::buffer("C"), KernelArg::scalar(ir::DType::I32, static_cast<std::int64_t>(n))};
    job.plan.launches = {l};
    job.measure.verify = false;
    job.measure.time = false;
    job.fixedSeed = true;
    job.seed = 1;
    return job;
}

/// Runs `count` copies of the job and returns (wall - GPU time of the checked run) per job, in ms.
std::vector<double> overheads(WorkerClient &client, const Job &job, int count, std::uint64_t &id, double &gpuMs)
{
    std::vector<double> out;
    gpuMs = 0;
    for (int i = 0; i < count; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = client.submit(job, id++);
        const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!r) {
            std::fprintf(stderr, "job failed: %s\n", r.error().toString().c_str());
            std::exit(1);
        }
        out.push_back(wall - r->firstRunMs);
        gpuMs += r->firstRunMs / count;
    }
    return out;
}

} // namespace

int main(int argc, char **argv)
{
    int jobs = 200;
    WorkerOptions options;
    const char *env = std::getenv("STITCHCUDA_WORKER");
    options.workerPath = env && *env ? env : STITCHCUDA_WORKER_PATH;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--jobs"))
            jobs = std::max(10, std::atoi(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--worker"))
            options.workerPath = argv[i + 1];
    }
    WorkerClient client(options);
    const auto t0 = std::chrono::steady_clock::now();
    auto info = client.start();
    const double startMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!info) {
        std::printf("SKIP: no GPU: %s\n", info.error().message.c_str());
        return 77;
    }
    cuda::CompileOptions co;
    co.arch = info->device.arch;
    auto compiled = cuda::compile("extern \"C\" __global__ void noop(const float *a, float *c, int n) {}\n"
                                  "extern \"C\" __global__ void copy(const float *a, float *c, int n)\n"
                                  "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i]; }\n",
                                  co);
    if (!compiled) {
        std::fprintf(stderr, "%s\n", compiled.error().toString().c_str());
        return 1;
    }
    std::printf("worker %d on %s (%s), started and said hello in %.1f ms\n", info->pid, info->device.name.c_str(),
                info->device.arch.c_str(), startMs);

    std::uint64_t id = 1;
    double gpu = 0;
    overheads(client, makeJob(compiled->cubin, "noop", 256), 5, id, gpu); // module load, first allocations

    const auto small = stats(overheads(client, makeJob(compiled->cubin, "noop", 256), jobs, id, gpu));
    std::printf("noop kernel, 2 x 1 KiB buffers, %d jobs:      overhead median %.3f ms, p95 %.3f ms, max %.3f ms (GPU %.3f ms)\n",
                jobs, small.median, small.p95, small.max, gpu);

    const auto copy = stats(overheads(client, makeJob(compiled->cubin, "copy", 1 << 20), jobs / 4, id, gpu));
    std::printf("copy kernel, 2 x 4 MiB buffers, %d jobs:       overhead median %.3f ms, p95 %.3f ms, max %.3f ms (GPU %.3f ms)\n",
                jobs / 4, copy.median, copy.p95, copy.max, gpu);

    Job outputs = makeJob(compiled->cubin, "copy", 1 << 20);
    outputs.measure.returnOutputs = true;
    const auto back = stats(overheads(client, outputs, jobs / 4, id, gpu));
    std::printf("copy kernel, 4 MiB output sent back, %d jobs:  overhead median %.3f ms, p95 %.3f ms, max %.3f ms (GPU %.3f ms)\n",
                jobs / 4, back.median, back.p95, back.max, gpu);

    const bool pass = small.median < 2.0;
    std::printf("worker overhead per job: median %.3f ms (target < 2 ms): %s\n", small.median, pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
