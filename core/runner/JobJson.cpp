#include "core/runner/JobJson.h"

#include "core/runner/JsonDecode.h"

#include <cstring>

namespace stitch::runner {

using nlohmann::json;
using namespace jsondetail;

namespace {

json bufferToJson(const BufferSpec &b)
{
    json j = {{"name", b.name}, {"dtype", ir::dtypeName(b.dtype)}, {"count", b.count}, {"role", bufferRoleName(b.role)}};
    if (!b.shape.empty())
        j["shape"] = b.shape;
    json init = {{"kind", initKindName(b.init.kind)}};
    if (b.init.kind == BufferInit::Kind::Random)
        init["range"] = {b.init.low, b.init.high};
    if (b.init.kind == BufferInit::Kind::CopyOf)
        init["of"] = b.init.source;
    j["init"] = init;
    return j;
}

BufferSpec bufferFromJson(const json &j)
{
    BufferSpec b;
    b.name = j.at("name").get<std::string>();
    b.dtype = dtypeOf(j.at("dtype"));
    b.count = j.at("count").get<std::uint64_t>();
    b.role = enumOf<BufferRole>(j.at("role"), parseBufferRole, "role");
    if (j.contains("shape"))
        b.shape = j.at("shape").get<std::vector<std::int64_t>>();
    const json &init = j.at("init");
    b.init.kind = enumOf<BufferInit::Kind>(init.at("kind"), parseInitKind, "init kind");
    if (init.contains("range")) {
        b.init.low = init.at("range").at(0).get<double>();
        b.init.high = init.at("range").at(1).get<double>();
    }
    if (init.contains("of"))
        b.init.source = init.at("of").get<std::string>();
    return b;
}

json argToJson(const KernelArg &a)
{
    if (a.isBuffer())
        return {{"buffer", std::get<std::string>(a.value)}};
    const ScalarArg &s = std::get<ScalarArg>(a.value);
    json j = {{"dtype", ir::dtypeName(s.dtype)}};
    if (ir::isFloat(s.dtype))
        j["value"] = numberToJson(s.floatValue);
    else
        j["value"] = s.intValue;
    return j;
}

KernelArg argFromJson(const json &j)
{
    if (j.contains("buffer"))
        return KernelArg::buffer(j.at("buffer").get<std::string>());
    ScalarArg s;
    s.dtype = dtypeOf(j.at("dtype"));
    if (ir::isFloat(s.dtype))
        s.floatValue = numberFromJson(j.at("value"));
    else
        s.intValue = j.at("value").get<std::int64_t>();
    return KernelArg{s};
}

// {"library": "cublas", "routine": "sgemm", "math": "fp32", "a", "b", "c", "m", "n", "k", "batch",
//  "transA", "transB", and "strideA" / "strideB" / "strideC" where set}: a launch object without
// "kernel". Every member is written, so the program hash sees all of the call.
json libraryCallToJson(const LibraryCall &call)
{
    json j = {{"library", libraryName(call.routine)},
              {"routine", routineName(call.routine)},
              {"math", libraryMathName(call.math)},
              {"a", call.a},
              {"b", call.b},
              {"c", call.c},
              {"m", call.m},
              {"n", call.n},
              {"k", call.k},
              {"batch", call.batch},
              {"transA", call.transA},
              {"transB", call.transB}};
    if (call.strideA)
        j["strideA"] = *call.strideA;
    if (call.strideB)
        j["strideB"] = *call.strideB;
    if (call.strideC)
        j["strideC"] = *call.strideC;
    return j;
}

LibraryCall libraryCallFromJson(const json &j)
{
    LibraryCall call;
    const std::string library = j.at("library").get<std::string>(), routine = j.at("routine").get<std::string>();
    auto r = parseRoutine(library, routine);
    if (!r)
        throw DecodeError("unknown library routine '" + library + "." + routine + "'");
    call.routine = *r;
    call.math = enumOf<LibraryCall::Math>(j.at("math"), parseLibraryMath, "library math");
    call.a = j.at("a").get<std::string>();
    call.b = j.at("b").get<std::string>();
    call.c = j.at("c").get<std::string>();
    call.m = j.at("m").get<std::int64_t>();
    call.n = j.at("n").get<std::int64_t>();
    call.k = j.at("k").get<std::int64_t>();
    call.batch = j.value("batch", std::int64_t{1});
    call.transA = j.value("transA", false);
    call.transB = j.value("transB", false);
    for (auto [name, stride] : {std::pair{"strideA", &call.strideA}, std::pair{"strideB", &call.strideB},
                                std::pair{"strideC", &call.strideC}})
        if (j.contains(name))
            *stride = j.at(name).get<std::int64_t>();
    return call;
}

json launchToJson(const KernelLaunch &l)
{
    if (l.library)
        return libraryCallToJson(*l.library);
    const auto &c = l.config;
    json args = json::array();
    for (const auto &a : l.args)
        args.push_back(argToJson(a));
    return {{"kernel", l.kernel}, {"grid", dims(c.gridX, c.gridY, c.gridZ)}, {"block", dims(c.blockX, c.blockY, c.blockZ)},
            {"sharedBytes", c.dynamicSharedBytes}, {"args", args}};
}

KernelLaunch launchFromJson(const json &j)
{
    if (j.contains("library"))
        return KernelLaunch::libraryCall(libraryCallFromJson(j));
    KernelLaunch l;
    l.kernel = j.at("kernel").get<std::string>();
    const json &g = j.at("grid"), &b = j.at("block");
    l.config.gridX = g.at(0).get<unsigned>(), l.config.gridY = g.at(1).get<unsigned>(), l.config.gridZ = g.at(2).get<unsigned>();
    l.config.blockX = b.at(0).get<unsigned>(), l.config.blockY = b.at(1).get<unsigned>(), l.config.blockZ = b.at(2).get<unsigned>();
    l.config.dynamicSharedBytes = j.value("sharedBytes", 0u);
    for (const auto &a : j.at("args"))
        l.args.push_back(argFromJson(a));
    return l;
}

LaunchPlan planFromJsonUnguarded(const json &j)
{
    LaunchPlan p;
    for (const auto &b : j.at("buffers"))
        p.buffers.push_back(bufferFromJson(b));
    for (const auto &l : j.at("launches"))
        p.launches.push_back(launchFromJson(l));
    return p;
}

MeasureOptions measureFromJsonUnguarded(const json &j)
{
    MeasureOptions m;
    m.verify = j.value("verify", m.verify);
    m.time = j.value("time", m.time);
    m.warmup = j.value("warmup", m.warmup);
    m.repeats = j.value("repeats", m.repeats);
    m.flushL2 = j.value("flushL2", m.flushL2);
    m.profile = j.value("profile", m.profile);
    m.metrics = j.value("metrics", m.metrics);
    if (auto k = j.find("metricsKernels"); k != j.end() && k->is_array())
        for (const auto &name : *k)
            if (name.is_string())
                m.metricsKernels.push_back(name.get<std::string>());
    m.returnOutputs = j.value("returnOutputs", m.returnOutputs);
    m.settleMs = j.value("settleMs", m.settleMs);
    return m;
}

} // namespace

json BlobSink::add(const void *data, std::size_t size)
{
    const std::size_t offset = m_bytes.size();
    m_bytes.resize(offset + size);
    if (size)
        std::memcpy(m_bytes.data() + offset, data, size);
    return {{"blob", {offset, size}}};
}

Result<std::vector<std::byte>> BlobSource::get(const json &reference) const
{
    auto natural = [](const json &v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0); };
    if (!reference.is_object() || !reference.contains("blob") || !reference["blob"].is_array() ||
        reference["blob"].size() != 2 || !natural(reference["blob"][0]) || !natural(reference["blob"][1]))
        return makeError(ErrorKind::Parse, "malformed blob reference " + reference.dump());
    const auto offset = reference["blob"][0].get<std::uint64_t>();
    const auto size = reference["blob"][1].get<std::uint64_t>();
    if (offset > m_size || size > m_size - offset)
        return makeError(ErrorKind::Parse, "blob reference " + reference.dump() + " lies outside the " +
                                               std::to_string(m_size) + "-byte payload");
    return std::vector<std::byte>(m_data + offset, m_data + offset + size);
}

json planToJson(const LaunchPlan &plan)
{
    json buffers = json::array(), launches = json::array();
    for (const auto &b : plan.buffers)
        buffers.push_back(bufferToJson(b));
    for (const auto &l : plan.launches)
        launches.push_back(launchToJson(l));
    return {{"buffers", buffers}, {"launches", launches}};
}

Result<LaunchPlan> planFromJson(const json &j)
{
    return guarded<LaunchPlan>("launch plan", [&] { return planFromJsonUnguarded(j); });
}

json measureToJson(const MeasureOptions &m)
{
    json j = {{"verify", m.verify},   {"time", m.time},       {"warmup", m.warmup},   {"repeats", m.repeats},
              {"flushL2", m.flushL2}, {"profile", m.profile}, {"metrics", m.metrics}, {"returnOutputs", m.returnOutputs}};
    if (!m.metricsKernels.empty())
        j["metricsKernels"] = m.metricsKernels; // absent when every launch is reported (older keys unchanged)
    if (m.settleMs > 0)
        j["settleMs"] = m.settleMs;
    return j;
}

Result<MeasureOptions> measureFromJson(const json &j)
{
    return guarded<MeasureOptions>("measure options", [&] { return measureFromJsonUnguarded(j); });
}

json jobToJson(const Job &job, BlobSink &blobs)
{
    json j = {{"module", blobs.add(job.module.data(), job.module.size())}, {"plan", planToJson(job.plan)},
              {"measure", measureToJson(job.measure)}, {"precision", precisionName(job.precision)},
              {"seed", job.seed}, {"fixedSeed", job.fixedSeed}, {"deadlineMs", job.deadlineMs}};
    if (job.reference)
        j["reference"] = {{"module", blobs.add(job.reference->module.data(), job.reference->module.size())},
                          {"plan", planToJson(job.reference->plan)}, {"bufferMap", job.reference->bufferMap}};
    else
        j["reference"] = nullptr;
    return j;
}

Result<Job> jobFromJson(const json &j, const BlobSource &blobs)
{
    return guarded<Job>("job", [&] {
        Job job;
        job.module = blobOrThrow(blobs, j.at("module"));
        job.plan = planFromJsonUnguarded(j.at("plan"));
        job.measure = measureFromJsonUnguarded(j.at("measure"));
        job.precision = enumOf<PrecisionPolicy>(j.at("precision"), parsePrecision, "precision");
        job.seed = j.at("seed").get<std::uint64_t>();
        job.fixedSeed = j.value("fixedSeed", false);
        job.deadlineMs = j.at("deadlineMs").get<int>();
        const json &r = j.at("reference");
        if (!r.is_null()) {
            GpuReference ref;
            ref.module = blobOrThrow(blobs, r.at("module"));
            ref.plan = planFromJsonUnguarded(r.at("plan"));
            ref.bufferMap = r.at("bufferMap").get<std::map<std::string, std::string>>();
            job.reference = std::move(ref);
        }
        return job;
    });
}

} // namespace stitch::runner
