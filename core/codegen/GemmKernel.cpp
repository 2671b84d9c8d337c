// The gemm strategy: C = A B tiled through shared memory with register blocking, double
// buffering and the element-wise epilogue (bias, activation, ...) applied before the only store.
// GemmEmitter (GemmEmitter.h): the kernel's header and the main loop of each kind here; the epilogue
// and the split-K sum kernel in GemmEpilogue.cpp, the copies in GemmCopies.cpp, stream-K's segments
// and sums in GemmStreamK.cpp.
#include "core/codegen/GemmEmitter.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <functional>

namespace stitch::codegen {
namespace gemm {

// Writes the gemm kernel of one group: the decisions as named constants, the shared tiles, the
// copies (registers or the cp.async ring), the main loop of the decisions' kind, the epilogue, and
// with split K the kernel that sums the slices.

void GemmEmitter::header()
{
    k.name = ctx.kernelName;
    k.params = kernelParams(ctx);
    if (TRANSB) { // B itself is read by the transposing kernel only; this one reads bt_
        std::erase_if(k.params, [&](const KernelParam &p) { return p.tensor && p.tensorId == a.b; });
        addWorkspace(k, "bt_", transposedBBuffer(), false);
    }
    k.block = {T + (PRODUCER ? CT : 0), 1, 1};
    // (wgmma: 1 KiB more, so the descriptor's tile can start on a 1024-byte boundary, its swizzle atom.)
    k.dynamicSharedBytes = schedule::gemmSharedBytes(a, g);
    auto workspace = [&](const std::string &param, const std::string &buffer, ir::DType dtype, Expr elements, bool zeroed) {
        addWorkspace(k, param, {buffer, std::move(elements), dtype, zeroed}, true);
    };
    if (SPLIT > 1)
        workspace("partials_", ctx.kernelName + "_partials", ir::DType::F32, a.domain[0] * a.domain[1] * SPLIT, false);
    if (STREAMK) {
        // Each shared block's partial sums (two slots: its first and its last segment), in the thread's
        // own register order, and a counter per shared tile (fewer than 2 SKB; zero between launches:
        // the last block to arrive resets it).
        workspace("partials_", ctx.kernelName + "_partials", ir::DType::F32,
                  Expr(static_cast<std::int64_t>(2 * SKB) * accRows * accCols * T), false);
        workspace("flags_", ctx.kernelName + "_flags", ir::DType::I32, Expr(static_cast<std::int64_t>(2 * SKB)), true);
    }
    w.lines(deviceHelpers(base));
    w.comment(headerComment(ctx) + "\nA is " + A.name + (a.aRowMajor ? "[i, k]" : "[k, i] (transposed)") + ", B is " +
              B.name + (a.bRowMajor ? "[k, j]" : "[j, k] (transposed)") +
              (TRANSB ? ", read as bt_[j, k] (written by " + ctx.kernelName + "_transpose_b)" : "") + "; " + str(T) +
              " threads, " + str(TM) + "x" +
              str(TN) + " results each" +
              (MMA ? " (warps of " + str(mmaTiles.warpM()) + "x" + str(mmaTiles.warpN()) + " on TF32 tensor cores)" : "") +
              (WG ? " (warpgroups of 64x" + str(wgTiles.nw) + " on TF32 warpgroup MMAs)" : "") +
              "; " + str(k.dynamicSharedBytes) + " B of shared memory" +
              (ASYNC ? "; tiles copied by cp.async, " + str(STAGES) + " in flight" : "") +
              (PRODUCER ? ", by a producer warpgroup (threads " + str(T) + ".." + str(T + CT - 1) + ")" : ""));
    w.line("extern \"C\" __global__ void __launch_bounds__(" + str(k.block[0]) + ", " + str(MINB) + ") " + k.name + "(" +
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
    w.line("const long long lda_ = " + emitExpr(A.shape[1], base) + ", ldb_ = " +
           emitExpr(TRANSB ? B.shape[0] : B.shape[1], base) + ";");
    w.comment("Blocks run in groups of " + str(SWZ) + " block rows, column by column, so the tiles of A and B they share stay in L2.");
    w.line("const int gridM_ = (M_ + " + str(BM - 1) + ") / " + str(BM) + ", gridN_ = (N_ + " + str(BN - 1) + ") / " +
           str(BN) + ";");
}

void GemmEmitter::tileSetup()
{
    if (STREAMK) {
        streamKLoop();
    } else if (SPLIT > 1) {
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

void GemmEmitter::fragment(const std::string &dst, const std::string &tile, int half, const std::string &t, int tileSize,
                           int stride, const std::string &stage, const std::string &kk,
                           const std::string &temp)
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

void GemmEmitter::compute(const std::string &stage)
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

void GemmEmitter::mainLoop()
{
    w.line("const int kTiles_ = kEnd_ > kBegin_ ? (kEnd_ - kBegin_ + " + str(BK - 1) + ") / " + str(BK) + " : 0;");
    if (WG && PRODUCER)
        wgmmaProducerRing();
    else if (WG)
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

void GemmEmitter::wgmmaRing()
{
    // transpose_b=on: no fragments to load, so a tile's MMAs stay in flight across the next barrier.
    const bool inFlight = wgTiles.shared;
    if (inFlight)
        w.comment(str(STAGES) + " stages: cp.async keeps the next " + str(STAGES - 1) +
                  " tiles in flight. No fragments to load (both operands by descriptor), so a\n"
                  "tile's MMAs stay in flight while the tile before is waited for, the next tile is published and the\n"
                  "buffer of the tile before is refilled.");
    else
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
    if (inFlight)
        w.line("asm volatile(\"wgmma.wait_group.sync.aligned 1;\\n\" ::: \"memory\"); // tile kt_ - 1's MMAs are done");
    w.open("if (kt_ + 1 < kTiles_)");
    w.comment("Tile kt_ + 1 has landed (at most " + str(STAGES - 3) +
              " newer groups pending); every warpgroup is done with tile kt_ - 1, refilled next.");
    waitGroups(STAGES - 3);
    publishForWgmma();
    w.close();
    refill();
    if (!inFlight)
        w.line("asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");");
    advanceRing();
    w.close();
    if (inFlight)
        w.line("asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");");
}

void GemmEmitter::wgmmaProducerRing()
{
    const int S = STAGES;
    const schedule::ProducerRegisters regs =
        schedule::producerRegisters(T, schedule::gemmRegisterEstimate(a, g), ctx.arch.registersPerSm);
    w.comment(str(S) + " stages handed over by mbarriers. full_[s] completes once the copies of each of the producer's " + str(CT) +
              " threads\n"
              "into the stage have landed (cp.async.mbarrier.arrive: the producer never waits for its copies), empty_[s]\n"
              "once the " + str(T / 32) + " MMA warps are done reading it. The MMA warpgroups never wait for each other, and the\n"
              "producer refills a stage as soon as it is empty.");
    w.line("__shared__ __align__(8) unsigned long long full_[" + str(S) + "], empty_[" + str(S) + "];");
    w.open("if (threadIdx.x == 0)");
    w.open("for (int s_ = 0; s_ < " + str(S) + "; ++s_)");
    w.line("asm volatile(\"mbarrier.init.shared::cta.b64 [%0], " + str(CT) +
           ";\\n\" :: \"r\"((unsigned)__cvta_generic_to_shared(&full_[s_])) : \"memory\");");
    w.line("asm volatile(\"mbarrier.init.shared::cta.b64 [%0], " + str(T / 32) +
           ";\\n\" :: \"r\"((unsigned)__cvta_generic_to_shared(&empty_[s_])) : \"memory\");");
    w.close();
    w.close();
    w.line("__syncthreads();");
    w.comment("Waits until the barrier's phase of the given parity has completed.");
    w.line("auto wait_ = [](const unsigned long long *bar, int parity) {");
    w.line("    asm volatile(\"{\\n.reg .pred p;\\nWAIT:\\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\\n@!p bra WAIT;\\n}\\n\"");
    w.line("                 :: \"r\"((unsigned)__cvta_generic_to_shared(bar)), \"r\"(parity) : \"memory\");");
    w.line("};");
    w.open("if (threadIdx.x >= " + str(T) + ")");
    if (regs.adjust) {
        w.comment("The producer warpgroup keeps " + str(regs.producer) + " registers and hands the rest to the MMA warpgroups.");
        w.line("asm volatile(\"setmaxnreg.dec.sync.aligned.u32 " + str(regs.producer) + ";\\n\" ::: \"memory\");");
    }
    w.line("const int pt_ = threadIdx.x - " + str(T) + ";");
    fastSetup();
    w.open("for (int kt_ = 0; kt_ < kTiles_; ++kt_)");
    w.line("const int write_ = kt_ % " + str(S) + ";");
    w.line("if (kt_ >= " + str(S) + ")");
    w.line("    wait_(&empty_[write_], ((kt_ / " + str(S) + ") + 1) & 1); // the MMAs of tile kt_ - " + str(S) + " are done");
    copyTile("kt_", "write_");
    w.comment("This thread's arrival on full_[write_] once every copy it has issued so far has landed.");
    w.line("asm volatile(\"cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\\n\" :: "
           "\"r\"((unsigned)__cvta_generic_to_shared(&full_[write_])) : \"memory\");");
    w.close();
    w.line("asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");");
    w.line("return;");
    w.close();
    if (regs.adjust)
        w.line("asm volatile(\"setmaxnreg.inc.sync.aligned.u32 " + str(regs.mma) + ";\\n\" ::: \"memory\");");
    w.open("for (int kt_ = 0; kt_ < kTiles_; ++kt_)");
    w.line("const int read_ = kt_ % " + str(S) + ";");
    w.line("wait_(&full_[read_], (kt_ / " + str(S) + ") & 1);");
    w.comment("The tile was written through the generic proxy (cp.async); the MMAs read it through the async proxy.");
    w.line("asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");");
    wgmma::emitWgmmaTile(w, wgTiles, "read_");
    w.line("asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");");
    w.line("if (threadIdx.x % 32 == 0)");
    w.line("    asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\" :: "
           "\"r\"((unsigned)__cvta_generic_to_shared(&empty_[read_])) : \"memory\");");
    w.close();
}

void GemmEmitter::simtRing()
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

void GemmEmitter::asyncRing()
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

void GemmEmitter::registersTwoStages()
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

void GemmEmitter::registersOneStage()
{
    w.open("for (int kt_ = 0; kt_ < kTiles_; ++kt_)");
    loadTile("kBegin_ + kt_ * " + str(BK));
    w.line("__syncthreads(); // the previous tile's readers are done");
    storeTile("0");
    w.line("__syncthreads();");
    compute("0");
    w.close();
}

void GemmEmitter::closeKernel()
{
    if (STREAMK)
        w.close(); // the stream-K segment loop
    if (WG)
        w.line("#endif");
    w.close();
}

} // namespace gemm

std::vector<KernelCode> generateGemmKernels(const GenContext &ctx) { return gemm::GemmEmitter(ctx).kernels(); }

} // namespace stitch::codegen
