// JobResult, its verification, profile and metrics, the device and errors <-> JSON (JobJson.h).
#include "core/runner/JobJson.h"

#include "core/runner/JsonDecode.h"

namespace stitch::runner {

using nlohmann::json;
using namespace jsondetail;

namespace {

json checkToJson(const OutputCheck &c)
{
    json mismatches = json::array();
    for (const auto &m : c.firstMismatches) {
        json mj = {{"index", m.index}, {"got", numberToJson(m.got)}, {"expected", numberToJson(m.expected)}};
        if (!m.coords.empty())
            mj["coords"] = m.coords;
        mismatches.push_back(mj);
    }
    return {{"buffer", c.buffer},
            {"elements", c.elements},
            {"relativeError", numberToJson(c.relativeError)},
            {"maxAbsError", numberToJson(c.maxAbsError)},
            {"mismatchCount", c.mismatchCount},
            {"unwrittenCount", c.unwrittenCount},
            {"nanCount", c.nanCount},
            {"passed", c.passed},
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
        kernels.push_back({{"name", k.name},
                           {"mangledName", k.mangledName},
                           {"durationUs", k.durationUs},
                           {"registers", k.registers},
                           {"staticSharedBytes", k.staticSharedBytes},
                           {"dynamicSharedBytes", k.dynamicSharedBytes},
                           {"localBytesPerThread", k.localBytesPerThread},
                           {"grid", dims(k.grid[0], k.grid[1], k.grid[2])},
                           {"block", dims(k.block[0], k.block[1], k.block[2])}});
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
        kernels.push_back({{"name", k.name},
                           {"mangledName", k.mangledName},
                           {"launch", k.launch},
                           {"range", k.range},
                           {"values", numberMapToJson(k.values)},
                           {"derived", numberMapToJson(k.derived)}});
    return {{"available", m.available}, {"message", m.message}, {"chip", m.chip},
            {"passes", m.passes},       {"dropped", m.dropped}, {"kernels", kernels}};
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

json deviceToJson(const DeviceIdentity &d)
{
    return {{"name", d.name},
            {"arch", d.arch},
            {"ordinal", d.ordinal},
            {"driverVersion", d.driverVersion},
            {"toolkitVersion", d.toolkitVersion},
            {"multiprocessors", d.multiprocessors},
            {"l2CacheBytes", d.l2CacheBytes},
            {"memoryBytes", d.memoryBytes}};
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
    json j = {{"jobId", r.jobId},
              {"programHash", r.programHash},
              {"seed", r.seed},
              {"device", deviceToJson(r.device)},
              {"firstRunMs", r.firstRunMs},
              {"workerMs", r.workerMs},
              {"workerPid", r.workerPid},
              {"fromCache", r.fromCache},
              {"measuredAt", r.measuredAt},
              {"estimated", r.estimated}};
    if (r.estimated)
        j["estimateSource"] = r.estimateSource;
    if (!r.library.empty())
        j["library"] = r.library;
    j["verification"] = nullptr;
    if (r.verification) {
        json outputs = json::array();
        for (const auto &c : r.verification->outputs)
            outputs.push_back(checkToJson(c));
        j["verification"] = {{"verified", r.verification->verified},
                             {"reference", r.verification->reference},
                             {"precision", r.verification->precision},
                             {"tolerance", r.verification->tolerance},
                             {"outputs", outputs}};
        if (!r.verification->unchecked.empty())
            j["verification"]["unchecked"] = r.verification->unchecked;
    }
    j["timing"] = nullptr;
    if (r.timing) {
        const Timing &t = *r.timing;
        j["timing"] = {{"medianMs", t.medianMs},
                       {"minMs", t.minMs},
                       {"maxMs", t.maxMs},
                       {"meanMs", t.meanMs},
                       {"warmup", t.warmup},
                       {"repeats", t.repeats},
                       {"l2FlushBytes", t.l2FlushBytes},
                       {"samplesMs", t.samplesMs}};
    }
    j["profile"] = r.profile ? profileToJson(*r.profile) : json(nullptr);
    j["metrics"] = r.metrics ? metricsToJson(*r.metrics) : json(nullptr);
    json outputs = json::array();
    if (blobs)
        for (const auto &o : r.outputs)
            outputs.push_back({{"buffer", o.buffer},
                               {"dtype", ir::dtypeName(o.dtype)},
                               {"data", blobs->add(o.bytes.data(), o.bytes.size())}});
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
        diags.push_back({{"severity", severityName(d.severity)},
                         {"file", d.location.file},
                         {"line", d.location.line},
                         {"column", d.location.column},
                         {"message", d.message}});
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
    if (auto k =
            j.contains("kind") && j["kind"].is_string() ? parseErrorKind(j["kind"].get<std::string>()) : std::nullopt)
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
