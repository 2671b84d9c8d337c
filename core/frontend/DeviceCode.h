#pragma once
// A .cu program -> the part NVRTC can compile (device code only), with line numbers unchanged.
//   .cu text + SourceIndex -> deviceTranslationUnit -> NVRTC (core/cuda/SourceCompiler.h)
// NVRTC compiles device code only: host functions (main, launchers) and host-only headers such as
// <cstdio> are blanked out character for character, so every diagnostic still points at the
// user's own line and column.

#include "core/common/Result.h"
#include "core/frontend/CudaSourceIndex.h"

#include <string>
#include <vector>

namespace stitch::frontend {

struct DeviceTranslationUnit {
    std::string source;               ///< same length and line structure as the input
    std::vector<Diagnostic> notes;    ///< what was removed and why (Severity::Note)
};

/// True for headers of the C/C++ standard library and the CUDA runtime API that NVRTC does not
/// provide; device code needs none of them (math functions are NVRTC built-ins).
bool isHostOnlyHeader(const std::string &path);

DeviceTranslationUnit deviceTranslationUnit(const std::string &source, const SourceIndex &index);

} // namespace stitch::frontend
