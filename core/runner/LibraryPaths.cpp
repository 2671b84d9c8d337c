#include "core/runner/LibraryPaths.h"

#include <cstdlib>

namespace stitch::runner {

std::vector<std::string> libraryCandidates(const char *overrideVariable, std::vector<std::string> builtIn)
{
    if (const char *env = std::getenv(overrideVariable); env && *env)
        return {env};
    return builtIn;
}

} // namespace stitch::runner
