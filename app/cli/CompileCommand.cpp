#include "Commands.h"

#include "core/arch/ArchDatabase.h"
#include "core/cuda/SourceCompiler.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

namespace stitch::cli {

namespace {

nlohmann::json toJson(const Diagnostic &d)
{
    return {{"severity", severityName(d.severity)}, {"file", d.location.file}, {"line", d.location.line},
            {"column", d.location.column}, {"message", d.message}};
}

bool writeFile(const std::string &path, const char *data, std::size_t size)
{
    std::ofstream out(path, std::ios::binary);
    out.write(data, static_cast<std::streamsize>(size));
    if (!out) {
        std::cerr << "stitchcuda: cannot write " << path << "\n";
        return false;
    }
    return true;
}

std::string occupancyText(const ArchLimits *arch, const cuda::KernelResources &k, int block)
{
    if (!arch)
        return "n/a";
    auto occ = computeOccupancy(*arch, block, k.registers, k.sharedBytes);
    if (!occ)
        return "cannot launch";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%3.0f%% (%s)", occ->occupancy * 100, occ->limiter.c_str());
    return buf;
}

} // namespace

int runCompile(const CompileOptions &options)
{
    std::string source;
    if (!readFile(options.file, source))
        return 2;
    cuda::CompileOptions co;
    co.arch = options.arch;
    co.fileName = options.file;
    auto result = cuda::compileProgram(source, co);
    const ArchLimits *arch = ArchDatabase::builtin().arch(options.arch);

    if (!result) {
        const Error &e = result.error();
        if (options.json) {
            nlohmann::json j;
            j["file"] = options.file;
            j["arch"] = options.arch;
            j["ok"] = false;
            j["error"] = {{"kind", errorKindName(e.kind)}, {"message", e.message}};
            j["diagnostics"] = nlohmann::json::array();
            for (const auto &d : e.diagnostics)
                j["diagnostics"].push_back(toJson(d));
            std::cout << j.dump(2) << "\n";
        } else {
            if (e.diagnostics.empty())
                std::cerr << e.toString() << "\n";
            for (const auto &d : e.diagnostics)
                std::cerr << d.toString() << "\n";
        }
        return e.kind == ErrorKind::Compile ? 1 : 2;
    }

    if (!options.ptxOut.empty() && !writeFile(options.ptxOut, result->ptx.data(), result->ptx.size()))
        return 2;
    if (!options.cubinOut.empty() && !writeFile(options.cubinOut, result->cubin.data(), result->cubin.size()))
        return 2;

    if (options.json) {
        nlohmann::json j;
        j["file"] = options.file;
        j["arch"] = options.arch;
        j["ok"] = true;
        j["compileMs"] = result->compileMs;
        j["ptxBytes"] = result->ptx.size();
        j["cubinBytes"] = result->cubin.size();
        j["kernels"] = nlohmann::json::array();
        for (const auto &k : result->kernels) {
            nlohmann::json kj = {{"name", k.name}, {"mangledName", k.mangledName}, {"registers", k.registers},
                                 {"sharedBytes", k.sharedBytes},
                                 {"constantBytes", k.constantBytes >= 0 ? nlohmann::json(k.constantBytes) : nlohmann::json()},
                                 {"stackFrameBytes", k.stackFrameBytes},
                                 {"spillStoreBytes", k.spillStoreBytes >= 0 ? nlohmann::json(k.spillStoreBytes) : nlohmann::json()},
                                 {"spillLoadBytes", k.spillLoadBytes >= 0 ? nlohmann::json(k.spillLoadBytes) : nlohmann::json()},
                                 {"barriers", k.barriers}};
            if (arch)
                if (auto occ = computeOccupancy(*arch, options.blockSize, k.registers, k.sharedBytes))
                    kj["occupancy"] = {{"blockSize", options.blockSize}, {"value", occ->occupancy},
                                       {"activeBlocksPerSm", occ->activeBlocksPerSm}, {"limiter", occ->limiter}};
            j["kernels"].push_back(kj);
        }
        j["diagnostics"] = nlohmann::json::array();
        for (const auto &d : result->diagnostics)
            j["diagnostics"].push_back(toJson(d));
        std::cout << j.dump(2) << "\n";
        return 0;
    }

    for (const auto &d : result->diagnostics)
        if (d.severity != Severity::Note)
            std::cerr << d.toString() << "\n";
    std::printf("%s: %zu kernel%s for %s, compiled in %.0f ms (PTX %zu bytes, CUBIN %zu bytes)\n\n",
                options.file.c_str(), result->kernels.size(), result->kernels.size() == 1 ? "" : "s",
                options.arch.c_str(), result->compileMs, result->ptx.size(), result->cubin.size());
    std::printf("%-28s %5s %9s %9s %9s %5s  %s\n", "kernel", "regs", "smem [B]", "stack [B]", "spill [B]",
                "bars", ("occupancy @" + std::to_string(options.blockSize) + " threads").c_str());
    for (const auto &k : result->kernels) {
        const std::string spills =
            k.spillStoreBytes < 0 ? "unknown" : std::to_string(k.spillStoreBytes + k.spillLoadBytes);
        std::printf("%-28s %5d %9d %9d %9s %5d  %s\n", k.name.c_str(), k.registers, k.sharedBytes,
                    k.stackFrameBytes, spills.c_str(), k.barriers, occupancyText(arch, k, options.blockSize).c_str());
    }
    return 0;
}

} // namespace stitch::cli
