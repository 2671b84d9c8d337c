#pragma once
// The kernel generators, one per strategy, and what they hand to the program generator.
//   GroupAnalysis + KernelGroup decisions -> generate*Kernel -> KernelCode -> Program.cpp

#include "core/arch/ArchDatabase.h"
#include "core/codegen/CudaExpr.h"
#include "core/ir/Graph.h"
#include "core/schedule/GroupAnalysis.h"
#include "core/schedule/Schedule.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace stitch::codegen {

/// One kernel parameter: a tensor pointer or an int size.
struct KernelParam {
    std::string name;        ///< C identifier
    bool tensor = false;
    ir::TensorId tensorId = -1;
    ir::DType dtype = ir::DType::I32;
    bool written = false;    ///< pointer to non-const
    std::string sizeVar;     ///< for sizes: the IR size variable
    std::string scratch;     ///< for workspace pointers (tensorId -1): the scratch buffer's name (dtype: its elements)
};

/// Device memory a kernel needs that is not a tensor of the graph (split-K and stream-K partial
/// sums, stream-K's arrival flags).
struct ScratchBuffer {
    std::string name;
    ir::Expr elements;       ///< elements of `dtype`, over size variables
    ir::DType dtype = ir::DType::F32;
    bool zeroed = false;     ///< must hold zeros before the first launch (the kernel restores them)
};

/// What a kernel does for its group: the group's own kernel, split K's second kernel (sums the
/// partials, applies the epilogue) or transpose_b=on's pass before the GEMM (writes B transposed
/// and rounded to TF32). The rubric replays each role's own streams.
enum class KernelRole { Main, SplitKSum, TransposeB };

/// A generated kernel and how to launch it.
struct KernelCode {
    std::string name;                  ///< extern "C" name
    std::string source;                ///< the __global__ function (and any helpers it needs first)
    std::vector<KernelParam> params;
    std::array<ir::Expr, 3> grid;      ///< over size variables
    std::array<int, 3> block = {1, 1, 1};
    int dynamicSharedBytes = 0;
    int clusterSize = 1;               ///< blocks per cluster (compiled into the kernel with __cluster_dims__)
    std::vector<ScratchBuffer> scratch;
    KernelRole role = KernelRole::Main;
};

/// What every generator receives.
struct GenContext {
    const ir::Graph &graph;
    const schedule::GroupAnalysis &analysis;
    const schedule::KernelGroup &group;
    const ir::SizeBindings &sizes;
    std::vector<ir::TensorId> wide;    ///< tensors needing 64-bit indices
    std::string kernelName;
    const ArchLimits &arch;            ///< the target (the same figures the legality rules read)
};

KernelCode generateGenericKernel(const GenContext &ctx);
KernelCode generateElementwiseKernel(const GenContext &ctx);
KernelCode generateRowKernel(const GenContext &ctx);
/// One kernel, or with split_k > 1 the partial-product kernel and the kernel that sums the
/// partials and applies the epilogue (stream_k=on: one kernel; a shared tile's last block to arrive sums it).
std::vector<KernelCode> generateGemmKernels(const GenContext &ctx);

// Shared pieces of the generators (Kernels.cpp).
/// Parameters: every tensor read from memory (const), then every stored tensor, then the size
/// variables the kernel uses, in the graph's order.
std::vector<KernelParam> kernelParams(const GenContext &ctx);
/// "const float *__restrict__ A, float *__restrict__ C, int M"
std::string paramList(const std::vector<KernelParam> &params);
/// The comment block naming the ops and the decisions that shaped the kernel.
std::string headerComment(const GenContext &ctx);
/// ir::Expr for ceil(a / b).
ir::Expr ceilDivExpr(const ir::Expr &a, int b);
/// Replaces reads of group-local tensors by their producer's body (recomputed where used).
/// `point` maps the reader's index expressions; returns nullopt for other reads.
/// The int floor-division helper (stitch_floordiv) generated kernels call for `//` on integers.
std::string floorDivHelperSource();
std::optional<std::string> inlineLocalRead(const GenContext &ctx, const ir::Expr &read, const ExprScope &scope);

} // namespace stitch::codegen
