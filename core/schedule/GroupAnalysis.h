#pragma once
// Which ops can share a kernel, and what a kernel group looks like to the code generators.
//   Graph + group (op names, strategy) -> analyzeGroup -> GroupAnalysis -> Space (legality), codegen
//   Graph -> fuseGreedy -> the default fusion (kernel groups in launch order)
// Each strategy has a pattern; a group that does not match gets an error saying which op breaks
// it and why, so the agents and the studio can show why a fusion was not allowed.

#include "core/common/Result.h"
#include "core/ir/Graph.h"
#include "core/schedule/Schedule.h"

#include <functional>
#include <string>
#include <vector>

namespace stitch::schedule {

struct GroupAnalysis {
    Strategy strategy = Strategy::Generic;
    std::vector<const ir::ComputeOp *> ops;  ///< in program order; pointers into the graph
    std::vector<ir::TensorId> reads;         ///< tensors the kernel reads from global memory
    std::vector<ir::TensorId> stored;        ///< tensors it writes (outputs, or read by later kernels)
    std::vector<ir::TensorId> local;         ///< computed and consumed on chip only
    std::vector<ir::Expr> domain;            ///< gemm [M, N]; row_reduction [rows..., C]; elementwise/generic: the op domain

    // gemm: C[i, j] = sum(k) A[..] * B[..] (+ init), then element-wise epilogue ops over [i, j]
    ir::Expr k;                              ///< reduction extent
    ir::TensorId a = -1, b = -1;
    bool aRowMajor = true;                   ///< A read as A[i, k] (true) or A[k, i]
    bool bRowMajor = true;                   ///< B read as B[k, j] (true) or B[j, k]

    // row_reduction
    int rowRank = 0;                         ///< leading row dimensions; the last domain entry is the row length
    std::vector<ir::TensorId> rowInputs;     ///< inputs read along the row at [rows..., c]: cacheable

    bool isLocal(ir::TensorId id) const;
    bool isStored(ir::TensorId id) const;
};

/// Checks that the named ops (program order) fit the strategy and classifies their tensors.
/// InvalidArgument naming the op and the reason when they do not.
Result<GroupAnalysis> analyzeGroup(const ir::Graph &graph, const std::vector<std::string> &ops, Strategy strategy);

/// A producer/consumer edge the fusion walk meets: `op` reads the group being grown and its other
/// inputs are ready, so it could join the group's kernel.
struct FusionCandidate {
    std::vector<std::string> groupOps; ///< the group so far, in program order
    Strategy groupStrategy = Strategy::Generic;
    std::string op;                    ///< the op that could join
    bool fits = false;                 ///< the group with `op` still fits a strategy
    Strategy strategyIfFused = Strategy::Generic;
    std::string why;                   ///< when it does not fit: the analysis' reason
};
/// Whether to fuse a candidate that fits (called for the ones that do not fit too, whose answer is
/// ignored, so that callers can record them).
using FusionDecider = std::function<bool(const FusionCandidate &)>;

/// The fusion walk: takes the ops in program order, starts a group with the most specific strategy
/// the op fits (gemm, row_reduction, elementwise, generic) and offers each following op that reads
/// the group (and whose other inputs are ready) to `decide` while the group still fits. Names
/// kernels after their ops, unique and identifier-safe.
std::vector<KernelGroup> fuseGroups(const ir::Graph &graph, const FusionDecider &decide);

/// The default fusion: fuseGroups fusing every candidate that fits.
std::vector<KernelGroup> fuseGreedy(const ir::Graph &graph);

} // namespace stitch::schedule
