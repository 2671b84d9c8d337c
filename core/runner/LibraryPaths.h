#pragma once
// Where the worker looks for the NVIDIA libraries it dlopen's (CUPTI, cuBLAS).

#include <string>
#include <vector>

namespace stitch::runner {

/// The paths to try, in order: the value of `overrideVariable` alone when it is set and not empty
/// (the user's choice is never second-guessed), else `builtIn`.
std::vector<std::string> libraryCandidates(const char *overrideVariable, std::vector<std::string> builtIn);

} // namespace stitch::runner
