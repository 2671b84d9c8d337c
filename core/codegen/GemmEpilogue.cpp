// The gemm strategy's epilogue: the element-wise ops fused after the product (bias, activation,
// ...), applied to each accumulator before the only store, and with split K the kernel that sums
// the slices and applies them (GemmEmitter.h; the main loops in GemmKernel.cpp).
#include "core/codegen/GemmEmitter.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <functional>

namespace stitch::codegen {
namespace gemm {

namespace {

/// Loads of the epilogue whose indices use no row variable (a bias[j]): the same for every row of
/// a thread's results, so epilogue() loads each once per column, before the row loop. Their text
/// with the column variable as gj_, each once, in order of first appearance.
/// Whether ops before the n-th of the group produce tensor id (its value is a local, v_NAME_).
bool producedBefore(const schedule::GroupAnalysis &a, std::size_t n, ir::TensorId id)
{
    for (std::size_t m = 0; m < n; ++m)
        if (a.ops[m]->output.id == id)
            return true;
    return false;
}

struct ColumnLoad {
    std::string text;
    ir::DType dtype;
};
std::vector<ColumnLoad> columnOnlyLoads(const GenContext &ctx, const ExprScope &base)
{
    const auto &a = ctx.analysis;
    std::vector<ColumnLoad> out;
    for (std::size_t n = 0; n < a.ops.size(); ++n) {
        const ir::ComputeOp &op = *a.ops[n];
        const Expr &e = n == 0 ? op.reduction->init : op.body;
        if (!e.defined())
            continue;
        ExprScope s = base;
        s.vars[op.domain[0].name] = "gi_";
        s.vars[op.domain[1].name] = "gj_";
        for (const Expr &r : ir::collectReads(e)) {
            const auto vars = ir::collectIterVars(r);
            if (producedBefore(a, n, r.tensor().id) || std::find(vars.begin(), vars.end(), op.domain[0].name) != vars.end())
                continue;
            const std::string text = emitExpr(r, s);
            if (std::none_of(out.begin(), out.end(), [&](const ColumnLoad &l) { return l.text == text; }))
                out.push_back({text, r.dtype()});
        }
    }
    return out;
}

/// The group's ops on one accumulator value at (gi_, gj_): the head's init, then every fused op,
/// each as a local; `store` receives each stored tensor with its value. A load in `columnLoads` is
/// read from col<k>_<columnIndex> instead (the values epilogue() loaded before its row loop).
void emitEpilogue(CudaWriter &w, const GenContext &ctx, const ExprScope &base, const std::string &accExpr,
                  const std::function<void(const ir::Tensor &, const std::string &)> &store,
                  const std::vector<ColumnLoad> &columnLoads = {}, const std::string &columnIndex = {})
{
    const auto &a = ctx.analysis;
    const ir::ComputeOp &head = *a.ops.front();
    for (std::size_t n = 0; n < a.ops.size(); ++n) {
        const ir::ComputeOp &op = *a.ops[n];
        ExprScope s = base;
        s.vars[op.domain[0].name] = "gi_";
        s.vars[op.domain[1].name] = "gj_";
        s.local = [&a, n, &columnLoads, &columnIndex](const Expr &r, const ExprScope &scope) -> std::optional<std::string> {
            if (producedBefore(a, n, r.tensor().id))
                return "v_" + cIdentifier(r.tensor().name) + "_";
            if (columnLoads.empty())
                return std::nullopt;
            ExprScope global = scope;
            global.local = nullptr;
            const std::string text = emitExpr(r, global);
            const auto it = std::find_if(columnLoads.begin(), columnLoads.end(),
                                         [&](const ColumnLoad &l) { return l.text == text; });
            if (it == columnLoads.end())
                return std::nullopt;
            return "col" + std::to_string(it - columnLoads.begin()) + "_" + columnIndex;
        };
        const std::string name = cIdentifier(op.output.name);
        std::string value;
        if (n == 0)
            value = head.reduction->init.defined() ? "(" + emitExpr(head.reduction->init, s) + ") + " + accExpr : accExpr;
        else
            value = emitExpr(op.body, s);
        w.line(std::string("const ") + ir::cudaTypeName(op.output.dtype) + " v_" + name + "_ = " + value + ";");
        if (a.isStored(op.output.id))
            store(*ctx.graph.tensor(op.output.id), "v_" + name + "_");
    }
}

} // namespace

void GemmEmitter::epilogue()
{
    // Epilogue: every fused op per element, then the stores. With split K the partial sums go to
    // the workspace as they are; the second kernel applies the epilogue.
    struct Sink {
        std::string name;
        std::function<std::string(const std::string &gj)> at; ///< the element (gi_, gj)
    };
    std::vector<Sink> sinks;
    // A thread's columns: two groups of TN/2 adjacent ones BN/2 apart (SIMT), or TN/2 pairs, one per
    // m16n8 tile of its warp (tensor cores); acc_[i_][h_ * W + q] is column q of group h_.
    // Warpgroup MMAs: pairs of adjacent columns along n, or (MMA rows along n) single columns.
    const int W = WG ? wgmma::epilogueWidth(wgTiles) : MMA ? 2 : TN / 2,
              columnGroups = WG ? wgmma::epilogueColumnGroups(wgTiles) : MMA ? TN / 2 : 2;
    const auto N = ir::evaluateSizeExpr(a.domain[1], ctx.sizes);
    const int chunk = N.ok() ? schedule::epilogueStoreWidth(W, *N) : 1;
    bool vectorStore = chunk > 1;
    if (SPLIT > 1) {
        sinks.push_back({"partials", [](const std::string &gj) {
                             return "partials_[((long long)split_ * M_ + gi_) * N_ + " + gj + "]";
                         }});
    } else {
        for (ir::TensorId id : a.stored) {
            const ir::Tensor &t = *ctx.graph.tensor(id);
            vectorStore = vectorStore && t.dtype == ir::DType::F32 && t.shape.rank() == 2 &&
                          t.shape[0].equals(a.domain[0]) && t.shape[1].equals(a.domain[1]);
            sinks.push_back({cIdentifier(t.name), [&, tp = &t](const std::string &gj) {
                                 return emitGlobalAccess(*tp, {"gi_", gj}, base);
                             }});
        }
    }
    auto sinkIndex = [&](const std::string &name) {
        for (std::size_t i = 0; i < sinks.size(); ++i)
            if (sinks[i].name == name)
                return i;
        return sinks.size();
    };
    // The fused ops on one accumulator value (in column q of group h_); `store(sink, value)`
    // receives every stored result.
    std::vector<ColumnLoad> columnLoads;
    if (SPLIT == 1 && columnGroups * W <= 16) // (registers: 16 per load at most)
        columnLoads = columnOnlyLoads(ctx, base);
    auto element = [&](const std::string &accExpr, const std::string &q,
                       const std::function<void(std::size_t, const std::string &)> &store) {
        if (SPLIT > 1) {
            store(0, accExpr);
            return;
        }
        emitEpilogue(
            w, ctx, base, accExpr,
            [&](const ir::Tensor &t, const std::string &v) { store(sinkIndex(cIdentifier(t.name)), v); }, columnLoads,
            "[h_][" + q + "]");
    };
    auto columnStart = [&] {
        if (WG)
            return "n0_ + " + wgmma::epilogueColumn(wgTiles);
        if (MMA)
            return "n0_ + " + mma::epilogueColumn(mmaTiles);
        return "n0_ + h_ * " + str(BN / 2) + " + tx_ * " + str(W);
    };
    if (!columnLoads.empty()) {
        std::string what;
        for (const ColumnLoad &l : columnLoads)
            what += (what.empty() ? "" : ", ") + l.text;
        w.comment("Loads that use no row (" + what + "): once per column of the thread's results, not once per row.");
        for (std::size_t l = 0; l < columnLoads.size(); ++l)
            w.line(std::string(ir::cudaTypeName(columnLoads[l].dtype)) + " col" + str(int(l)) + "_[" + str(columnGroups) +
                   "][" + str(W) + "];");
        w.line("#pragma unroll");
        w.open("for (int h_ = 0; h_ < " + str(columnGroups) + "; ++h_)");
        w.line("#pragma unroll");
        w.open("for (int q_ = 0; q_ < " + str(W) + "; ++q_)");
        w.line("const int gj_ = " + columnStart() + " + q_;");
        for (std::size_t l = 0; l < columnLoads.size(); ++l)
            w.line("col" + str(int(l)) + "_[h_][q_] = gj_ < N_ ? " + columnLoads[l].text + " : " +
                   std::string(ir::cudaTypeName(columnLoads[l].dtype)) + "(0);");
        w.close();
        w.close();
    }
    w.comment("Epilogue: the fused element-wise ops on each result, then the only store.");
    w.line("#pragma unroll");
    w.open("for (int i_ = 0; i_ < " + str(accRows) + "; ++i_)");
    if (WG)
        w.line("const int gi_ = m0_ + " + wgmma::epilogueRow(wgTiles) + ";");
    else if (MMA)
        w.line("const int gi_ = m0_ + " + mma::epilogueRow(mmaTiles) + ";");
    else
        w.line("const int gi_ = m0_ + (i_ < " + str(TM / 2) + " ? ty_ * " + str(TM / 2) + " + i_ : " + str(BM / 2) +
               " + ty_ * " + str(TM / 2) + " + i_ - " + str(TM / 2) + ");");
    w.line("if (gi_ >= M_)");
    w.line("    continue;");
    w.line("#pragma unroll");
    w.open("for (int h_ = 0; h_ < " + str(columnGroups) + "; ++h_)");
    w.line("const int gj0_ = " + columnStart() + ";");
    if (vectorStore) {
        // store=copy: the wide stores take fresh registers (x + 0.0f is an instruction, it turns -0
        // into +0), so ptxas need not keep the accumulators in aligned groups.
        const std::string copied = STORE == 2 ? " + 0.0f" : "";
        if (STORE == 1)
            w.comment("store=scalar: one 32-bit store per result, so the accumulators need not sit in aligned register groups.");
        else if (STORE == 2)
            w.comment("store=copy: the wide store takes copies (acc + 0.0f), so the accumulators need not sit in aligned "
                      "register groups.");
        w.open("if (gj0_ + " + str(W - 1) + " < N_)");
        for (const Sink &sink : sinks)
            w.line("float o_" + sink.name + "_[" + str(W) + "];");
        for (int q = 0; q < W; ++q) {
            w.open("");
            if (SPLIT == 1) // the fused ops may read the column; split K stores the raw sums
                w.line("[[maybe_unused]] const int gj_ = gj0_ + " + str(q) + ";");
            element("acc_[i_][h_ * " + str(W) + " + " + str(q) + "]", str(q), [&](std::size_t sink, const std::string &v) {
                w.line("o_" + sinks[sink].name + "_[" + str(q) + "] = " + v + copied + ";");
            });
            w.close();
        }
        for (const Sink &sink : sinks) {
            if (STORE == 1) { // store=scalar: one 32-bit store per result
                for (int q = 0; q < W; ++q)
                    w.line(sink.at(q ? "gj0_ + " + str(q) : "gj0_") + " = o_" + sink.name + "_[" + str(q) + "];");
                continue;
            }
            for (int c = 0; c < W / chunk; ++c) {
                std::string init;
                for (int q = 0; q < chunk; ++q)
                    init += (q ? ", " : "") + std::string("o_") + sink.name + "_[" + str(c * chunk + q) + "]";
                w.line("*reinterpret_cast<" + vecType(chunk) + " *>(&" + sink.at(c ? "gj0_ + " + str(c * chunk) : "gj0_") +
                       ") = make_" + vecType(chunk) + "(" + init + ");");
            }
        }
        w.close();
    }
    if (vectorStore)
        w.line("else");
    w.open("");
    w.line("#pragma unroll");
    w.open("for (int q_ = 0; q_ < " + str(W) + "; ++q_)");
    w.line("const int gj_ = gj0_ + q_;");
    w.line("if (gj_ >= N_)");
    w.line("    continue;");
    element("acc_[i_][h_ * " + str(W) + " + q_]", "q_", [&](std::size_t sink, const std::string &v) {
        w.line(sinks[sink].at("gj_") + " = " + v + ";");
    });
    w.close();
    w.close();
    w.close();
    w.close();
}

KernelCode GemmEmitter::splitSumKernel()
{
    KernelCode r;
    r.name = ctx.kernelName + "_sum";
    r.role = KernelRole::SplitKSum;
    r.params = k.params;
    r.params.back().written = false;
    r.block = {256, 1, 1};
    CudaWriter rw;
    rw.lines(deviceHelpers(base));
    rw.comment(ctx.kernelName + " (split K = " + str(SPLIT) + "), second kernel: sums the " + str(SPLIT) +
               " partial products of each result and applies the fused ops");
    rw.line("extern \"C\" __global__ void __launch_bounds__(256) " + r.name + "(" + paramList(r.params) + ")");
    rw.open("");
    rw.line("const int M_ = " + emitExpr(a.domain[0], base) + ", N_ = " + emitExpr(a.domain[1], base) + ";");
    rw.line("const long long total_ = (long long)M_ * N_;");
    rw.open("for (long long e_ = (long long)blockIdx.x * 256 + threadIdx.x; e_ < total_; e_ += (long long)gridDim.x * 256)");
    rw.line("const int gi_ = (int)(e_ / N_), gj_ = (int)(e_ % N_);");
    rw.line("float acc_ = 0.0f;");
    rw.line("#pragma unroll");
    rw.line("for (int s_ = 0; s_ < " + str(SPLIT) + "; ++s_)");
    rw.line("    acc_ += partials_[s_ * total_ + e_];");
    emitEpilogue(rw, ctx, base, "acc_", [&](const ir::Tensor &t, const std::string &v) {
        rw.line(emitGlobalAccess(t, {"gi_", "gj_"}, base) + " = " + v + ";");
    });
    rw.close();
    rw.close();
    r.source = rw.str();
    r.grid = {ceilDivExpr(a.domain[0] * a.domain[1], 256), Expr(1), Expr(1)};
    return r;
}

} // namespace gemm
} // namespace stitch::codegen
