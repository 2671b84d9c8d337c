// The row_reduction strategy: row-wise reductions and the element-wise ops around them
// (softmax, layer norm, row sums, matrix-vector), one row per group of threads.
#include "core/codegen/CudaWriter.h"
#include "core/codegen/Kernels.h"
#include "core/ir/ExprUtil.h"
#include "core/schedule/Space.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace stitch::codegen {

using ir::Expr;

namespace {

struct RowPlan {
    int tpr, rpb, vec, cluster, items, steps;
    bool cache, sharedReduce;
    int warpsPerRow() const { return std::max(tpr / 32, 1); }
};

std::string str(long long v) { return std::to_string(v); }

/// "((c0_ + 1))" -> "c0_ + 1": the expression without the parentheses that wrap all of it.
std::string stripParens(std::string e)
{
    while (e.size() >= 2 && e.front() == '(' && e.back() == ')') {
        int depth = 0;
        bool wrapsAll = true;
        for (std::size_t i = 0; i + 1 < e.size(); ++i) {
            depth += e[i] == '(' ? 1 : e[i] == ')' ? -1 : 0;
            if (depth == 0) {
                wrapsAll = false;
                break;
            }
        }
        if (!wrapsAll)
            break;
        e = e.substr(1, e.size() - 2);
    }
    return e;
}

/// sum(j) f / d with d the same for every j: the divisor, so that the kernel sums f and divides
/// once per row (one division per row instead of one per element).
std::optional<Expr> invariantDivisor(const ir::ComputeOp &op)
{
    if (op.reduction->kind != ir::ReduceKind::Sum || op.body.kind() != ir::ExprKind::Binary ||
        op.body.binaryOp() != ir::BinaryOp::Div)
        return std::nullopt;
    const ir::DType t = op.output.dtype;
    if ((t != ir::DType::F32 && t != ir::DType::F64) || op.body.dtype() != t)
        return std::nullopt;
    const Expr &d = op.body.operand(1);
    if (!ir::collectReads(d).empty())
        return std::nullopt;
    for (const std::string &v : ir::collectIterVars(d))
        for (const auto &rv : op.reduction->vars)
            if (v == rv.name)
                return std::nullopt;
    return d;
}

/// The body with every float division by a value that is the same for the whole row
/// (softmax's `/ rowSum[i]`) turned into a product with its reciprocal, the variable
/// "%rcpK" for divisors[K]: the kernel computes `1 / rowSum` once per row, before the element
/// loop, instead of a correctly rounded division per element (the product is within 2 ulp of
/// the quotient).
Expr reciprocalDivisions(const Expr &e, const std::string &column, std::vector<Expr> &divisors)
{
    auto rebuilt = [&](std::vector<Expr> ops) {
        bool same = true;
        for (std::size_t i = 0; i < ops.size(); ++i)
            same = same && ops[i].sameAs(e.operand(i));
        return same ? std::optional<std::vector<Expr>>{} : std::optional<std::vector<Expr>>{std::move(ops)};
    };
    switch (e.kind()) {
    case ir::ExprKind::Unary:
        if (auto ops = rebuilt({reciprocalDivisions(e.operand(0), column, divisors)}))
            return ir::unary(e.unaryOp(), (*ops)[0]);
        return e;
    case ir::ExprKind::Cast:
        if (auto ops = rebuilt({reciprocalDivisions(e.operand(0), column, divisors)}))
            return ir::cast(e.dtype(), (*ops)[0]);
        return e;
    case ir::ExprKind::Select:
        if (auto ops = rebuilt({reciprocalDivisions(e.operand(0), column, divisors),
                                reciprocalDivisions(e.operand(1), column, divisors),
                                reciprocalDivisions(e.operand(2), column, divisors)}))
            return ir::select((*ops)[0], (*ops)[1], (*ops)[2]);
        return e;
    case ir::ExprKind::Binary: {
        const Expr lhs = reciprocalDivisions(e.operand(0), column, divisors),
                   rhs = reciprocalDivisions(e.operand(1), column, divisors);
        const ir::DType t = e.dtype();
        if (e.binaryOp() == ir::BinaryOp::Div && (t == ir::DType::F32 || t == ir::DType::F64) && rhs.dtype() == t &&
            !rhs.isConst() && !ir::collectReads(rhs).empty()) {
            const auto vars = ir::collectIterVars(rhs);
            if (std::find(vars.begin(), vars.end(), column) == vars.end()) {
                std::size_t k = 0;
                while (k < divisors.size() && !divisors[k].equals(rhs))
                    ++k;
                if (k == divisors.size())
                    divisors.push_back(rhs);
                return ir::binary(ir::BinaryOp::Mul, lhs, ir::cast(t, ir::var("%rcp" + std::to_string(k))));
            }
        }
        if (lhs.sameAs(e.operand(0)) && rhs.sameAs(e.operand(1)))
            return e;
        return ir::binary(e.binaryOp(), lhs, rhs);
    }
    default: return e;
    }
}

/// e with every subtree equal to `target` replaced by `with`.
Expr replaceEqual(const Expr &e, const Expr &target, const Expr &with)
{
    if (e.equals(target))
        return with;
    switch (e.kind()) {
    case ir::ExprKind::Unary: {
        const Expr a = replaceEqual(e.operand(0), target, with);
        return a.sameAs(e.operand(0)) ? e : ir::unary(e.unaryOp(), a);
    }
    case ir::ExprKind::Cast: {
        const Expr a = replaceEqual(e.operand(0), target, with);
        return a.sameAs(e.operand(0)) ? e : ir::cast(e.dtype(), a);
    }
    case ir::ExprKind::Select: {
        const Expr c = replaceEqual(e.operand(0), target, with), a = replaceEqual(e.operand(1), target, with),
                   b = replaceEqual(e.operand(2), target, with);
        return c.sameAs(e.operand(0)) && a.sameAs(e.operand(1)) && b.sameAs(e.operand(2)) ? e : ir::select(c, a, b);
    }
    case ir::ExprKind::Binary: {
        const Expr a = replaceEqual(e.operand(0), target, with), b = replaceEqual(e.operand(1), target, with);
        return a.sameAs(e.operand(0)) && b.sameAs(e.operand(1)) ? e : ir::binary(e.binaryOp(), a, b);
    }
    default: return e;
    }
}

/// The row kernel of one group, written in phases: the header (helpers, signature, shared memory,
/// the row and its columns), the register cache and the row-step loop, the reductions, the outputs.
/// The members keep the names the phases and helpers share (p: the plan, w: the text, k: the kernel).
class RowKernelBuilder {
public:
    explicit RowKernelBuilder(const GenContext &context)
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
        stepped = p.steps > 1;
        prefetch = stepped && p.cache && g.value("prefetch") == 1 && !a.rowInputs.empty();
        // prefetch=shared: the next row goes to shared memory by cp.async (each thread copies the
        // slots it reads back, so no barrier guards them) while this row is reduced and stored.
        staged = stepped && p.cache && g.value("prefetch") == 2 && !a.rowInputs.empty();
        stageElems = p.rpb * p.tpr * p.items * p.vec; // per row input
        slot = stepped ? "[step_ & 1]" : "";

        k.name = ctx.kernelName;
        k.params = kernelParams(ctx);
        k.block = {threads, 1, 1};
        k.clusterSize = p.cluster;
        if (staged) // stageElems floats per row input, as the schedule's limits count them
            k.dynamicSharedBytes = schedule::rowStagingBytes(a, g, ctx.sizes);

        for (const auto *op : a.ops)
            if (op->reduction)
                rowOps.push_back(op);
        accType = rowOps.empty() ? ir::DType::F32 : rowOps.front()->output.dtype;
        acc = ir::cudaTypeName(accType);

        // combine=online (softmax): the maximum and the sum of exp(x - maximum) leave the thread as one
        // (maximum, sum) pair, each sum taken about the thread's own maximum and rescaled as pairs meet.
        online = g.value("combine") == 1 && schedule::hasOnlineSoftmaxPair(a) && !p.sharedReduce;
        fastExp = g.value("exp") == 1;
        pairCombine = k.name + "_online";

        base.graph = &ctx.graph;
        base.wideTensors = &ctx.wide;
        base.fastExp = fastExp;
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
        alwaysActive = p.rpb == 1 && !stepped;
        planOutputs();
    }

    KernelCode build()
    {
        header();
        cacheAndSteps();
        reductions();
        outputs();
        finish();
        return k;
    }

private:
    const GenContext &ctx;
    const schedule::GroupAnalysis &a;
    const schedule::KernelGroup &g;
    RowPlan p;
    long long cols = 1;
    int threads = 0, stageElems = 0;
    bool vectorLoads = false, stepped = false, prefetch = false, staged = false, online = false, fastExp = false;
    bool exactSpan = false, alwaysActive = false;
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

    /// The outputs' bodies (reciprocals of row-invariant divisors) and the summand cache.
    void planOutputs()
    {
        for (const auto *op : a.ops)
            if (!op->reduction && a.isStored(op->output.id)) {
                stored.push_back(op);
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

    /// The kernel's comment, helpers and signature, its shared memory, the row and its columns.
    void header()
    {
        std::string shape = "row length " + str(cols) + ": " + str(p.items) + " x " + str(p.vec) +
                            " elements per thread" +
                            (p.cluster > 1 ? ", split over a cluster of " + str(p.cluster) + " blocks" : "");
        if (stepped)
            shape += "\n" + str(p.steps) + " rows per " + (p.cluster > 1 ? "cluster" : "block") +
                     (p.rpb > 1 ? " and sub-block" : "") + ", one after another" +
                     (prefetch ? ": the next row's elements load into registers while this row is reduced and stored"
                      : staged ? ": the next row's elements copy into shared memory (cp.async, " +
                                     str(k.dynamicSharedBytes) + " B) while this row is reduced and stored"
                               : "");
        if (online) {
            shape += "\ncombine=online: " + cIdentifier(rowOps[0]->output.name) + " and " +
                     cIdentifier(rowOps[1]->output.name) + " in one pass and one exchange of (maximum, sum) pairs";
        }
        w.comment(headerComment(ctx) + "\n" + shape);
        if (fastExp)
            w.lines(fastExpHelper());
        if (online) {
            w.comment(
                "combine=online: (m, s) and (om, os), each s a sum of exp(x - its m), as one pair about the larger m.");
            w.line("static __device__ __forceinline__ void " + pairCombine +
                   "(float &m, float &s, float om, float os)");
            w.open("");
            w.line("const float n = fmaxf(m, om);");
            w.line("s = (m == n ? s : s * " + emitExpDifference("m", "n", fastExp) + ") + (om == n ? os : os * " +
                   emitExpDifference("om", "n", fastExp) + ");");
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
        if (p.cluster > 1) {
            w.line("__shared__ " + acc + " part_" + parity + "[" + str(std::max<std::size_t>(rowOps.size(), 1)) + "];");
            w.line("cooperative_groups::cluster_group cluster_ = cooperative_groups::this_cluster();");
        }
        w.line("const int lane_ = threadIdx.x % " + str(p.tpr) + ";");
        w.line("const int sub_ = threadIdx.x / " + str(p.tpr) + ";");
        if (!stepped) {
            w.line("const long long row_ = (long long)(blockIdx.x / " + str(p.cluster) + ") * " + str(p.rpb) +
                   " + sub_;");
            rowVariables();
            columnRange();
            w.line("const long long rowBase_ = row_ * (long long)cols_;");
        } else {
            w.line("const long long rows_ = " + rows + ";");
            w.line("const long long first_ = (long long)(blockIdx.x / " + str(p.cluster) + ") * " +
                   str(p.rpb * p.steps) + " + sub_;");
            columnRange();
        }
    }

    /// The register cache of the row inputs, the first row's loads and the row-step loop's head.
    void cacheAndSteps()
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
            w.open("for (int step_ = 0; step_ < " + str(p.steps) + "; ++step_)");
            w.line("const long long row_ = first_ + (long long)step_ * " + str(p.rpb) + ";");
            rowVariables();
            w.line("const long long rowBase_ = row_ * (long long)cols_;");
            if (prefetch) {
                w.comment("Prefetch: the next row's loads are in flight during this row's reductions and stores.");
                w.line("const long long next_ = row_ + " + str(p.rpb) + ";");
                loadRow("n_", "step_ + 1 < " + str(p.steps) + " && next_ < rows_", "next_ * (long long)cols_");
            } else if (staged) {
                unstageRow();
            } else if (p.cache && !a.rowInputs.empty()) {
                loadRow("x_", "active_", "rowBase_");
            }
        }
    }

    /// Each reduction: its pass over the row, the exchange across lanes, warps and the cluster.
    void reductions()
    {
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
                w.line("p_" + name + "_ = " + combine(kind, accType, "p_" + name + "_", v) + ";");
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
                       emitExpDifference("m_" + maxName + "_", "s_" + maxName + "_", fastExp) +
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
                    w.line("__syncthreads();");
                    w.line(pv + " = " + red + "[sub_][0];");
                    w.line("#pragma unroll");
                    w.open("for (int w_ = 1; w_ < " + str(p.warpsPerRow()) + "; ++w_)");
                    w.line(pv + " = " + combine(kind, accType, pv, red + "[sub_][w_]") + ";");
                    w.close();
                }
            }
            if (p.cluster > 1) {
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
                        w.line("if (step_ == " + str(p.steps - 1) + ")");
                    w.line(stepped ? "    " + arrive : arrive);
                }
            }
            finishRowValue(op, pv);
        }
    }

    /// Element-wise results that leave the kernel, once every row value is known.
    void outputs()
    {
        if (staged && rowOps.empty())
            stageNextRow();
        // Element-wise results that leave the kernel, computed once every row value is known.
        if (!stored.empty()) {
            auto contiguousRow = [&](const ir::Tensor &t) {
                if (t.shape.rank() != a.rowRank + 1)
                    return false;
                for (int d = 0; d <= a.rowRank; ++d)
                    if (!t.shape[static_cast<std::size_t>(d)].equals(a.domain[static_cast<std::size_t>(d)]))
                        return false;
                return true;
            };
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
            elementLoop(
                [&](int q) {
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
                            w.line("*reinterpret_cast<" + vecType + " *>(" + name + " + rowBase_ + c0_) = o_" + name +
                                   "_;");
                        }
                    }
                });
        }
    }

    /// The prefetched row's rotation, the end of the row-step loop and of the kernel, the grid.
    void finish()
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
        if (p.cluster > 1) {
            if (rowOps.empty())
                w.line("cluster_.barrier_arrive();");
            w.line(
                "cluster_.barrier_wait(); // keep this block's partial results alive until every block has read them");
        }
        w.close();
        k.source = w.str();

        Expr rowsExpr = Expr(1);
        for (int d = 0; d < a.rowRank; ++d)
            rowsExpr = rowsExpr.isIntConst(1) ? a.domain[static_cast<std::size_t>(d)]
                                              : rowsExpr * a.domain[static_cast<std::size_t>(d)];
        Expr blocks = ceilDivExpr(rowsExpr, p.rpb * p.steps);
        k.grid = {p.cluster > 1 ? blocks * p.cluster : blocks, Expr(1), Expr(1)};
    }

    int rowOpIndex(ir::TensorId id)
    {
        for (std::size_t i = 0; i < rowOps.size(); ++i)
            if (rowOps[i]->output.id == id)
                return static_cast<int>(i);
        return -1;
    }

    // The row decomposition (r0_, r1_, ...) and the row's flat offset, for the row in row_.
    void rowVariables()
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

    void columnRange()
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

    void loadVector(const std::string &name, const std::string &dst, const std::string &dstBase, ir::DType t,
                    const std::string &rowBase = "rowBase_")
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

    // The loop over a thread's cached items (it_, first column c0_) and the test of `guard` and,
    // unless the caller knows every item lies in the span, of the column; the caller closes both.
    // Tests that cannot fail are left out (exactSpan, alwaysActive).
    void openItems(const std::string &guard, bool columnTest = true)
    {
        w.line("#pragma unroll");
        w.open("for (int it_ = 0; it_ < " + str(p.items) + "; ++it_)");
        if (columnTest)
            w.line(std::string(exactSpan ? "[[maybe_unused]] " : "") + "const int c0_ = begin_ + (it_ * " + str(p.tpr) +
                   " + lane_) * " + str(p.vec) + ";");
        std::string test = guard == "active_" && alwaysActive ? "" : guard;
        if (columnTest && !exactSpan)
            test += (test.empty() ? "" : " && ") + std::string("c0_ < end_");
        w.open(test.empty() ? "" : "if (" + test + ")");
    }

    // Every load of a thread's cached elements of one row, issued together before any use.
    void loadRow(const std::string &prefix, const std::string &guard, const std::string &rowBase)
    {
        openItems(guard);
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

    // prefetch=shared: thread lane_ of sub-row sub_ owns the slots of its elements in stage_.
    std::string stageSlot(std::size_t input)
    {
        return str(static_cast<long long>(input) * stageElems) + " + (sub_ * " + str(p.items * p.tpr) + " + it_ * " +
               str(p.tpr) + " + lane_) * " + str(p.vec);
    }

    // cp.async of every cached element of one row into the thread's slots (nothing waits here):
    // one source pointer and one shared address per input, the elements at fixed offsets.
    void stageRow(const std::string &guard, const std::string &rowBase)
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

    // This row's elements from the thread's slots into the register cache, once its copies landed.
    void unstageRow()
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

    // prefetch=shared: the next row's copies go out once this row's first pass has consumed
    // every element read from the slots they overwrite.
    void stageNextRow()
    {
        w.comment("Prefetch: the next row's copies to shared memory are in flight during this row's reductions and "
                  "stores.");
        w.line("const long long next_ = row_ + " + str(p.rpb) + ";");
        stageRow("step_ + 1 < " + str(p.steps) + " && next_ < rows_", "next_ * (long long)cols_");
    }

    std::optional<std::string> columnRead(const Expr &r, const ExprScope &scope, int q)
    {
        const ir::Tensor &t = *ctx.graph.tensor(r.tensor().id);
        if (!vectorLoads || t.dtype != ir::DType::F32 || t.shape.rank() != 1 || r.operands().size() != 1 ||
            !t.shape[0].equals(a.domain.back()))
            return std::nullopt;
        if (stripParens(emitExpr(r.operands()[0], scope)) != "c0_ + " + str(q))
            return std::nullopt;
        const std::string name = cIdentifier(t.name);
        if (columnLoaded.insert(t.id).second)
            w.line("const " + vecType + " v_" + name + "_ = *reinterpret_cast<const " + vecType + " *>(" + name +
                   " + c0_);");
        return "v_" + name + "_." + lanes[q];
    }

    // The element loop shared by every pass; `body(q)` writes the work for element c0_ + q.
    void elementLoop(const std::function<void(int)> &body, const std::function<void()> &after = {})
    {
        columnLoaded.clear();
        if (p.cache) {
            openItems("active_");
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

    // The scope of one element of one op: row variables, the column, cached and row values.
    ExprScope elementScope(const ir::ComputeOp &op, int q)
    {
        ExprScope s = base;
        for (int d = 0; d < a.rowRank; ++d)
            s.vars[op.domain[static_cast<std::size_t>(d)].name] = "r" + str(d) + "_";
        const std::string c = op.reduction ? op.reduction->vars[0].name : op.domain.back().name;
        s.vars[c] = "(c0_ + " + str(q) + ")";
        return s;
    }

    ExprScope withLocals(ExprScope s, int q)
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

    // The row value s_NAME_ from the exchanged partial result pv (the division by a row-invariant
    // divisor, the init), stored by one thread when it leaves the kernel.
    void finishRowValue(const ir::ComputeOp &op, const std::string &pv)
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
            const std::string leader = p.cluster > 1 ? "active_ && threadIdx.x == 0 && cluster_.block_rank() == 0"
                                                     : "active_ && lane_ == 0";
            w.line("if (" + leader + ")");
            w.line("    " + emitGlobalAccess(*ctx.graph.tensor(op.output.id), idx, rowScope) + " = s_" + name + "_;");
        }
    }

    // combine=online's exchange: the (maximum, sum) pairs of the lanes, the warps and the cluster's
    // blocks meet in a fixed order, so every thread of the row ends with the same pair.
    void exchangePairs(const std::string &ps)
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
                w.line("if (step_ == " + str(p.steps - 1) + ")");
            w.line(stepped ? "    " + arrive : arrive);
        }
    }
};

} // namespace

KernelCode generateRowKernel(const GenContext &ctx) { return RowKernelBuilder(ctx).build(); }

} // namespace stitch::codegen
