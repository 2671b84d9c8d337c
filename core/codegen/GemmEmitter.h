#pragma once
// The gemm strategy's kernel writer, internal to core/codegen: GemmKernel.cpp (the kernel's header,
// main loops, epilogue and split-K sum kernel), GemmCopies.cpp (global -> shared copies: register
// staging, the cp.async ring and its interior-tile fast path), GemmStreamK.cpp (stream-K's tile
// segments and partial sums) and GemmTranspose.cpp (transpose_b's pass over B) define its methods.
//   GenContext -> GemmEmitter::kernels -> KernelCode (one; a transposing pass first with
//   transpose_b=on; the sum kernel after with split K)
//
// Shape of the kernel (BM x BN tile per block, BK deep steps, TM x TN results per thread):
//   global --(VEC-wide loads, registers; or cp.async into a ring of `stages` buffers)--> shared
//   [stage][BK][BM + pad] (A transposed) and [stage][BK][BN + pad] (B) --(float4 reads of two TM/2 and TN/2 halves, BM/2 and BN/2 apart,
//   so a warp reads consecutive 16-byte words without bank conflicts)--> TM x TN FMAs per k.
#include "core/codegen/CudaWriter.h"
#include "core/codegen/Kernels.h"
#include "core/codegen/MmaGemm.h"
#include "core/codegen/WgmmaGemm.h"

#include <string>
#include <vector>

namespace stitch::codegen::gemm {

using ir::Expr;

inline std::string str(long long v) { return std::to_string(v); }

inline std::string vecType(int n) { return n == 4 ? "float4" : n == 2 ? "float2" : "float"; }

inline const char *lane(int q)
{
    static const char *names[] = {"x", "y", "z", "w"};
    return names[q];
}

class GemmEmitter {
public:
    explicit GemmEmitter(const GenContext &ctx)
        : ctx(ctx), a(ctx.analysis), g(ctx.group), BM(g.value("block_m")), BN(g.value("block_n")),
          BK(g.value("block_k")), TM(g.value("thread_m")), TN(g.value("thread_n")), VEC(g.value("vector")),
          PAD(g.value("smem_pad")), STAGES(g.value("stages")), SWZ(g.value("swizzle")), MINB(g.value("min_blocks")),
          SPLIT(g.value("split_k")), STORE(g.value("store")), STREAMK(g.value("stream_k") == 1), SKB(STREAMK ? schedule::streamKBlocks(ctx.arch, g) : 0),
          ASYNC(g.value("copy") >= 1), PRODUCER(g.value("copy") == 2), MMA(g.value("math") == 1),
          WG(g.value("math") == 2), TRANSB(g.value("transpose_b") == 1), bKFast(!a.bRowMajor || TRANSB),
          wgTiles(wgmma::wgmmaTiles(BM, BN, BK, a.aRowMajor, !a.bRowMajor, TRANSB)),
          tileA(WG ? (wgTiles.swap ? wgTiles.desc : wgTiles.reg) : mma::sharedTile(MMA && a.aRowMajor, BK, BM, PAD)),
          tileB(WG ? (wgTiles.swap ? wgTiles.reg : wgTiles.desc) : mma::sharedTile(MMA && !a.bRowMajor, BK, BN, PAD)),
          mmaTiles{BM, BN, BK, TM, TN, tileA, tileB}, TX(BN / TN), TY(BM / TM), T(TX * TY),
          CT(PRODUCER ? 128 : T), copyThread(PRODUCER ? "pt_" : "threadIdx.x"), LA(BM * BK / (VEC * T)),
          LB(BN * BK / (VEC * T)), SA(BM + PAD), SB(BN + PAD), A(*ctx.graph.tensor(a.a)),
          B(*ctx.graph.tensor(a.b)), an(cIdentifier(A.name)), bn(TRANSB ? "bt_" : cIdentifier(B.name)),
          accRows(WG ? wgTiles.accRows() : TM), accCols(WG ? wgTiles.accCols() : TN)
    {
        base.graph = &ctx.graph;
        base.wideTensors = &ctx.wide;
        base.erfc = g.value("erf") == 1;
        planFastCopies();
    }

    std::vector<KernelCode> kernels()
    {
        std::vector<KernelCode> out;
        if (TRANSB)
            out.push_back(transposeKernel());
        header();
        tileSetup();
        mainLoop();
        if (STREAMK)
            streamKFixup();
        epilogue();
        closeKernel();
        k.source = w.str();
        const Expr tiles = ceilDivExpr(a.domain[0], BM) * ceilDivExpr(a.domain[1], BN);
        // Stream-K: the SKB shared blocks, then one per tile they do not share.
        k.grid = {STREAMK ? schedule::streamKGridExpr(tiles, SKB) : tiles * SPLIT, Expr(1), Expr(1)};
        out.push_back(k);
        if (SPLIT > 1)
            out.push_back(splitSumKernel());
        return out;
    }

private:
    const GenContext &ctx;
    const schedule::GroupAnalysis &a;
    const schedule::KernelGroup &g;
    const int BM, BN, BK, TM, TN, VEC, PAD, STAGES, SWZ, MINB, SPLIT;
    const int STORE; ///< the epilogue's wide stores: 0 vector, 1 scalar (32-bit each), 2 copy (of fresh registers)
    // stream_k=on: SKB blocks share the k steps of the last tiles (schedule::streamKTiles), the rest
    // run one tile each; the kernel's body runs once per tile segment of the block.
    const bool STREAMK;
    const int SKB;
    const bool ASYNC;
    // copy=producer (math=tf32_wgmma): one more warpgroup, after the MMA warpgroups, only copies; the
    // ring's stages are handed over through mbarriers instead of block barriers.
    const bool PRODUCER;
    // math=tf32_mma: the same tiles and ring, the products on TF32 tensor cores (MmaGemm.cpp).
    const bool MMA;
    // math=tf32_wgmma: Hopper's warpgroup MMAs, one operand from registers and one by descriptor from
    // a swizzled shared tile (WgmmaGemm.cpp); the next tile is published while a tile's MMAs run.
    const bool WG;
    // transpose_b=on (math=tf32_wgmma, B stored [k, j]): a kernel first writes B transposed and
    // rounded to TF32 into the workspace bt_, which this kernel copies like A (rows along k) and the
    // MMAs read by descriptor.
    const bool TRANSB;
    const bool bKFast; ///< B's tile rows as copied run along k (B stored [j, k], or read from bt_)
    const wgmma::WgmmaTiles wgTiles;
    // Shared tiles: k-major [stage][BK][other + PAD], or k-contiguous [stage][other][stride] for an
    // operand whose rows run along k under the tensor cores.
    const mma::SharedTile tileA, tileB;
    const mma::MmaTiles mmaTiles;
    const int TX, TY, T;       ///< the threads that compute (all of them but a producer warpgroup)
    const int CT;              ///< the threads that copy tiles by cp.async: T, or the producer's 128
    const std::string copyThread; ///< a copying thread's index among the CT: threadIdx.x, or pt_
    const int LA, LB; ///< register staging: VEC-wide loads per thread of A's and B's tile
    const int SA, SB; ///< k-major tiles: floats per row
    const ir::Tensor &A, &B;
    const std::string an, bn;
    const int accRows, accCols;
    ExprScope base;
    CudaWriter w;
    KernelCode k;

    /// The kernel's parameters and launch shape, its signature, the shared tiles and the grid of tiles.
    void header();
    /// The block's tile (rasterized in groups of SWZ block rows) and k range (the split-K slice, or
    /// the stream-K segment), the math's setup and the zeroed accumulators.
    void tileSetup();
    /// stream_k=on: this block's k steps and the loop over its tile segments (closed by closeKernel).
    void streamKLoop();
    /// stream_k=on, after the k loop: a segment of a shared tile stores its partial sums and counts
    /// itself in the tile's counter; the last to arrive adds the others' sums (no block waits).
    void streamKFixup();
    /// The stream-K loop's and the kernel's closing braces.
    void closeKernel();

    // Global -> registers for the tile at depth k0_.
    void loadOperand(const std::string &tensor, const std::string &regs, int loads, bool kFastest, int tileOther,
                     const std::string &other0, const std::string &otherLimit);

    // Registers -> shared stage `s_`: tiles are stored k-major ([k][m] and [k][n]).
    void storeOperand(const std::string &tile, const std::string &regs, int loads, bool kFastest, int tileOther,
                      int stride);
    void loadTile(const std::string &k0);
    void storeTile(const std::string &stage);

    // Two halves of `half` values, tileSize/2 apart, read as 16-byte words (8- or 4-byte for short halves).
    void fragment(const std::string &dst, const std::string &tile, int half, const std::string &t, int tileSize,
                  int stride, const std::string &stage, const std::string &kk = "kk_",
                  const std::string &temp = "");
    void compute(const std::string &stage);

    // Global -> shared stage s_ by cp.async, for the tile at depth k0_. An operand whose rows run
    // along k is copied one float per lane (consecutive lanes read consecutive k), transposed into
    // the k-major tile, or (k-contiguous tile) VEC floats per lane; the other one VEC floats per
    // lane. Out-of-range elements are zero-filled (source size 0, nothing read).
    int copyWidth(bool kFastest, const mma::SharedTile &layout);

    // Beside the tensor-core accumulators and fragments, the addresses of many narrow copies, fully
    // unrolled and hoisted out of the k loop, would spill: those loops unroll by 4.
    const char *copyUnroll(int copies);
    void copyOperand(const std::string &tensor, const std::string &tile, bool kFastest, int tileOther,
                     const std::string &other0, const std::string &otherLimit, const std::string &ld,
                     const mma::SharedTile &layout);

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

    void planFastCopies();
    void fastSetup();
    void fastCopies();
    void copyTile(const std::string &kt, const std::string &stage);

    // The cp.async ring: one commit group per tile; tiles 0 .. STAGES-2 go out before the loop.
    void commitGroup();
    void waitGroups(int pending);
    void ringPrologue();

    // Tile kt_ + STAGES - 1 into the buffer just freed (an empty group past the last tile).
    void refill();
    void advanceRing();

    // cp.async wrote a tile through the generic proxy; wgmma reads it through the async proxy.
    void publishForWgmma();

    /// kTiles_, then the k loop of the decisions' kind.
    void mainLoop();

    /// math=tf32_wgmma: the ring around the warpgroup MMAs.
    void wgmmaRing();

    /// math=tf32_wgmma, copy=producer: the producer warpgroup's copy loop and the MMA warpgroups'
    /// loop, meeting at a full and an empty mbarrier per stage.
    void wgmmaProducerRing();

    /// FFMA with 3-4 cp.async stages: fragments double-buffered across k steps and tiles.
    void simtRing();

    /// The cp.async ring of 2 stages (FFMA) or 2-4 (math=tf32_mma).
    void asyncRing();

    /// Register staging, two shared buffers.
    void registersTwoStages();

    /// Register staging, one shared buffer.
    void registersOneStage();

    /// Every fused op per element, then the stores; with split K the raw sums to the workspace.
    void epilogue();

    /// split_k > 1: the second kernel, one thread per result, sums the slices and applies the epilogue.
    KernelCode splitSumKernel();

    /// transpose_b=on: the kernel before the GEMM, bt_[j][k] = tf32(B[k][j]) by 64 x 64 tiles.
    KernelCode transposeKernel();
    /// The workspace bt_ (B transposed): its scratch buffer.
    ScratchBuffer transposedBBuffer() const;
    /// A workspace: a pointer parameter `param` (written or read-only) of `kernel` and the scratch
    /// buffer it points to.
    static void addWorkspace(KernelCode &kernel, const std::string &param, ScratchBuffer buffer, bool written)
    {
        KernelParam p;
        p.name = param;
        p.tensor = true;
        p.dtype = buffer.dtype;
        p.written = written;
        p.scratch = buffer.name;
        kernel.params.push_back(p);
        kernel.scratch.push_back(std::move(buffer));
    }
};

} // namespace stitch::codegen::gemm
