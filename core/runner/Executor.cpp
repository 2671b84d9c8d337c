#include "core/runner/Executor.h"

#include "core/runner/ExecutorProgram.h"

#include "core/common/Sha256.h"
#include "core/runner/Cublas.h"
#include "core/runner/KernelTracer.h"
#include "core/runner/MetricProfiler.h"
#include "core/runner/Verify.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <ctime>

namespace stitch::runner {

namespace {

constexpr std::size_t kModuleCacheSize = 16;

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
