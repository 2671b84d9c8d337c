#include "core/agents/Checkpoints.h"

#include "core/agents/Features.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace stitch::agents {

namespace fs = std::filesystem;

namespace {

int smNumber(const std::string &arch)
{
    try {
        return arch.rfind("sm_", 0) == 0 ? std::stoi(arch.substr(3)) : 0;
    } catch (const std::exception &) {
        return 0;
    }
}

std::vector<fs::path> searchDirs()
{
    std::vector<fs::path> dirs;
#ifdef STITCHCUDA_RESOURCE_DIR
    dirs.emplace_back(fs::path(STITCHCUDA_RESOURCE_DIR) / "agents");
#endif
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        dirs.push_back(exe.parent_path().parent_path() / "share" / "stitchcuda" / "agents");
    return dirs;
}

} // namespace

std::optional<std::string> findCheckpoint(const std::string &arch, std::string *note)
{
    if (const char *env = std::getenv("STITCHCUDA_AGENTS"); env && *env) {
        if (note)
            *note = "from STITCHCUDA_AGENTS";
        return std::string(env);
    }
    const int want = smNumber(arch);
    std::optional<std::string> best;
    int bestDistance = 1 << 30, bestSm = 0;
    for (const auto &dir : searchDirs()) {
        std::error_code ec;
        for (const auto &entry : fs::directory_iterator(dir, ec)) {
            if (entry.path().extension() != ".agents")
                continue;
            const int sm = smNumber(entry.path().stem().string());
            const int distance = std::abs(sm - want);
            if (sm > 0 && distance < bestDistance) {
                best = entry.path().string();
                bestDistance = distance;
                bestSm = sm;
            }
        }
        if (best)
            break;
    }
    if (best && note)
        *note = bestDistance == 0 ? "trained for " + arch
                                  : "trained for sm_" + std::to_string(bestSm) + ", the nearest to " + arch;
    return best;
}

Result<LoadedAgents> loadAgents(const std::string &path, const std::string &arch)
{
    LoadedAgents out;
    out.path = path;
    if (out.path.empty()) {
        auto found = findCheckpoint(arch, &out.note);
        if (!found)
            return makeError(ErrorKind::Io, "no trained agents found for " + arch +
                                                " (looked in resources/agents; train with `stitchcuda train`)");
        out.path = *found;
    } else {
        out.note = "from " + path;
    }
    auto nets = AgentNetworks::load(out.path, observationSize());
    if (!nets.ok())
        return nets.error();
    // The observation layout must be this build's, key for key.
    try {
        const auto meta = nlohmann::json::parse((*nets)->metadata());
        if (meta.contains("observation") && meta["observation"].get<std::string>() != observationSchema())
            return makeError(ErrorKind::Parse, out.path + ": its observation layout differs from this build's "
                                                          "(the decision table changed): retrain with `stitchcuda train`");
    } catch (const nlohmann::json::exception &) {
        return makeError(ErrorKind::Parse, out.path + ": its metadata is not JSON");
    }
    out.networks = std::move(*nets);
    return out;
}

} // namespace stitch::agents
