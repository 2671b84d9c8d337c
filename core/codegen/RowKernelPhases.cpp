// The row_reduction strategy's later phases (RowKernel.cpp has the set-up and the first ones): the
// row reductions (warp shuffles, shared memory, clusters), the outputs and the kernel's end.
#include "core/codegen/RowKernelBuilder.h"

#include "core/ir/ExprUtil.h"
#include "core/schedule/Space.h"

namespace stitch::codegen {

namespace rowkernel {

void RowKernelBuilder::reductions()
{
    if (bulk && stepped) {
        // bulk_store=on: the previous row's outputs leave out_ before this row's are written there;
        // the reductions' barrier (or the one before the outputs, bulkOutputs) orders the writes
        // after this wait, which the loads above overlap.
        w.line("if (threadIdx.x == 0) // the copy engine has read the previous row's outputs");
        w.line("    asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: \"memory\");");
    }
    for (std::size_t ri = 0; ri < rowOps.size(); ++ri) {
        const ir::ComputeOp &op = *rowOps[ri];
        const ir::ReduceKind kind = op.reduction->kind;
        const std::string name = cIdentifier(op.output.name);
        const std::optional<Expr> divisor = invariantDivisor(op);
        const std::string red = "red_" + slot + "[" + str(ri) + "]";
        w.line(acc + " p_" + name + "_ = " + reductionIdentityLiteral(kind, accType) + ";" +
               (divisor ? " // sum of the numerators; divided once per row below" : ""));
        const bool keepSummand = !summandCache.empty() && ri + 1 == rowOps.size();
        if (keepSummand)
            w.comment("Each value stays in " + summandCache +
                      " in place of its element: the output pass reads it back.");
        elementLoop([&](int q) {
            ExprScope s = withLocals(elementScope(op, q), q);
            std::string v = emitExpr(divisor ? op.body.operand(0) : op.body, s);
            if (keepSummand) {
                const std::string slotOf = summandCache + "[it_ * " + str(p.vec) + " + " + str(q) + "]";
                w.line(slotOf + " = " + v + ";");
                v = slotOf;
            }
            if (p.vec == 1) {
                w.line("p_" + name + "_ = " + combine(kind, accType, "p_" + name + "_", v) + ";");
                return;
            }
            // A vector's values combine pairwise, then into the thread's partial result: its chain
            // of dependent adds is a quarter as long (run 20: 128 dependent adds per pass otherwise).
            w.line("const " + acc + " e" + str(q) + "_ = " + v + ";");
            if (q + 1 < p.vec)
                return;
            const std::string pair =
                p.vec == 2 ? combine(kind, accType, "e0_", "e1_")
                           : combine(kind, accType, "(" + combine(kind, accType, "e0_", "e1_") + ")",
                                     "(" + combine(kind, accType, "e2_", "e3_") + ")");
            w.line("p_" + name + "_ = " + combine(kind, accType, "p_" + name + "_", pair) + ";");
        });
        if (staged && ri == 0)
            stageNextRow();
        const std::string pv = "p_" + name + "_";
        if (online && ri == 0) {
            // The sum pass shifts by the thread's own maximum (by 0 where it saw only -inf, so that
            // exp(-inf - shift) is 0, not NaN); the exchange waits for the sum.
            w.line("const " + acc + " m_" + name + "_ = " + pv + "; // this thread's maximum");
            w.line("const " + acc + " h_" + name + "_ = m_" + name + "_ == " +
                   reductionIdentityLiteral(kind, accType) + " ? 0.0f : m_" + name + "_; // the shift of its sum");
            rowValueName[op.output.id] = "h_" + name + "_";
            continue;
        }
        if (online) {
            exchangePairs(pv);
            rowValueName.clear();
            finishRowValue(*rowOps[0], "p_" + cIdentifier(rowOps[0]->output.name) + "_");
            finishRowValue(op, pv);
            const std::string maxName = cIdentifier(rowOps[0]->output.name);
            w.line("const " + acc + " c_" + name + "_ = m_" + maxName + "_ == " +
                   reductionIdentityLiteral(rowOps[0]->reduction->kind, accType) + " ? 0.0f : " +
                   emitExpDifference("m_" + maxName + "_", "s_" + maxName + "_", base.fastExp) +
                   "; // what rescales this thread's exp(x - shift) to exp(x - the row's maximum)");
            continue;
        }
        if (p.sharedReduce) {
            w.line(red + "[sub_][lane_] = " + pv + ";");
            w.line("__syncthreads();");
            w.line("#pragma unroll");
            w.open("for (int s_ = " + str(p.tpr / 2) + "; s_ > 0; s_ >>= 1)");
            w.line("if (lane_ < s_)");
            w.line("    " + red + "[sub_][lane_] = " +
                   combine(kind, accType, red + "[sub_][lane_]", red + "[sub_][lane_ + s_]") + ";");
            w.line("__syncthreads();");
            w.close();
            w.line(pv + " = " + red + "[sub_][0];");
        } else {
            w.line("#pragma unroll");
            w.open("for (int off_ = " + str(std::min(p.tpr, 32) / 2) + "; off_ > 0; off_ >>= 1)");
            w.line(pv + " = " + combine(kind, accType, pv, "__shfl_xor_sync(0xffffffffu, " + pv + ", off_)") + ";");
            w.close();
            if (p.warpsPerRow() > 1) {
                w.line("if ((lane_ & 31) == 0)");
                w.line("    " + red + "[sub_][lane_ >> 5] = " + pv + ";");
                w.line(rowBarrier());
                w.line(pv + " = " + red + "[sub_][0];");
                w.line("#pragma unroll");
                w.open("for (int w_ = 1; w_ < " + str(p.warpsPerRow()) + "; ++w_)");
                w.line(pv + " = " + combine(kind, accType, pv, red + "[sub_][w_]") + ";");
                w.close();
            }
            if (bulkPrefetch && ri == 0) {
                if (p.warpsPerRow() == 1)
                    w.line("__syncwarp();");
                w.line("if (lane_ == 0 && more_) // every thread of the row has read its slots: the next row's copy "
                       "may land there");
                issuePrefetch("next_");
            }
        }
        if (push) {
            pushExchange(ri, kind, pv);
        } else if (p.cluster > 1) {
            const std::string part = "part_" + slot + "[" + str(ri) + "]";
            w.line("if (threadIdx.x == 0)");
            w.line("    " + part + " = " + pv + ";");
            w.line("cluster_.sync();");
            w.line(pv + " = " + reductionIdentityLiteral(kind, accType) + ";");
            w.line("#pragma unroll");
            w.open("for (int b_ = 0; b_ < " + str(p.cluster) + "; ++b_)");
            w.line(pv + " = " + combine(kind, accType, pv, "*cluster_.map_shared_rank(&" + part + ", b_)") + ";");
            w.close();
            if (ri + 1 == rowOps.size()) {
                // The last read of another block's shared memory: arrive now, wait only before
                // exiting, so that the stores below do not wait for the slowest block.
                const std::string arrive = "cluster_.barrier_arrive(); // the last read of the other blocks' part_";
                if (stepped)
                    w.line("if (step_ == " + lastStepText + ")");
                w.line(stepped ? "    " + arrive : arrive);
            }
        }
        finishRowValue(op, pv);
    }
}

void RowKernelBuilder::outputs()
{
    if (staged && rowOps.empty())
        stageNextRow();
    // Element-wise results that leave the kernel, computed once every row value is known.
    if (!stored.empty()) {
        // The reciprocals of the row-invariant divisors, once per row.
        auto reciprocalName = [](std::size_t si, std::size_t k) {
            return "rc" + str(long(si)) + "_" + str(long(k)) + "_";
        };
        for (std::size_t si = 0; si < stored.size(); ++si)
            for (std::size_t k = 0; k < storedDivisors[si].size(); ++k) {
                const Expr &d = storedDivisors[si][k];
                const ExprScope s = withLocals(elementScope(*stored[si], 0), 0);
                w.line("const " + std::string(ir::cudaTypeName(d.dtype())) + " " + reciprocalName(si, k) + " = " +
                       emitExpr(ir::floatLiteralFor(d, 1.0), s) + " / " + emitExpr(d, s) + ";");
            }
        auto body = [&](int q) {
                for (std::size_t si = 0; si < stored.size(); ++si) {
                    const ir::ComputeOp *op = stored[si];
                    const ir::Tensor &t = *ctx.graph.tensor(op->output.id);
                    ExprScope s = withLocals(elementScope(*op, q), q);
                    for (std::size_t k = 0; k < storedDivisors[si].size(); ++k)
                        s.vars["%rcp" + str(long(k))] = reciprocalName(si, k);
                    if (!summandCache.empty()) // combine=online kept exp(x - the thread's shift): rescaled here
                        s.vars["%summand"] =
                            summandCache + "[it_ * " + str(p.vec) + " + " + str(q) + "]" +
                            (online ? " * c_" + cIdentifier(rowOps.back()->output.name) + "_" : "");
                    const std::string name = cIdentifier(t.name);
                    const Expr &body = storedBodies[si];
                    const std::string v =
                        "(" + std::string(ir::cudaTypeName(t.dtype)) + ")(" + emitExpr(body, s) + ")";
                    if (vectorLoads && t.dtype == ir::DType::F32 && schedule::laidOutLikeRows(a, t)) {
                        if (q == 0)
                            w.line(vecType + " o_" + name + "_;");
                        w.line("o_" + name + "_." + lanes[q] + " = " + v + ";");
                    } else if (schedule::laidOutLikeRows(a, t)) {
                        w.line(name + "[rowBase_ + c0_ + " + str(q) + "] = " + v + ";");
                    } else {
                        std::vector<std::string> idx;
                        for (int d = 0; d < a.rowRank; ++d)
                            idx.push_back("r" + str(d) + "_");
                        idx.push_back("(c0_ + " + str(q) + ")");
                        w.line(emitGlobalAccess(t, idx, s) + " = " + v + ";");
                    }
                }
            };
        auto after = [&] {
            const long long stage = std::int64_t(p.items) * p.tpr * p.vec;
            for (std::size_t si = 0; si < stored.size(); ++si) {
                const ir::Tensor &t = *ctx.graph.tensor(stored[si]->output.id);
                if (vectorLoads && t.dtype == ir::DType::F32 && schedule::laidOutLikeRows(a, t)) {
                    const std::string name = cIdentifier(t.name);
                    if (bulk)
                        w.line("*reinterpret_cast<" + vecType + " *>(out_ + " + str(static_cast<long long>(si) * stage) +
                               " + (it_ * " + str(p.tpr) + " + lane_) * " + str(p.vec) + ") = o_" + name + "_;");
                    else
                        w.line("*reinterpret_cast<" + vecType + " *>(" + name + " + rowBase_ + c0_) = o_" + name +
                               "_;");
                }
            }
            if (bulkPrefetch) {
                w.comment("prefetch=bulk: the next row's elements into the registers this item freed.");
                w.open("if (it_ < " + str(p.items - pfItems) + " && more_)");
                for (ir::TensorId id : a.rowInputs) {
                    const ir::Tensor *t = ctx.graph.tensor(id);
                    w.open("");
                    loadVector(cIdentifier(t->name), "x_" + cIdentifier(t->name) + "_", "it_ * 4 + ", t->dtype,
                               "next_ * (long long)cols_");
                    w.close();
                }
                w.close();
            }
        };
        if (bulk)
            bulkOutputs(body, after);
        else
            elementLoop(body, after);
    }
}

void RowKernelBuilder::finish()
{
    if (prefetch) {
        w.comment("The next row becomes this row.");
        for (ir::TensorId id : a.rowInputs) {
            const std::string name = cIdentifier(ctx.graph.tensor(id)->name);
            w.line("#pragma unroll");
            w.line("for (int e_ = 0; e_ < " + str(p.items * p.vec) + "; ++e_)");
            w.line("    x_" + name + "_[e_] = n_" + name + "_[e_];");
        }
    }
    if (stepped)
        w.close();
    if (bulk) {
        w.line("if (threadIdx.x == 0) // out_ outlives the copy engine's reads (its writes to global memory finish on their own)");
        w.line("    asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: \"memory\");");
    }
    if (push) {
        w.line("cluster_.sync(); // no block leaves while another may still push to it");
    } else if (p.cluster > 1) {
        if (rowOps.empty())
            w.line("cluster_.barrier_arrive();");
        else if (resident)
            w.lines("if (steps_ == 0) // no row reached the arrive above\n    cluster_.barrier_arrive();");
        w.line(
            "cluster_.barrier_wait(); // keep this block's partial results alive until every block has read them");
    }
    w.close();
    k.source = w.str();

    Expr rowsExpr = Expr(1);
    for (int d = 0; d < a.rowRank; ++d)
        rowsExpr = rowsExpr.isIntConst(1) ? a.domain[static_cast<std::size_t>(d)]
                                          : rowsExpr * a.domain[static_cast<std::size_t>(d)];
    Expr blocks = resident ? Expr(residentGroups) : ceilDivExpr(rowsExpr, p.rpb * p.steps);
    k.grid = {p.cluster > 1 ? blocks * p.cluster : blocks, Expr(1), Expr(1)};
}

} // namespace rowkernel

} // namespace stitch::codegen
