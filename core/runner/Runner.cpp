#include "core/runner/Runner.h"

#include "core/common/Sha256.h"
#include "core/ir/Interpreter.h"
#include "core/runner/HostData.h"
#include "core/runner/Verify.h"
#include "core/storage/MeasurementStore.h"

#include <nlohmann/json.hpp>

#include <random>

namespace stitch::runner {

namespace {

std::string tensorOf(const CpuReference &ref, const std::string &buffer)
{
    auto it = ref.tensorForBuffer.find(buffer);
    return it == ref.tensorForBuffer.end() ? buffer : it->second;
}

bool checked(const BufferSpec &b)
{
    return b.role == BufferRole::Output || b.role == BufferRole::InOut;
}

std::string referenceKey(const CpuReference &ref)
{
    Sha256 h;
    h.updateField("cpu-reference/1");
    h.updateField(ref.graph.toString());
    h.updateField(nlohmann::json(ref.sizes).dump());
    h.updateField(nlohmann::json(ref.tensorForBuffer).dump());
    if (!ref.inputTensorForBuffer.empty())
        h.updateField(nlohmann::json(ref.inputTensorForBuffer).dump());
    if (!ref.carriedTensors.empty() || !ref.uncheckedBuffers.empty())
        h.updateField(nlohmann::json(ref.carriedTensors).dump() + nlohmann::json(ref.uncheckedBuffers).dump());
    return h.hexDigest();
}

// Metrics asked for but refused when the cached result was measured (another profiler attached,
// counters locked): that was about the machine at the time, so the program is measured again.
// The settings hash already keeps results measured without metrics apart.
bool missingMetrics(const Job &job, const JobResult &cached)
{
    return job.measure.metrics && (!cached.metrics || !cached.metrics->available);
}

std::uint64_t freshSeed()
{
    std::random_device rd;
    return (std::uint64_t{rd()} << 32) ^ rd();
}

} // namespace

Status validateCpuReference(const LaunchPlan &plan, const CpuReference &ref)
{
    if (auto st = ref.graph.validate(); !st)
        return makeError(ErrorKind::InvalidArgument, "the reference graph is invalid: " + st.error().message);
    for (const auto &b : plan.buffers) {
        if (!checked(b) || ref.uncheckedBuffers.count(b.name))
            continue;
        const ir::Tensor *t = ref.graph.findTensor(tensorOf(ref, b.name));
        if (!t || t->role == ir::TensorRole::Input)
            return makeError(ErrorKind::InvalidArgument, "output '" + b.name + "' maps to no tensor the reference graph computes ('" +
                                                             tensorOf(ref, b.name) + "')");
    }
    for (const ir::Tensor *t : ref.graph.inputs()) {
        bool found = ref.carriedTensors.count(t->name) > 0;
        for (const auto &b : plan.buffers) {
            auto in = ref.inputTensorForBuffer.find(b.name);
            found = found || tensorOf(ref, b.name) == t->name || (in != ref.inputTensorForBuffer.end() && in->second == t->name);
        }
        if (!found)
            return makeError(ErrorKind::InvalidArgument, "graph input '" + t->name + "' has no buffer in the plan");
    }
    return Ok{};
}

Result<Verification> verifyWithInterpreter(const LaunchPlan &plan, std::uint64_t seed, const std::vector<OutputData> &outputs,
                                           const CpuReference &ref, PrecisionPolicy precision)
{
    if (auto st = validateCpuReference(plan, ref); !st)
        return st.error();
    ir::TensorValues inputs;
    for (const auto &b : plan.buffers) {
        auto in = ref.inputTensorForBuffer.find(b.name);
        const ir::Tensor *t = ref.graph.findTensor(in != ref.inputTensorForBuffer.end() ? in->second : tensorOf(ref, b.name));
        if (t && t->role == ir::TensorRole::Input && !ref.carriedTensors.count(t->name))
            inputs[t->name] = toDoubles(initialBytes(plan, b, seed), b.dtype);
    }
    for (const std::string &name : ref.carriedTensors) {
        const ir::Tensor *t = ref.graph.findTensor(name);
        if (!t)
            continue;
        auto extents = t->shape.evaluate(ref.sizes);
        if (!extents)
            return extents.error();
        inputs[name] = std::vector<double>(static_cast<std::size_t>(std::max<std::int64_t>(ir::elementCount(*extents), 1)), 0.0);
    }
    auto values = ir::interpret(ref.graph, ref.sizes, inputs);
    if (!values) {
        Error e = values.error();
        e.message = "the CPU reference failed: " + e.message;
        return e;
    }
    std::vector<OutputCheck> checks;
    std::vector<std::string> unchecked;
    for (const auto &b : plan.buffers) {
        if (!checked(b))
            continue;
        if (ref.uncheckedBuffers.count(b.name)) {
            unchecked.push_back(b.name);
            continue;
        }
        const OutputData *out = nullptr;
        for (const auto &o : outputs)
            if (o.buffer == b.name)
                out = &o;
        if (!out)
            return makeError(ErrorKind::InvalidArgument, "the worker returned no data for output '" + b.name + "'");
        auto it = values->find(tensorOf(ref, b.name));
        if (it == values->end())
            return makeError(ErrorKind::InvalidArgument, "the interpreter computed no tensor '" + tensorOf(ref, b.name) + "'");
        if (it->second.size() != b.count)
            return makeError(ErrorKind::InvalidArgument, "output '" + b.name + "' has " + std::to_string(b.count) +
                                                             " elements, tensor '" + it->first + "' " + std::to_string(it->second.size()));
        checks.push_back(compareOutput(b, out->bytes, it->second, relativeTolerance(precision)));
    }
    Verification v = makeVerification("cpu", precision, std::move(checks));
    v.unchecked = std::move(unchecked);
    return v;
}

Runner::Runner(WorkerOptions worker, std::unique_ptr<storage::MeasurementStore> store)
    : m_client(std::move(worker)), m_store(std::move(store))
{
}

Runner::~Runner() = default;

Result<WorkerInfo> Runner::device()
{
    // No driver or no GPU does not change while this process runs: answer it once, without
    // starting a worker again for every job (a fault or a lost worker is retried as before).
    if (m_noDevice)
        return *m_noDevice;
    auto info = m_client.start();
    if (!info && info.error().kind == ErrorKind::NoDevice)
        m_noDevice = info.error();
    return info;
}

void Runner::dropCache(const Error &error)
{
    m_warnings.push_back("measurement cache unavailable, measuring without it: " + error.message);
    m_store.reset();
}

JobResult estimatedResult(std::uint64_t jobId, const Job &job, const ModelEstimate &estimate, const std::string &why)
{
    JobResult r;
    r.jobId = jobId;
    r.programHash = programHash(job);
    r.seed = job.seed;
    r.device.name = "none (" + why + ")";
    r.estimated = true;
    r.estimateSource = estimate.source;
    Timing t;
    t.medianMs = t.minMs = t.maxMs = t.meanMs = estimate.ms;
    r.timing = t;
    return r;
}

Result<JobResult> Runner::run(RunRequest request, const CancelCheck &cancelled)
{
    const std::uint64_t jobId = m_nextJobId.fetch_add(1);
    Job &job = request.job;
    if (!job.fixedSeed)
        job.seed = freshSeed();
    if (auto st = validateJob(job); !st)
        return st.error();
    const bool cpuVerify = job.measure.verify && !job.reference && request.cpuReference;
    if (cpuVerify)
        if (auto st = validateCpuReference(job.plan, *request.cpuReference); !st)
            return st.error();

    auto info = device();
    if (!info) {
        // Without a GPU the same API answers with the model's estimate, marked as such.
        if (info.error().kind == ErrorKind::NoDevice && request.estimate)
            return estimatedResult(jobId, job, *request.estimate, info.error().message);
        return info.error();
    }
    storage::MeasurementKey key;
    key.programHash = programHash(job);
    key.deviceName = info->device.name;
    key.driverVersion = info->device.driverVersion;
    key.toolkitVersion = info->device.toolkitVersion;
    key.settingsHash = settingsHash(job, cpuVerify ? referenceKey(*request.cpuReference) : std::string());

    if (m_store && !request.remeasure) {
        auto cached = m_store->lookup(key);
        if (!cached)
            dropCache(cached.error());
        else if (*cached && !missingMetrics(job, **cached)) {
            JobResult r = std::move(**cached);
            r.jobId = jobId;
            return r;
        }
    }

    const bool callerWantsOutputs = job.measure.returnOutputs;
    if (cpuVerify)
        job.measure.returnOutputs = true;
    auto result = m_client.submit(job, jobId, cancelled);
    if (!result)
        return result.error();
    if (cpuVerify) {
        auto verification = verifyWithInterpreter(job.plan, result->seed, result->outputs, *request.cpuReference, job.precision);
        if (!verification)
            return verification.error();
        result->verification = std::move(*verification);
        if (!callerWantsOutputs)
            result->outputs.clear();
    }
    if (m_store)
        if (auto st = m_store->store(key, *result); !st)
            dropCache(st.error());
    return result;
}

} // namespace stitch::runner
