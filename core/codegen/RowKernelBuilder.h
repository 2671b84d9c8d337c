#pragma once
// The row_reduction kernel's builder, shared by its two source files: RowKernel.cpp (the phases:
// header, register cache and row steps, reductions, outputs) and RowKernelPasses.cpp (the pieces
// the phases write with: loads, shared-memory staging, element loops, exchanges), plus the
// expression rewrites of RowExprRewrites.cpp.
//   generateRowKernel (Kernels.h) -> RowKernelBuilder(ctx).build() -> KernelCode

#include "core/codegen/CudaExpr.h"
#include "core/codegen/CudaWriter.h"
#include "core/codegen/Kernels.h"
#include "core/schedule/Space.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stitch::codegen::rowkernel {

using ir::Expr;

struct RowPlan {
    int tpr, rpb, vec, cluster, items, steps;
    bool cache, sharedReduce;
    int warpsPerRow() const { return std::max(tpr / 32, 1); }
};

inline std::string str(long long v) { return std::to_string(v); }

/// "((c0_ + 1))" -> "c0_ + 1": the expression without the parentheses that wrap all of it.
std::string stripParens(std::string e);

/// sum(j) f / d with d the same for every j: the divisor, so that the kernel sums f and divides
/// once per row (one division per row instead of one per element).
std::optional<Expr> invariantDivisor(const ir::ComputeOp &op);

/// The body with every float division by a value that is the same for the whole row
/// (softmax's `/ rowSum[i]`) turned into a product with its reciprocal, the variable
/// "%rcpK" for divisors[K]: the kernel computes `1 / rowSum` once per row, before the element
/// loop, instead of a correctly rounded division per element (the product is within 2 ulp of
/// the quotient).
Expr reciprocalDivisions(const Expr &e, const std::string &column, std::vector<Expr> &divisors);

/// e with every subtree equal to `target` replaced by `with`.
Expr replaceEqual(const Expr &e, const Expr &target, const Expr &with);

/// The row kernel of one group, written in phases: the header (helpers, signature, shared memory,
/// the row and its columns), the register cache and the row-step loop, the reductions, the outputs.
/// The members keep the names the phases and helpers share (p: the plan, w: the text, k: the kernel).
class RowKernelBuilder {
public:
    explicit RowKernelBuilder(const GenContext &context);
    /// The kernel: every phase in order.
    KernelCode build();

private:
    const GenContext &ctx;
    const schedule::GroupAnalysis &a;
    const schedule::KernelGroup &g;
    RowPlan p;
    long long cols = 1;
    int threads = 0, stageElems = 0;
    bool vectorLoads = false, stepped = false, prefetch = false, staged = false, online = false;
    bool exactSpan = false, alwaysActive = false;
    // grid=resident: as many blocks (clusters) as the target's GPU holds, walking the rows with the
    // grid's stride (steps_ rows each, from the grid the kernel runs on); bulk_store=on: the outputs
    // leave through out_ by cp.async.bulk.
    bool resident = false, bulk = false;
    int residentGroups = 0;
    // exchange=push: the cluster's blocks meet by st.async pushes to mbarriers, not a cluster
    // barrier (rows of a block sync by named barriers); column_inputs=shared: the block's span of
    // the per-column vectors in shared memory (columnInputs); prefetch=bulk: the last pfItems items
    // of the next row by cp.async.bulk, the rest loaded in the output loop.
    bool push = false, columnsShared = false, bulkPrefetch = false;
    int pfItems = 0;
    long long pfSlots = 0; // prefetch=bulk: floats per row of the block and row input (pfItems x tpr x vec)
    std::vector<ir::TensorId> columnInputs;
    schedule::RowSharedLayout smem;
    // The row-step loop's bound, the rows between steps and the last step (where a cluster block
    // arrives early at the barrier that ends the kernel).
    std::string stepsText, strideText, lastStepText;
    std::string slot, acc, pairCombine, rows, vecType;
    ir::DType accType = ir::DType::F32;
    static constexpr const char *lanes[] = {"x", "y", "z", "w"};
    KernelCode k;
    CudaWriter w;
    ExprScope base;
    std::vector<const ir::ComputeOp *> rowOps;
    // Per-column vectors (gamma[j], w[j]: 1-D, one element per column) read at the column: one
    // vector load per thread and vector, issued at the first use in the pass.
    std::set<ir::TensorId> columnLoaded;
    // Row values read by later passes; combine=online's sum pass reads the thread's own maximum.
    std::map<ir::TensorId, std::string> rowValueName;
    // The element-wise ops whose results leave the kernel, with divisions by row values as
    // products with the reciprocal.
    std::vector<const ir::ComputeOp *> stored;
    std::vector<Expr> storedBodies;
    std::vector<std::vector<Expr>> storedDivisors; // per stored op: the row-invariant divisors, "%rcpK"
    std::string summandCache;

    // The phases (RowKernel.cpp).
    /// The outputs' bodies (reciprocals of row-invariant divisors) and the summand cache.
    void planOutputs();
    /// The kernel's comment, helpers and signature, its shared memory, the row and its columns.
    void header();
    /// Shared memory set up once per block: the column inputs' spans (column_inputs=shared), the
    /// mbarriers of exchange=push and prefetch=bulk, and the first row's prefetch.
    void sharedSetup();
    /// The register cache of the row inputs, the first row's loads and the row-step loop's head.
    void cacheAndSteps();
    /// Each reduction: its pass over the row, the exchange across lanes, warps and the cluster.
    void reductions();
    /// Element-wise results that leave the kernel, once every row value is known.
    void outputs();
    /// The prefetched row's rotation, the end of the row-step loop and of the kernel, the grid.
    void finish();

    // What the phases write with (RowKernelPasses.cpp).
    int rowOpIndex(ir::TensorId id);
    // The row decomposition (r0_, r1_, ...) and the row's flat offset, for the row in row_.
    void rowVariables();
    void columnRange();
    void loadVector(const std::string &name, const std::string &dst, const std::string &dstBase, ir::DType t,
                    const std::string &rowBase = "rowBase_");
    // The loop over a thread's cached items (it_, first column c0_) and the test of `guard` and,
    // unless the caller knows every item lies in the span, of the column; the caller closes both
    // scopes. Tests that cannot fail are left out (exactSpan, alwaysActive).
    /// `from` and `to` bound the items (default: all of them). With `guardOutside` the guard (the
    /// same for every item) opens a scope around the loop and the column test `continue`s; without
    /// it both are tested per item (the load loops: tested outside, ptxas spilled a small row
    /// kernel's loads, run 21).
    void openItems(const std::string &guard, bool columnTest = true, const std::string &from = "0",
                   const std::string &to = "", bool guardOutside = false);
    // Every load of a thread's cached elements of one row, issued together before any use.
    void loadRow(const std::string &prefix, const std::string &guard, const std::string &rowBase,
                 const std::string &from = "0", const std::string &to = "");
    // prefetch=bulk: one thread of the row copies the last pfItems items of every thread of row
    // `row` into its slots (pf_NAME_), counted on the row's mbarrier.
    void issuePrefetch(const std::string &row);
    // The barrier of one row's threads: a named barrier per row of the block with exchange=push and
    // several rows per block (the rows run independently), else __syncthreads().
    std::string rowBarrier() const;
    // exchange=push: warp 0 of the row pushes the block's partial pv of reduction ri into every
    // cluster block's slot; every thread waits for the cluster's and combines them in rank order.
    void pushExchange(std::size_t ri, ir::ReduceKind kind, const std::string &pv);
    // prefetch=shared: thread lane_ of sub-row sub_ owns the slots of its elements in stage_.
    std::string stageSlot(std::size_t input);
    // cp.async of every cached element of one row into the thread's slots (nothing waits here):
    // one source pointer and one shared address per input, the elements at fixed offsets.
    void stageRow(const std::string &guard, const std::string &rowBase);
    // This row's elements from the thread's slots into the register cache, once its copies landed.
    void unstageRow();
    // prefetch=shared: the next row's copies go out once this row's first pass has consumed
    // every element read from the slots they overwrite.
    void stageNextRow();
    std::optional<std::string> columnRead(const Expr &r, const ExprScope &scope, int q);
    // The element loop shared by every pass; `body(q)` writes the work for element c0_ + q.
    void elementLoop(const std::function<void(int)> &body, const std::function<void()> &after = {},
                     const std::string &from = "0", const std::string &to = "");
    // bulk_store=on: the stored outputs' element loops, a piece of items at a time, each piece handed
    // to the copy engine once every thread wrote it.
    void bulkOutputs(const std::function<void(int)> &body, const std::function<void()> &after);
    // The scope of one element of one op: row variables, the column, cached and row values.
    ExprScope elementScope(const ir::ComputeOp &op, int q);
    ExprScope withLocals(ExprScope s, int q);
    // The row value s_NAME_ from the exchanged partial result pv (the division by a row-invariant
    // divisor, the init), stored by one thread when it leaves the kernel.
    void finishRowValue(const ir::ComputeOp &op, const std::string &pv);
    // combine=online's exchange: the (maximum, sum) pairs of the lanes, the warps and the cluster's
    // blocks meet in a fixed order, so every thread of the row ends with the same pair.
    void exchangePairs(const std::string &ps);
};

} // namespace stitch::codegen::rowkernel
