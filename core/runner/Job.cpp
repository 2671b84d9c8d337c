#include "core/runner/Job.h"

#include "core/common/Sha256.h"
#include "core/runner/JobJson.h"
#include "core/runner/JobResult.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <set>

namespace stitch::runner {

const char *bufferRoleName(BufferRole role)
{
    switch (role) {
    case BufferRole::Input: return "input";
    case BufferRole::Output: return "output";
    case BufferRole::InOut: return "inout";
    case BufferRole::Scratch: return "scratch";
    }
    return "input";
}

std::optional<BufferRole> parseBufferRole(const std::string &name)
{
    for (BufferRole r : {BufferRole::Input, BufferRole::Output, BufferRole::InOut, BufferRole::Scratch})
        if (name == bufferRoleName(r))
            return r;
    return std::nullopt;
}

const char *initKindName(BufferInit::Kind kind)
{
    switch (kind) {
    case BufferInit::Kind::Default: return "default";
    case BufferInit::Kind::Random: return "random";
    case BufferInit::Kind::Poison: return "poison";
    case BufferInit::Kind::Zero: return "zero";
    case BufferInit::Kind::CopyOf: return "copy";
    }
    return "default";
}

std::optional<BufferInit::Kind> parseInitKind(const std::string &name)
{
    using K = BufferInit::Kind;
    for (K k : {K::Default, K::Random, K::Poison, K::Zero, K::CopyOf})
        if (name == initKindName(k))
            return k;
    return std::nullopt;
}

BufferInit::Kind BufferSpec::effectiveInit() const
{
    if (init.kind != BufferInit::Kind::Default)
        return init.kind;
    switch (role) {
    case BufferRole::Input:
    case BufferRole::InOut: return BufferInit::Kind::Random;
    case BufferRole::Output: return BufferInit::Kind::Poison;
    case BufferRole::Scratch: return BufferInit::Kind::Zero;
    }
    return BufferInit::Kind::Zero;
}

const BufferSpec *LaunchPlan::buffer(const std::string &name) const
{
    for (const auto &b : buffers)
        if (b.name == name)
            return &b;
    return nullptr;
}

bool LaunchPlan::hasKernelLaunches() const
{
    return std::any_of(launches.begin(), launches.end(), [](const KernelLaunch &l) { return !l.isLibraryCall(); });
}

bool LaunchPlan::hasLibraryCalls() const
{
    return std::any_of(launches.begin(), launches.end(), [](const KernelLaunch &l) { return l.isLibraryCall(); });
}

const char *libraryName(LibraryCall::Routine routine)
{
    switch (routine) {
    case LibraryCall::Routine::CublasSgemm:
        return "cublas";
    }
    return "cublas";
}

const char *routineName(LibraryCall::Routine routine)
{
    switch (routine) {
    case LibraryCall::Routine::CublasSgemm:
        return "sgemm";
    }
    return "sgemm";
}

std::optional<LibraryCall::Routine> parseRoutine(const std::string &library, const std::string &routine)
{
    for (auto r : {LibraryCall::Routine::CublasSgemm})
        if (library == libraryName(r) && routine == routineName(r))
            return r;
    return std::nullopt;
}

const char *libraryMathName(LibraryCall::Math math)
{
    return math == LibraryCall::Math::TF32 ? "tf32" : "fp32";
}

std::optional<LibraryCall::Math> parseLibraryMath(const std::string &name)
{
    for (auto m : {LibraryCall::Math::FP32, LibraryCall::Math::TF32})
        if (name == libraryMathName(m))
            return m;
    return std::nullopt;
}

std::string LibraryCall::describe() const
{
    std::string s = "cuBLAS " + std::string(routineName(routine)) + " ";
    if (batch > 1)
        s += "batch " + std::to_string(batch) + " of ";
    s += std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    if (transA || transB)
        s += std::string(", ") + (transA && transB ? "A and B" : transA ? "A" : "B") + " transposed";
    return s + (math == Math::TF32 ? " (TF32)" : " (FP32)");
}

std::string KernelLaunch::describe() const
{
    return library ? library->describe() : "kernel '" + kernel + "'";
}

std::string GpuReference::referenceBufferFor(const std::string &candidate) const
{
    auto it = bufferMap.find(candidate);
    return it == bufferMap.end() ? candidate : it->second;
}

const char *precisionName(PrecisionPolicy policy)
{
    switch (policy) {
    case PrecisionPolicy::FP64: return "fp64";
    case PrecisionPolicy::FP32: return "fp32";
    case PrecisionPolicy::TF32: return "tf32";
    case PrecisionPolicy::FP16: return "fp16";
    case PrecisionPolicy::BF16: return "bf16";
    case PrecisionPolicy::Exact: return "exact";
    }
    return "fp32";
}

std::optional<PrecisionPolicy> parsePrecision(const std::string &name)
{
    using P = PrecisionPolicy;
    for (P p : {P::FP64, P::FP32, P::TF32, P::FP16, P::BF16, P::Exact})
        if (name == precisionName(p))
            return p;
    return std::nullopt;
}

double relativeTolerance(PrecisionPolicy policy)
{
    switch (policy) {
    case PrecisionPolicy::FP64: return 1e-12;
    case PrecisionPolicy::FP32: return 1e-5;
    case PrecisionPolicy::TF32: return 1e-3;
    case PrecisionPolicy::FP16: return 1e-3;
    case PrecisionPolicy::BF16: return 1e-2;
    case PrecisionPolicy::Exact: return 0.0;
    }
    return 1e-5;
}

namespace {

Status invalid(const std::string &what)
{
    return makeError(ErrorKind::InvalidArgument, what);
}

// cuBLAS takes int dimensions and leading dimensions (the _64 entry points are CUDA 12+ only).
constexpr std::int64_t kMaxLibraryDimension = std::numeric_limits<std::int32_t>::max();

Status validateLibraryCall(const LaunchPlan &plan, const LibraryCall &call, const std::string &where)
{
    if (call.m < 1 || call.n < 1 || call.k < 1 || call.batch < 1)
        return invalid(where + ": M, N, K and the batch must be positive");
    if (call.m > kMaxLibraryDimension || call.n > kMaxLibraryDimension || call.k > kMaxLibraryDimension ||
        call.batch > kMaxLibraryDimension)
        return invalid(where + ": M, N, K and the batch must fit cuBLAS's 32-bit integers");
    if (call.c == call.a || call.c == call.b)
        return invalid(where + ": C ('" + call.c + "') is also an operand; cuBLAS needs C apart from A and B");
    if (call.batch > 1 && call.effectiveStrideC() < call.m * call.n)
        return invalid(where + ": the batch's C matrices overlap (stride " + std::to_string(call.effectiveStrideC()) +
                       " < M x N)");
    struct Operand {
        const char *role;
        const std::string &buffer;
        std::int64_t rows, cols, stride;
    };
    const Operand operands[] = {{"A", call.a, call.rowsA(), call.colsA(), call.effectiveStrideA()},
                                {"B", call.b, call.rowsB(), call.colsB(), call.effectiveStrideB()},
                                {"C", call.c, call.m, call.n, call.effectiveStrideC()}};
    for (const Operand &o : operands) {
        const BufferSpec *b = plan.buffer(o.buffer);
        if (!b)
            return invalid(where + ": unknown buffer '" + o.buffer + "' for " + o.role);
        if (b->dtype != ir::DType::F32)
            return invalid(where + ": " + o.role + " ('" + o.buffer + "') is " + ir::dtypeName(b->dtype) +
                           "; sgemm takes float32");
        if (o.stride < 0)
            return invalid(where + ": the stride of " + o.role + " is negative");
        const double need = static_cast<double>(call.batch - 1) * static_cast<double>(o.stride) +
                            static_cast<double>(o.rows) * static_cast<double>(o.cols);
        if (need > static_cast<double>(b->count))
            return invalid(where + ": " + o.role + " ('" + o.buffer + "') holds " + std::to_string(b->count) +
                           " elements; the call reads " + std::to_string(static_cast<std::uint64_t>(need)) + " (" +
                           std::to_string(o.rows) + " x " + std::to_string(o.cols) +
                           (call.batch > 1
                                ? ", batch " + std::to_string(call.batch) + ", stride " + std::to_string(o.stride)
                                : "") +
                           ")");
    }
    return Ok{};
}

Status validatePlan(const LaunchPlan &plan, const std::string &which)
{
    std::set<std::string> names;
    for (const auto &b : plan.buffers) {
        if (b.name.empty())
            return invalid(which + ": a buffer has no name");
        if (!names.insert(b.name).second)
            return invalid(which + ": buffer '" + b.name + "' is declared twice");
        if (b.count == 0)
            return invalid(which + ": buffer '" + b.name + "' has no elements");
        if (b.count > (std::uint64_t{1} << 40))
            return invalid(which + ": buffer '" + b.name + "' is larger than 2^40 elements");
        if (!b.shape.empty()) {
            std::uint64_t n = 1;
            for (auto d : b.shape) {
                if (d <= 0)
                    return invalid(which + ": buffer '" + b.name + "' has a non-positive dimension");
                n *= static_cast<std::uint64_t>(d);
            }
            if (n != b.count)
                return invalid(which + ": buffer '" + b.name + "' shape does not match its count");
        }
        if (b.init.kind == BufferInit::Kind::Random && !(b.init.low <= b.init.high))
            return invalid(which + ": buffer '" + b.name + "' random range is empty");
    }
    for (const auto &b : plan.buffers) {
        if (b.init.kind != BufferInit::Kind::CopyOf)
            continue;
        const BufferSpec *src = plan.buffer(b.init.source);
        if (!src)
            return invalid(which + ": buffer '" + b.name + "' copies unknown buffer '" + b.init.source + "'");
        if (src->bytes() != b.bytes())
            return invalid(which + ": buffer '" + b.name + "' copies '" + src->name + "' of a different size");
        if (src->effectiveInit() == BufferInit::Kind::CopyOf)
            return invalid(which + ": buffer '" + b.name + "' copies a copy; name the original");
    }
    if (plan.launches.empty())
        return invalid(which + ": no launches");
    for (std::size_t i = 0; i < plan.launches.size(); ++i) {
        const auto &l = plan.launches[i];
        if (l.library) {
            const std::string where = which + ": launch " + std::to_string(i + 1) + " (" + l.library->describe() + ")";
            if (!l.kernel.empty() || !l.args.empty())
                return invalid(where + ": a library call names no kernel and takes no kernel arguments");
            if (auto st = validateLibraryCall(plan, *l.library, where); !st)
                return st;
            continue;
        }
        const std::string where = which + ": launch " + std::to_string(i + 1) + " (" + l.kernel + ")";
        if (l.kernel.empty())
            return invalid(which + ": launch " + std::to_string(i + 1) + " names no kernel");
        const auto &c = l.config;
        if (!c.gridX || !c.gridY || !c.gridZ || !c.blockX || !c.blockY || !c.blockZ)
            return invalid(where + ": grid and block dimensions must be positive");
        for (const auto &a : l.args)
            if (a.isBuffer() && !plan.buffer(std::get<std::string>(a.value)))
                return invalid(where + ": unknown buffer '" + std::get<std::string>(a.value) + "'");
    }
    return Ok{};
}

} // namespace

Status validateJob(const Job &job)
{
    if (job.module.empty() && job.plan.hasKernelLaunches())
        return invalid("the job has no module (CUBIN)");
    if (auto st = validatePlan(job.plan, "plan"); !st)
        return st;
    if (job.measure.repeats < 1 || job.measure.repeats > 100000 || job.measure.warmup < 0 || job.measure.warmup > 10000)
        return invalid("repeats must be 1..100000 and warmup 0..10000");
    if (job.deadlineMs <= 0)
        return invalid("the deadline must be positive");
    if (!job.reference)
        return Ok{};
    const GpuReference &ref = *job.reference;
    if (ref.module.empty() && ref.plan.hasKernelLaunches())
        return invalid("the GPU reference has no module (CUBIN)");
    if (auto st = validatePlan(ref.plan, "reference plan"); !st)
        return st;
    for (const auto &b : job.plan.buffers) {
        const BufferSpec *rb = ref.plan.buffer(ref.referenceBufferFor(b.name));
        const bool checked = b.role == BufferRole::Output || b.role == BufferRole::InOut;
        if (!rb) {
            if (checked)
                return invalid("output '" + b.name + "' has no counterpart in the reference plan");
            continue;
        }
        if (rb->dtype != b.dtype || rb->count != b.count)
            return invalid("buffer '" + b.name + "' and its reference '" + rb->name + "' differ in type or size");
    }
    return Ok{};
}

std::string programHash(const Job &job)
{
    Sha256 h;
    h.updateField("stitchcuda-program/1");
    h.updateField(std::string_view(job.module.data(), job.module.size()));
    h.updateField(planToJson(job.plan).dump());
    return h.hexDigest();
}

std::string settingsHash(const Job &job, const std::string &extraReferenceKey)
{
    nlohmann::json j = measureToJson(job.measure);
    j.erase("returnOutputs"); // how results travel, not what is measured
    if (!job.measure.metrics)
        j.erase("metrics"); // keeps the keys of results cached before metrics existed
    j["precision"] = precisionName(job.precision);
    Sha256 h;
    h.updateField("stitchcuda-settings/1");
    h.updateField(j.dump());
    if (job.reference) {
        h.updateField(std::string_view(job.reference->module.data(), job.reference->module.size()));
        h.updateField(planToJson(job.reference->plan).dump());
        h.updateField(nlohmann::json(job.reference->bufferMap).dump());
    }
    h.updateField(extraReferenceKey);
    return h.hexDigest();
}

Status JobResult::asStatus() const
{
    if (!verification || verification->verified)
        return Ok{};
    for (const auto &o : verification->outputs) {
        if (o.passed)
            continue;
        std::string msg = "output '" + o.buffer + "' differs from the " + verification->reference + " reference: relative error " +
                          std::to_string(o.relativeError) + " > " + std::to_string(verification->tolerance);
        if (o.unwrittenCount)
            msg += ", " + std::to_string(o.unwrittenCount) + " elements never written";
        return makeError(ErrorKind::WrongAnswer, msg);
    }
    return makeError(ErrorKind::WrongAnswer, "verification failed");
}

} // namespace stitch::runner
