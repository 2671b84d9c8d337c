#include "core/runner/PlanFile.h"

#include "core/cuda/SourceCompiler.h"
#include "core/frontend/Lift.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace stitch::runner {

using nlohmann::json;

namespace {

/// A problem at a member of the plan; caught once at the API boundary and turned into an Error.
struct PlanError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string &where, const std::string &what)
{
    throw PlanError(where + ": " + what);
}

void allowOnly(const json &j, const std::string &where, std::initializer_list<const char *> keys)
{
    if (!j.is_object())
        fail(where, "expected an object");
    for (const auto &[key, value] : j.items()) {
        bool known = false;
        for (const char *k : keys)
            known = known || key == k;
        if (!known)
            fail(where, "unknown member \"" + key + "\"");
    }
}

std::string str(const json &j, const std::string &where)
{
    if (!j.is_string())
        fail(where, "expected a string");
    return j.get<std::string>();
}

std::int64_t integer(const json &j, const std::string &where, std::int64_t lo, std::int64_t hi)
{
    if (!j.is_number_integer())
        fail(where, "expected an integer");
    const auto v = j.get<std::int64_t>();
    if (v < lo || v > hi)
        fail(where, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                        std::to_string(v));
    return v;
}

bool boolean(const json &j, const std::string &where)
{
    if (!j.is_boolean())
        fail(where, "expected true or false");
    return j.get<bool>();
}

std::vector<std::string> strings(const json &j, const std::string &where)
{
    if (!j.is_array())
        fail(where, "expected an array of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < j.size(); ++i)
        out.push_back(str(j[i], where + "[" + std::to_string(i) + "]"));
    return out;
}

std::map<std::string, std::string> stringMap(const json &j, const std::string &where)
{
    if (!j.is_object())
        fail(where, "expected an object of strings");
    std::map<std::string, std::string> out;
    for (const auto &[k, v] : j.items())
        out[k] = str(v, where + "." + k);
    return out;
}

void dims3(const json &j, const std::string &where, unsigned &x, unsigned &y, unsigned &z)
{
    std::vector<std::int64_t> d;
    if (j.is_number_integer())
        d.push_back(integer(j, where, 1, 0x7fffffff));
    else if (j.is_array() && !j.empty() && j.size() <= 3)
        for (std::size_t i = 0; i < j.size(); ++i)
            d.push_back(integer(j[i], where + "[" + std::to_string(i) + "]", 1, 0x7fffffff));
    else
        fail(where, "expected 1 to 3 positive integers");
    d.resize(3, 1);
    x = static_cast<unsigned>(d[0]), y = static_cast<unsigned>(d[1]), z = static_cast<unsigned>(d[2]);
}

ir::DType dtype(const json &j, const std::string &where)
{
    auto t = ir::parseDType(str(j, where));
    if (!t)
        fail(where, "unknown type \"" + j.get<std::string>() + "\"");
    return *t;
}

BufferSpec buffer(const json &j, const std::string &where)
{
    allowOnly(j, where, {"name", "dtype", "shape", "count", "role", "init"});
    BufferSpec b;
    if (!j.contains("name") || !j.contains("dtype"))
        fail(where, "a buffer needs \"name\" and \"dtype\"");
    b.name = str(j["name"], where + ".name");
    b.dtype = dtype(j["dtype"], where + ".dtype");
    if (j.contains("shape") == j.contains("count"))
        fail(where, "give either \"shape\" or \"count\"");
    if (j.contains("shape")) {
        const json &s = j["shape"];
        if (!s.is_array() || s.empty())
            fail(where + ".shape", "expected an array of positive integers");
        b.count = 1;
        for (std::size_t i = 0; i < s.size(); ++i) {
            b.shape.push_back(integer(s[i], where + ".shape[" + std::to_string(i) + "]", 1, std::int64_t{1} << 40));
            b.count *= static_cast<std::uint64_t>(b.shape.back());
        }
    } else {
        b.count = static_cast<std::uint64_t>(integer(j["count"], where + ".count", 1, std::int64_t{1} << 40));
    }
    if (j.contains("role")) {
        auto role = parseBufferRole(str(j["role"], where + ".role"));
        if (!role)
            fail(where + ".role", "expected input, output, inout or scratch");
        b.role = *role;
    }
    if (j.contains("init")) {
        const json &init = j["init"];
        const std::string iw = where + ".init";
        if (init.is_string()) {
            auto kind = parseInitKind(init.get<std::string>());
            if (!kind || *kind == BufferInit::Kind::CopyOf)
                fail(iw, "expected \"random\", \"poison\" or \"zero\" (or an object)");
            b.init.kind = *kind;
        } else {
            allowOnly(init, iw, {"kind", "range", "of"});
            auto kind = parseInitKind(init.contains("kind") ? str(init["kind"], iw + ".kind") : "");
            if (!kind)
                fail(iw + ".kind", "expected random, poison, zero or copy");
            b.init.kind = *kind;
            if (init.contains("range")) {
                const json &r = init["range"];
                if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number() ||
                    r[0].get<double>() > r[1].get<double>())
                    fail(iw + ".range", "expected [low, high] with low <= high");
                b.init.low = r[0].get<double>();
                b.init.high = r[1].get<double>();
            }
            if (*kind == BufferInit::Kind::CopyOf) {
                if (!init.contains("of"))
                    fail(iw, "copy needs \"of\"");
                b.init.source = str(init["of"], iw + ".of");
            }
        }
    }
    return b;
}

KernelArg argument(const json &j, const std::string &where)
{
    if (j.is_string())
        return KernelArg::buffer(j.get<std::string>());
    if (!j.is_object() || j.size() != 1)
        fail(where, "expected a buffer name or a scalar such as {\"int32\": 1024}");
    const auto member = j.begin();
    const std::string typeName = member.key();
    const json &value = member.value();
    auto t = ir::parseDType(typeName);
    if (!t)
        fail(where, "unknown scalar type \"" + typeName + "\"");
    if (ir::isFloat(*t)) {
        if (!value.is_number())
            fail(where, "expected a number");
        return KernelArg::scalar(*t, value.get<double>());
    }
    if (!value.is_number_integer() && !value.is_boolean())
        fail(where, "expected an integer");
    return KernelArg::scalar(*t, value.is_boolean() ? std::int64_t{value.get<bool>()} : value.get<std::int64_t>());
}

// {"library": "cublas", "routine": "sgemm", "a", "b", "c", "m", "n", "k"} and optionally "math",
// "batch", "transA", "transB", "strideA", "strideB", "strideC": the job JSON's library call.
LibraryCall libraryCall(const json &j, const std::string &w)
{
    allowOnly(j, w,
              {"library", "routine", "math", "a", "b", "c", "m", "n", "k", "batch", "transA", "transB", "strideA",
               "strideB", "strideC"});
    for (const char *required : {"routine", "a", "b", "c", "m", "n", "k"})
        if (!j.contains(required))
            fail(w, std::string("a library call needs \"") + required + "\"");
    const std::string library = str(j["library"], w + ".library");
    const std::string routine = str(j["routine"], w + ".routine");
    auto r = parseRoutine(library, routine);
    if (!r)
        fail(w, "unknown library routine \"" + library + "." + routine + "\" (known: cublas sgemm)");
    LibraryCall call;
    call.routine = *r;
    if (j.contains("math")) {
        auto math = parseLibraryMath(str(j["math"], w + ".math"));
        if (!math)
            fail(w + ".math", "expected fp32 or tf32");
        call.math = *math;
    }
    call.a = str(j["a"], w + ".a");
    call.b = str(j["b"], w + ".b");
    call.c = str(j["c"], w + ".c");
    constexpr std::int64_t kMaxDim = std::numeric_limits<int>::max(); // cuBLAS takes int dimensions
    call.m = integer(j["m"], w + ".m", 1, kMaxDim);
    call.n = integer(j["n"], w + ".n", 1, kMaxDim);
    call.k = integer(j["k"], w + ".k", 1, kMaxDim);
    if (j.contains("batch"))
        call.batch = integer(j["batch"], w + ".batch", 1, kMaxDim);
    if (j.contains("transA"))
        call.transA = boolean(j["transA"], w + ".transA");
    if (j.contains("transB"))
        call.transB = boolean(j["transB"], w + ".transB");
    for (auto [key, stride] : {std::pair{"strideA", &call.strideA}, std::pair{"strideB", &call.strideB},
                               std::pair{"strideC", &call.strideC}})
        if (j.contains(key))
            *stride = integer(j[key], w + "." + key, 0, std::int64_t{1} << 40);
    return call;
}

std::vector<KernelLaunch> launches(const json &j, const std::string &where)
{
    if (!j.is_array() || j.empty())
        fail(where, "expected a non-empty array of launches");
    std::vector<KernelLaunch> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const std::string w = where + "[" + std::to_string(i) + "]";
        if (j[i].is_object() && j[i].contains("library")) {
            out.push_back(KernelLaunch::libraryCall(libraryCall(j[i], w)));
            continue;
        }
        allowOnly(j[i], w, {"kernel", "grid", "block", "sharedBytes", "args"});
        if (!j[i].contains("kernel") || !j[i].contains("grid") || !j[i].contains("block"))
            fail(w, "a launch needs \"kernel\", \"grid\" and \"block\"");
        KernelLaunch l;
        l.kernel = str(j[i]["kernel"], w + ".kernel");
        dims3(j[i]["grid"], w + ".grid", l.config.gridX, l.config.gridY, l.config.gridZ);
        dims3(j[i]["block"], w + ".block", l.config.blockX, l.config.blockY, l.config.blockZ);
        if (j[i].contains("sharedBytes"))
            l.config.dynamicSharedBytes =
                static_cast<unsigned>(integer(j[i]["sharedBytes"], w + ".sharedBytes", 0, 1 << 30));
        if (j[i].contains("args")) {
            const json &args = j[i]["args"];
            if (!args.is_array())
                fail(w + ".args", "expected an array");
            for (std::size_t a = 0; a < args.size(); ++a)
                l.args.push_back(argument(args[a], w + ".args[" + std::to_string(a) + "]"));
        }
        out.push_back(std::move(l));
    }
    return out;
}

std::vector<BufferSpec> buffers(const json &j, const std::string &where)
{
    if (!j.is_array() || j.empty())
        fail(where, "expected a non-empty array of buffers");
    std::vector<BufferSpec> out;
    for (std::size_t i = 0; i < j.size(); ++i)
        out.push_back(buffer(j[i], where + "[" + std::to_string(i) + "]"));
    return out;
}

std::string resolve(const std::string &planPath, const std::string &relative)
{
    namespace fs = std::filesystem;
    const fs::path p(relative);
    if (p.is_absolute())
        return p.string();
    return (fs::path(planPath).parent_path() / p).lexically_normal().string();
}

PlanFile parse(const json &j, const std::string &path)
{
    allowOnly(j, "plan",
              {"schema", "source", "defines", "buffers", "launches", "reference", "precision", "measure", "deadlineMs",
               "seed", "model"});
    if (!j.contains("schema") || str(j["schema"], "schema") != kPlanSchema)
        fail("schema", std::string("expected \"") + kPlanSchema + "\"");
    for (const char *required : {"buffers", "launches"})
        if (!j.contains(required))
            fail("plan", std::string("missing \"") + required + "\"");
    PlanFile p;
    p.path = path;
    p.plan.buffers = buffers(j["buffers"], "buffers");
    p.plan.launches = launches(j["launches"], "launches");
    // A plan of library calls alone runs no kernel of its own and needs no source.
    if (j.contains("source"))
        p.sourcePath = resolve(path, str(j["source"], "source"));
    else if (p.plan.hasKernelLaunches())
        fail("plan", "missing \"source\" (the program whose kernels the launches run)");
    if (j.contains("defines"))
        p.defines = strings(j["defines"], "defines");
    if (j.contains("precision")) {
        auto prec = parsePrecision(str(j["precision"], "precision"));
        if (!prec)
            fail("precision", "expected fp64, fp32, tf32, fp16, bf16 or exact");
        p.precision = *prec;
    }
    if (j.contains("measure")) {
        const json &m = j["measure"];
        allowOnly(
            m, "measure",
            {"verify", "time", "warmup", "repeats", "flushL2", "profile", "metrics", "metricsKernels", "settleMs"});
        if (m.contains("verify"))
            p.measure.verify = boolean(m["verify"], "measure.verify");
        if (m.contains("time"))
            p.measure.time = boolean(m["time"], "measure.time");
        if (m.contains("flushL2"))
            p.measure.flushL2 = boolean(m["flushL2"], "measure.flushL2");
        if (m.contains("profile"))
            p.measure.profile = boolean(m["profile"], "measure.profile");
        if (m.contains("metrics"))
            p.measure.metrics = boolean(m["metrics"], "measure.metrics");
        if (m.contains("metricsKernels")) {
            const json &k = m["metricsKernels"];
            if (!k.is_array())
                fail("measure.metricsKernels", "expected an array of kernel names");
            for (std::size_t i = 0; i < k.size(); ++i)
                p.measure.metricsKernels.push_back(str(k[i], "measure.metricsKernels[" + std::to_string(i) + "]"));
        }
        if (m.contains("warmup"))
            p.measure.warmup = static_cast<int>(integer(m["warmup"], "measure.warmup", 0, 10000));
        if (m.contains("repeats"))
            p.measure.repeats = static_cast<int>(integer(m["repeats"], "measure.repeats", 1, 100000));
        if (m.contains("settleMs"))
            p.measure.settleMs = static_cast<int>(integer(m["settleMs"], "measure.settleMs", 0, 60000));
    }
    if (j.contains("deadlineMs"))
        p.deadlineMs = static_cast<int>(integer(j["deadlineMs"], "deadlineMs", 1, 3600 * 1000));
    if (j.contains("seed"))
        p.seed = static_cast<std::uint64_t>(integer(j["seed"], "seed", 0, std::numeric_limits<std::int64_t>::max()));
    if (j.contains("model")) {
        const json &m = j["model"];
        allowOnly(m, "model", {"graph", "schedule", "sizes"});
        if (!m.contains("graph") || !m.contains("schedule"))
            fail("model", "give \"graph\" and \"schedule\" (the files the program was generated from)");
        PlanFile::Model model;
        model.graphPath = resolve(path, str(m["graph"], "model.graph"));
        model.schedulePath = resolve(path, str(m["schedule"], "model.schedule"));
        if (m.contains("sizes")) {
            if (!m["sizes"].is_object())
                fail("model.sizes", "expected an object of integers");
            for (const auto &[k, v] : m["sizes"].items())
                model.sizes[k] = integer(v, "model.sizes." + k, 0, std::int64_t{1} << 40);
        }
        p.model = std::move(model);
    }
    if (j.contains("reference")) {
        const json &r = j["reference"];
        if (r.contains("graph")) {
            allowOnly(r, "reference", {"graph", "sizes", "tensors", "inputs", "carried", "unchecked"});
            PlanCpuReference cpu;
            cpu.graphPath = resolve(path, str(r["graph"], "reference.graph"));
            if (r.contains("sizes")) {
                if (!r["sizes"].is_object())
                    fail("reference.sizes", "expected an object of integers");
                for (const auto &[k, v] : r["sizes"].items())
                    cpu.sizes[k] = integer(v, "reference.sizes." + k, 0, std::int64_t{1} << 40);
            }
            if (r.contains("tensors"))
                cpu.tensorForBuffer = stringMap(r["tensors"], "reference.tensors");
            if (r.contains("inputs"))
                cpu.inputTensorForBuffer = stringMap(r["inputs"], "reference.inputs");
            if (r.contains("carried"))
                for (const std::string &t : strings(r["carried"], "reference.carried"))
                    cpu.carriedTensors.insert(t);
            if (r.contains("unchecked"))
                for (const std::string &b : strings(r["unchecked"], "reference.unchecked"))
                    cpu.uncheckedBuffers.insert(b);
            p.cpuReference = std::move(cpu);
        } else {
            allowOnly(r, "reference", {"source", "defines", "buffers", "launches", "map"});
            if (!r.contains("source") || !r.contains("launches"))
                fail("reference",
                     "give \"graph\" (CPU reference) or \"source\" and \"launches\" (the original program)");
            PlanGpuReference gpu;
            gpu.sourcePath = resolve(path, str(r["source"], "reference.source"));
            if (r.contains("defines"))
                gpu.defines = strings(r["defines"], "reference.defines");
            gpu.plan.buffers = r.contains("buffers") ? buffers(r["buffers"], "reference.buffers") : p.plan.buffers;
            gpu.plan.launches = launches(r["launches"], "reference.launches");
            if (r.contains("map"))
                gpu.bufferMap = stringMap(r["map"], "reference.map");
            p.gpuReference = std::move(gpu);
        }
    }
    return p;
}

SourceLocation locate(const std::string &text, std::size_t byte, const std::string &file)
{
    SourceLocation loc{file, 1, 1};
    for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++loc.line;
            loc.column = 1;
        } else {
            ++loc.column;
        }
    }
    return loc;
}

Result<std::string> readText(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(ErrorKind::Io, "cannot read " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Result<cuda::CompileResult> compileFor(const std::string &path, const std::vector<std::string> &defines,
                                       const std::string &arch)
{
    auto source = readText(path);
    if (!source)
        return source.error();
    cuda::CompileOptions co;
    co.arch = arch;
    co.fileName = path;
    co.defines = defines;
    auto result = cuda::compileProgram(*source, co);
    // With a driver present NVRTC may take the CUBIN from the CUDA compute cache and then runs no
    // ptxas: the log has no resource report and `kernels` is empty. The PTX always names them.
    if (result && result->kernels.empty())
        result->kernels = kernelsFromPtx(result->ptx, arch);
    return result;
}

} // namespace

Result<PlanFile> parsePlanFile(const std::string &text, const std::string &path)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error &e) {
        // "[json.exception.parse_error.101] parse error at line 4, column 11: syntax error ...":
        // the location goes into SourceLocation, the message keeps the reason.
        std::string what = e.what();
        if (auto pos = what.find(": ", what.find("parse error")); pos != std::string::npos)
            what = what.substr(pos + 2);
        return makeError(ErrorKind::Parse, "invalid JSON: " + what, locate(text, e.byte, path));
    }
    try {
        return parse(j, path);
    } catch (const PlanError &e) {
        return makeError(ErrorKind::Parse, e.what(), SourceLocation{path, 0, 0});
    }
}

std::vector<cuda::KernelResources> kernelsFromPtx(const std::string &ptx, const std::string &arch)
{
    static const std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*))");
    std::vector<cuda::KernelResources> kernels;
    for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry); it != std::sregex_iterator(); ++it) {
        cuda::KernelResources k;
        k.mangledName = (*it)[1];
        k.name = cuda::shortKernelName(k.mangledName);
        k.arch = arch;
        kernels.push_back(std::move(k));
    }
    return kernels;
}

Status resolveKernelNames(LaunchPlan &plan, const std::vector<cuda::KernelResources> &kernels)
{
    for (auto &l : plan.launches) {
        if (l.isLibraryCall())
            continue;
        std::vector<const cuda::KernelResources *> matches;
        for (const auto &k : kernels) {
            if (k.mangledName == l.kernel) {
                matches = {&k};
                break;
            }
            if (k.name == l.kernel)
                matches.push_back(&k);
        }
        if (matches.empty()) {
            std::string known;
            for (const auto &k : kernels)
                known += (known.empty() ? "" : ", ") + k.name;
            return makeError(ErrorKind::InvalidArgument,
                             "no kernel '" + l.kernel + "' in the program (it has: " + known + ")");
        }
        if (matches.size() > 1) {
            std::string names;
            for (const auto *k : matches)
                names += (names.empty() ? "" : ", ") + k->mangledName;
            return makeError(ErrorKind::InvalidArgument,
                             "kernel '" + l.kernel + "' is overloaded; give the mangled name (" + names + ")");
        }
        l.kernel = matches.front()->mangledName;
    }
    return Ok{};
}

Result<RunRequest> buildRunRequest(const PlanFile &plan, const std::string &arch)
{
    RunRequest request;
    Job &job = request.job;
    job.plan = plan.plan;
    if (!plan.sourcePath.empty()) {
        auto compiled = compileFor(plan.sourcePath, plan.defines, arch);
        if (!compiled)
            return compiled.error();
        job.module = std::move(compiled->cubin);
        if (auto st = resolveKernelNames(job.plan, compiled->kernels); !st)
            return st.error();
    }
    job.measure = plan.measure;
    job.precision = plan.precision;
    job.deadlineMs = plan.deadlineMs;
    if (plan.seed) {
        job.seed = *plan.seed;
        job.fixedSeed = true;
    }
    if (plan.gpuReference) {
        auto ref = compileFor(plan.gpuReference->sourcePath, plan.gpuReference->defines, arch);
        if (!ref)
            return ref.error();
        GpuReference g;
        g.module = std::move(ref->cubin);
        g.plan = plan.gpuReference->plan;
        g.bufferMap = plan.gpuReference->bufferMap;
        if (auto st = resolveKernelNames(g.plan, ref->kernels); !st)
            return makeError(ErrorKind::InvalidArgument, "reference: " + st.error().message);
        job.reference = std::move(g);
    }
    if (plan.cpuReference) {
        auto text = readText(plan.cpuReference->graphPath);
        if (!text)
            return text.error();
        auto lifted = frontend::liftFile(*text, plan.cpuReference->graphPath);
        if (!lifted)
            return lifted.error();
        CpuReference cpu;
        cpu.graph = lifted->graph;
        cpu.sizes = lifted->sizes;
        for (const auto &[name, value] : plan.cpuReference->sizes)
            cpu.sizes[name] = value;
        cpu.tensorForBuffer = plan.cpuReference->tensorForBuffer;
        cpu.inputTensorForBuffer = plan.cpuReference->inputTensorForBuffer;
        cpu.carriedTensors = plan.cpuReference->carriedTensors;
        cpu.uncheckedBuffers = plan.cpuReference->uncheckedBuffers;
        request.cpuReference = std::move(cpu);
    }
    return request;
}

} // namespace stitch::runner
