#include "core/runner/Job.h"

#include "core/common/Sha256.h"
#include "core/runner/JobJson.h"
#include "core/runner/JobResult.h"

#include <nlohmann/json.hpp>

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
    if (job.module.empty())
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
    if (ref.module.empty())
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
