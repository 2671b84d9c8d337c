// The row_reduction strategy: row-wise reductions and the element-wise ops around them
// (softmax, layer norm, row sums, matrix-vector), one row per group of threads. This file: the
// builder's set-up and its first phases (header, shared memory, the row's cache and steps);
// RowKernelPhases.cpp: the reductions, the outputs and the kernel's end; RowKernelPasses.cpp: the
// pieces they write with.
#include "core/codegen/RowKernelBuilder.h"

#include "core/ir/ExprUtil.h"
#include "core/schedule/Space.h"

namespace stitch::codegen {

namespace rowkernel {

RowKernelBuilder::RowKernelBuilder(const GenContext &context)
    : ctx(context), a(context.analysis), g(context.group),
      p{g.value("threads_per_row"), g.value("rows_per_block"), g.value("vector"), g.value("cluster"), 1,
        g.value("row_steps"), g.value("cache") == 1, g.value("reduce") == 1}
{
    const auto C = ir::evaluateSizeExpr(a.domain.back(), ctx.sizes);
    cols = C.ok() ? *C : 1;
    p.items = static_cast<int>(std::max<long long>(1, (cols + std::int64_t(p.tpr) * p.vec * p.cluster - 1) /
                                                          (std::int64_t(p.tpr) * p.vec * p.cluster)));
    threads = p.tpr * p.rpb;
    vectorLoads = p.vec > 1;
    // With row_steps > 1 a block (or cluster) handles several rows in turn (with prefetch, loading
    // the next row's elements while this row is reduced and stored); the shared slots alternate
    // per step.
    resident = g.value("grid") == 1;
    bulk = g.value("bulk_store") == 1;
    stepped = schedule::rowStepped(g);
    stepsText = resident ? "steps_" : str(p.steps);
    strideText = resident ? "stride_" : str(p.rpb);
    lastStepText = resident ? "steps_ - 1" : str(p.steps - 1);
    prefetch = stepped && p.cache && g.value("prefetch") == 1 && !a.rowInputs.empty();
    // prefetch=shared: the next row goes to shared memory by cp.async (each thread copies the
    // slots it reads back, so no barrier guards them) while this row is reduced and stored.
    staged = stepped && p.cache && g.value("prefetch") == 2 && !a.rowInputs.empty();
    bulkPrefetch = stepped && p.cache && g.value("prefetch") == 3 && !a.rowInputs.empty();
    push = p.cluster > 1 && g.value("exchange") == 1;
    columnsShared = g.value("column_inputs") == 1;
    if (columnsShared)
        columnInputs = schedule::rowColumnInputs(a, ctx.graph);
    stageElems = p.rpb * p.tpr * p.items * p.vec; // per row input
    slot = stepped ? "[step_ & 1]" : "";

    k.name = ctx.kernelName;
    k.params = kernelParams(ctx);
    k.block = {threads, 1, 1};
    k.clusterSize = p.cluster;
    // The staged row inputs or outputs, the column spans, the prefetch slots: as the limits count them.
    smem = schedule::rowSharedLayout(a, g, ctx.graph, ctx.sizes);
    if (staged || bulk || columnsShared || bulkPrefetch)
        k.dynamicSharedBytes = schedule::rowStagingBytes(a, g, ctx.graph, ctx.sizes);
    if (resident)
        residentGroups = std::max(1, schedule::rowResidentGroups(ctx.arch, g, schedule::rowCount(a, ctx.sizes)));

    for (const auto *op : a.ops)
        if (op->reduction)
            rowOps.push_back(op);
    accType = rowOps.empty() ? ir::DType::F32 : rowOps.front()->output.dtype;
    acc = ir::cudaTypeName(accType);

    // combine=online (softmax): the maximum and the sum of exp(x - maximum) leave the thread as one
    // (maximum, sum) pair, each sum taken about the thread's own maximum and rescaled as pairs meet.
    online = g.value("combine") == 1 && schedule::hasOnlineSoftmaxPair(a) && !p.sharedReduce;
    pairCombine = k.name + "_online";

    base.graph = &ctx.graph;
    base.wideTensors = &ctx.wide;
    base.fastExp = g.value("exp") == 1;
    base.erfc = g.value("erf") == 1;
    for (int d = 0; d < a.rowRank; ++d)
        base.vars["%row" + str(d)] = "r" + str(d) + "_";
    rows = "1LL";
    for (int d = 0; d < a.rowRank; ++d)
        rows += " * (long long)(" + emitExpr(a.domain[static_cast<std::size_t>(d)], base) + ")";
    vecType = p.vec == 4 ? "float4" : "float2";
    // Tests that cannot fail are left out (openItems): the column test when the row splits
    // exactly into the threads' elements, `active_` when every block has one row and one step
    // (the grid is the rows).
    exactSpan = C.ok() && cols % (std::int64_t(p.tpr) * p.vec * p.cluster) == 0;
    alwaysActive = p.rpb == 1 && (!stepped || resident); // grid=resident: steps_ stops at the last row
    pfItems = bulkPrefetch ? schedule::rowBulkPrefetchItems(p.items) : 0;
    pfSlots = std::int64_t(pfItems) * p.tpr * p.vec;
    planOutputs();
}

KernelCode RowKernelBuilder::build()
{
    header();
    sharedSetup();
    cacheAndSteps();
    reductions();
    outputs();
    finish();
    return k;
}

void RowKernelBuilder::planOutputs()
{
    stored = schedule::rowStoredOps(a);
    for (const auto *op : stored) {
        storedDivisors.emplace_back();
        storedBodies.push_back(reciprocalDivisions(op->body, op->domain.back().name, storedDivisors.back()));
    }
    // The last reduction's per-element value (softmax: exp(X - rowMax)) reappearing in the stored
    // ops: with the row cached and nothing after the last reduction reading the raw row, the
    // last pass keeps each value in the cache in place of its element and the output pass reads
    // it back instead of computing it again.
    if (p.cache && !rowOps.empty() && !stored.empty()) {
        const ir::ComputeOp &last = *rowOps.back();
        const std::optional<Expr> divisor = invariantDivisor(last);
        const Expr summand = divisor ? last.body.operand(0) : last.body;
        const Expr placeholder = ir::cast(summand.dtype(), ir::var("%summand"));
        std::vector<Expr> replaced;
        bool any = false;
        for (std::size_t si = 0; si < stored.size(); ++si) {
            std::map<std::string, Expr> rename{
                {last.reduction->vars[0].name, ir::var(stored[si]->domain.back().name)}};
            for (int d = 0; d < a.rowRank; ++d)
                rename[last.domain[static_cast<std::size_t>(d)].name] =
                    ir::var(stored[si]->domain[static_cast<std::size_t>(d)].name);
            replaced.push_back(replaceEqual(storedBodies[si], ir::substitute(summand, rename), placeholder));
            any = any || !replaced.back().sameAs(storedBodies[si]);
        }
        for (ir::TensorId id : a.rowInputs) {
            const ir::Tensor &t = *ctx.graph.tensor(id);
            if (!any || summand.kind() == ir::ExprKind::Read || t.dtype != summand.dtype())
                break;
            bool readsRaw = false;
            for (const Expr &body : replaced)
                for (const Expr &r : ir::collectReads(body))
                    readsRaw = readsRaw || r.tensor().id == id ||
                               (a.isLocal(r.tensor().id) && rowOpIndex(r.tensor().id) < 0);
            if (!readsRaw) {
                summandCache = "x_" + cIdentifier(t.name) + "_";
                storedBodies = replaced;
                break;
            }
        }
    }
}

void RowKernelBuilder::header()
{
    std::string shape = "row length " + str(cols) + ": " + str(p.items) + " x " + str(p.vec) +
                        " elements per thread" +
                        (p.cluster > 1 ? ", split over a cluster of " + str(p.cluster) + " blocks" : "");
    const std::string unit = p.cluster > 1 ? "cluster" : "block";
    if (resident) {
        const GpuSpec *gpu = ArchDatabase::builtin().defaultGpuFor(ctx.arch.name);
        shape += "\ngrid=resident: " + str(residentGroups) + " " + unit + "s, what " +
                 (gpu ? gpu->name : ctx.arch.name) + " holds at once; " + unit + " b takes rows b, b + " +
                 str(residentGroups) + ", b + " + str(2 * residentGroups) +
                 ", ... (the stride is the grid the kernel runs on)";
    } else if (stepped) {
        shape += "\n" + str(p.steps) + " rows per " + unit + (p.rpb > 1 ? " and sub-block" : "") +
                 ", one after another";
    }
    if (stepped)
        shape += prefetch ? ": the next row's elements load into registers while this row is reduced and stored"
                 : staged ? ": the next row's elements copy into shared memory (cp.async, " +
                                str(k.dynamicSharedBytes) + " B) while this row is reduced and stored"
                          : "";
    if (push)
        shape += "\nexchange=push: each reduction's partial results go to every block of the cluster by st.async, "
                 "counted on an mbarrier per row; no cluster barrier per row";
    if (columnsShared)
        shape += "\ncolumn_inputs=shared: this block's span of the per-column vectors in shared memory, copied once";
    if (bulkPrefetch)
        shape += "\nprefetch=bulk: the last " + str(pfItems) + " of " + str(p.items) +
                 " items of the next row by cp.async.bulk into shared memory, the others into the registers the "
                 "output loop frees";
    if (online) {
        shape += "\ncombine=online: " + cIdentifier(rowOps[0]->output.name) + " and " +
                 cIdentifier(rowOps[1]->output.name) + " in one pass and one exchange of (maximum, sum) pairs";
    }
    w.comment(headerComment(ctx) + "\n" + shape);
    w.lines(deviceHelpers(base));
    if (push || bulkPrefetch) {
        w.comment("Whether the mbarrier at shared address bar completed the phase of this parity (acquire, cluster "
                  "scope: the pushes and copies it counted are visible).");
        w.line("static __device__ __forceinline__ bool " + k.name + "_ready(unsigned bar, unsigned parity)");
        w.open("");
        w.line("unsigned ok;");
        w.line("asm volatile(\"{\\n.reg .pred p;\\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], "
               "%2;\\nselp.u32 %0, 1, 0, p;\\n}\" : \"=r\"(ok) : \"r\"(bar), \"r\"(parity) : \"memory\");");
        w.line("return ok != 0;");
        w.close();
    }
    if (push) {
        w.comment("The address of this shared variable in the shared memory of cluster block `rank`.");
        w.line("static __device__ __forceinline__ unsigned " + k.name + "_map(const void *p, unsigned rank)");
        w.open("");
        w.line("unsigned r;");
        w.line("asm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\" : \"=r\"(r) : \"r\"((unsigned)__cvta_generic_to_shared(p)), "
               "\"r\"(rank));");
        w.line("return r;");
        w.close();
    }
    if (online) {
        w.comment(
            "combine=online: (m, s) and (om, os), each s a sum of exp(x - its m), as one pair about the larger m.");
        w.line("static __device__ __forceinline__ void " + pairCombine +
               "(float &m, float &s, float om, float os)");
        w.open("");
        w.line("const float n = fmaxf(m, om);");
        w.line("s = (m == n ? s : s * " + emitExpDifference("m", "n", base.fastExp) + ") + (om == n ? os : os * " +
               emitExpDifference("om", "n", base.fastExp) + ");");
        w.line("m = n;");
        w.close();
    }
    const int minBlocks = g.value("min_blocks");
    std::string attrs = "__launch_bounds__(" + str(threads) + (minBlocks > 1 ? ", " + str(minBlocks) : "") + ")";
    if (p.cluster > 1)
        attrs += " __cluster_dims__(" + str(p.cluster) + ", 1, 1)";
    w.line("extern \"C\" __global__ void " + attrs + " " + k.name + "(" + paramList(k.params) + ")");
    w.open("");
    const int slots = p.sharedReduce ? p.tpr : p.warpsPerRow();
    const std::string parity = stepped ? "[2]" : "";
    if (!rowOps.empty() && (p.sharedReduce || p.warpsPerRow() > 1))
        w.line("__shared__ " + acc + " red_" + parity + "[" + str(rowOps.size()) + "][" + str(p.rpb) + "][" +
               str(slots) + "];");
    if (push) {
        const std::string dims = "[" + str(std::max<std::size_t>(rowOps.size(), 1)) + "][" + str(p.rpb) + "][2]";
        w.line("__shared__ " + acc + " xs_" + dims + "[" + str(p.cluster) +
               "]; // exchange=push: each cluster block's partial, two buffers by row parity");
        w.line("__shared__ __align__(8) unsigned long long xb_" + dims + "; // their mbarriers");
    }
    if (p.cluster > 1) {
        if (!push)
            w.line("__shared__ " + acc + " part_" + parity + "[" + str(std::max<std::size_t>(rowOps.size(), 1)) +
                   "];");
        w.line("cooperative_groups::cluster_group cluster_ = cooperative_groups::this_cluster();");
    }
    if (bulkPrefetch)
        w.line("__shared__ __align__(8) unsigned long long pb_[" + str(p.rpb) +
               "]; // prefetch=bulk: each row's copies of its next row");
    if (columnsShared || bulkPrefetch)
        w.line("extern __shared__ __align__(128) float sm_[]; // " +
               std::string(columnsShared ? "the column inputs' spans" : "") +
               (columnsShared && bulkPrefetch ? ", then " : "") + (bulkPrefetch ? "the prefetch slots" : ""));
    if (bulk)
        w.line("extern __shared__ __align__(128) float out_[]; // bulk_store=on: this block's part of each output row");
    w.line("const int lane_ = threadIdx.x % " + str(p.tpr) + ";");
    w.line("const int sub_ = threadIdx.x / " + str(p.tpr) + ";");
    if (!stepped) {
        w.line("const long long row_ = (long long)(blockIdx.x / " + str(p.cluster) + ") * " + str(p.rpb) +
               " + sub_;");
        rowVariables();
        columnRange();
        w.line("const long long rowBase_ = row_ * (long long)cols_;");
    } else if (resident) {
        w.line("const long long rows_ = " + rows + ";");
        w.line("const long long firstRow_ = (long long)(blockIdx.x / " + str(p.cluster) + ") * " + str(p.rpb) + ";");
        w.line("const long long stride_ = (long long)(gridDim.x / " + str(p.cluster) + ") * " + str(p.rpb) +
               "; // the rows between this " + (p.cluster > 1 ? "cluster" : "block") + "'s steps: the grid's");
        w.line("const int steps_ = firstRow_ < rows_ ? (int)((rows_ - firstRow_ + stride_ - 1) / stride_) : 0;");
        w.line("const long long first_ = firstRow_ + sub_;");
        columnRange();
    } else {
        w.line("const long long rows_ = " + rows + ";");
        w.line("const long long first_ = (long long)(blockIdx.x / " + str(p.cluster) + ") * " +
               str(p.rpb * p.steps) + " + sub_;");
        columnRange();
    }
}

void RowKernelBuilder::sharedSetup()
{
    const long long span = std::int64_t(p.tpr) * p.items * p.vec; // exact: the legality rules require it
    if (columnsShared) {
        w.comment("column_inputs=shared: this block's span of each per-column vector, copied once; every row the block "
                  "holds and walks reads it here.");
        for (std::size_t i = 0; i < columnInputs.size(); ++i)
            w.line("float *const cs_" + cIdentifier(ctx.graph.tensor(columnInputs[i])->name) + "_ = sm_ + " +
                   str(smem.columns / 4 + static_cast<long long>(i) * span) + ";");
        w.line("#pragma unroll 1");
        w.open("for (int e_ = threadIdx.x * 4; e_ < " + str(span) + "; e_ += " + str(threads * 4) + ")");
        for (ir::TensorId id : columnInputs) {
            const std::string name = cIdentifier(ctx.graph.tensor(id)->name);
            w.line("*reinterpret_cast<float4 *>(cs_" + name + "_ + e_) = *reinterpret_cast<const float4 *>(" + name +
                   " + begin_ + e_);");
        }
        w.close();
    }
    if (bulkPrefetch) {
        for (std::size_t i = 0; i < a.rowInputs.size(); ++i)
            w.line("float *const pf_" + cIdentifier(ctx.graph.tensor(a.rowInputs[i])->name) + "_ = sm_ + " +
                   str(smem.prefetch / 4 + static_cast<long long>(i) * p.rpb * pfSlots) + " + sub_ * " + str(pfSlots) +
                   "; // prefetch=bulk: this row's slots");
        w.line("const unsigned pbAddr_ = (unsigned)__cvta_generic_to_shared(&pb_[sub_]);");
    }
    if (push || bulkPrefetch) {
        w.open("if (threadIdx.x == 0)");
        if (push) {
            w.line("for (int b_ = 0; b_ < " + str(static_cast<long long>(std::max<std::size_t>(rowOps.size(), 1)) * p.rpb * 2) +
                   "; ++b_)");
            w.line("    asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"((unsigned)__cvta_generic_to_shared(&xb_[0][0][0] + b_)) : \"memory\");");
        }
        if (bulkPrefetch) {
            w.line("for (int b_ = 0; b_ < " + str(p.rpb) + "; ++b_)");
            w.line("    asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"((unsigned)__cvta_generic_to_shared(&pb_[b_])) : \"memory\");");
        }
        w.line("asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");");
        w.close();
    }
    if (push)
        w.line("cluster_.sync(); // every block's mbarriers are ready before the first push");
    else if (columnsShared || bulkPrefetch)
        w.line("__syncthreads();");
    if (bulkPrefetch) {
        w.line("if (lane_ == 0 && first_ < rows_)");
        issuePrefetch("first_");
    }
}

void RowKernelBuilder::cacheAndSteps()
{
    // Cached rows: each thread's elements of every row input, loaded once.
    if (p.cache) {
        for (ir::TensorId id : a.rowInputs) {
            const ir::Tensor *t = ctx.graph.tensor(id);
            w.line(std::string(ir::cudaTypeName(t->dtype)) + " x_" + cIdentifier(t->name) + "_[" +
                   str(p.items * p.vec) + "];");
            if (prefetch)
                w.line(std::string(ir::cudaTypeName(t->dtype)) + " n_" + cIdentifier(t->name) + "_[" +
                       str(p.items * p.vec) + "]; // the next row's elements");
        }
        if (!a.rowInputs.empty()) {
            if (prefetch) {
                loadRow("x_", "first_ < rows_", "first_ * (long long)cols_");
            } else if (staged) {
                w.line("extern __shared__ float4 stage4_[];");
                w.line("float *const stage_ = reinterpret_cast<float *>(stage4_);");
                stageRow("first_ < rows_", "first_ * (long long)cols_");
            } else if (!stepped)
                loadRow("x_", "active_", "rowBase_");
        }
    }
    if (stepped) {
        w.line("#pragma unroll 1");
        w.open("for (int step_ = 0; step_ < " + stepsText + "; ++step_)");
        w.line("const long long row_ = first_ + (long long)step_ * " + strideText + ";");
        rowVariables();
        w.line("const long long rowBase_ = row_ * (long long)cols_;");
        if (prefetch) {
            w.comment("Prefetch: the next row's loads are in flight during this row's reductions and stores.");
            w.line("const long long next_ = row_ + " + strideText + ";");
            loadRow("n_", "step_ + 1 < " + stepsText + " && next_ < rows_", "next_ * (long long)cols_");
        } else if (staged) {
            unstageRow();
        } else if (bulkPrefetch) {
            w.line("const long long next_ = row_ + " + strideText + ";");
            w.line("const bool more_ = step_ + 1 < " + stepsText + " && next_ < rows_; // a next row to prefetch");
            w.comment("prefetch=bulk: the first row's elements load here, a later row's in the output loop before; "
                      "the last " + str(pfItems) + " items come from the slots.");
            loadRow("x_", alwaysActive ? "step_ == 0" : "step_ == 0 && active_", "rowBase_", "0",
                    str(p.items - pfItems));
            w.open(alwaysActive ? "" : "if (active_)");
            w.line("while (!" + k.name + "_ready(pbAddr_, (unsigned)step_ & 1u)) {");
            w.line("}");
            openItems("", true, str(p.items - pfItems), str(p.items));
            for (ir::TensorId id : a.rowInputs) {
                const std::string name = cIdentifier(ctx.graph.tensor(id)->name);
                w.open("");
                w.line("const float4 ld_ = *reinterpret_cast<const float4 *>(pf_" + name + "_ + ((it_ - " +
                       str(p.items - pfItems) + ") * " + str(p.tpr) + " + lane_) * 4);");
                for (int q = 0; q < 4; ++q)
                    w.line("x_" + name + "_[it_ * 4 + " + str(q) + "] = ld_." + lanes[q] + ";");
                w.close();
            }
            w.close();
            w.close();
            w.close();
        } else if (p.cache && !a.rowInputs.empty()) {
            loadRow("x_", "active_", "rowBase_");
        }
    }
}

} // namespace rowkernel

KernelCode generateRowKernel(const GenContext &ctx) { return rowkernel::RowKernelBuilder(ctx).build(); }

} // namespace stitch::codegen
