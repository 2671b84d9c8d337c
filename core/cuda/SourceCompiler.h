#pragma once
// A whole .cu program (host + device code) -> device-only text -> NVRTC.
//   .cu text -> frontend::deviceTranslationUnit -> cuda::compile -> CompileResult
// This is what the CLI's `compile` and the studio call: users open complete programs, NVRTC
// compiles device code only.

#include "core/cuda/NvrtcCompiler.h"

#include <string>

namespace stitch::cuda {

/// Include directories for NVRTC: the CUDA toolkit's headers (cuda_fp16.h, mma.h, cuda/std/...),
/// from $STITCHCUDA_CUDA_INCLUDE when set, otherwise the toolkit found at build time.
std::vector<std::string> toolkitIncludeDirs();

/// The architecture to compile `source` for on `arch`: sm_90a where the source needs the
/// architecture-specific sm_90 instructions (wgmma, as math=tf32_wgmma generates; such a kernel
/// keeps them behind __CUDA_ARCH_FEAT_SM90_ALL and traps without it), else `arch`. An sm_90a CUBIN
/// runs on every sm_90 GPU.
std::string archForSource(const std::string &source, const std::string &arch);

/// Compiles the device code of a complete CUDA program (for archForSource(source, options.arch)). `options.fileName`'s folder is added to
/// the include path so "local.cuh" includes resolve. Notes about removed host code are appended to
/// the result's diagnostics.
Result<CompileResult> compileProgram(const std::string &source, CompileOptions options);

} // namespace stitch::cuda
