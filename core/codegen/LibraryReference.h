#pragma once
// The library reference of a generated program: its GEMM kernels as cuBLAS calls, with the CPU
// interpreter of what cuBLAS computes, so the library can be timed and verified beside the
// program (the studio's Run dock, `stitchcuda run --cublas`).
//   schedule::Problem + Schedule -> cublasReference -> LaunchPlan of LibraryCalls + CpuReference -> Runner

#include "core/common/Result.h"
#include "core/runner/Job.h"
#include "core/runner/Runner.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Space.h"

#include <string>

namespace stitch::codegen {

/// The library reference of a schedule's GEMM kernels: one cuBLAS SGEMM per kernel of the gemm
/// strategy, in launch order, over buffers named as the graph's tensors (so the optimized
/// program's seed draws the same inputs), with the CPU interpreter of what cuBLAS computes (each
/// product alone: a fused epilogue, a reduction's init, is not part of cuBLAS and is not checked).
struct LibraryReference {
    runner::LaunchPlan plan;
    runner::CpuReference reference;
    std::string covers; ///< "G = A W (128x256x64)"
    std::string note;   ///< what the program computes beyond cuBLAS's products; empty when nothing
    double flops = 0;   ///< of every call
    double bytes = 0;   ///< every operand and product once
};
/// InvalidArgument when a GEMM's operands are not packed matrices of the product's sizes.
Result<LibraryReference> cublasReference(const schedule::Problem &problem, const schedule::Schedule &schedule);

} // namespace stitch::codegen
