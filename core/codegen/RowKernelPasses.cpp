// The pieces the row kernel's phases write with: the row and its columns, loads into the register
// cache, shared-memory staging (prefetch=shared), the element loops and their expression scopes,
// the row values and combine=online's exchange.
#include "core/codegen/RowKernelBuilder.h"

#include "core/ir/ExprUtil.h"
#include "core/schedule/Space.h"

namespace stitch::codegen::rowkernel {

int RowKernelBuilder::rowOpIndex(ir::TensorId id)
{
    for (std::size_t i = 0; i < rowOps.size(); ++i)
        if (rowOps[i]->output.id == id)
            return static_cast<int>(i);
    return -1;
}

void RowKernelBuilder::rowVariables()
{
    w.line("const bool active_ = row_ < " + std::string(stepped ? "rows_" : rows) + ";");
    w.line("long long rest_ = active_ ? row_ : 0;");
    for (int d = a.rowRank; d-- > 0;) {
        const std::string ext = "(long long)(" + emitExpr(a.domain[static_cast<std::size_t>(d)], base) + ")";
        if (d > 0) {
            w.line("[[maybe_unused]] const int r" + str(d) + "_ = (int)(rest_ % " + ext + ");");
            w.line("rest_ /= " + ext + ";");
        } else {
            w.line("[[maybe_unused]] const int r0_ = (int)rest_;");
        }
    }
    w.line("(void)rest_;");
}

void RowKernelBuilder::columnRange()
{
    w.line("const int cols_ = " + emitExpr(a.domain.back(), base) + ";");
    if (p.cluster > 1) {
        w.line("const int span_ = cols_ / " + str(p.cluster) + ";");
        w.line("const int begin_ = (int)cluster_.block_rank() * span_;");
        w.line("[[maybe_unused]] const int end_ = begin_ + span_;");
    } else {
        w.line("const int begin_ = 0;");
        w.line("[[maybe_unused]] const int end_ = cols_;");
    }
}

void RowKernelBuilder::loadVector(const std::string &name, const std::string &dst, const std::string &dstBase,
                                  ir::DType t, const std::string &rowBase)
{
    if (vectorLoads && t == ir::DType::F32) {
        w.line("const " + vecType + " ld_ = *reinterpret_cast<const " + vecType + " *>(" + name + " + " + rowBase +
               " + c0_);");
        for (int q = 0; q < p.vec; ++q)
            w.line(dst + "[" + dstBase + str(q) + "] = ld_." + lanes[q] + ";");
    } else {
        for (int q = 0; q < p.vec; ++q)
            w.line(dst + "[" + dstBase + str(q) + "] = " + name + "[" + rowBase + " + c0_ + " + str(q) + "];");
    }
}

void RowKernelBuilder::openItems(const std::string &guard, bool columnTest, const std::string &from,
                                 const std::string &to, bool guardOutside)
{
    std::string test = guard == "active_" && alwaysActive ? "" : guard;
    if (guardOutside)
        w.open(test.empty() ? "" : "if (" + test + ")");
    w.line("#pragma unroll");
    w.open("for (int it_ = " + from + "; it_ < " + (to.empty() ? str(p.items) : to) + "; ++it_)");
    if (columnTest)
        w.line(std::string(exactSpan ? "[[maybe_unused]] " : "") + "const int c0_ = begin_ + (it_ * " + str(p.tpr) +
               " + lane_) * " + str(p.vec) + ";");
    if (guardOutside) {
        if (columnTest && !exactSpan)
            w.line("if (c0_ >= end_)").line("    continue;");
        return;
    }
    if (columnTest && !exactSpan)
        test += (test.empty() ? "" : " && ") + std::string("c0_ < end_");
    w.open(test.empty() ? "" : "if (" + test + ")");
}

void RowKernelBuilder::loadRow(const std::string &prefix, const std::string &guard, const std::string &rowBase,
                               const std::string &from, const std::string &to)
{
    openItems(guard, true, from, to);
    for (ir::TensorId id : a.rowInputs) {
        const ir::Tensor *t = ctx.graph.tensor(id);
        w.open("");
        loadVector(cIdentifier(t->name), prefix + cIdentifier(t->name) + "_", "it_ * " + str(p.vec) + " + ",
                   t->dtype, rowBase);
        w.close();
    }
    w.close();
    w.close();
}

void RowKernelBuilder::issuePrefetch(const std::string &row)
{
    w.open("");
    w.line("asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" :: \"r\"(pbAddr_), \"n\"(" +
           str(static_cast<long long>(a.rowInputs.size()) * pfSlots * 4) + ") : \"memory\");");
    for (ir::TensorId id : a.rowInputs) {
        const std::string name = cIdentifier(ctx.graph.tensor(id)->name);
        w.line("asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\" "
               ":: \"r\"((unsigned)__cvta_generic_to_shared(pf_" + name + "_)), \"l\"(" + name + " + (" + row +
               ") * (long long)cols_ + begin_ + " + str(std::int64_t(p.items - pfItems) * p.tpr * p.vec) +
               "), \"n\"(" + str(pfSlots * 4) + "), \"r\"(pbAddr_) : \"memory\");");
    }
    w.close();
}

std::string RowKernelBuilder::rowBarrier() const
{
    if (push && p.rpb > 1)
        return "asm volatile(\"bar.sync %0, %1;\" :: \"r\"(1 + sub_), \"n\"(" + str(p.tpr) +
               ") : \"memory\"); // this row's threads only";
    return "__syncthreads();";
}

void RowKernelBuilder::pushExchange(std::size_t ri, ir::ReduceKind kind, const std::string &pv)
{
    const std::string buf = stepped ? "step_ & 1" : "0";
    const std::string slots = "xs_[" + str(static_cast<long long>(ri)) + "][sub_][" + buf + "]";
    const std::string bar = "xb_[" + str(static_cast<long long>(ri)) + "][sub_][" + buf + "]";
    w.open("");
    w.line("const unsigned xbAddr_ = (unsigned)__cvta_generic_to_shared(&" + bar + ");");
    w.comment("Warp 0 of the row: this block's partial result into its slot in every block of the cluster.");
    w.open("if (lane_ < 32)");
    w.line("if (lane_ == 0)");
    w.line("    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" :: \"r\"(xbAddr_), \"n\"(" +
           str(p.cluster * 4) + ") : \"memory\");");
    w.line("__syncwarp();");
    w.line("if (lane_ < " + str(p.cluster) + ")");
    w.line("    asm volatile(\"st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];\" :: \"r\"(" +
           k.name + "_map(&" + slots + "[cluster_.block_rank()], lane_)), \"f\"(" + pv + "), \"r\"(" + k.name +
           "_map(&" + bar + ", lane_)) : \"memory\");");
    w.line("while (!" + k.name + "_ready(xbAddr_, " + (stepped ? std::string("((unsigned)step_ >> 1) & 1u") : "0u") +
           ")) { // the cluster's partial results have landed");
    w.line("}");
    w.close();
    // The other warps of the row wait at a barrier (no issue slots spent spinning) for warp 0's.
    if (p.warpsPerRow() > 1)
        w.line(rowBarrier());
    // Lane b of every warp reads block b's partial, the lanes combine them by shuffles in a fixed
    // order and lane 0's result goes to all: the same value in every thread of every block.
    w.line(acc + " q_ = (lane_ & 31) < " + str(p.cluster) + " ? " + slots + "[lane_ & 31] : " +
           reductionIdentityLiteral(kind, accType) + ";");
    w.line("#pragma unroll");
    w.line("for (int off_ = " + str(p.cluster / 2) + "; off_ > 0; off_ >>= 1)");
    w.line("    q_ = " + combine(kind, accType, "q_", "__shfl_xor_sync(0xffffffffu, q_, off_)") + ";");
    w.line(pv + " = __shfl_sync(0xffffffffu, q_, 0);");
    w.close();
}

std::string RowKernelBuilder::stageSlot(std::size_t input)
{
    return str(static_cast<long long>(input) * stageElems) + " + (sub_ * " + str(p.items * p.tpr) + " + it_ * " +
           str(p.tpr) + " + lane_) * " + str(p.vec);
}

void RowKernelBuilder::stageRow(const std::string &guard, const std::string &rowBase)
{
    w.open("");
    for (std::size_t i = 0; i < a.rowInputs.size(); ++i) {
        const std::string name = cIdentifier(ctx.graph.tensor(a.rowInputs[i])->name),
                          n = str(static_cast<long long>(i));
        w.line("const float *src" + n + "_ = reinterpret_cast<const float *>(" + name + " + " + rowBase +
               ") + begin_ + lane_ * " + str(p.vec) + ";");
        w.line("const unsigned dst" + n + "_ = (unsigned)__cvta_generic_to_shared(stage_ + " +
               str(static_cast<long long>(i) * stageElems) + " + (sub_ * " + str(p.items * p.tpr) + " + lane_) * " +
               str(p.vec) + ");");
    }
    // Rows that split exactly into the threads' elements need no column test.
    openItems(guard, !exactSpan);
    const int bytes = 4 * p.vec;
    for (std::size_t i = 0; i < a.rowInputs.size(); ++i) {
        const std::string n = str(static_cast<long long>(i));
        w.line("asm volatile(\"cp.async." + std::string(bytes == 16 ? "cg" : "ca") + ".shared.global [%0], [%1], " +
               str(bytes) + ";\\n\" :: \"r\"(dst" + n + "_ + it_ * " + str(p.tpr * bytes) + "), \"l\"(src" + n +
               "_ + it_ * " + str(p.tpr * p.vec) + ") : \"memory\");");
    }
    w.close();
    w.close();
    w.close();
    w.line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
}

void RowKernelBuilder::unstageRow()
{
    w.line("asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\"); // this thread's copies of this row");
    openItems("active_");
    for (std::size_t i = 0; i < a.rowInputs.size(); ++i) {
        const ir::Tensor *t = ctx.graph.tensor(a.rowInputs[i]);
        const std::string type = ir::cudaTypeName(t->dtype), dst = "x_" + cIdentifier(t->name) + "_";
        if (vectorLoads && t->dtype == ir::DType::F32) {
            w.line("const " + vecType + " ld_ = *reinterpret_cast<const " + vecType + " *>(stage_ + " +
                   stageSlot(i) + ");");
            for (int q = 0; q < p.vec; ++q)
                w.line(dst + "[it_ * " + str(p.vec) + " + " + str(q) + "] = ld_." + lanes[q] + ";");
        } else {
            for (int q = 0; q < p.vec; ++q)
                w.line(dst + "[it_ * " + str(p.vec) + " + " + str(q) + "] = reinterpret_cast<const " + type +
                       " *>(stage_)[" + stageSlot(i) + " + " + str(q) + "];");
        }
    }
    w.close();
    w.close();
}

void RowKernelBuilder::stageNextRow()
{
    w.comment("Prefetch: the next row's copies to shared memory are in flight during this row's reductions and "
              "stores.");
    w.line("const long long next_ = row_ + " + str(p.rpb) + ";");
    stageRow("step_ + 1 < " + str(p.steps) + " && next_ < rows_", "next_ * (long long)cols_");
}

std::optional<std::string> RowKernelBuilder::columnRead(const Expr &r, const ExprScope &scope, int q)
{
    const ir::Tensor &t = *ctx.graph.tensor(r.tensor().id);
    if (!vectorLoads || t.dtype != ir::DType::F32 || t.shape.rank() != 1 || r.operands().size() != 1 ||
        !t.shape[0].equals(a.domain.back()))
        return std::nullopt;
    if (stripParens(emitExpr(r.operands()[0], scope)) != "c0_ + " + str(q))
        return std::nullopt;
    const std::string name = cIdentifier(t.name);
    const bool shared = std::find(columnInputs.begin(), columnInputs.end(), t.id) != columnInputs.end();
    if (columnLoaded.insert(t.id).second)
        w.line("const " + vecType + " v_" + name + "_ = *reinterpret_cast<const " + vecType + " *>(" +
               (shared ? "cs_" + name + "_ + (c0_ - begin_)" : name + " + c0_") + ");");
    return "v_" + name + "_." + lanes[q];
}

void RowKernelBuilder::elementLoop(const std::function<void(int)> &body, const std::function<void()> &after,
                                   const std::string &from, const std::string &to)
{
    columnLoaded.clear();
    if (p.cache) {
        // active_ once, around the loop: the items' arithmetic stays one straight run of code (run 21:
        // a test per item cost the long layer norm 19% more executed instructions).
        openItems("active_", true, from, to, true);
    } else {
        w.open("for (int c0_ = begin_ + lane_ * " + str(p.vec) + "; active_ && c0_ < end_; c0_ += " +
               str(p.tpr * p.vec) + ")");
        w.open("");
        for (ir::TensorId id : a.rowInputs) {
            const ir::Tensor *t = ctx.graph.tensor(id);
            w.line(std::string(ir::cudaTypeName(t->dtype)) + " x_" + cIdentifier(t->name) + "_[" + str(p.vec) +
                   "];");
            w.open("");
            loadVector(cIdentifier(t->name), "x_" + cIdentifier(t->name) + "_", "", t->dtype);
            w.close();
        }
    }
    for (int q = 0; q < p.vec; ++q)
        body(q);
    if (after)
        after();
    w.close();
    w.close();
}

ExprScope RowKernelBuilder::elementScope(const ir::ComputeOp &op, int q)
{
    ExprScope s = base;
    for (int d = 0; d < a.rowRank; ++d)
        s.vars[op.domain[static_cast<std::size_t>(d)].name] = "r" + str(d) + "_";
    const std::string c = op.reduction ? op.reduction->vars[0].name : op.domain.back().name;
    s.vars[c] = "(c0_ + " + str(q) + ")";
    return s;
}

ExprScope RowKernelBuilder::withLocals(ExprScope s, int q)
{
    s.local = [&, q](const Expr &r, const ExprScope &scope) -> std::optional<std::string> {
        const ir::TensorId id = r.tensor().id;
        if (rowOpIndex(id) >= 0) {
            const auto named = rowValueName.find(id);
            return named != rowValueName.end() ? named->second : "s_" + cIdentifier(r.tensor().name) + "_";
        }
        if (std::find(a.rowInputs.begin(), a.rowInputs.end(), id) != a.rowInputs.end())
            return "x_" + cIdentifier(r.tensor().name) + "_[" + (p.cache ? "it_ * " + str(p.vec) + " + " : "") +
                   str(q) + "]";
        if (auto local = inlineLocalRead(ctx, r, scope))
            return local;
        return columnRead(r, scope, q);
    };
    return s;
}

void RowKernelBuilder::finishRowValue(const ir::ComputeOp &op, const std::string &pv)
{
    const ir::ReduceKind kind = op.reduction->kind;
    const std::string name = cIdentifier(op.output.name);
    const std::optional<Expr> divisor = invariantDivisor(op);
    ExprScope rowScope = base;
    for (int d = 0; d < a.rowRank; ++d)
        rowScope.vars[op.domain[static_cast<std::size_t>(d)].name] = "r" + str(d) + "_";
    const std::string total = divisor ? "(" + pv + " / " + emitExpr(*divisor, rowScope) + ")" : pv;
    const std::string value = op.reduction->init.defined()
                                  ? combine(kind, accType, emitExpr(op.reduction->init, rowScope), total)
                                  : total;
    w.line("const " + acc + " s_" + name + "_ = " + value + ";");
    if (a.isStored(op.output.id)) {
        std::vector<std::string> idx;
        for (int d = 0; d < a.rowRank; ++d)
            idx.push_back("r" + str(d) + "_");
        const std::string leader = p.cluster > 1 ? "active_ && lane_ == 0 && cluster_.block_rank() == 0"
                                                 : "active_ && lane_ == 0";
        w.line("if (" + leader + ")");
        w.line("    " + emitGlobalAccess(*ctx.graph.tensor(op.output.id), idx, rowScope) + " = s_" + name + "_;");
    }
}

void RowKernelBuilder::exchangePairs(const std::string &ps)
{
    const std::string pm = "p_" + cIdentifier(rowOps[0]->output.name) + "_";
    const std::string rm = "red_" + slot + "[0][sub_]", rs = "red_" + slot + "[1][sub_]";
    w.line("#pragma unroll");
    w.open("for (int off_ = " + str(std::min(p.tpr, 32) / 2) + "; off_ > 0; off_ >>= 1)");
    w.line(pairCombine + "(" + pm + ", " + ps + ", __shfl_xor_sync(0xffffffffu, " + pm +
           ", off_), __shfl_xor_sync(0xffffffffu, " + ps + ", off_));");
    w.close();
    if (p.warpsPerRow() > 1) {
        w.open("if ((lane_ & 31) == 0)");
        w.line(rm + "[lane_ >> 5] = " + pm + ";");
        w.line(rs + "[lane_ >> 5] = " + ps + ";");
        w.close();
        w.line("__syncthreads();");
        w.line(pm + " = " + rm + "[0];");
        w.line(ps + " = " + rs + "[0];");
        w.line("#pragma unroll");
        w.line("for (int w_ = 1; w_ < " + str(p.warpsPerRow()) + "; ++w_)");
        w.line("    " + pairCombine + "(" + pm + ", " + ps + ", " + rm + "[w_], " + rs + "[w_]);");
    }
    if (p.cluster > 1) {
        const std::string partM = "part_" + slot + "[0]", partS = "part_" + slot + "[1]";
        w.open("if (threadIdx.x == 0)");
        w.line(partM + " = " + pm + ";");
        w.line(partS + " = " + ps + ";");
        w.close();
        w.line("cluster_.sync();");
        // Lane b of every warp reads block b's pair, the lanes combine them as above and lane
        // 0 hands the result to the others: two remote loads per thread, not two per block.
        w.open("");
        w.line("float qm_ = " + reductionIdentityLiteral(ir::ReduceKind::Max, accType) + ", qs_ = 0.0f;");
        w.open("if ((lane_ & 31) < " + str(p.cluster) + ")");
        w.line("qm_ = *cluster_.map_shared_rank(&" + partM + ", lane_ & 31);");
        w.line("qs_ = *cluster_.map_shared_rank(&" + partS + ", lane_ & 31);");
        w.close();
        w.line("#pragma unroll");
        w.line("for (int off_ = " + str(p.cluster / 2) + "; off_ > 0; off_ >>= 1)");
        w.line("    " + pairCombine +
               "(qm_, qs_, __shfl_xor_sync(0xffffffffu, qm_, off_), __shfl_xor_sync(0xffffffffu, qs_, off_));");
        w.line(pm + " = __shfl_sync(0xffffffffu, qm_, 0);");
        w.line(ps + " = __shfl_sync(0xffffffffu, qs_, 0);");
        w.close();
        const std::string arrive = "cluster_.barrier_arrive(); // the last read of the other blocks' part_";
        if (stepped)
            w.line("if (step_ == " + lastStepText + ")");
        w.line(stepped ? "    " + arrive : arrive);
    }
}

void RowKernelBuilder::bulkOutputs(const std::function<void(int)> &body, const std::function<void()> &after)
{
    const int per = schedule::rowBulkItemsPerPiece(p.items), pieces = p.items / per;
    const long long piece = std::int64_t(per) * p.tpr * p.vec; // floats
    // The wait for the previous row's copies (reductions()) must come before any thread writes
    // out_ again: the reductions' barrier orders it, where they have one.
    const bool reductionBarrier = !rowOps.empty() && (p.sharedReduce || p.warpsPerRow() > 1 || p.cluster > 1);
    if (stepped && !reductionBarrier)
        w.line("__syncthreads(); // after the wait for the copy engine's reads of the previous row");
    w.comment("bulk_store=on: the outputs go to out_ (this block's part of the row) in " + str(pieces) +
              " pieces of " + str(piece * 4) + " B; one thread hands each piece to the copy engine once every "
              "thread wrote it.");
    w.line("#pragma unroll");
    w.open("for (int pc_ = 0; pc_ < " + str(pieces) + "; ++pc_)");
    elementLoop(body, after, "pc_ * " + str(per), "pc_ * " + str(per) + " + " + str(per));
    w.line("asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); // the writes, seen by the copy engine");
    w.line("__syncthreads();");
    w.open("if (threadIdx.x == 0 && active_)");
    const long long stage = std::int64_t(p.items) * p.tpr * p.vec;
    for (std::size_t si = 0; si < stored.size(); ++si) {
        const std::string name = cIdentifier(ctx.graph.tensor(stored[si]->output.id)->name);
        w.line("asm volatile(\"cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\" :: \"l\"(" + name +
               " + rowBase_ + begin_ + pc_ * " + str(piece) + "), \"r\"((unsigned)__cvta_generic_to_shared(out_ + " +
               str(static_cast<long long>(si) * stage) + " + pc_ * " + str(piece) + ")), \"n\"(" + str(piece * 4) +
               ") : \"memory\");");
    }
    w.line("asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");");
    w.close();
    w.close();
}

} // namespace stitch::codegen::rowkernel
