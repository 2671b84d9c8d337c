#include "core/runner/Executor.h"

#include "core/common/Sha256.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/runner/Cublas.h"
#include "core/runner/KernelTracer.h"
#include "core/runner/MetricProfiler.h"
#include "core/runner/Verify.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <numeric>
#include <thread>

namespace stitch::runner {

namespace {

constexpr std::size_t kModuleCacheSize = 16;
constexpr std::uint64_t kMinFlushBytes = std::uint64_t{8} << 20;
constexpr double kSettledWarmupMs = 20.0;

// One kernel parameter: cuLaunchKernel reads as many bytes as the parameter has from the pointer
// it is given, so every scalar lives in its own zeroed, 8-byte aligned slot.
struct ArgSlot {
    alignas(8) unsigned char bytes[8] = {};
};

void packScalar(const ScalarArg &s, ArgSlot &slot)
{
    auto put = [&](auto v) { std::memcpy(slot.bytes, &v, sizeof v); };
    switch (s.dtype) {
    case ir::DType::I32: put(static_cast<std::int32_t>(s.intValue)); break;
    case ir::DType::I64: put(static_cast<std::int64_t>(s.intValue)); break;
    case ir::DType::Bool: put(static_cast<std::uint8_t>(s.intValue != 0)); break;
    case ir::DType::F32: put(static_cast<float>(s.floatValue)); break;
    case ir::DType::F64: put(s.floatValue); break;
    case ir::DType::F16: put(floatToHalf(static_cast<float>(s.floatValue))); break;
    case ir::DType::BF16: put(floatToBFloat16(static_cast<float>(s.floatValue))); break;
    }
}

std::string mib(std::uint64_t bytes)
{
    return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

std::string dims(unsigned x, unsigned y, unsigned z)
{
    return std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z);
}

std::string isoTimeNow()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

} // namespace

struct Executor::Program {
    const LaunchPlan *plan = nullptr;
    const std::vector<char> *image = nullptr;        ///< the CUBIN the module was loaded from
    cuda::Module *module = nullptr;                  ///< null when every launch is a library call
    std::vector<cuda::KernelHandle> kernels;         ///< per launch (empty for a library call)
    std::vector<std::array<std::uint64_t, 3>> operands; ///< per launch: a library call's A, B, C addresses
    std::map<std::string, cuda::DeviceBuffer> buffers;
    std::map<std::string, Bytes> inputs;             ///< host copies of input and in-out buffers
    std::vector<std::vector<ArgSlot>> slots;         ///< per launch, per parameter
    std::vector<std::vector<void *>> argv;           ///< pointers into slots
    double firstRunMs = 0.0;
};

Executor::Executor(cuda::Context &context, DeviceIdentity device, KernelTracer *tracer, MetricProfiler *metrics)
    : m_context(context), m_device(std::move(device)), m_tracer(tracer), m_metrics(metrics)
{
}

// The cuBLAS handle goes before the context it was created on (the context outlives the Executor).
Executor::~Executor() = default;

Error Executor::noteFailure(Error error)
{
    if (error.kind == ErrorKind::Fault || error.kind == ErrorKind::OutOfMemory || error.kind == ErrorKind::Driver)
        m_contextLost = true;
    return error;
}

Bytes Executor::takeBuffer(std::size_t bytes)
{
    // The smallest spare that fits, else the largest (it grows): either way its pages are mapped.
    auto best = m_spare.end();
    for (auto it = m_spare.begin(); it != m_spare.end(); ++it) {
        const bool fits = it->capacity() >= bytes;
        if (best == m_spare.end() || (fits && (best->capacity() < bytes || it->capacity() < best->capacity())) ||
            (!fits && best->capacity() < bytes && it->capacity() > best->capacity()))
            best = it;
    }
    Bytes out;
    if (best != m_spare.end()) {
        out = std::move(*best);
        m_spare.erase(best);
    }
    out.resize(bytes);
    return out;
}

void Executor::giveBack(Bytes &&buffer)
{
    constexpr std::size_t kMaxSpare = 8;
    if (buffer.capacity() == 0)
        return;
    m_spare.push_back(std::move(buffer));
    if (m_spare.size() > kMaxSpare) {
        auto smallest = std::min_element(m_spare.begin(), m_spare.end(),
                                         [](const Bytes &a, const Bytes &b) { return a.capacity() < b.capacity(); });
        m_spare.erase(smallest);
    }
}

void Executor::reclaim(std::vector<OutputData> &&outputs)
{
    for (auto &o : outputs)
        giveBack(std::move(o.bytes));
    outputs.clear();
}

Result<cuda::Module *> Executor::module(const std::vector<char> &image)
{
    const std::string key = sha256Hex(std::string_view(image.data(), image.size()));
    for (auto it = m_modules.begin(); it != m_modules.end(); ++it)
        if (it->first == key) {
            std::rotate(it, it + 1, m_modules.end()); // most recently used last
            return m_modules.back().second.get();
        }
    auto loaded = m_context.loadModule(image);
    if (!loaded)
        return annotate(loaded.error(), "cannot load the module on " + m_device.name + " (" + m_device.arch + ")");
    m_modules.emplace_back(key, std::move(*loaded));
    return m_modules.back().second.get();
}

Result<CublasSession *> Executor::cublas()
{
    if (m_cublas)
        return m_cublas.get();
    if (!m_cublasLibrary) {
        auto lib = openCublas();
        if (!lib)
            return lib.error();
        m_cublasLibrary = std::move(*lib);
    }
    auto session = CublasSession::create(m_cublasLibrary, m_stream->handle());
    if (!session)
        return session.error();
    m_cublas = std::move(*session);
    return m_cublas.get();
}

Status Executor::enqueue(Program &p, std::size_t i)
{
    const KernelLaunch &l = p.plan->launches[i];
    if (l.library) {
        // Queued on m_stream like a kernel (CublasSession::create bound the handle to it).
        const auto &[a, b, c] = p.operands[i];
        return m_cublas->sgemm(*l.library, a, b, c);
    }
    return p.module->enqueue(p.kernels[i], l.config, p.argv[i].data(), m_stream.get());
}

Result<std::unique_ptr<Executor::Program>> Executor::prepare(const std::vector<char> &image, const LaunchPlan &plan,
                                                             std::uint64_t seed,
                                                             const std::map<std::string, const Bytes *> &presetInputs,
                                                             const char *what)
{
    auto program = std::make_unique<Program>();
    program->plan = &plan;
    program->image = &image;
    if (plan.hasKernelLaunches()) {
        auto mod = module(image);
        if (!mod)
            return mod.error();
        program->module = *mod;
    }
    if (plan.hasLibraryCalls())
        if (auto lib = cublas(); !lib)
            return annotate(lib.error(), what);
    std::map<std::string, cuda::KernelHandle> byName;
    for (const auto &l : plan.launches) {
        if (l.library) {
            program->kernels.emplace_back();
            continue;
        }
        auto it = byName.find(l.kernel);
        if (it == byName.end()) {
            auto k = program->module->kernel(l.kernel);
            if (!k)
                return annotate(k.error(), what);
            it = byName.emplace(l.kernel, *k).first;
        }
        program->kernels.push_back(it->second);
    }

    for (const auto &b : plan.buffers) {
        auto buf = m_context.allocate(b.bytes());
        if (!buf) {
            std::string msg = std::string(what) + ": buffer '" + b.name + "' (" + mib(b.bytes()) + ")";
            if (auto mem = m_context.memoryInfo())
                msg += ", " + mib(mem->freeBytes) + " free of " + mib(mem->totalBytes);
            return annotate(buf.error(), msg);
        }
        program->buffers.emplace(b.name, std::move(*buf));
    }
    for (const auto &b : plan.buffers) {
        const cuda::DeviceBuffer &dev = program->buffers.at(b.name);
        const auto kind = b.effectiveInit();
        const bool host = b.role == BufferRole::Input || b.role == BufferRole::InOut || kind == BufferInit::Kind::Random ||
                          kind == BufferInit::Kind::CopyOf || presetInputs.count(b.name);
        Status st = Ok{};
        if (host) {
            auto preset = presetInputs.find(b.name);
            if (preset != presetInputs.end()) {
                st = m_context.upload(dev, preset->second->data(), preset->second->size());
            } else {
                Bytes bytes = takeBuffer(b.bytes());
                initialBytesInto(plan, b, seed, bytes);
                st = m_context.upload(dev, bytes.data(), bytes.size());
                if (b.role == BufferRole::Input || b.role == BufferRole::InOut)
                    program->inputs.emplace(b.name, std::move(bytes));
                else
                    giveBack(std::move(bytes));
            }
        } else {
            st = m_context.fillBytes(dev, kind == BufferInit::Kind::Poison ? 0xFF : 0x00);
        }
        if (!st)
            return annotate(st.error(), std::string(what) + ": initialising buffer '" + b.name + "'");
    }
    // Every buffer in place before any launch: the copies and fills above run on the legacy stream
    // and return before they land, and the launch stream does not wait for that stream (it is
    // non-blocking, Context::createStream).
    if (auto st = m_context.synchronize(); !st)
        return annotate(st.error(), std::string(what) + ": initialising the buffers");

    for (const auto &l : plan.launches) {
        std::array<std::uint64_t, 3> operands{};
        if (l.library)
            operands = {program->buffers.at(l.library->a).address(), program->buffers.at(l.library->b).address(),
                        program->buffers.at(l.library->c).address()};
        program->operands.push_back(operands);
        std::vector<ArgSlot> slots(l.args.size());
        for (std::size_t i = 0; i < l.args.size(); ++i) {
            if (l.args[i].isBuffer()) {
                const std::uint64_t address = program->buffers.at(std::get<std::string>(l.args[i].value)).address();
                std::memcpy(slots[i].bytes, &address, sizeof address);
            } else {
                packScalar(std::get<ScalarArg>(l.args[i].value), slots[i]);
            }
        }
        program->slots.push_back(std::move(slots));
    }
    for (auto &slots : program->slots) {
        std::vector<void *> argv;
        for (auto &s : slots)
            argv.push_back(s.bytes);
        program->argv.push_back(std::move(argv));
    }
    return program;
}

Status Executor::runChecked(Program &p, const char *what)
{
    auto start = m_context.createEvent();
    auto stop = m_context.createEvent();
    if (!start || !stop)
        return !start ? start.error() : stop.error();
    if (auto st = (*start)->record(*m_stream); !st)
        return st;
    const auto &launches = p.plan->launches;
    for (std::size_t i = 0; i < launches.size(); ++i) {
        const auto &c = launches[i].config;
        const std::string where =
            std::string(what) + ": launch " + std::to_string(i + 1) + " of " + std::to_string(launches.size()) +
            (launches[i].library ? " (" + launches[i].library->describe() + ")"
                                 : " (kernel '" + launches[i].kernel + "', grid " + dims(c.gridX, c.gridY, c.gridZ) +
                                       ", block " + dims(c.blockX, c.blockY, c.blockZ) + ", " +
                                       std::to_string(c.dynamicSharedBytes) + " B dynamic shared)");
        // Synchronising after each launch costs a few microseconds and names the launch that
        // faulted; the timed runs below queue the launches back to back.
        if (auto st = enqueue(p, i); !st)
            return annotate(st.error(), where);
        if (auto st = m_stream->synchronize(); !st)
            return annotate(st.error(), where);
    }
    if (auto st = (*stop)->record(*m_stream); !st)
        return st;
    if (auto st = (*stop)->synchronize(); !st)
        return st;
    if (auto ms = cuda::Event::elapsedMs(**start, **stop))
        p.firstRunMs = *ms;
    return Ok{};
}

Status Executor::enqueueAll(Program &p)
{
    for (std::size_t i = 0; i < p.plan->launches.size(); ++i)
        if (auto st = enqueue(p, i); !st)
            return st;
    return Ok{};
}

Result<Bytes> Executor::download(Program &p, const std::string &buffer)
{
    const cuda::DeviceBuffer &dev = p.buffers.at(buffer);
    Bytes out = takeBuffer(dev.size());
    if (auto st = m_context.download(out.data(), dev, out.size()); !st)
        return st.error();
    return out;
}

Result<Timing> Executor::time(Program &p, const MeasureOptions &options)
{
    Timing t;
    t.warmup = options.warmup;
    t.repeats = options.repeats;
    if (options.flushL2) {
        const std::uint64_t want = std::max<std::uint64_t>(2 * m_device.l2CacheBytes, kMinFlushBytes);
        if (!m_flush || m_flush->bytes() < want) {
            m_flush.reset();
            auto flush = L2Flush::create(m_context, want, m_device.multiprocessors);
            if (!flush)
                return flush.error();
            m_flush = std::move(*flush);
        }
        t.l2FlushBytes = m_flush->bytes();
    }
    if (options.settleMs > 0) {
        if (auto st = m_stream->synchronize(); !st)
            return annotate(st.error(), "settle");
        std::this_thread::sleep_for(std::chrono::milliseconds(options.settleMs));
    }
    // After a settle the GPU idles at low clocks (345 MHz on the H200 of run 21) and takes
    // milliseconds of work to ramp up: the warm-up then lasts kSettledWarmupMs at least (run 21: a
    // 0.15 ms layer norm timed after 3 warm-up runs measured 1.2% slower than without the settle).
    int warmup = options.warmup;
    if (options.settleMs > 0 && p.firstRunMs > 0)
        warmup = std::max(warmup, static_cast<int>(std::min(10000.0, std::ceil(kSettledWarmupMs / p.firstRunMs))));
    for (int w = 0; w < warmup; ++w)
        if (auto st = enqueueAll(p); !st)
            return annotate(st.error(), "warm-up");
    if (auto st = m_stream->synchronize(); !st)
        return annotate(st.error(), "warm-up");

    auto start = m_context.createEvent();
    auto stop = m_context.createEvent();
    if (!start || !stop)
        return !start ? start.error() : stop.error();
    t.samplesMs.reserve(static_cast<std::size_t>(options.repeats));
    for (int r = 0; r < options.repeats; ++r) {
        // The flush (a read of twice L2: clean lines, L2Flush.h) is queued before the start event,
        // so it is not timed.
        if (m_flush && options.flushL2)
            if (auto st = m_flush->enqueue(*m_stream); !st)
                return annotate(st.error(), "L2 flush");
        if (auto st = (*start)->record(*m_stream); !st)
            return st.error();
        if (auto st = enqueueAll(p); !st)
            return annotate(st.error(), "timed run " + std::to_string(r + 1));
        if (auto st = (*stop)->record(*m_stream); !st)
            return st.error();
        if (auto st = (*stop)->synchronize(); !st)
            return annotate(st.error(), "timed run " + std::to_string(r + 1));
        auto ms = cuda::Event::elapsedMs(**start, **stop);
        if (!ms)
            return ms.error();
        t.samplesMs.push_back(*ms);
    }
    std::vector<double> sorted = t.samplesMs;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    t.medianMs = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    t.minMs = sorted.front();
    t.maxMs = sorted.back();
    t.meanMs = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
    return t;
}

Profile Executor::profile(Program &p)
{
    Profile prof;
    if (!m_tracer) {
        prof.message = "profiling is not available in this process";
        return prof;
    }
    if (auto st = m_tracer->start(); !st) {
        prof.message = st.error().message + "; timing only";
        return prof;
    }
    Status run = enqueueAll(p);
    if (run)
        run = m_stream->synchronize();
    auto kernels = m_tracer->stop();
    if (!run) {
        prof.message = "the traced run failed: " + run.error().message;
        return prof;
    }
    if (!kernels) {
        prof.message = kernels.error().message + "; timing only";
        return prof;
    }
    prof.available = true;
    prof.kernels = std::move(*kernels);
    // A library call launches kernels of its own (CUPTI records them too, under the library's names).
    const auto calls = static_cast<std::size_t>(std::count_if(p.plan->launches.begin(), p.plan->launches.end(),
                                                              [](const KernelLaunch &l) { return l.isLibraryCall(); }));
    const std::size_t launches = p.plan->launches.size() - calls;
    if (calls)
        prof.message = "CUPTI reported " + std::to_string(prof.kernels.size()) + " kernels for " +
                       std::to_string(launches) + " kernel launches and " + std::to_string(calls) +
                       " library calls (whose kernels are the library's)";
    else if (prof.kernels.size() != launches)
        prof.message = "CUPTI reported " + std::to_string(prof.kernels.size()) + " kernels for " +
                       std::to_string(launches) + " launches";
    return prof;
}

MetricsReport Executor::metrics(Program &p, const MeasureOptions &options)
{
    MetricsReport report;
    if (!m_metrics) {
        report.message = "hardware metrics are not available in this process; timing only";
        return report;
    }
    const std::size_t launches = p.plan->launches.size();
    std::vector<std::string> launchKernels;
    for (const auto &l : p.plan->launches)
        launchKernels.push_back(l.kernel);
    MetricProfiler::Request request;
    request.deviceOrdinal = m_device.ordinal;
    request.launches = launches;
    // A library call's kernel name is empty: never chosen, so its kernels run outside the profiler's
    // windows (they are the library's, and would take ranges meant for the plan's launches).
    request.profiled = profiledLaunches(launchKernels, options.metricsKernels);
    if (request.profiled.empty()) {
        report.message = p.plan->hasKernelLaunches()
                             ? "no launch runs a chosen kernel: nothing profiled"
                             : "the program only calls libraries, whose kernels are not profiled: "
                               "nothing profiled";
        return report;
    }
    // The profiled run uses its own copy of the module, loaded while range profiling is enabled:
    // CUPTI instruments code for the SASS-level metrics (smsp__sass_*) as it is loaded.
    std::unique_ptr<cuda::Module> fresh;
    std::vector<cuda::KernelHandle> kernels;
    auto prepare = [&]() -> Status {
        auto mod = m_context.loadModule(*p.image);
        if (!mod)
            return mod.error();
        fresh = std::move(*mod);
        for (const auto &l : p.plan->launches) {
            if (l.library) {
                kernels.emplace_back();
                continue;
            }
            auto k = fresh->kernel(l.kernel);
            if (!k)
                return k.error();
            kernels.push_back(*k);
        }
        return Ok{};
    };
    auto launch = [&](std::size_t i) {
        if (p.plan->launches[i].library)
            return enqueue(p, i);
        return fresh->enqueue(kernels[i], p.plan->launches[i].config, p.argv[i].data(), m_stream.get());
    };
    auto wait = [&] { return m_stream->synchronize(); };
    auto ranges = m_metrics->profile(request, prepare, launch, wait);
    if (!ranges) {
        // CUPTI refusing is "no metrics here"; a kernel failing under replay is the job's problem too.
        if (ranges.error().kind != ErrorKind::Unsupported)
            noteFailure(ranges.error());
        report.message = ranges.error().message + "; timing only";
        return report;
    }
    report.available = true;
    report.chip = ranges->chip;
    report.passes = ranges->passes;
    report.dropped = ranges->dropped;
    std::vector<std::string> notes;
    if (!report.dropped.empty()) {
        std::string list;
        for (const auto &d : report.dropped)
            list += (list.empty() ? "" : ", ") + d;
        notes.push_back("not available on " + report.chip + ": " + list);
    }
    if (ranges->rangesDropped)
        notes.push_back("CUPTI dropped " + std::to_string(ranges->rangesDropped) + " ranges");
    const std::vector<std::size_t> profiled = launchIndices(request.profiled);
    if (ranges->ranges.size() != profiled.size())
        notes.push_back("CUPTI reported " + std::to_string(ranges->ranges.size()) + " ranges for " +
                        std::to_string(profiled.size()) + " launches");
    if (p.plan->hasLibraryCalls())
        notes.push_back("library calls not profiled");
    // Automatic ranges follow execution order, and the launches run in order on one stream.
    for (std::size_t r = 0; r < std::min(profiled.size(), ranges->ranges.size()); ++r) {
        KernelMetrics k;
        k.mangledName = p.plan->launches[profiled[r]].kernel;
        k.name = cuda::shortKernelName(k.mangledName);
        k.launch = static_cast<int>(profiled[r]);
        k.range = std::move(ranges->ranges[r].name);
        k.values = std::move(ranges->ranges[r].values);
        k.derived = deriveMetrics(k.values);
        report.kernels.push_back(std::move(k));
    }
    const auto kernelLaunches = static_cast<std::size_t>(std::count_if(
        p.plan->launches.begin(), p.plan->launches.end(), [](const KernelLaunch &l) { return !l.isLibraryCall(); }));
    if (profiled.size() < kernelLaunches)
        notes.push_back(std::to_string(kernelLaunches - profiled.size()) + " launches of kernels not chosen left out");
    for (const auto &n : notes)
        report.message += (report.message.empty() ? "" : "; ") + n;
    return report;
}

Result<JobResult> Executor::execute(const Job &job)
{
    const auto began = std::chrono::steady_clock::now();
    if (auto st = validateJob(job); !st)
        return st.error();
    if (m_contextLost)
        return makeError(ErrorKind::Fault, "the worker's context was lost by an earlier job");
    if (!m_stream) {
        auto stream = m_context.createStream();
        if (!stream)
            return noteFailure(stream.error());
        m_stream = std::move(*stream);
    }
    if (m_modules.size() > kModuleCacheSize)
        m_modules.erase(m_modules.begin(), m_modules.begin() + static_cast<std::ptrdiff_t>(m_modules.size() - kModuleCacheSize));

    JobResult result;
    result.programHash = programHash(job);
    result.seed = job.seed;
    result.device = m_device;
    result.measuredAt = isoTimeNow();

    auto program = prepare(job.module, job.plan, job.seed, {}, "program");
    if (!program)
        return noteFailure(program.error());
    Program &p = **program;
    if (auto st = runChecked(p, "program"); !st)
        return noteFailure(st.error());
    result.firstRunMs = p.firstRunMs;

    const bool gpuVerify = job.measure.verify && job.reference.has_value();
    std::map<std::string, Bytes> outputs;
    if (gpuVerify || job.measure.returnOutputs)
        for (const auto &b : job.plan.buffers)
            if (b.role == BufferRole::Output || b.role == BufferRole::InOut) {
                auto bytes = download(p, b.name);
                if (!bytes)
                    return noteFailure(annotate(bytes.error(), "reading output '" + b.name + "'"));
                outputs.emplace(b.name, std::move(*bytes));
            }

    if (gpuVerify) {
        const GpuReference &ref = *job.reference;
        std::map<std::string, const Bytes *> shared;
        for (const auto &[name, bytes] : p.inputs)
            shared.emplace(ref.referenceBufferFor(name), &bytes);
        auto refProgram = prepare(ref.module, ref.plan, job.seed, shared, "reference");
        if (!refProgram)
            return noteFailure(refProgram.error());
        if (auto st = runChecked(**refProgram, "reference"); !st)
            return noteFailure(st.error());
        std::vector<OutputCheck> checks;
        const double tol = relativeTolerance(job.precision);
        for (const auto &b : job.plan.buffers) {
            if (b.role != BufferRole::Output && b.role != BufferRole::InOut)
                continue;
            const std::string refName = ref.referenceBufferFor(b.name);
            auto expected = download(**refProgram, refName);
            if (!expected)
                return noteFailure(annotate(expected.error(), "reading reference output '" + refName + "'"));
            checks.push_back(compareOutput(b, outputs.at(b.name), toDoubles(*expected, ref.plan.buffer(refName)->dtype), tol));
            giveBack(std::move(*expected));
        }
        result.verification = makeVerification("gpu", job.precision, std::move(checks));
    }

    for (auto &[name, bytes] : outputs) {
        if (job.measure.returnOutputs)
            result.outputs.push_back(OutputData{name, job.plan.buffer(name)->dtype, std::move(bytes)});
        else
            giveBack(std::move(bytes));
    }

    if (m_cublas && (job.plan.hasLibraryCalls() || (gpuVerify && job.reference->plan.hasLibraryCalls())))
        result.library = m_cublas->describe();

    if (job.measure.time) {
        auto timing = time(p, job.measure);
        if (!timing)
            return noteFailure(timing.error());
        result.timing = std::move(*timing);
    }
    if (job.measure.profile)
        result.profile = profile(p);
    if (job.measure.metrics)
        result.metrics = metrics(p, job.measure);

    for (auto &[name, bytes] : p.inputs)
        giveBack(std::move(bytes));
    result.workerMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    return result;
}

} // namespace stitch::runner
