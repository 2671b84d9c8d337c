#include "core/runner/JobJson.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace stitch::runner {

using nlohmann::json;

namespace {

// A value that is present and well typed but not acceptable (unknown dtype, bad blob reference).
struct DecodeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Decoding reads many members; nlohmann throws on a missing or mistyped one. Each decoder runs
// inside this guard so that a bad document is one Parse error, never an exception to the caller.
template <typename T, typename F>
Result<T> guarded(const char *what, F &&decode)
{
    try {
        return decode();
    } catch (const json::exception &e) {
        return makeError(ErrorKind::Parse, std::string("malformed ") + what + ": " + e.what());
    } catch (const DecodeError &e) {
        return makeError(ErrorKind::Parse, std::string("malformed ") + what + ": " + e.what());
    }
}

ir::DType dtypeOf(const json &j)
{
    auto t = ir::parseDType(j.get<std::string>());
    if (!t)
        throw DecodeError("unknown dtype '" + j.get<std::string>() + "'");
    return *t;
}

template <typename Enum, typename Parse>
Enum enumOf(const json &j, Parse parse, const char *what)
{
    auto v = parse(j.get<std::string>());
    if (!v)
        throw DecodeError(std::string("unknown ") + what + " '" + j.get<std::string>() + "'");
    return *v;
}

// NaN and infinities as "nan", "inf", "-inf": JSON has no such numbers, and a NaN in an output
// (or its error) is exactly what a report must not lose.
json numberToJson(double value)
{
    if (std::isnan(value))
        return "nan";
    if (std::isinf(value))
        return value > 0 ? "inf" : "-inf";
    return value;
}

double numberFromJson(const json &j)
{
    if (j.is_number())
        return j.get<double>();
    if (j.is_string()) {
        const auto s = j.get<std::string>();
        if (s == "nan")
            return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf")
            return std::numeric_limits<double>::infinity();
        if (s == "-inf")
            return -std::numeric_limits<double>::infinity();
    }
    throw DecodeError("expected a number, \"nan\", \"inf\" or \"-inf\", got " + j.dump());
}

json dims(unsigned x, unsigned y, unsigned z) { return json::array({x, y, z}); }

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

std::vector<char> toChars(const std::vector<std::byte> &bytes)
{
    std::vector<char> out(bytes.size());
    if (!bytes.empty())
        std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

std::vector<char> blobOrThrow(const BlobSource &blobs, const json &ref)
{
    auto b = blobs.get(ref);
    if (!b)
        throw DecodeError(b.error().message);
    return toChars(*b);
}

json checkToJson(const OutputCheck &c)
{
    json mismatches = json::array();
    for (const auto &m : c.firstMismatches) {
        json mj = {{"index", m.index}, {"got", numberToJson(m.got)}, {"expected", numberToJson(m.expected)}};
        if (!m.coords.empty())
            mj["coords"] = m.coords;
        mismatches.push_back(mj);
    }
    return {{"buffer", c.buffer}, {"elements", c.elements}, {"relativeError", numberToJson(c.relativeError)},
            {"maxAbsError", numberToJson(c.maxAbsError)}, {"mismatchCount", c.mismatchCount},
            {"unwrittenCount", c.unwrittenCount}, {"nanCount", c.nanCount}, {"passed", c.passed},
            {"firstMismatches", mismatches}};
}

OutputCheck checkFromJson(const json &j)
{
    OutputCheck c;
    c.buffer = j.at("buffer").get<std::string>();
    c.elements = j.at("elements").get<std::uint64_t>();
    c.relativeError = numberFromJson(j.at("relativeError"));
    c.maxAbsError = numberFromJson(j.at("maxAbsError"));
    c.mismatchCount = j.at("mismatchCount").get<std::uint64_t>();
    c.unwrittenCount = j.at("unwrittenCount").get<std::uint64_t>();
    c.nanCount = j.at("nanCount").get<std::uint64_t>();
    c.passed = j.at("passed").get<bool>();
    for (const auto &mj : j.at("firstMismatches")) {
        Mismatch m;
        m.index = mj.at("index").get<std::uint64_t>();
        m.got = numberFromJson(mj.at("got"));
        m.expected = numberFromJson(mj.at("expected"));
        if (mj.contains("coords"))
            m.coords = mj.at("coords").get<std::vector<std::int64_t>>();
        c.firstMismatches.push_back(std::move(m));
    }
    return c;
}

json profileToJson(const Profile &p)
{
    json kernels = json::array();
    for (const auto &k : p.kernels)
        kernels.push_back({{"name", k.name}, {"mangledName", k.mangledName}, {"durationUs", k.durationUs},
                           {"registers", k.registers}, {"staticSharedBytes", k.staticSharedBytes},
                           {"dynamicSharedBytes", k.dynamicSharedBytes}, {"localBytesPerThread", k.localBytesPerThread},
                           {"grid", dims(k.grid[0], k.grid[1], k.grid[2])}, {"block", dims(k.block[0], k.block[1], k.block[2])}});
    return {{"available", p.available}, {"message", p.message}, {"kernels", kernels}};
}

Profile profileFromJson(const json &j)
{
    Profile p;
    p.available = j.at("available").get<bool>();
    p.message = j.at("message").get<std::string>();
    for (const auto &kj : j.at("kernels")) {
        KernelProfile k;
        k.name = kj.at("name").get<std::string>();
        k.mangledName = kj.at("mangledName").get<std::string>();
        k.durationUs = kj.at("durationUs").get<double>();
        k.registers = kj.at("registers").get<int>();
        k.staticSharedBytes = kj.at("staticSharedBytes").get<int>();
        k.dynamicSharedBytes = kj.at("dynamicSharedBytes").get<int>();
        k.localBytesPerThread = kj.at("localBytesPerThread").get<int>();
        for (int i = 0; i < 3; ++i) {
            k.grid[i] = kj.at("grid").at(static_cast<std::size_t>(i)).get<unsigned>();
            k.block[i] = kj.at("block").at(static_cast<std::size_t>(i)).get<unsigned>();
        }
        p.kernels.push_back(std::move(k));
    }
    return p;
}

json numberMapToJson(const std::map<std::string, double> &values)
{
    json j = json::object();
    for (const auto &[name, value] : values)
        j[name] = numberToJson(value);
    return j;
}

std::map<std::string, double> numberMapFromJson(const json &j)
{
    std::map<std::string, double> values;
    for (const auto &[name, value] : j.items())
        values[name] = numberFromJson(value);
    return values;
}

json metricsToJson(const MetricsReport &m)
{
    json kernels = json::array();
    for (const auto &k : m.kernels)
        kernels.push_back({{"name", k.name}, {"mangledName", k.mangledName}, {"launch", k.launch}, {"range", k.range},
                           {"values", numberMapToJson(k.values)}, {"derived", numberMapToJson(k.derived)}});
    return {{"available", m.available}, {"message", m.message}, {"chip", m.chip}, {"passes", m.passes},
            {"dropped", m.dropped}, {"kernels", kernels}};
}

MetricsReport metricsFromJson(const json &j)
{
    MetricsReport m;
    m.available = j.at("available").get<bool>();
    m.message = j.at("message").get<std::string>();
    m.chip = j.value("chip", std::string());
    m.passes = j.value("passes", 0);
    m.dropped = j.value("dropped", std::vector<std::string>());
    for (const auto &kj : j.at("kernels")) {
        KernelMetrics k;
        k.name = kj.at("name").get<std::string>();
        k.mangledName = kj.value("mangledName", std::string());
        k.launch = kj.at("launch").get<int>();
        k.range = kj.value("range", std::string());
        k.values = numberMapFromJson(kj.at("values"));
        if (kj.contains("derived"))
            k.derived = numberMapFromJson(kj.at("derived"));
        m.kernels.push_back(std::move(k));
    }
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

json deviceToJson(const DeviceIdentity &d)
{
    return {{"name", d.name}, {"arch", d.arch}, {"ordinal", d.ordinal}, {"driverVersion", d.driverVersion},
            {"toolkitVersion", d.toolkitVersion}, {"multiprocessors", d.multiprocessors},
            {"l2CacheBytes", d.l2CacheBytes}, {"memoryBytes", d.memoryBytes}};
}

Result<DeviceIdentity> deviceFromJson(const json &j)
{
    return guarded<DeviceIdentity>("device", [&] {
        DeviceIdentity d;
        d.name = j.at("name").get<std::string>();
        d.arch = j.at("arch").get<std::string>();
        d.ordinal = j.at("ordinal").get<int>();
        d.driverVersion = j.at("driverVersion").get<int>();
        d.toolkitVersion = j.at("toolkitVersion").get<std::string>();
        d.multiprocessors = j.value("multiprocessors", 0);
        d.l2CacheBytes = j.value("l2CacheBytes", std::uint64_t{0});
        d.memoryBytes = j.value("memoryBytes", std::uint64_t{0});
        return d;
    });
}

json resultToJson(const JobResult &r, BlobSink *blobs)
{
    json j = {{"jobId", r.jobId}, {"programHash", r.programHash}, {"seed", r.seed}, {"device", deviceToJson(r.device)},
              {"firstRunMs", r.firstRunMs}, {"workerMs", r.workerMs}, {"workerPid", r.workerPid},
              {"fromCache", r.fromCache}, {"measuredAt", r.measuredAt}, {"estimated", r.estimated}};
    if (r.estimated)
        j["estimateSource"] = r.estimateSource;
    if (!r.library.empty())
        j["library"] = r.library;
    j["verification"] = nullptr;
    if (r.verification) {
        json outputs = json::array();
        for (const auto &c : r.verification->outputs)
            outputs.push_back(checkToJson(c));
        j["verification"] = {{"verified", r.verification->verified}, {"reference", r.verification->reference},
                             {"precision", r.verification->precision}, {"tolerance", r.verification->tolerance},
                             {"outputs", outputs}};
        if (!r.verification->unchecked.empty())
            j["verification"]["unchecked"] = r.verification->unchecked;
    }
    j["timing"] = nullptr;
    if (r.timing) {
        const Timing &t = *r.timing;
        j["timing"] = {{"medianMs", t.medianMs}, {"minMs", t.minMs}, {"maxMs", t.maxMs}, {"meanMs", t.meanMs},
                       {"warmup", t.warmup}, {"repeats", t.repeats}, {"l2FlushBytes", t.l2FlushBytes},
                       {"samplesMs", t.samplesMs}};
    }
    j["profile"] = r.profile ? profileToJson(*r.profile) : json(nullptr);
    j["metrics"] = r.metrics ? metricsToJson(*r.metrics) : json(nullptr);
    json outputs = json::array();
    if (blobs)
        for (const auto &o : r.outputs)
            outputs.push_back({{"buffer", o.buffer}, {"dtype", ir::dtypeName(o.dtype)}, {"data", blobs->add(o.bytes.data(), o.bytes.size())}});
    j["outputs"] = outputs;
    return j;
}

Result<JobResult> resultFromJson(const json &j, const BlobSource *blobs)
{
    return guarded<JobResult>("job result", [&] {
        JobResult r;
        r.jobId = j.at("jobId").get<std::uint64_t>();
        r.programHash = j.at("programHash").get<std::string>();
        r.seed = j.at("seed").get<std::uint64_t>();
        auto dev = deviceFromJson(j.at("device"));
        if (!dev)
            throw DecodeError(dev.error().message);
        r.device = *dev;
        r.firstRunMs = j.at("firstRunMs").get<double>();
        r.workerMs = j.at("workerMs").get<double>();
        r.workerPid = j.at("workerPid").get<int>();
        r.fromCache = j.at("fromCache").get<bool>();
        r.measuredAt = j.value("measuredAt", std::string());
        r.estimated = j.value("estimated", false);
        r.estimateSource = j.value("estimateSource", std::string());
        r.library = j.value("library", std::string());
        if (const json &v = j.at("verification"); !v.is_null()) {
            Verification ver;
            ver.verified = v.at("verified").get<bool>();
            ver.reference = v.at("reference").get<std::string>();
            ver.precision = v.at("precision").get<std::string>();
            ver.tolerance = v.at("tolerance").get<double>();
            for (const auto &c : v.at("outputs"))
                ver.outputs.push_back(checkFromJson(c));
            if (v.contains("unchecked"))
                ver.unchecked = v.at("unchecked").get<std::vector<std::string>>();
            r.verification = std::move(ver);
        }
        if (const json &t = j.at("timing"); !t.is_null()) {
            Timing tm;
            tm.medianMs = t.at("medianMs").get<double>();
            tm.minMs = t.at("minMs").get<double>();
            tm.maxMs = t.at("maxMs").get<double>();
            tm.meanMs = t.at("meanMs").get<double>();
            tm.warmup = t.at("warmup").get<int>();
            tm.repeats = t.at("repeats").get<int>();
            tm.l2FlushBytes = t.at("l2FlushBytes").get<std::uint64_t>();
            tm.samplesMs = t.at("samplesMs").get<std::vector<double>>();
            r.timing = std::move(tm);
        }
        if (const json &p = j.at("profile"); !p.is_null())
            r.profile = profileFromJson(p);
        // Absent in results cached before hardware metrics existed.
        if (auto m = j.find("metrics"); m != j.end() && !m->is_null())
            r.metrics = metricsFromJson(*m);
        if (blobs)
            for (const auto &o : j.at("outputs")) {
                OutputData d;
                d.buffer = o.at("buffer").get<std::string>();
                d.dtype = dtypeOf(o.at("dtype"));
                auto bytes = blobs->get(o.at("data"));
                if (!bytes)
                    throw DecodeError(bytes.error().message);
                d.bytes = std::move(*bytes);
                r.outputs.push_back(std::move(d));
            }
        return r;
    });
}

json errorToJson(const Error &e)
{
    json diags = json::array();
    for (const auto &d : e.diagnostics)
        diags.push_back({{"severity", severityName(d.severity)}, {"file", d.location.file}, {"line", d.location.line},
                         {"column", d.location.column}, {"message", d.message}});
    return {{"kind", errorKindName(e.kind)}, {"message", e.message}, {"diagnostics", diags}};
}

std::optional<ErrorKind> parseErrorKind(const std::string &name)
{
    for (int k = 0; k <= static_cast<int>(ErrorKind::Cancelled); ++k)
        if (name == errorKindName(static_cast<ErrorKind>(k)))
            return static_cast<ErrorKind>(k);
    return std::nullopt;
}

Error errorFromJson(const json &j)
{
    Error e;
    e.kind = ErrorKind::Driver;
    if (!j.is_object())
        return makeError(ErrorKind::Parse, "malformed error from the worker: " + j.dump());
    if (auto k = j.contains("kind") && j["kind"].is_string() ? parseErrorKind(j["kind"].get<std::string>()) : std::nullopt)
        e.kind = *k;
    e.message = j.contains("message") && j["message"].is_string() ? j["message"].get<std::string>() : j.dump();
    if (j.contains("diagnostics") && j["diagnostics"].is_array())
        for (const auto &dj : j["diagnostics"]) {
            if (!dj.is_object())
                continue;
            Diagnostic d;
            const std::string sev = dj.value("severity", std::string("error"));
            d.severity = sev == "warning" ? Severity::Warning : sev == "note" ? Severity::Note : Severity::Error;
            d.location.file = dj.value("file", std::string());
            d.location.line = dj.value("line", 0);
            d.location.column = dj.value("column", 0);
            d.message = dj.value("message", std::string());
            e.diagnostics.push_back(std::move(d));
        }
    return e;
}

} // namespace stitch::runner
