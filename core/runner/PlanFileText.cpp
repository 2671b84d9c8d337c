// The plan file's writer (docs/RUNNER.md): members in the format's order, paths relative to the plan.
#include "core/runner/PlanFile.h"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace stitch::runner {

namespace {

/// Written members keep the format's order (schema first), not the alphabet.
using ojson = nlohmann::ordered_json;

/// `target` relative to the folder of `planPath` when it lies under it, else absolute.
std::string relativeTo(const std::string &planPath, const std::string &target)
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::absolute(fs::path(planPath)).parent_path().lexically_normal();
    const fs::path abs = fs::absolute(fs::path(target)).lexically_normal();
    const fs::path rel = abs.lexically_relative(dir);
    if (!rel.empty() && *rel.begin() != "..")
        return rel.generic_string();
    return abs.generic_string();
}

ojson bufferJson(const BufferSpec &b)
{
    ojson j = {{"name", b.name}, {"dtype", ir::dtypeName(b.dtype)}};
    if (b.shape.empty())
        j["count"] = b.count;
    else
        j["shape"] = b.shape;
    j["role"] = bufferRoleName(b.role);
    const BufferInit defaults;
    if (b.init.kind == BufferInit::Kind::CopyOf || b.init.low != defaults.low || b.init.high != defaults.high) {
        ojson init = {{"kind", initKindName(b.init.kind)}};
        if (b.init.low != defaults.low || b.init.high != defaults.high)
            init["range"] = {b.init.low, b.init.high};
        if (b.init.kind == BufferInit::Kind::CopyOf)
            init["of"] = b.init.source;
        j["init"] = init;
    } else if (b.init.kind != BufferInit::Kind::Default) {
        j["init"] = initKindName(b.init.kind);
    }
    return j;
}

// The job JSON's members; those at their defaults (math fp32, batch 1, no transposes, packed
// strides) are left out.
ojson libraryCallJson(const LibraryCall &call)
{
    ojson j = {{"library", libraryName(call.routine)}, {"routine", routineName(call.routine)}};
    if (call.math != LibraryCall::Math::FP32)
        j["math"] = libraryMathName(call.math);
    j["a"] = call.a;
    j["b"] = call.b;
    j["c"] = call.c;
    j["m"] = call.m;
    j["n"] = call.n;
    j["k"] = call.k;
    if (call.batch != 1)
        j["batch"] = call.batch;
    if (call.transA)
        j["transA"] = true;
    if (call.transB)
        j["transB"] = true;
    for (auto [key, stride] :
         {std::pair{"strideA", call.strideA}, std::pair{"strideB", call.strideB}, std::pair{"strideC", call.strideC}})
        if (stride)
            j[key] = *stride;
    return j;
}

ojson launchesJson(const std::vector<KernelLaunch> &launches)
{
    ojson out = ojson::array();
    for (const auto &l : launches) {
        if (l.library) {
            out.push_back(libraryCallJson(*l.library));
            continue;
        }
        ojson args = ojson::array();
        for (const auto &a : l.args) {
            if (a.isBuffer()) {
                args.push_back(std::get<std::string>(a.value));
                continue;
            }
            const auto &s = std::get<ScalarArg>(a.value);
            if (ir::isFloat(s.dtype))
                args.push_back({{ir::dtypeName(s.dtype), s.floatValue}});
            else
                args.push_back({{ir::dtypeName(s.dtype), s.intValue}});
        }
        ojson lj = {{"kernel", l.kernel},
                    {"grid", {l.config.gridX, l.config.gridY, l.config.gridZ}},
                    {"block", {l.config.blockX, l.config.blockY, l.config.blockZ}}};
        if (l.config.dynamicSharedBytes)
            lj["sharedBytes"] = l.config.dynamicSharedBytes;
        lj["args"] = args;
        out.push_back(std::move(lj));
    }
    return out;
}

ojson sizesJson(const ir::SizeBindings &sizes)
{
    ojson j = ojson::object();
    for (const auto &[name, value] : sizes)
        j[name] = value;
    return j;
}

} // namespace

std::string planFileText(const PlanFile &p)
{
    ojson j;
    j["schema"] = kPlanSchema;
    if (!p.sourcePath.empty())
        j["source"] = relativeTo(p.path, p.sourcePath);
    if (!p.defines.empty())
        j["defines"] = p.defines;
    j["buffers"] = ojson::array();
    for (const auto &b : p.plan.buffers)
        j["buffers"].push_back(bufferJson(b));
    j["launches"] = launchesJson(p.plan.launches);
    if (p.cpuReference) {
        ojson r = {{"graph", relativeTo(p.path, p.cpuReference->graphPath)}};
        if (!p.cpuReference->sizes.empty())
            r["sizes"] = sizesJson(p.cpuReference->sizes);
        if (!p.cpuReference->tensorForBuffer.empty())
            r["tensors"] = p.cpuReference->tensorForBuffer;
        if (!p.cpuReference->inputTensorForBuffer.empty())
            r["inputs"] = p.cpuReference->inputTensorForBuffer;
        if (!p.cpuReference->carriedTensors.empty())
            r["carried"] = p.cpuReference->carriedTensors;
        if (!p.cpuReference->uncheckedBuffers.empty())
            r["unchecked"] = p.cpuReference->uncheckedBuffers;
        j["reference"] = r;
    } else if (p.gpuReference) {
        ojson r = {{"source", relativeTo(p.path, p.gpuReference->sourcePath)}};
        if (!p.gpuReference->defines.empty())
            r["defines"] = p.gpuReference->defines;
        r["buffers"] = ojson::array();
        for (const auto &b : p.gpuReference->plan.buffers)
            r["buffers"].push_back(bufferJson(b));
        r["launches"] = launchesJson(p.gpuReference->plan.launches);
        if (!p.gpuReference->bufferMap.empty())
            r["map"] = p.gpuReference->bufferMap;
        j["reference"] = r;
    }
    if (p.model)
        j["model"] = {{"graph", relativeTo(p.path, p.model->graphPath)},
                      {"schedule", relativeTo(p.path, p.model->schedulePath)},
                      {"sizes", sizesJson(p.model->sizes)}};
    j["precision"] = precisionName(p.precision);
    const MeasureOptions defaults;
    ojson m = ojson::object();
    auto unlessDefault = [&m](const char *key, const auto &value, const auto &fallback) {
        if (value != fallback)
            m[key] = value;
    };
    unlessDefault("verify", p.measure.verify, defaults.verify);
    unlessDefault("time", p.measure.time, defaults.time);
    unlessDefault("warmup", p.measure.warmup, defaults.warmup);
    unlessDefault("repeats", p.measure.repeats, defaults.repeats);
    unlessDefault("flushL2", p.measure.flushL2, defaults.flushL2);
    unlessDefault("profile", p.measure.profile, defaults.profile);
    unlessDefault("metrics", p.measure.metrics, defaults.metrics);
    unlessDefault("metricsKernels", p.measure.metricsKernels, defaults.metricsKernels);
    unlessDefault("settleMs", p.measure.settleMs, defaults.settleMs);
    if (!m.empty())
        j["measure"] = m;
    if (p.deadlineMs != PlanFile{}.deadlineMs)
        j["deadlineMs"] = p.deadlineMs;
    if (p.seed)
        j["seed"] = *p.seed;
    return j.dump(2) + "\n";
}

} // namespace stitch::runner
