#pragma once
// The compile-free register prediction of a SIMT GEMM kernel, a model fitted to NVRTC's counts.
//   KernelGroup (math=simt) -> min(launch-bounds cap, thread_m * thread_n + sum(weight * feature))
// The weights are data: resources/model/registers-sm_90.json, fitted by bench/tools/fit_registers.py
// from the H200 runs' NVRTC register counts and validated on the held-out shapes (docs/RUBRIC.md).
// The schedule space's legality keeps its own conservative estimate (GemmShape::registers); this
// prediction is what the performance model and the occupancy dimension read without a compile.

#include "core/common/Result.h"
#include "core/schedule/Schedule.h"

#include <optional>
#include <string>

namespace stitch::rubric {

struct RegisterModel {
    std::string arch;
    double constant = 0, fragments = 0, blockK = 0, stages = 0, async = 0, vector = 0, streamK = 0, epilogue = 0;
};

/// Reads a `stitchcuda-register-model/1` document; errors name the member.
Result<RegisterModel> parseRegisterModel(const std::string &json);
/// The shipped model (embedded from resources/model/registers-sm_90.json).
const RegisterModel &builtinRegisterModel();

/// Registers per thread of a SIMT GEMM group's main kernel with `threads` threads per block, or
/// nothing when the group is not a SIMT GEMM (tensor cores, rows: their own estimates apply).
std::optional<int> predictGemmRegisters(const RegisterModel &model, const schedule::KernelGroup &group, int threads);

} // namespace stitch::rubric
