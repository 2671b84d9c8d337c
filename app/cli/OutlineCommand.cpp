#include "Commands.h"

#include "core/frontend/CudaSourceIndex.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>

namespace stitch::cli {

int runOutline(const OutlineOptions &options)
{
    std::string source;
    if (!readFile(options.file, source))
        return 2;
    const auto index = frontend::indexCudaSource(source, options.file);
    // Grammar limits are warnings (nvcc/NVRTC is the authority on syntax); only a file that was
    // not parsed at all (too large, past its time budget) fails the command.
    const bool failed = std::any_of(index.syntaxErrors.begin(), index.syntaxErrors.end(),
                                    [](const Diagnostic &d) { return d.severity == Severity::Error; });
    if (options.json) {
        nlohmann::json j;
        j["file"] = options.file;
        j["kernels"] = nlohmann::json::array();
        for (const auto &k : index.kernels) {
            nlohmann::json params = nlohmann::json::array();
            for (const auto &p : k.parameters)
                params.push_back({{"type", p.type}, {"name", p.name}});
            j["kernels"].push_back({{"name", k.name}, {"qualifier", k.qualifier}, {"line", k.nameLocation.line},
                                    {"column", k.nameLocation.column}, {"endLine", k.range.end.line},
                                    {"parameters", params}, {"sharedMemory", k.hasSharedMemory},
                                    {"syncthreads", k.hasSyncThreads}});
        }
        j["launches"] = nlohmann::json::array();
        for (const auto &l : index.launches)
            j["launches"].push_back({{"kernel", l.kernel}, {"grid", l.grid}, {"block", l.block},
                                     {"line", l.location.line}, {"column", l.location.column}});
        j["syntaxErrors"] = nlohmann::json::array();
        for (const auto &d : index.syntaxErrors)
            j["syntaxErrors"].push_back({{"line", d.location.line}, {"column", d.location.column},
                                         {"severity", d.severity == Severity::Error ? "error" : "warning"},
                                         {"message", d.message}});
        std::cout << j.dump(2) << "\n";
        return failed ? 1 : 0;
    }
    for (const auto &k : index.kernels) {
        std::cout << k.nameLocation.toString() << ": " << k.qualifier << " " << k.name << "(";
        for (std::size_t i = 0; i < k.parameters.size(); ++i)
            std::cout << (i ? ", " : "") << k.parameters[i].type << " " << k.parameters[i].name;
        std::cout << ")" << (k.hasSharedMemory ? " [shared memory]" : "") << "\n";
    }
    for (const auto &l : index.launches)
        std::cout << l.location.toString() << ": launch " << l.kernel << "<<<" << l.grid << ", " << l.block << ">>>\n";
    for (const auto &d : index.syntaxErrors)
        std::cerr << d.toString() << "\n";
    return failed ? 1 : 0;
}

} // namespace stitch::cli
