#pragma once
// Where the agents' trained weights come from.
//   --checkpoint FILE | $STITCHCUDA_AGENTS | resources/agents/ARCH.agents (source tree, or
//   ../share/stitchcuda/agents beside the executable) -> loadAgents -> AgentNetworks
// One checkpoint per architecture it was trained for; an architecture without its own uses the
// nearest one it has (sm_90's serves sm_89 and sm_100, said so).

#include "core/agents/learning/Networks.h"
#include "core/common/Result.h"

#include <memory>
#include <optional>
#include <string>

namespace stitch::agents {

struct LoadedAgents {
    std::unique_ptr<AgentNetworks> networks;
    std::string path;
    std::string note; ///< "trained for sm_90" or "trained for sm_90, the nearest to sm_89"
};

/// The shipped checkpoint for `arch`, or the nearest architecture's; nullopt when none is found.
std::optional<std::string> findCheckpoint(const std::string &arch, std::string *note = nullptr);
/// Loads `path` (empty: findCheckpoint). A missing explicit file, a damaged one or one whose
/// observation layout differs from this build's is an error naming the file.
Result<LoadedAgents> loadAgents(const std::string &path, const std::string &arch);

} // namespace stitch::agents
