#pragma once
// From "what one thread does" to "what the launch computes" (phase 1b of the CUDA lifter).
//   KernelEffects -> buildFlatOps: thread indices fused (blockIdx * blockDim + threadIdx -> one
//   variable), guards turned into rectangular domains, pending reductions materialised -> FlatOps
//   FlatOps -> Assembly (buffer shapes, multi-dimensional indices, tensor versions)
// Indices are still flat (one per buffer) here; shapes are decided across all launches later.

#include "core/frontend/cudalift/IndexMath.h"
#include "core/frontend/cudalift/KernelModel.h"
#include "core/ir/ComputeOp.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// A spatial variable of a flat op with its (guard-refined) range [lo, hi).
struct FlatVar {
    std::string name;
    std::string hint;
    ir::Expr lo;
    ir::Expr hi;
};

/// Pseudo tensor ids of intermediates (materialised reductions) until assembly creates tensors.
inline int intermediateTensorId(int op) { return kIntermediateBase - op; }
inline bool isIntermediateTensor(int id) { return id <= kIntermediateBase && id > kIntermediateBase - 1000000; }
inline int intermediateIndex(int id) { return kIntermediateBase - id; }

/// One computation of a launch: writes one buffer at a flat index, or one intermediate tensor
/// indexed by its spatial variables.
struct FlatOp {
    std::string name;
    int buffer = -1;                     ///< written buffer; -1 for an intermediate
    ir::Expr writeIndex;                 ///< buffer ops: flat element index
    std::vector<FlatVar> spatial;        ///< outer first
    ir::Expr partialGuard;               ///< non-rectangular part of the guard; true when none
    std::optional<ir::ReduceKind> reduceKind;
    std::vector<LoopVar> reduceVars;
    ir::Expr init;
    ir::Expr body;
    ir::DType dtype = ir::DType::F32;
    ir::SourceSpan span;
    std::string parameter;               ///< kernel parameter written through (buffer ops)
};

struct LaunchOps {
    std::vector<FlatOp> ops;             ///< producers before consumers
    std::vector<std::string> varOrder;   ///< every variable of the launch, outer first
    std::vector<std::pair<ir::Expr, std::string>> hints; ///< int locals: value -> name, for printing
    std::vector<Diagnostic> notes;
};

/// Turns one launch's per-thread effects into flat ops. Throws LiftRefusal for races, stores the
/// lifter cannot give a domain to, and reads of a buffer the same launch overwrites elsewhere.
LaunchOps buildFlatOps(KernelEffects effects, const LaunchBinding &launch, const std::vector<BufferInfo> &buffers,
                       IndexMath &math);

} // namespace stitch::frontend::cudalift
