// The gemm strategy: C = A B tiled through shared memory with register blocking, double
// buffering and the element-wise epilogue (bias, activation, ...) applied before the only store.
//
// Shape of the kernel (BM x BN tile per block, BK deep steps, TM x TN results per thread):
//   global --(VEC-wide loads, registers; or cp.async into a ring of `stages` buffers)--> shared
//   [stage][BK][BM + pad] (A transposed) and [stage][BK][BN + pad] (B) --(float4 reads of two TM/2 and TN/2 halves, BM/2 and BN/2 apart,
//   so a warp reads consecutive 16-byte words without bank conflicts)--> TM x TN FMAs per k.
#include "core/codegen/CudaWriter.h"
#include "core/codegen/Kernels.h"
#include "core/codegen/MmaGemm.h"
#include "core/codegen/WgmmaGemm.h"

#include <algorithm>
#include <functional>

namespace stitch::codegen {

using ir::Expr;

namespace {

std::string str(long long v) { return std::to_string(v); }

std::string vecType(int n) { return n == 4 ? "float4" : n == 2 ? "float2" : "float"; }

const char *lane(int q)
{
    static const char *names[] = {"x", "y", "z", "w"};
    return names[q];
}

/// The group's ops on one accumulator value at (gi_, gj_): the head's init, then every fused op,
/// each as a local; `store` receives each stored tensor with its value.
void emitEpilogue(CudaWriter &w, const GenContext &ctx, const ExprScope &base, const std::string &accExpr,
                  const std::function<void(const ir::Tensor &, const std::string &)> &store)
{
    const auto &a = ctx.analysis;
    const ir::ComputeOp &head = *a.ops.front();
    for (std::size_t n = 0; n < a.ops.size(); ++n) {
        const ir::ComputeOp &op = *a.ops[n];
        ExprScope s = base;
        s.vars[op.domain[0].name] = "gi_";
        s.vars[op.domain[1].name] = "gj_";
        s.local = [&a, n](const Expr &r, const ExprScope &) -> std::optional<std::string> {
            for (std::size_t m = 0; m < n; ++m)
                if (a.ops[m]->output.id == r.tensor().id)
                    return "v_" + cIdentifier(r.tensor().name) + "_";
            return std::nullopt;
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

/// Writes the gemm kernel of one group: the decisions as named constants, the shared tiles, the
/// copies (registers or the cp.async ring), the main loop of the decisions' kind, the epilogue, and
/// with split K the kernel that sums the slices.
class GemmEmitter {
public:
    explicit GemmEmitter(const GenContext &ctx)
        : ctx(ctx), a(ctx.analysis), g(ctx.group), BM(g.value("block_m")), BN(g.value("block_n")),
          BK(g.value("block_k")), TM(g.value("thread_m")), TN(g.value("thread_n")), VEC(g.value("vector")),
          PAD(g.value("smem_pad")), STAGES(g.value("stages")), SWZ(g.value("swizzle")), MINB(g.value("min_blocks")),
          SPLIT(g.value("split_k")), ASYNC(g.value("copy") == 1), MMA(g.value("math") == 1),
          WG(g.value("math") == 2), wgTiles(wgmma::wgmmaTiles(BM, BN, BK, a.aRowMajor, !a.bRowMajor)),
          tileA(WG ? (wgTiles.swap ? wgTiles.desc : wgTiles.reg) : mma::sharedTile(MMA && a.aRowMajor, BK, BM, PAD)),
          tileB(WG ? (wgTiles.swap ? wgTiles.reg : wgTiles.desc) : mma::sharedTile(MMA && !a.bRowMajor, BK, BN, PAD)),
          mmaTiles{BM, BN, BK, TM, TN, tileA, tileB}, TX(BN / TN), TY(BM / TM), T(TX * TY),
          LA(BM * BK / (VEC * T)), LB(BN * BK / (VEC * T)), SA(BM + PAD), SB(BN + PAD), A(*ctx.graph.tensor(a.a)),
          B(*ctx.graph.tensor(a.b)), an(cIdentifier(A.name)), bn(cIdentifier(B.name)),
          accRows(WG ? wgTiles.accRows() : TM), accCols(WG ? wgTiles.accCols() : TN)
    {
        base.graph = &ctx.graph;
        base.wideTensors = &ctx.wide;
        planFastCopies();
    }

    std::vector<KernelCode> kernels()
    {
        header();
        mainLoop();
        epilogue();
        k.source = w.str();
        k.grid = {ceilDivExpr(a.domain[0], BM) * ceilDivExpr(a.domain[1], BN) * SPLIT, Expr(1), Expr(1)};
        if (SPLIT == 1)
            return {k};
        return {k, splitSumKernel()};
    }

private:
    const GenContext &ctx;
    const schedule::GroupAnalysis &a;
    const schedule::KernelGroup &g;
    const int BM, BN, BK, TM, TN, VEC, PAD, STAGES, SWZ, MINB, SPLIT;
    const bool ASYNC;
    // math=tf32_mma: the same tiles and ring, the products on TF32 tensor cores (MmaGemm.cpp).
    const bool MMA;
    // math=tf32_wgmma: Hopper's warpgroup MMAs, one operand from registers and one by descriptor from
    // a swizzled shared tile (WgmmaGemm.cpp); the next tile is published while a tile's MMAs run.
    const bool WG;
    const wgmma::WgmmaTiles wgTiles;
    // Shared tiles: k-major [stage][BK][other + PAD], or k-contiguous [stage][other][stride] for an
    // operand whose rows run along k under the tensor cores.
    const mma::SharedTile tileA, tileB;
    const mma::MmaTiles mmaTiles;
    const int TX, TY, T;
    const int LA, LB; ///< register staging: VEC-wide loads per thread of A's and B's tile
    const int SA, SB; ///< k-major tiles: floats per row
    const ir::Tensor &A, &B;
    const std::string an, bn;
    const int accRows, accCols;
    ExprScope base;
    CudaWriter w;
    KernelCode k;

    /// The kernel's parameters and launch shape, its signature, the shared tiles, the block's tile
    /// (rasterized in groups of SWZ block rows), the split-K slice and the zeroed accumulators.
    void header()
    {
        k.name = ctx.kernelName;
        k.params = kernelParams(ctx);
        k.block = {T, 1, 1};
        // (wgmma: 1 KiB more, so the descriptor's tile can start on a 1024-byte boundary, its swizzle atom.)
        k.dynamicSharedBytes = schedule::gemmSharedBytes(a, g);
        const std::string wsName = ctx.kernelName + "_partials";
        if (SPLIT > 1) {
            KernelParam ws;
            ws.name = "partials_";
            ws.tensor = true;
            ws.written = true;
            ws.scratch = wsName;
            k.params.push_back(ws);
            k.scratch.push_back({wsName, a.domain[0] * a.domain[1] * SPLIT});
        }
        w.comment(headerComment(ctx) + "\nA is " + A.name + (a.aRowMajor ? "[i, k]" : "[k, i] (transposed)") + ", B is " +
                  B.name + (a.bRowMajor ? "[k, j]" : "[j, k] (transposed)") + "; " + str(T) + " threads, " + str(TM) + "x" +
                  str(TN) + " results each" +
                  (MMA ? " (warps of " + str(mmaTiles.warpM()) + "x" + str(mmaTiles.warpN()) + " on TF32 tensor cores)" : "") +
                  (WG ? " (warpgroups of 64x" + str(wgTiles.nw) + " on TF32 warpgroup MMAs)" : "") +
                  "; " + str(k.dynamicSharedBytes) + " B of shared memory" +
                  (ASYNC ? "; tiles copied by cp.async, " + str(STAGES) + " in flight" : ""));
        w.line("extern \"C\" __global__ void __launch_bounds__(" + str(T) + ", " + str(MINB) + ") " + k.name + "(" +
               paramList(k.params) + ")");
        w.open("");
        if (WG) {
            // Device passes without sm_90a's features (nvcc -arch=sm_90a also emits compute_90 PTX) get a
            // body that traps; the sm_90a code is the one that runs. cuda::archForSource reads the macro.
            w.line("#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)");
            w.line("__trap(); // wgmma (math=tf32_wgmma) needs sm_90a code");
            w.line("#else");
        }
        w.line("extern __shared__ float4 smem4_[];");
        auto tileText = [&](const mma::SharedTile &t) {
            return "[" + str(STAGES) + "][" + str(t.rows) + "][" + str(t.stride) + "]" +
                   (t.swizzle ? " (k-contiguous, " + str(t.swizzle) + "-byte swizzle)" : t.kContiguous ? " (k-contiguous)" : "");
        };
        if (WG) {
            // The descriptor's tile first, on a 1024-byte boundary; each of its stages is a whole number of
            // swizzle atoms (8 rows).
            const bool aFirst = wgTiles.swap;
            const std::string first = aFirst ? "As_" : "Bs_", second = aFirst ? "Bs_" : "As_";
            const mma::SharedTile &firstTile = aFirst ? tileA : tileB, &secondTile = aFirst ? tileB : tileA;
            w.line("float *" + first + " = reinterpret_cast<float *>(smem4_) + ((1024 - ((unsigned)__cvta_generic_to_shared(smem4_) & 1023)) & 1023) / 4; // " +
                   tileText(firstTile));
            w.line("float *" + second + " = " + first + " + " + str(STAGES * firstTile.stageFloats()) + "; // " + tileText(secondTile));
        } else {
            w.line("float *As_ = reinterpret_cast<float *>(smem4_);                 // " + tileText(tileA));
            w.line("float *Bs_ = As_ + " + str(STAGES * tileA.stageFloats()) + ";                              // " +
                   tileText(tileB));
        }
        w.line("const int M_ = " + emitExpr(a.domain[0], base) + ", N_ = " + emitExpr(a.domain[1], base) +
               ", K_ = " + emitExpr(a.k, base) + ";");
        w.line("const long long lda_ = " + emitExpr(A.shape[1], base) + ", ldb_ = " + emitExpr(B.shape[1], base) + ";");
        w.comment("Blocks run in groups of " + str(SWZ) + " block rows, column by column, so the tiles of A and B they share stay in L2.");
        w.line("const int gridM_ = (M_ + " + str(BM - 1) + ") / " + str(BM) + ", gridN_ = (N_ + " + str(BN - 1) + ") / " +
               str(BN) + ";");
        if (SPLIT > 1) {
            w.comment("Split K: blocks [s * tiles, (s + 1) * tiles) sum slice s of K into partials_[s].");
            w.line("const int tile_ = (int)(blockIdx.x % (gridM_ * gridN_)), split_ = (int)(blockIdx.x / (gridM_ * gridN_));");
            w.line("const int kChunk_ = ((K_ + " + str(SPLIT - 1) + ") / " + str(SPLIT) + " + " + str(BK - 1) + ") / " + str(BK) +
                   " * " + str(BK) + ";");
            w.line("const int kBegin_ = split_ * kChunk_, kEnd_ = min(K_, kBegin_ + kChunk_);");
        } else {
            w.line("const int tile_ = (int)blockIdx.x;");
            w.line("const int kBegin_ = 0, kEnd_ = K_;");
        }
        w.line("const int firstM_ = (tile_ / (" + str(SWZ) + " * gridN_)) * " + str(SWZ) + ";");
        w.line("const int groupRows_ = min(gridM_ - firstM_, " + str(SWZ) + ");");
        w.line("const int inGroup_ = tile_ % (" + str(SWZ) + " * gridN_);");
        w.line("const int m0_ = (firstM_ + inGroup_ % groupRows_) * " + str(BM) + ";");
        w.line("const int n0_ = (inGroup_ / groupRows_) * " + str(BN) + ";");
        if (MMA)
            mma::emitMmaSetup(w, mmaTiles);
        else if (WG)
            wgmma::emitWgmmaSetup(w, wgTiles);
        else
            w.line("const int tx_ = threadIdx.x % " + str(TX) + ", ty_ = threadIdx.x / " + str(TX) + ";");
        w.line("float acc_[" + str(accRows) + "][" + str(accCols) + "];");
        w.line("#pragma unroll");
        w.line("for (int i_ = 0; i_ < " + str(accRows) + "; ++i_)");
        w.line("    #pragma unroll");
        w.line("    for (int j_ = 0; j_ < " + str(accCols) + "; ++j_)");
        w.line("        acc_[i_][j_] = 0.0f;");
        if (!ASYNC)
            w.line("float ra_[" + str(LA * VEC) + "], rb_[" + str(LB * VEC) + "];");
    }

    // Global -> registers for the tile at depth k0_.
    void loadOperand(const std::string &tensor, const std::string &regs, int loads, bool kFastest, int tileOther,
                           const std::string &other0, const std::string &otherLimit)
    {
        // kFastest: rows of `tileOther` elements along the other dimension, each BK deep and contiguous in k.
        const int perRow = (kFastest ? BK : tileOther) / VEC;
        w.line("#pragma unroll");
        w.open("for (int l_ = 0; l_ < " + str(loads) + "; ++l_)");
        w.line("const int v_ = threadIdx.x + l_ * " + str(T) + ";");
        if (kFastest) {
            w.line("const int o_ = " + other0 + " + v_ / " + str(perRow) + ", kk_ = k0_ + (v_ % " + str(perRow) + ") * " +
                   str(VEC) + ";");
            w.line("const long long at_ = (long long)o_ * " + std::string(tensor == an ? "lda_" : "ldb_") + " + kk_;");
        } else {
            w.line("const int kk_ = k0_ + v_ / " + str(perRow) + ", o_ = " + other0 + " + (v_ % " + str(perRow) + ") * " +
                   str(VEC) + ";");
            w.line("const long long at_ = (long long)kk_ * " + std::string(tensor == an ? "lda_" : "ldb_") + " + o_;");
        }
        w.open("if (o_ < " + otherLimit + " && kk_ < kEnd_)");
        if (VEC > 1) {
            w.line("const " + vecType(VEC) + " t_ = *reinterpret_cast<const " + vecType(VEC) + " *>(" + tensor + " + at_);");
            for (int q = 0; q < VEC; ++q)
                w.line(regs + "[l_ * " + str(VEC) + " + " + str(q) + "] = t_." + lane(q) + ";");
        } else {
            w.line(regs + "[l_] = __ldg(" + tensor + " + at_);");
        }
        w.close();
        w.open("else");
        w.line("#pragma unroll");
        w.line("for (int q_ = 0; q_ < " + str(VEC) + "; ++q_)");
        w.line("    " + regs + "[l_ * " + str(VEC) + " + q_] = 0.0f;");
        w.close();
        w.close();
    }

    // Registers -> shared stage `s_`: tiles are stored k-major ([k][m] and [k][n]).
    void storeOperand(const std::string &tile, const std::string &regs, int loads, bool kFastest, int tileOther,
                            int stride)
    {
        const int perRow = (kFastest ? BK : tileOther) / VEC;
        w.line("#pragma unroll");
        w.open("for (int l_ = 0; l_ < " + str(loads) + "; ++l_)");
        w.line("const int v_ = threadIdx.x + l_ * " + str(T) + ";");
        if (kFastest) {
            w.line("const int o_ = v_ / " + str(perRow) + ", kk_ = (v_ % " + str(perRow) + ") * " + str(VEC) + ";");
            w.line("#pragma unroll");
            w.line("for (int q_ = 0; q_ < " + str(VEC) + "; ++q_)");
            w.line("    " + tile + "[(s_ * " + str(BK) + " + kk_ + q_) * " + str(stride) + " + o_] = " + regs + "[l_ * " +
                   str(VEC) + " + q_];");
        } else {
            w.line("const int kk_ = v_ / " + str(perRow) + ", o_ = (v_ % " + str(perRow) + ") * " + str(VEC) + ";");
            if (VEC > 1) {
                std::string init;
                for (int q = 0; q < VEC; ++q)
                    init += (q ? ", " : "") + regs + "[l_ * " + str(VEC) + " + " + str(q) + "]";
                w.line("*reinterpret_cast<" + vecType(VEC) + " *>(&" + tile + "[(s_ * " + str(BK) + " + kk_) * " +
                       str(stride) + " + o_]) = make_" + vecType(VEC) + "(" + init + ");");
            } else {
                w.line(tile + "[(s_ * " + str(BK) + " + kk_) * " + str(stride) + " + o_] = " + regs + "[l_];");
            }
        }
        w.close();
    }

    void loadTile(const std::string &k0)
    {
        w.open("");
        w.line("const int k0_ = " + k0 + ";");
        loadOperand(an, "ra_", LA, a.aRowMajor, BM, "m0_", "M_");
        loadOperand(bn, "rb_", LB, !a.bRowMajor, BN, "n0_", "N_");
        w.close();
    }

    void storeTile(const std::string &stage)
    {
        w.open("");
        w.line("const int s_ = " + stage + ";");
        storeOperand("As_", "ra_", LA, a.aRowMajor, BM, SA);
        storeOperand("Bs_", "rb_", LB, !a.bRowMajor, BN, SB);
        w.close();
    }

    // Two halves of `half` values, tileSize/2 apart, read as 16-byte words (8- or 4-byte for short halves).
    void fragment(const std::string &dst, const std::string &tile, int half, const std::string &t, int tileSize,
                        int stride, const std::string &stage, const std::string &kk = "kk_",
                        const std::string &temp = "")
    {
        const std::string row = "(" + stage + " * " + str(BK) + " + " + kk + ") * " + str(stride);
        const int chunk = std::min(half, 4);
        for (int h = 0; h < 2; ++h)
            for (int c = 0; c < half / chunk; ++c) {
                const std::string at = tile + " + " + row + " + " + (h ? str(tileSize / 2) + " + " : "") + t + " * " +
                                       str(half) + (c ? " + " + str(c * chunk) : "");
                const int first = h * half + c * chunk;
                if (chunk == 1) {
                    w.line(dst + "[" + str(first) + "] = *(" + at + ");");
                    continue;
                }
                const std::string name = (temp.empty() ? dst : temp) + str(h) + "_" + str(c) + "_";
                w.line("const " + vecType(chunk) + " " + name + " = *reinterpret_cast<const " + vecType(chunk) + " *>(" +
                       at + ");");
                for (int q = 0; q < chunk; ++q)
                    w.line(dst + "[" + str(first + q) + "] = " + name + "." + lane(q) + ";");
            }
    }

    void compute(const std::string &stage)
    {
        w.line("#pragma unroll");
        w.open("for (int kk_ = 0; kk_ < " + str(BK) + "; ++kk_)");
        w.line("float a_[" + str(TM) + "], b_[" + str(TN) + "];");
        fragment("a_", "As_", TM / 2, "ty_", BM, SA, stage);
        fragment("b_", "Bs_", TN / 2, "tx_", BN, SB, stage);
        w.line("#pragma unroll");
        w.line("for (int i_ = 0; i_ < " + str(TM) + "; ++i_)");
        w.line("    #pragma unroll");
        w.line("    for (int j_ = 0; j_ < " + str(TN) + "; ++j_)");
        w.line("        acc_[i_][j_] = fmaf(a_[i_], b_[j_], acc_[i_][j_]);");
        w.close();
    }

    // Global -> shared stage s_ by cp.async, for the tile at depth k0_. An operand whose rows run
    // along k is copied one float per lane (consecutive lanes read consecutive k), transposed into
    // the k-major tile, or (k-contiguous tile) VEC floats per lane; the other one VEC floats per
    // lane. Out-of-range elements are zero-filled (source size 0, nothing read).
    int copyWidth(bool kFastest, const mma::SharedTile &layout)
    {
        return kFastest && !layout.kContiguous ? 1 : VEC;
    }

    // Beside the tensor-core accumulators and fragments, the addresses of many narrow copies, fully
    // unrolled and hoisted out of the k loop, would spill: those loops unroll by 4.
    const char *copyUnroll(int copies)
    {
        return (MMA || WG) && copies > 8 ? "#pragma unroll 4" : "#pragma unroll";
    }

    void copyOperand(const std::string &tensor, const std::string &tile, bool kFastest, int tileOther,
                           const std::string &other0, const std::string &otherLimit, const std::string &ld,
                           const mma::SharedTile &layout)
    {
        const int width = copyWidth(kFastest, layout), bytes = width * 4;
        const int perRow = (kFastest ? BK : tileOther) / width, copies = tileOther * BK / (width * T);
        w.line(copyUnroll(copies));
        w.open("for (int l_ = 0; l_ < " + str(copies) + "; ++l_)");
        w.line("const int v_ = threadIdx.x + l_ * " + str(T) + ";");
        if (kFastest)
            w.line("const int o_ = v_ / " + str(perRow) + ", kk_ = " +
                   (width > 1 ? "(v_ % " + str(perRow) + ") * " + str(width) : "v_ % " + str(perRow)) + ";");
        else
            w.line("const int kk_ = v_ / " + str(perRow) + ", o_ = (v_ % " + str(perRow) + ") * " + str(width) + ";");
        w.line("const int go_ = " + other0 + " + o_, gk_ = k0_ + kk_;");
        w.line("const bool in_ = go_ < " + otherLimit + " && gk_ < kEnd_;");
        w.line("const float *src_ = " + tensor + " + (in_ ? " +
               (kFastest ? "(long long)go_ * " + ld + " + gk_" : "(long long)gk_ * " + ld + " + go_") + " : 0);");
        w.line("const unsigned dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" + layout.at("s_", "kk_", "o_") +
               "]);");
        w.line(std::string("asm volatile(\"cp.async.") + (bytes == 16 ? "cg" : "ca") + ".shared.global [%0], [%1], " +
               str(bytes) + ", %2;\\n\" :: \"r\"(dst_), \"l\"(src_), \"r\"(in_ ? " + str(bytes) + " : 0));");
        w.close();
    }

    // Interior tiles (every element in range, a block-uniform test) copy from per-thread base
    // pointers set up once: one address add and one cp.async per copy, no predicates. Needs each
    // thread's column within a tile row to stay the same for all its copies (threads a multiple of
    // the copies per row).
    struct FastCopy {
        std::string prefix, tensor, ld;
        bool kFastest;
        int width, perRow, copies;
        mma::SharedTile layout;
    };
    std::vector<FastCopy> fast;

    void planFastCopies()
    {
        auto plan = [&](const std::string &prefix, const std::string &tensor, const std::string &ld, bool kFastest,
                        int tileOther, const mma::SharedTile &layout) {
            const int width = copyWidth(kFastest, layout), perRow = (kFastest ? BK : tileOther) / width;
            // A swizzled tile's XOR pattern repeats every 8 rows: a thread's copies must stay 8k rows apart.
            if (T % perRow == 0 && (!layout.swizzle || (T / perRow) % 8 == 0))
                fast.push_back({prefix, tensor, ld, kFastest, width, perRow, tileOther * BK / (width * T), layout});
        };
        if (ASYNC) {
            plan("a", an, "lda_", a.aRowMajor, BM, tileA);
            plan("b", bn, "ldb_", !a.bRowMajor, BN, tileB);
            if (fast.size() != 2)
                fast.clear();
        }
    }

    void fastSetup()
    {
        if (fast.empty())
            return;
        w.comment("Interior tiles: per-thread sources and destinations, advanced by whole copies and tiles.");
        w.line("const bool fullMN_ = m0_ + " + str(BM) + " <= M_ && n0_ + " + str(BN) + " <= N_;");
        for (const FastCopy &f : fast) {
            const std::string p = f.prefix, other0 = p == "a" ? "m0_" : "n0_", tile = p == "a" ? "As_" : "Bs_";
            const int rowsPerStep = T / f.perRow; // tile rows between a thread's consecutive copies
            w.line("const int " + p + "Row_ = threadIdx.x / " + str(f.perRow) + ", " + p + "Col_ = (threadIdx.x % " +
                   str(f.perRow) + ") * " + str(f.width) + ";");
            if (f.kFastest) {
                w.line("const float *" + p + "Src_ = " + f.tensor + " + (long long)(" + other0 + " + " + p + "Row_) * " + f.ld +
                       " + kBegin_ + " + p + "Col_;");
                w.line("const long long " + p + "Step_ = " + str(rowsPerStep) + "LL * " + f.ld + ", " + p + "Tile_ = " +
                       str(BK) + ";");
                if (f.layout.swizzle)
                    w.line("const unsigned " + p + "Dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" +
                           f.layout.at("0", p + "Col_", p + "Row_") + "]);");
                else if (f.layout.kContiguous)
                    w.line("const unsigned " + p + "Dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" + p +
                           "Row_ * " + str(f.layout.stride) + " + " + p + "Col_]);");
                else
                    w.line("const unsigned " + p + "Dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" + p +
                           "Col_ * " + str(f.layout.stride) + " + " + p + "Row_]);");
            } else {
                w.line("const float *" + p + "Src_ = " + f.tensor + " + (long long)(kBegin_ + " + p + "Row_) * " + f.ld +
                       " + " + other0 + " + " + p + "Col_;");
                w.line("const long long " + p + "Step_ = " + str(rowsPerStep) + "LL * " + f.ld + ", " + p + "Tile_ = " +
                       str(BK) + "LL * " + f.ld + ";");
                w.line("const unsigned " + p + "Dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" + p +
                       "Row_ * " + str(f.layout.stride) + " + " + p + "Col_]);");
            }
        }
    }

    void fastCopies()
    {
        for (const FastCopy &f : fast) {
            const std::string p = f.prefix;
            const int rowsPerStep = T / f.perRow, bytes = f.width * 4;
            // Shared bytes between consecutive copies: along the other dimension (transposed tile)
            // or down the rows (k rows, or the rows of a k-contiguous tile).
            const int dstStep = (f.kFastest && !f.layout.kContiguous ? rowsPerStep : rowsPerStep * f.layout.stride) * 4;
            w.line("const float *" + p + "s_ = " + p + "Src_ + (long long)kt0_ * " + p + "Tile_;");
            w.line("const unsigned " + p + "d_ = " + p + "Dst_ + s_ * " + str(f.layout.stageFloats() * 4) + ";");
            w.line(copyUnroll(f.copies));
            w.line("for (int l_ = 0; l_ < " + str(f.copies) + "; ++l_)");
            w.line(std::string("    asm volatile(\"cp.async.") + (bytes == 16 ? "cg" : "ca") +
                   ".shared.global [%0], [%1], " + str(bytes) + ";\\n\" :: \"r\"(" + p + "d_ + l_ * " + str(dstStep) +
                   "), \"l\"(" + p + "s_ + l_ * " + p + "Step_));");
        }
    }

    void copyTile(const std::string &kt, const std::string &stage)
    {
        w.open("");
        w.line("const int kt0_ = " + kt + ", s_ = " + stage + ";");
        w.line("const int k0_ = kBegin_ + kt0_ * " + str(BK) + ";");
        if (!fast.empty()) {
            w.open("if (fullMN_ && k0_ + " + str(BK) + " <= kEnd_)");
            fastCopies();
            w.close();
            w.open("else");
        }
        copyOperand(an, "As_", a.aRowMajor, BM, "m0_", "M_", "lda_", tileA);
        copyOperand(bn, "Bs_", !a.bRowMajor, BN, "n0_", "N_", "ldb_", tileB);
        if (!fast.empty())
            w.close();
        w.close();
    }

    // The cp.async ring: one commit group per tile; tiles 0 .. STAGES-2 go out before the loop.
    void commitGroup()
    {
        w.line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
    }

    void waitGroups(int pending)
    {
        w.line("asm volatile(\"cp.async.wait_group " + str(pending) + ";\\n\" ::: \"memory\");");
    }

    void ringPrologue()
    {
        fastSetup();
        for (int s = 0; s + 1 < STAGES; ++s) {
            w.line("if (" + str(s) + " < kTiles_)");
            copyTile(str(s), str(s));
            commitGroup();
        }
    }

    // Tile kt_ + STAGES - 1 into the buffer just freed (an empty group past the last tile).
    void refill()
    {
        w.line("if (kt_ + " + str(STAGES - 1) + " < kTiles_)");
        copyTile("kt_ + " + str(STAGES - 1), "write_");
        commitGroup();
    }

    void advanceRing()
    {
        w.line("read_ = read_ + 1 == " + str(STAGES) + " ? 0 : read_ + 1;");
        w.line("write_ = write_ + 1 == " + str(STAGES) + " ? 0 : write_ + 1;");
    }

    // cp.async wrote a tile through the generic proxy; wgmma reads it through the async proxy.
    void publishForWgmma()
    {
        w.line("asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");");
        w.line("__syncthreads();");
    }

    /// kTiles_, then the k loop of the decisions' kind.
    void mainLoop()
    {
        w.line("const int kTiles_ = kEnd_ > kBegin_ ? (kEnd_ - kBegin_ + " + str(BK - 1) + ") / " + str(BK) + " : 0;");
        if (WG)
            wgmmaRing();
        else if (ASYNC && STAGES >= 3 && !MMA)
            simtRing();
        else if (ASYNC)
            asyncRing();
        else if (STAGES == 2)
            registersTwoStages();
        else
            registersOneStage();
    }

    /// math=tf32_wgmma: the ring around the warpgroup MMAs.
    void wgmmaRing()
    {
        w.comment(str(STAGES) + " stages: cp.async keeps the next " + str(STAGES - 1) +
                  " tiles in flight. While a tile's warpgroup MMAs run, the next tile\n"
                  "is waited for and published and the buffer of the tile before is refilled; then the MMAs are\n"
                  "waited for, none left pending, before the next tile's fragments load.");
        ringPrologue();
        waitGroups(STAGES - 2);
        publishForWgmma();
        w.line("int read_ = 0, write_ = " + str(STAGES - 1) + ";");
        w.open("for (int kt_ = 0; kt_ < kTiles_; ++kt_)");
        wgmma::emitWgmmaTile(w, wgTiles, "read_");
        w.open("if (kt_ + 1 < kTiles_)");
        w.comment("Tile kt_ + 1 has landed (at most " + str(STAGES - 3) +
                  " newer groups pending); every warpgroup is done with tile kt_ - 1, refilled next.");
        waitGroups(STAGES - 3);
        publishForWgmma();
        w.close();
        refill();
        w.line("asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");");
        advanceRing();
        w.close();
    }

    /// FFMA with 3-4 cp.async stages: fragments double-buffered across k steps and tiles.
    void simtRing()
    {
        w.comment(str(STAGES) + " stages: cp.async keeps the next " + str(STAGES - 1) +
                  " tiles in flight while the math runs on this one; one commit group per tile. Fragments are\n"
                  "double-buffered in registers: each k step loads the next step's (across tiles too: the wait\n"
                  "and barrier come before a tile's last step, so the next tile's first fragments load under it).");
        ringPrologue();
        waitGroups(STAGES - 2);
        w.line("__syncthreads();");
        w.line("int read_ = 0, write_ = " + str(STAGES - 1) + ";");
        w.line("float a_[2][" + str(TM) + "], b_[2][" + str(TN) + "];");
        fragment("a_[0]", "As_", TM / 2, "ty_", BM, SA, "read_", "0", "fa_");
        fragment("b_[0]", "Bs_", TN / 2, "tx_", BN, SB, "read_", "0", "fb_");
        w.open("for (int kt_ = 0; kt_ < kTiles_; ++kt_)");
        w.line("#pragma unroll");
        w.open("for (int kk_ = 0; kk_ < " + str(BK) + "; ++kk_)");
        w.open("if (kk_ == " + str(BK - 1) + ")");
        w.comment("Tile kt_ + 1 has landed (at most " + str(STAGES - 3) +
                  " newer groups pending) and every thread is done with tile kt_ - 1's buffer, refilled now.");
        waitGroups(STAGES - 3);
        w.line("__syncthreads();");
        refill();
        advanceRing();
        w.close();
        w.comment("The next step's fragments (the next tile's first after the last step), then this step's FMAs.");
        fragment("a_[(kk_ + 1) % 2]", "As_", TM / 2, "ty_", BM, SA, "read_", "(kk_ + 1) % " + str(BK), "na_");
        fragment("b_[(kk_ + 1) % 2]", "Bs_", TN / 2, "tx_", BN, SB, "read_", "(kk_ + 1) % " + str(BK), "nb_");
        w.line("#pragma unroll");
        w.line("for (int i_ = 0; i_ < " + str(TM) + "; ++i_)");
        w.line("    #pragma unroll");
        w.line("    for (int j_ = 0; j_ < " + str(TN) + "; ++j_)");
        w.line("        acc_[i_][j_] = fmaf(a_[kk_ % 2][i_], b_[kk_ % 2][j_], acc_[i_][j_]);");
        w.close();
        w.close();
    }

    /// The cp.async ring of 2 stages (FFMA) or 2-4 (math=tf32_mma).
    void asyncRing()
    {
        w.comment(str(STAGES) + " stages: cp.async keeps the next " + str(STAGES - 1) +
                  " tiles in flight while the math runs on this one; one commit group per tile.");
        ringPrologue();
        w.line("int read_ = 0, write_ = " + str(STAGES - 1) + ";");
        w.open("for (int kt_ = 0; kt_ < kTiles_; ++kt_)");
        w.comment("Tile kt_ has landed (at most " + str(STAGES - 2) +
                  " newer groups pending), and every thread is done with the buffer refilled next.");
        waitGroups(STAGES - 2);
        w.line("__syncthreads();");
        refill();
        if (MMA)
            mma::emitMmaStage(w, mmaTiles, "read_");
        else
            compute("read_");
        advanceRing();
        w.close();
    }

    /// Register staging, two shared buffers.
    void registersTwoStages()
    {
        w.comment("Two stages: while the math runs on one shared tile, the next tile's loads are in flight.");
        loadTile("kBegin_");
        storeTile("0");
        w.line("__syncthreads();");
        w.open("for (int kt_ = 0; kt_ < kTiles_; ++kt_)");
        w.line("const int cur_ = kt_ & 1;");
        w.line("if (kt_ + 1 < kTiles_)");
        loadTile("kBegin_ + (kt_ + 1) * " + str(BK));
        compute("cur_");
        w.line("if (kt_ + 1 < kTiles_)");
        storeTile("cur_ ^ 1");
        w.line("__syncthreads();");
        w.close();
    }

    /// Register staging, one shared buffer.
    void registersOneStage()
    {
        w.open("for (int kt_ = 0; kt_ < kTiles_; ++kt_)");
        loadTile("kBegin_ + kt_ * " + str(BK));
        w.line("__syncthreads(); // the previous tile's readers are done");
        storeTile("0");
        w.line("__syncthreads();");
        compute("0");
        w.close();
    }

    /// Every fused op per element, then the stores; with split K the raw sums to the workspace.
    void epilogue()
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
        const int chunk = std::min(W, 4);
        bool vectorStore = W >= 2 && N.ok() && *N % chunk == 0;
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
        // The fused ops on one accumulator value; `store(sink, value)` receives every stored result.
        auto element = [&](const std::string &accExpr, const std::function<void(std::size_t, const std::string &)> &store) {
            if (SPLIT > 1) {
                store(0, accExpr);
                return;
            }
            emitEpilogue(w, ctx, base, accExpr, [&](const ir::Tensor &t, const std::string &v) {
                store(sinkIndex(cIdentifier(t.name)), v);
            });
        };
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
        if (WG)
            w.line("const int gj0_ = n0_ + " + wgmma::epilogueColumn(wgTiles) + ";");
        else if (MMA)
            w.line("const int gj0_ = n0_ + " + mma::epilogueColumn(mmaTiles) + ";");
        else
            w.line("const int gj0_ = n0_ + h_ * " + str(BN / 2) + " + tx_ * " + str(W) + ";");
        if (vectorStore) {
            w.open("if (gj0_ + " + str(W - 1) + " < N_)");
            for (const Sink &sink : sinks)
                w.line("float o_" + sink.name + "_[" + str(W) + "];");
            for (int q = 0; q < W; ++q) {
                w.open("");
                if (SPLIT == 1) // the fused ops may read the column; split K stores the raw sums
                    w.line("const int gj_ = gj0_ + " + str(q) + ";");
                element("acc_[i_][h_ * " + str(W) + " + " + str(q) + "]", [&](std::size_t sink, const std::string &v) {
                    w.line("o_" + sinks[sink].name + "_[" + str(q) + "] = " + v + ";");
                });
                w.close();
            }
            for (const Sink &sink : sinks) {
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
        element("acc_[i_][h_ * " + str(W) + " + q_]", [&](std::size_t sink, const std::string &v) {
            w.line(sinks[sink].at("gj_") + " = " + v + ";");
        });
        w.close();
        w.close();
        w.close();
        w.close();
        if (WG)
            w.line("#endif");
        w.close();
    }

    /// split_k > 1: the second kernel, one thread per result, sums the slices and applies the epilogue.
    KernelCode splitSumKernel()
    {
        KernelCode r;
        r.name = ctx.kernelName + "_sum";
        r.splitSum = true;
        r.params = k.params;
        r.params.back().written = false;
        r.block = {256, 1, 1};
        CudaWriter rw;
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
};

} // namespace

std::vector<KernelCode> generateGemmKernels(const GenContext &ctx) { return GemmEmitter(ctx).kernels(); }

} // namespace stitch::codegen
