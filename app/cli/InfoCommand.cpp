#include "Commands.h"

#include "core/arch/ArchDatabase.h"
#include "core/cuda/DriverApi.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/cuda/SourceCompiler.h"
#include "core/frontend/CudaSourceIndex.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace stitch::cli {

bool readFile(const std::string &path, std::string &out)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::cerr << "stitchcuda: cannot read " << path << ": no such file or not readable\n";
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

int runInfo(const InfoOptions &options)
{
    const auto nv = cuda::nvrtcVersion();
    const auto archs = cuda::supportedArchitectures();
    const auto &db = ArchDatabase::builtin();
    auto driver = cuda::DriverApi::load();
    Result<std::vector<cuda::DeviceInfo>> devices =
        driver ? (*driver)->devices() : Result<std::vector<cuda::DeviceInfo>>(driver.error());

    if (options.json) {
        nlohmann::json j;
        j["version"] = STITCHCUDA_VERSION;
        j["nvrtc"] = std::to_string(nv.major) + "." + std::to_string(nv.minor);
        j["nvrtcArchitectures"] = archs;
        j["cudaInclude"] = cuda::toolkitIncludeDirs();
        j["treeSitter"] = frontend::treeSitterVersionInfo();
        nlohmann::json known = nlohmann::json::array();
        for (const auto &a : db.architectures())
            known.push_back(a.name);
        j["archDatabase"] = known;
        if (driver) {
            j["driver"] = {{"version", (*driver)->driverVersion()}, {"library", (*driver)->libraryPath()}};
        } else {
            j["driver"] = nullptr;
        }
        j["gpus"] = nlohmann::json::array();
        if (devices) {
            for (const auto &d : *devices)
                j["gpus"].push_back({{"ordinal", d.ordinal}, {"name", d.name}, {"arch", d.arch()},
                                     {"multiprocessors", d.multiprocessors}, {"memoryBytes", d.totalMemoryBytes},
                                     {"l2Bytes", d.l2CacheBytes}, {"clockKHz", d.clockRateKHz},
                                     {"sharedPerBlockOptin", d.sharedMemoryPerBlockOptin}});
        } else {
            j["noGpuReason"] = devices.error().message;
        }
        std::cout << j.dump(2) << "\n";
        return 0;
    }

    std::cout << "StitchCUDA " << STITCHCUDA_VERSION << "\n";
    std::cout << "NVRTC        " << nv.major << "." << nv.minor << " (targets";
    for (const auto &a : archs)
        std::cout << " " << a;
    std::cout << ")\n";
    std::cout << "CUDA headers ";
    for (const auto &d : cuda::toolkitIncludeDirs())
        std::cout << d << " ";
    std::cout << "\ntree-sitter  " << frontend::treeSitterVersionInfo() << "\n";
    std::cout << "Arch DB      ";
    for (const auto &a : db.architectures())
        std::cout << a.name << " ";
    std::cout << "(" << db.gpus().size() << " GPU models)\n";
    if (!driver) {
        std::cout << "Driver       none\nGPUs         none (no GPU: " << driver.error().message << ")\n";
        return 0;
    }
    const int v = (*driver)->driverVersion();
    std::cout << "Driver       CUDA " << v / 1000 << "." << (v % 1000) / 10 << " (" << (*driver)->libraryPath() << ")\n";
    if (!devices) {
        std::cout << "GPUs         none (no GPU: " << devices.error().message << ")\n";
        return 0;
    }
    if (devices->empty())
        std::cout << "GPUs         none (no GPU: the driver reports no device)\n";
    for (const auto &d : *devices) {
        char line[512];
        std::snprintf(line, sizeof line, "GPU %d        %s, %s, %d SMs, %.1f GiB, L2 %.0f MiB, %.0f MHz, smem/block %d KiB\n",
                      d.ordinal, d.name.c_str(), d.arch().c_str(), d.multiprocessors,
                      static_cast<double>(d.totalMemoryBytes) / (1024.0 * 1024 * 1024), d.l2CacheBytes / (1024.0 * 1024),
                      d.clockRateKHz / 1000.0, d.sharedMemoryPerBlockOptin / 1024);
        std::cout << line;
        if (!db.gpu(d.name) && !db.arch(d.arch()))
            std::cout << "             (" << d.arch() << " is not in the architecture database)\n";
    }
    return 0;
}

} // namespace stitch::cli
