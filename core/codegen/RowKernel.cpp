// The row_reduction strategy: row-wise reductions and the element-wise ops around them
// (softmax, layer norm, row sums, matrix-vector), one row per group of threads.
#include "core/codegen/CudaWriter.h"
#include "core/codegen/Kernels.h"

#include <algorithm>
#include <functional>

namespace stitch::codegen {

using ir::Expr;

namespace {

struct RowPlan {
    int tpr, rpb, vec, cluster, items;
    bool cache, sharedReduce;
    int warpsPerRow() const { return std::max(tpr / 32, 1); }
};

std::string str(long long v) { return std::to_string(v); }

} // namespace

KernelCode generateRowKernel(const GenContext &ctx)
{
    const auto &a = ctx.analysis;
    const auto &g = ctx.group;
    RowPlan p{g.value("threads_per_row"), g.value("rows_per_block"), g.value("vector"), g.value("cluster"), 1,
              g.value("cache") == 1, g.value("reduce") == 1};
    const auto C = ir::evaluateSizeExpr(a.domain.back(), ctx.sizes);
    const long long cols = C.ok() ? *C : 1;
    p.items = static_cast<int>(std::max<long long>(1, (cols + std::int64_t(p.tpr) * p.vec * p.cluster - 1) /
                                                          (std::int64_t(p.tpr) * p.vec * p.cluster)));
    const int threads = p.tpr * p.rpb;
    const bool vectorLoads = p.vec > 1;

    KernelCode k;
    k.name = ctx.kernelName;
    k.params = kernelParams(ctx);
    k.block = {threads, 1, 1};
    k.clusterSize = p.cluster;

    std::vector<const ir::ComputeOp *> rowOps;
    for (const auto *op : a.ops)
        if (op->reduction)
            rowOps.push_back(op);
    auto rowOpIndex = [&](ir::TensorId id) {
        for (std::size_t i = 0; i < rowOps.size(); ++i)
            if (rowOps[i]->output.id == id)
                return static_cast<int>(i);
        return -1;
    };
    const ir::DType accType = rowOps.empty() ? ir::DType::F32 : rowOps.front()->output.dtype;
    const std::string acc = ir::cudaTypeName(accType);

    ExprScope base;
    base.graph = &ctx.graph;
    base.wideTensors = &ctx.wide;
    for (int d = 0; d < a.rowRank; ++d)
        base.vars["%row" + str(d)] = "r" + str(d) + "_";

    CudaWriter w;
    w.comment(headerComment(ctx) + "\nrow length " + str(cols) + ": " + str(p.items) + " x " + str(p.vec) +
              " elements per thread" + (p.cluster > 1 ? ", split over a cluster of " + str(p.cluster) + " blocks" : ""));
    std::string attrs = "__launch_bounds__(" + str(threads) + ")";
    if (p.cluster > 1)
        attrs += " __cluster_dims__(" + str(p.cluster) + ", 1, 1)";
    w.line("extern \"C\" __global__ void " + attrs + " " + k.name + "(" + paramList(k.params) + ")");
    w.open("");
    const int slots = p.sharedReduce ? p.tpr : p.warpsPerRow();
    if (!rowOps.empty() && (p.sharedReduce || p.warpsPerRow() > 1))
        w.line("__shared__ " + acc + " red_[" + str(rowOps.size()) + "][" + str(p.rpb) + "][" + str(slots) + "];");
    if (p.cluster > 1) {
        w.line("__shared__ " + acc + " part_[" + str(std::max<std::size_t>(rowOps.size(), 1)) + "];");
        w.line("cooperative_groups::cluster_group cluster_ = cooperative_groups::this_cluster();");
    }
    w.line("const int lane_ = threadIdx.x % " + str(p.tpr) + ";");
    w.line("const int sub_ = threadIdx.x / " + str(p.tpr) + ";");
    w.line("const long long row_ = (long long)(blockIdx.x / " + str(p.cluster) + ") * " + str(p.rpb) + " + sub_;");
    std::string rows = "1LL";
    for (int d = 0; d < a.rowRank; ++d)
        rows += " * (long long)(" + emitExpr(a.domain[static_cast<std::size_t>(d)], base) + ")";
    w.line("const bool active_ = row_ < " + rows + ";");
    w.line("long long rest_ = active_ ? row_ : 0;");
    for (int d = a.rowRank; d-- > 0;) {
        const std::string ext = "(long long)(" + emitExpr(a.domain[static_cast<std::size_t>(d)], base) + ")";
        if (d > 0) {
            w.line("const int r" + str(d) + "_ = (int)(rest_ % " + ext + ");");
            w.line("rest_ /= " + ext + ";");
        } else {
            w.line("const int r0_ = (int)rest_;");
        }
    }
    w.line("(void)rest_;");
    w.line("const int cols_ = " + emitExpr(a.domain.back(), base) + ";");
    if (p.cluster > 1) {
        w.line("const int span_ = cols_ / " + str(p.cluster) + ";");
        w.line("const int begin_ = (int)cluster_.block_rank() * span_;");
        w.line("const int end_ = begin_ + span_;");
    } else {
        w.line("const int begin_ = 0;");
        w.line("const int end_ = cols_;");
    }
    w.line("const long long rowBase_ = row_ * (long long)cols_;");

    const std::string vecType = p.vec == 4 ? "float4" : "float2";
    const char *lanes[] = {"x", "y", "z", "w"};
    auto loadVector = [&](const std::string &name, const std::string &dst, const std::string &dstBase, ir::DType t) {
        if (vectorLoads && t == ir::DType::F32) {
            w.line("const " + vecType + " ld_ = *reinterpret_cast<const " + vecType + " *>(" + name +
                   " + rowBase_ + c0_);");
            for (int q = 0; q < p.vec; ++q)
                w.line(dst + "[" + dstBase + str(q) + "] = ld_." + lanes[q] + ";");
        } else {
            for (int q = 0; q < p.vec; ++q)
                w.line(dst + "[" + dstBase + str(q) + "] = " + name + "[rowBase_ + c0_ + " + str(q) + "];");
        }
    };
    // Cached rows: each thread's elements of every row input, loaded once.
    if (p.cache) {
        for (ir::TensorId id : a.rowInputs) {
            const ir::Tensor *t = ctx.graph.tensor(id);
            w.line(std::string(ir::cudaTypeName(t->dtype)) + " x_" + cIdentifier(t->name) + "_[" + str(p.items * p.vec) +
                   "];");
        }
        if (!a.rowInputs.empty()) {
            w.line("#pragma unroll");
            w.open("for (int it_ = 0; it_ < " + str(p.items) + "; ++it_)");
            w.line("const int c0_ = begin_ + (it_ * " + str(p.tpr) + " + lane_) * " + str(p.vec) + ";");
            w.open("if (active_ && c0_ < end_)");
            for (ir::TensorId id : a.rowInputs) {
                const ir::Tensor *t = ctx.graph.tensor(id);
                w.open("");
                loadVector(cIdentifier(t->name), "x_" + cIdentifier(t->name) + "_", "it_ * " + str(p.vec) + " + ", t->dtype);
                w.close();
            }
            w.close();
            w.close();
        }
    }

    // The element loop shared by every pass; `body(q)` writes the work for element c0_ + q.
    auto elementLoop = [&](const std::function<void(int)> &body, const std::function<void()> &after = {}) {
        if (p.cache) {
            w.line("#pragma unroll");
            w.open("for (int it_ = 0; it_ < " + str(p.items) + "; ++it_)");
            w.line("const int c0_ = begin_ + (it_ * " + str(p.tpr) + " + lane_) * " + str(p.vec) + ";");
            w.open("if (active_ && c0_ < end_)");
        } else {
            w.open("for (int c0_ = begin_ + lane_ * " + str(p.vec) + "; active_ && c0_ < end_; c0_ += " +
                   str(p.tpr * p.vec) + ")");
            w.open("");
            for (ir::TensorId id : a.rowInputs) {
                const ir::Tensor *t = ctx.graph.tensor(id);
                w.line(std::string(ir::cudaTypeName(t->dtype)) + " x_" + cIdentifier(t->name) + "_[" + str(p.vec) + "];");
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
    };
    // The scope of one element of one op: row variables, the column, cached and row values.
    auto elementScope = [&](const ir::ComputeOp &op, int q) {
        ExprScope s = base;
        for (int d = 0; d < a.rowRank; ++d)
            s.vars[op.domain[static_cast<std::size_t>(d)].name] = "r" + str(d) + "_";
        const std::string c = op.reduction ? op.reduction->vars[0].name : op.domain.back().name;
        s.vars[c] = "(c0_ + " + str(q) + ")";
        return s;
    };
    auto withLocals = [&](ExprScope s, int q) {
        s.local = [&, q](const Expr &r, const ExprScope &scope) -> std::optional<std::string> {
            const ir::TensorId id = r.tensor().id;
            if (rowOpIndex(id) >= 0)
                return "s_" + cIdentifier(r.tensor().name) + "_";
            if (std::find(a.rowInputs.begin(), a.rowInputs.end(), id) != a.rowInputs.end())
                return "x_" + cIdentifier(r.tensor().name) + "_[" + (p.cache ? "it_ * " + str(p.vec) + " + " : "") +
                       str(q) + "]";
            return inlineLocalRead(ctx, r, scope);
        };
        return s;
    };

    for (std::size_t ri = 0; ri < rowOps.size(); ++ri) {
        const ir::ComputeOp &op = *rowOps[ri];
        const ir::ReduceKind kind = op.reduction->kind;
        const std::string name = cIdentifier(op.output.name);
        w.line(acc + " p_" + name + "_ = " + reductionIdentityLiteral(kind, accType) + ";");
        elementLoop([&](int q) {
            ExprScope s = withLocals(elementScope(op, q), q);
            w.line("p_" + name + "_ = " + combine(kind, accType, "p_" + name + "_", emitExpr(op.body, s)) + ";");
        });
        const std::string pv = "p_" + name + "_";
        if (p.sharedReduce) {
            w.line("red_[" + str(ri) + "][sub_][lane_] = " + pv + ";");
            w.line("__syncthreads();");
            w.line("#pragma unroll");
            w.open("for (int s_ = " + str(p.tpr / 2) + "; s_ > 0; s_ >>= 1)");
            w.line("if (lane_ < s_)");
            w.line("    red_[" + str(ri) + "][sub_][lane_] = " +
                   combine(kind, accType, "red_[" + str(ri) + "][sub_][lane_]", "red_[" + str(ri) + "][sub_][lane_ + s_]") + ";");
            w.line("__syncthreads();");
            w.close();
            w.line(pv + " = red_[" + str(ri) + "][sub_][0];");
        } else {
            w.line("#pragma unroll");
            w.open("for (int off_ = " + str(std::min(p.tpr, 32) / 2) + "; off_ > 0; off_ >>= 1)");
            w.line(pv + " = " + combine(kind, accType, pv, "__shfl_xor_sync(0xffffffffu, " + pv + ", off_)") + ";");
            w.close();
            if (p.warpsPerRow() > 1) {
                w.line("if ((lane_ & 31) == 0)");
                w.line("    red_[" + str(ri) + "][sub_][lane_ >> 5] = " + pv + ";");
                w.line("__syncthreads();");
                w.line(pv + " = red_[" + str(ri) + "][sub_][0];");
                w.line("#pragma unroll");
                w.open("for (int w_ = 1; w_ < " + str(p.warpsPerRow()) + "; ++w_)");
                w.line(pv + " = " + combine(kind, accType, pv, "red_[" + str(ri) + "][sub_][w_]") + ";");
                w.close();
            }
        }
        if (p.cluster > 1) {
            w.line("if (threadIdx.x == 0)");
            w.line("    part_[" + str(ri) + "] = " + pv + ";");
            w.line("cluster_.sync();");
            w.line(pv + " = " + reductionIdentityLiteral(kind, accType) + ";");
            w.line("#pragma unroll");
            w.open("for (int b_ = 0; b_ < " + str(p.cluster) + "; ++b_)");
            w.line(pv + " = " + combine(kind, accType, pv, "*cluster_.map_shared_rank(&part_[" + str(ri) + "], b_)") + ";");
            w.close();
        }
        ExprScope rowScope = base;
        for (int d = 0; d < a.rowRank; ++d)
            rowScope.vars[op.domain[static_cast<std::size_t>(d)].name] = "r" + str(d) + "_";
        const std::string value =
            op.reduction->init.defined() ? combine(kind, accType, emitExpr(op.reduction->init, rowScope), pv) : pv;
        w.line("const " + acc + " s_" + name + "_ = " + value + ";");
        if (a.isStored(op.output.id)) {
            std::vector<std::string> idx;
            for (int d = 0; d < a.rowRank; ++d)
                idx.push_back("r" + str(d) + "_");
            const std::string leader = p.cluster > 1 ? "active_ && threadIdx.x == 0 && cluster_.block_rank() == 0"
                                                     : "active_ && lane_ == 0";
            w.line("if (" + leader + ")");
            w.line("    " + emitGlobalAccess(*ctx.graph.tensor(op.output.id), idx, rowScope) + " = s_" + name + "_;");
        }
    }

    // Element-wise results that leave the kernel, computed once every row value is known.
    std::vector<const ir::ComputeOp *> stored;
    for (const auto *op : a.ops)
        if (!op->reduction && a.isStored(op->output.id))
            stored.push_back(op);
    if (!stored.empty()) {
        auto contiguousRow = [&](const ir::Tensor &t) {
            if (t.shape.rank() != a.rowRank + 1)
                return false;
            for (int d = 0; d <= a.rowRank; ++d)
                if (!t.shape[static_cast<std::size_t>(d)].equals(a.domain[static_cast<std::size_t>(d)]))
                    return false;
            return true;
        };
        elementLoop(
            [&](int q) {
                for (const auto *op : stored) {
                    const ir::Tensor &t = *ctx.graph.tensor(op->output.id);
                    ExprScope s = withLocals(elementScope(*op, q), q);
                    const std::string name = cIdentifier(t.name);
                    const std::string v = "(" + std::string(ir::cudaTypeName(t.dtype)) + ")(" + emitExpr(op->body, s) + ")";
                    if (vectorLoads && t.dtype == ir::DType::F32 && contiguousRow(t)) {
                        if (q == 0)
                            w.line(vecType + " o_" + name + "_;");
                        w.line("o_" + name + "_." + lanes[q] + " = " + v + ";");
                    } else if (contiguousRow(t)) {
                        w.line(name + "[rowBase_ + c0_ + " + str(q) + "] = " + v + ";");
                    } else {
                        std::vector<std::string> idx;
                        for (int d = 0; d < a.rowRank; ++d)
                            idx.push_back("r" + str(d) + "_");
                        idx.push_back("(c0_ + " + str(q) + ")");
                        w.line(emitGlobalAccess(t, idx, s) + " = " + v + ";");
                    }
                }
            },
            [&] {
                for (const auto *op : stored) {
                    const ir::Tensor &t = *ctx.graph.tensor(op->output.id);
                    if (vectorLoads && t.dtype == ir::DType::F32 && contiguousRow(t)) {
                        const std::string name = cIdentifier(t.name);
                        w.line("*reinterpret_cast<" + vecType + " *>(" + name + " + rowBase_ + c0_) = o_" + name + "_;");
                    }
                }
            });
    }
    if (p.cluster > 1)
        w.line("cluster_.sync(); // keep this block's partial results alive until every block has read them");
    w.close();
    k.source = w.str();

    Expr rowsExpr = Expr(1);
    for (int d = 0; d < a.rowRank; ++d)
        rowsExpr = rowsExpr.isIntConst(1) ? a.domain[static_cast<std::size_t>(d)]
                                          : rowsExpr * a.domain[static_cast<std::size_t>(d)];
    Expr blocks = ceilDivExpr(rowsExpr, p.rpb);
    k.grid = {p.cluster > 1 ? blocks * p.cluster : blocks, Expr(1), Expr(1)};
    return k;
}

} // namespace stitch::codegen
