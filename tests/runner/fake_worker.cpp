// A stand-in for stitchcuda-worker that misbehaves on purpose, so the client's handling of dying,
// hanging and confused workers is tested without a GPU (and without test hooks in the product).
//
// Start-up mode (first argument after --device N): --mode normal | no-device | old-protocol |
// silent | die-at-start. A plan of library calls only (cuBLAS SGEMMs) is answered like a GPU would:
// each call computed on the host as cuBLAS computes it (emulateCublasSgemm, core/runner/Cublas.h),
// in program order over the inputs drawn from the job's seed. Otherwise the first launch's kernel
// name picks the behaviour:
//   add, add_wrong, add_partial  answer like a GPU would (C = A + B on the host; wrong; last element unwritten)
//   add_locked  like add, but hardware metrics are refused (counters locked to administrators)
//   crash   SIGSEGV          hang    never answers        exit    exits with status 3, no answer
//   garbage writes junk      fault   typed fault + exit   oom     typed out-of-memory + exit
//   badarg  typed InvalidArgument, keeps running
#include "core/runner/Cublas.h"
#include "core/runner/HostData.h"
#include "core/runner/Protocol.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace stitch;
using namespace stitch::runner;

namespace {

void send(int fd, const Frame &f)
{
    (void)writeFrame(fd, f);
}

DeviceIdentity fakeDevice()
{
    DeviceIdentity d;
    d.name = "Fake GPU";
    d.arch = "sm_90";
    d.driverVersion = 13000;
    d.toolkitVersion = "13.0";
    d.l2CacheBytes = 50u << 20;
    return d;
}

std::vector<float> floats(const Bytes &bytes)
{
    std::vector<float> out(bytes.size() / sizeof(float));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
    return out;
}

/// The outputs of a plan that only calls libraries, computed on the host in program order.
std::vector<OutputData> runLibraryCalls(const Job &job)
{
    std::map<std::string, std::vector<float>> memory;
    for (const auto &b : job.plan.buffers)
        memory[b.name] = floats(initialBytes(job.plan, b, job.seed)); // validateJob: every operand is float32
    for (const auto &l : job.plan.launches) {
        const CublasGemmArguments g = cublasGemmArguments(*l.library);
        emulateCublasSgemm(g, l.library->math, memory.at(g.first).data(), memory.at(g.second).data(),
                           memory.at(l.library->c).data());
    }
    std::vector<OutputData> outputs;
    for (const auto &b : job.plan.buffers) {
        if (b.role != BufferRole::Output && b.role != BufferRole::InOut)
            continue;
        Bytes bytes = initialBytes(job.plan, b, job.seed); // non-float outputs keep their poison
        if (b.dtype == ir::DType::F32)
            std::memcpy(bytes.data(), memory.at(b.name).data(), bytes.size());
        outputs.push_back(OutputData{b.name, b.dtype, std::move(bytes)});
    }
    return outputs;
}

JobResult emulate(const Job &job, const std::string &kernel)
{
    JobResult r;
    r.programHash = programHash(job);
    r.seed = job.seed;
    r.device = fakeDevice();
    r.workerPid = static_cast<int>(::getpid());
    r.firstRunMs = 0.01;
    const BufferSpec *a = job.plan.buffer("A"), *b = job.plan.buffer("B"), *c = job.plan.buffer("C");
    const bool libraryOnly = !job.plan.hasKernelLaunches();
    if (libraryOnly) {
        r.library = "cuBLAS emulated by the fake worker";
        if (job.measure.returnOutputs)
            r.outputs = runLibraryCalls(job);
    } else if (job.measure.returnOutputs && a && b && c && a->count >= c->count && b->count >= c->count) {
        const Bytes ab = initialBytes(job.plan, *a, job.seed), bb = initialBytes(job.plan, *b, job.seed);
        Bytes cb(c->bytes(), std::byte{0xFF});
        for (std::uint64_t i = 0; i < c->count; ++i) {
            double v = loadElement(ab.data(), a->dtype, i) + loadElement(bb.data(), b->dtype, i);
            if (kernel == "add_wrong" && i == 3)
                v += 0.5;
            if (kernel == "add_partial" && i + 1 == c->count)
                continue;
            storeElement(cb.data(), c->dtype, i, v);
        }
        r.outputs.push_back(OutputData{"C", c->dtype, std::move(cb)});
    }
    if (job.measure.metrics) {
        MetricsReport m;
        if (kernel == "add_locked") {
            m.message = "CUPTI cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35): GPU performance "
                        "counters are restricted to administrators on this machine; timing only";
        } else {
            m.available = true;
            m.chip = "GH100";
            m.passes = 3;
            KernelMetrics k;
            k.name = k.mangledName = kernel;
            k.range = "0";
            k.values = {{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 400.0},
                        {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 100.0}};
            k.derived = {{"globalLoadSectorsPerRequest", 4.0}};
            m.kernels.push_back(std::move(k));
        }
        r.metrics = std::move(m);
    }
    if (job.measure.time) {
        Timing t;
        t.samplesMs = {0.5, 0.52, 0.51};
        t.medianMs = 0.51, t.minMs = 0.5, t.maxMs = 0.52, t.meanMs = 0.51;
        t.repeats = 3;
        r.timing = t;
    }
    return r;
}

} // namespace

int main(int argc, char **argv)
{
    std::string mode = "normal";
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--mode") == 0)
            mode = argv[i + 1];
    const int out = dup(1);
    dup2(2, 1);
    ::signal(SIGPIPE, SIG_IGN);

    if (mode == "die-at-start")
        return 1;
    if (mode == "silent") {
        std::this_thread::sleep_for(std::chrono::hours(1));
        return 0;
    }
    WorkerHello hello;
    hello.pid = static_cast<int>(::getpid());
    hello.workerVersion = "fake";
    if (mode == "no-device")
        hello.error = makeError(ErrorKind::NoDevice, "the fake worker has no GPU");
    else
        hello.device = fakeDevice();
    Frame helloFrame = encodeHello(hello);
    if (mode == "old-protocol")
        helloFrame.header["protocol"] = 0;
    send(out, helloFrame);
    if (hello.error)
        return 0;

    FrameDecoder decoder;
    for (;;) {
        auto frame = readFrame(0, decoder);
        if (!frame || !*frame || messageType(**frame) == "shutdown")
            return 0;
        auto job = decodeJobMessage(**frame);
        if (!job)
            return 2;
        const std::string kernel = job->second.plan.launches.at(0).kernel;
        std::fprintf(stderr, "fake worker: job %llu runs '%s'\n", static_cast<unsigned long long>(job->first), kernel.c_str());
        JobReply reply;
        reply.jobId = job->first;
        if (kernel == "crash") {
            ::signal(SIGSEGV, SIG_DFL); // a real signal death, even under a sanitizer's handler
            ::raise(SIGSEGV);
        } else if (kernel == "hang") {
            std::this_thread::sleep_for(std::chrono::hours(1));
        } else if (kernel == "exit") {
            _exit(3);
        } else if (kernel == "garbage") {
            const char junk[] = "this is not a frame, but a printf that went to the wrong stream\n";
            (void)writeAll(out, reinterpret_cast<const std::byte *>(junk), sizeof junk);
            std::this_thread::sleep_for(std::chrono::hours(1));
        } else if (kernel == "fault") {
            reply.result = makeError(ErrorKind::Fault, "launch 1 of 1 (kernel 'fault'): CUDA_ERROR_ILLEGAL_ADDRESS");
            reply.recycle = true;
        } else if (kernel == "oom") {
            reply.result = makeError(ErrorKind::OutOfMemory, "buffer 'A' (1048576 MiB): CUDA_ERROR_OUT_OF_MEMORY");
            reply.recycle = true;
        } else if (kernel == "badarg") {
            reply.result = makeError(ErrorKind::InvalidArgument, "no kernel 'badarg' in the module");
        } else if (Status valid = validateJob(job->second); !valid) { // as the real worker's Executor does
            reply.result = valid.error();
        } else {
            JobResult r = emulate(job->second, kernel);
            r.jobId = job->first;
            reply.result = std::move(r);
        }
        send(out, encodeReply(reply));
        if (reply.recycle)
            return 0;
    }
}
