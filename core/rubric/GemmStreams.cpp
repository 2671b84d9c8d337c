// The gemm strategy's memory streams, replayed from core/codegen/GemmKernel.cpp: tile loads,
// the register -> shared tile stores, the float4 fragment reads, the epilogue; split K's sum kernel.
// math=tf32_mma: the mma.sync fragment loads (MmaGemm.cpp); math=tf32_wgmma: the cp.async fills of
// the swizzled descriptor tile and the padded register tile, the register operand's fragment loads
// (WgmmaGemm.cpp; the descriptor reads are no instructions: facts, not streams).
//   GroupAnalysis + gemm decisions + sizes -> StreamBuilder::gemm -> KernelFacts
#include "core/rubric/StreamBuilder.h"

#include "core/codegen/TransposeTile.h"

namespace stitch::rubric::detail {

namespace {

/// The GEMM's workspaces as row-major float arrays, each at an address of its own far from the
/// tensors': split K's partial sums [split][M][N], and transpose_b's copy of B, [N][K].
TensorLayout workspaceLayout(std::int64_t base, std::vector<std::int64_t> extents)
{
    TensorLayout l;
    l.base = base;
    l.extents = std::move(extents);
    l.strides = ir::rowMajorStrides(l.extents);
    return l;
}
TensorLayout partialSumsLayout(std::int64_t split, std::int64_t M, std::int64_t N)
{
    return workspaceLayout(std::int64_t(1) << 50, {split, M, N});
}
TensorLayout transposedBLayout(std::int64_t N, std::int64_t K) { return workspaceLayout(std::int64_t(1) << 51, {N, K}); }
constexpr std::int64_t kStreamKPartialsBase = std::int64_t(1) << 52;

/// Stream-K's shared tiles (GemmStreamK.cpp): blocks 0..SKB-1 split the `tiles` tiles' `steps` k
/// steps each evenly (block b from steps x tiles x b / SKB); a tile met by two or more blocks is
/// shared: each of its parts stores its partial sums, and the last to arrive reads the others'.
struct StreamKParts {
    std::int64_t stores = 0; ///< partial tiles written
    std::int64_t loads = 0;  ///< partial tiles read back
};
StreamKParts streamKParts(std::int64_t tiles, std::int64_t steps, int blocks)
{
    StreamKParts out;
    if (tiles <= 0 || steps <= 0 || blocks <= 0)
        return out;
    const std::int64_t total = tiles * steps;
    std::vector<int> parts(static_cast<std::size_t>(tiles), 0);
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t first = total * b / blocks, end = total * (b + 1) / blocks;
        if (end <= first)
            continue;
        for (std::int64_t t = first / steps; t <= (end - 1) / steps; ++t)
            ++parts[static_cast<std::size_t>(t)];
    }
    for (int p : parts) {
        if (p >= 2) {
            out.stores += p;
            out.loads += p - 1;
        }
    }
    return out;
}

} // namespace

void StreamBuilder::gemm()
{
    if (facts.transposeB()) {
        gemmTranspose();
        return;
    }
    const auto &g = facts.kernel->group;
    const int BM = g.value("block_m"), BN = g.value("block_n"), BK = g.value("block_k"), TM = g.value("thread_m"),
              TN = g.value("thread_n"), VEC = g.value("vector"), PAD = g.value("smem_pad"), STAGES = g.value("stages"),
              SPLIT = g.value("split_k");
    // cp.async (copy=async, or copy=producer: a warpgroup of its own issues the same copies, the same
    // addresses per warp): an operand with rows along k moves one float per lane
    const bool ASYNC = g.value("copy") >= 1;
    // math=tf32_mma (core/codegen/MmaGemm.cpp): warps of 8 TM x 4 TN results, an operand whose rows run
    // along k keeps k-contiguous rows in shared memory (16-byte copies, no transposition).
    const bool MMA = g.value("math") == 1;
    const bool WGMMA = g.value("math") == 2; // math=tf32_wgmma: wgmmaFill, wgmmaFragments and the facts below
    // transpose_b=on: B read from its transposed copy bt_ (rows along k), both operands by descriptor.
    const bool TRANSB = g.value("transpose_b") == 1;
    const int TX = BN / TN, T = (BM / TM) * TX, warps = std::max(T / 32, 1);
    const int SA = BM + PAD, SB = BN + PAD;
    const std::int64_t M = evalSize(a.domain[0], sizes()), N = evalSize(a.domain[1], sizes()),
                       K = evalSize(a.k, sizes());
    const std::int64_t gridM = ceilDiv(M, BM), gridN = ceilDiv(N, BN);
    const std::int64_t kChunk = SPLIT > 1 ? ceilDiv(ceilDiv(K, SPLIT), BK) * BK : K;
    const std::int64_t kTiles = ceilDiv(kChunk, BK);
    const double blocks = static_cast<double>(facts.blocks);
    const ir::Tensor &A = tensor(a.a), &B = tensor(a.b);
    const TensorLayout la = layoutOf(A, sizes());
    const TensorLayout lb = TRANSB ? transposedBLayout(N, K) : layoutOf(B, sizes()); // bt_: [N][K]
    const std::int64_t lda = la.extents.size() > 1 ? la.extents[1] : K, ldb = lb.extents.size() > 1 ? lb.extents[1] : N;
    auto tileOrigin = [&](std::int64_t block) {
        // The sampled middle block: its tile position, without the swizzle (same pattern).
        const std::int64_t tile = block % std::max<std::int64_t>(gridM * gridN, 1);
        return std::pair<std::int64_t, std::int64_t>{(tile % gridM) * BM, (tile / gridM) * BN};
    };
    // math=tf32_wgmma: an operand whose rows run along k has a k-contiguous tile (the descriptor's
    // or the register operand's [other][block_k + 4]), so its copies are `vector` floats wide too.
    const schedule::WgmmaLayout wl = schedule::wgmmaLayout(BM, BN, BK, a.aRowMajor, !a.bRowMajor, TRANSB);
    auto operand = [&](bool isA, bool kFastest, int tileOther, std::int64_t limit, std::int64_t ld,
                       const TensorLayout &l) {
        const bool kContiguous = (MMA || WGMMA) && kFastest;
        const int VW = ASYNC && kFastest && !kContiguous ? 1 : VEC; // elements per load (or cp.async) of this operand
        const int loads = tileOther * BK / (VW * T);
        const int perRow = (kFastest ? BK : tileOther) / VW;
        const std::string name = isA ? A.name : TRANSB ? B.name + " transposed (bt_)" : B.name;
        const std::string along = kFastest ? "k" : (isA ? "i" : "j");
        add(std::string(ASYNC ? "cp.async " : "load ") + name + ": " + std::to_string(VW) + " float" + (VW > 1 ? "s" : "") +
                " per lane along " + along,
            false, false, VW * 4, blocks * static_cast<double>(kTiles) * loads * warps,
            [&, perRow, kFastest, limit, ld, isA](std::int64_t block, int t) -> std::int64_t {
                auto [m0, n0] = tileOrigin(block);
                const std::int64_t other0 = isA ? m0 : n0;
                const std::int64_t k0 = (kTiles / 2) * BK * (block > 0 ? 1 : 0);
                std::int64_t o, kk;
                if (kFastest) {
                    o = other0 + t / perRow;
                    kk = k0 + (t % perRow) * VW;
                } else {
                    kk = k0 + t / perRow;
                    o = other0 + (t % perRow) * VW;
                }
                if (o >= limit || kk >= K)
                    return -1;
                return l.base + (kFastest ? o * ld + kk : kk * ld + o) * 4;
            });
        // Registers (or cp.async) -> shared tile, stored k-major: [k][m] (A) or [k][n] (B).
        const std::int64_t tileBase = isA ? 0 : static_cast<std::int64_t>(STAGES) * BK * SA * 4;
        const int stride = isA ? SA : SB;
        if (WGMMA) {
            wgmmaFill(wl, name, isA == wl.swap, kFastest, VW, perRow,
                      blocks * static_cast<double>(kTiles) * loads * warps);
        } else if (kContiguous) {
            const int rowStride = schedule::mmaKContiguousStride(BK, PAD);
            add("cp.async " + name + " tile to shared memory, k-contiguous rows (stride " + std::to_string(rowStride) +
                    " floats)",
                true, true, VW * 4, blocks * static_cast<double>(kTiles) * loads * warps,
                [=](std::int64_t, int t) -> std::int64_t {
                    const int o = t / perRow, kk = (t % perRow) * VW;
                    return tileBase + (static_cast<std::int64_t>(o) * rowStride + kk) * 4;
                });
        } else if (kFastest) {
            add("store " + name + " tile to shared memory, transposed (stride " + std::to_string(stride) + " floats)",
                true, true, 4, blocks * static_cast<double>(kTiles) * loads * VW * warps,
                [=](std::int64_t, int t) -> std::int64_t {
                    const int o = t / perRow, kk = (t % perRow) * VW;
                    return tileBase + (static_cast<std::int64_t>(kk) * stride + o) * 4;
                });
        } else {
            add("store " + name + " tile to shared memory (" + std::to_string(VW * 4) + " B per lane)", true, true,
                VW * 4, blocks * static_cast<double>(kTiles) * loads * warps,
                [=](std::int64_t, int t) -> std::int64_t {
                    const int kk = t / perRow, o = (t % perRow) * VW;
                    return tileBase + (static_cast<std::int64_t>(kk) * stride + o) * 4;
                });
        }
    };
    if (!facts.splitSum()) {
        operand(true, a.aRowMajor, BM, M, lda, la);
        operand(false, !a.bRowMajor || TRANSB, BN, N, ldb, lb);
        // Fragments: two halves of TM/2 (TN/2) values, BM/2 (BN/2) apart, as 16-byte words where they fit.
        auto fragment = [&](bool isA, int half, std::int64_t tileBase) {
            const int chunk = std::min(half, 4);
            add(std::string("read ") + (isA ? "A" : "B") + " fragments from shared memory (" +
                    std::to_string(chunk * 4) + " B per lane)",
                true, false, chunk * 4, blocks * static_cast<double>(kTiles) * BK * 2 * (half / chunk) * warps,
                [=](std::int64_t, int t) -> std::int64_t {
                    const int idx = isA ? t / TX : t % TX;
                    return tileBase + static_cast<std::int64_t>(idx) * half * 4;
                });
        };
        if (MMA)
            mmaFragments();
        else if (WGMMA) {
            if (!wl.shared) // transpose_b=on: no fragments, both operands by descriptor
                wgmmaFragments(wl, blocks * static_cast<double>(kTiles) * (BK / 8) * 4 * warps);
        } else {
            fragment(true, TM / 2, 0);
            fragment(false, TN / 2, static_cast<std::int64_t>(STAGES) * BK * SA * 4);
        }
    }

    // Epilogue: stores (vector when every stored tensor is a plain [M, N] float matrix, and not
    // store=scalar) and reads.
    // A thread's adjacent results (W; the store's width, chunk, where N allows it) and where its
    // first one lies: the SIMT tile's (TM/2 rows per thread, TN/2 columns), or the tensor cores'
    // accumulator layout (MmaGemm.cpp / WgmmaGemm.cpp: lane = 4 g + t; an mma.sync warp's rows g,
    // columns 2 t and 2 t + 1; a warpgroup's along n (swap) one column g per lane, rows 2 t, else
    // rows g and columns 2 t, 2 t + 1).
    const int W = WGMMA ? (wl.swap ? 1 : 2) : MMA ? 2 : TN / 2, chunk = schedule::epilogueStoreWidth(W, N);
    bool vectorStore = chunk > 1 && g.value("store") != 1;
    std::vector<std::pair<std::string, TensorLayout>> sinks;
    if (SPLIT > 1 && !facts.splitSum()) {
        sinks.push_back({"partial sums", partialSumsLayout(SPLIT, M, N)});
    } else if (!facts.splitSum()) {
        for (ir::TensorId id : a.stored) {
            const ir::Tensor &t = tensor(id);
            vectorStore = vectorStore && t.dtype == ir::DType::F32 && t.shape.rank() == 2 &&
                          t.shape[0].equals(a.domain[0]) && t.shape[1].equals(a.domain[1]);
            sinks.push_back({t.name, layoutOf(t, sizes())});
        }
    }
    const int mmaWarpsN = MMA ? BN / (4 * TN) : 1;
    auto gi = [&](std::int64_t m0, int t) -> std::int64_t {
        const int lane = t % 32, gid = lane / 4, tig = lane % 4;
        if (WGMMA)
            return m0 + (wl.swap ? 2 * tig : (t / 128) * 64 + ((t / 32) % 4) * 16 + gid);
        if (MMA)
            return m0 + ((t / 32) / mmaWarpsN) * 8 * TM + gid;
        return m0 + (t / TX) * (TM / 2);
    };
    auto gj = [&](std::int64_t n0, int t) -> std::int64_t {
        const int lane = t % 32, gid = lane / 4, tig = lane % 4;
        if (WGMMA)
            return n0 + (wl.swap ? (t / 128) * 64 + ((t / 32) % 4) * 16 + gid : 2 * tig);
        if (MMA)
            return n0 + ((t / 32) % mmaWarpsN) * 4 * TN + 2 * tig;
        return n0 + (t % TX) * W;
    };
    for (const auto &[name, l] : sinks) {
        const bool partial = SPLIT > 1;
        const int bytes = vectorStore ? chunk * 4 : 4;
        const double perThread = static_cast<double>(TM) * TN / (vectorStore ? chunk : 1);
        const std::string pattern = WGMMA ? "in the warpgroup MMA's accumulator layout"
                                    : MMA ? "in mma.sync's accumulator layout"
                                          : "lanes " + std::to_string(W * 4) + " B apart";
        add("store " + name + ": " + std::to_string(bytes) + " B per lane, " + pattern,
            false, true, bytes, blocks * perThread * warps,
            [&, l = l, partial](std::int64_t block, int t) -> std::int64_t {
                auto [m0, n0] = tileOrigin(block);
                const std::int64_t i = gi(m0, t), j = gj(n0, t);
                if (i >= M || j >= N)
                    return -1;
                return partial ? l.at({0, i, j}) : l.at({i, j});
            });
    }
    if (facts.streamK && facts.streamKBlocks > 0 && facts.streamKTiles > 0) {
        // Stream-K's partial sums: one float per accumulator of the tile's part, lanes consecutive
        // (__stcg / __ldcg at workspace + accumulator x threads + threadIdx.x).
        const StreamKParts parts = streamKParts(facts.streamKTiles, kTiles, facts.streamKBlocks);
        const int threads = std::max(facts.threads, 1);
        const double perThread = static_cast<double>(BM) * BN / threads;
        const double warpsPerBlock = std::max(1.0, std::ceil(threads / 32.0));
        auto slot = [threads](std::int64_t block, int t) -> std::int64_t {
            return kStreamKPartialsBase + (block * 2 * threads + t) * 4;
        };
        if (parts.stores > 0)
            add("store stream-K partial sums: 4 B per lane, consecutive", false, true, 4,
                static_cast<double>(parts.stores) * perThread * warpsPerBlock, slot);
        if (parts.loads > 0)
            add("read stream-K partial sums: 4 B per lane, consecutive", false, false, 4,
                static_cast<double>(parts.loads) * perThread * warpsPerBlock, slot);
    }
    if (SPLIT == 1) {
        for (const auto *op : a.ops) {
            for (const auto &r : globalReads(*op, op != a.ops.front(), true, a.a, a.b)) {
                const ir::ComputeOp *o = op;
                add("read " + r.toString() + " in the epilogue", false, false, ir::dtypeSize(r.tensor().dtype),
                    blocks * TM * TN * warps, [&, o, r](std::int64_t block, int t) -> std::int64_t {
                        auto [m0, n0] = tileOrigin(block);
                        const std::int64_t i = gi(m0, t), j = gj(n0, t);
                        if (i >= M || j >= N)
                            return -1;
                        return readAddress(r, {{o->domain[0].name, i}, {o->domain[1].name, j}});
                    });
            }
        }
    }
    if (facts.splitSum()) {
        gemmSum();
        return;
    }

    const double padded =
        static_cast<double>(gridM * BM) * static_cast<double>(gridN * BN) * static_cast<double>(kTiles * BK * SPLIT);
    facts.usefulLaneFraction = std::min(1.0, static_cast<double>(M) * N * K / std::max(padded, 1.0));
    facts.boundary = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + " on " +
                     std::to_string(BM) + "x" + std::to_string(BN) + "x" + std::to_string(BK) +
                     " tiles: " + std::to_string(gridM) + "x" + std::to_string(gridN) + " blocks, " +
                     std::to_string(kTiles) + " k-steps";
    const double loadIdleA =
        1.0 - static_cast<double>(M) * K / std::max(1.0, double(gridM * BM) * double(kTiles * BK * SPLIT));
    const double storeIdle = 1.0 - static_cast<double>(M) * N / std::max(1.0, double(gridM * BM) * double(gridN * BN));
    if (loadIdleA > 1e-9)
        facts.branches.push_back(
            {"if (o_ < M_ && kk_ < kEnd_): predicated tile loads past the matrix edge", std::max(0.0, loadIdleA)});
    if (storeIdle > 1e-9)
        facts.branches.push_back(
            {"if (gi_ >= M_) / if (gj_ >= N_): guarded stores in boundary tiles", std::max(0.0, storeIdle)});
    facts.ilp = TM * TN;
    facts.loopIterations = static_cast<double>(kTiles);
    facts.copyStages = ASYNC ? STAGES : 0;
    facts.tensorCores = MMA || WGMMA;
    if (WGMMA) {
        // core/codegen/WgmmaGemm.cpp: with B's rows along n (B row-major) the MMA rows run along n
        // (N = block_m, block_n / 64 warpgroups, B from registers), else along m (N = block_n). Per
        // 8-deep step each warpgroup's MMA reads the descriptor operand's N x 8 floats from shared
        // memory and each thread loads its 4 register-fragment values (conflict free: the kernel
        // pads the register tile), one wavefront per warp and load.
        const int nw = wl.nw, warpgroups = std::max(wl.warpgroups, 1);
        const double steps = static_cast<double>(kTiles) * (BK / 8);
        facts.warpgroupMma = true;
        // transpose_b=on: each warpgroup also reads its 64 rows of B transposed (64 x 8 per step).
        facts.descriptorBytes = steps * warpgroups * (nw + (wl.shared ? 64 : 0)) * 8 * 4.0;
        facts.fragmentWavefronts = wl.shared ? 0 : steps * warps * 4.0;
        facts.tileFillBytes = static_cast<double>(kTiles) * (BM + BN) * BK * 4.0;
        facts.bothDescriptors = wl.shared;
        facts.descriptorOperand = wl.shared ? "A and B (transposed)" : wl.swap ? "A" : "B";
        facts.registerOperand = wl.shared ? "" : wl.swap ? "B" : "A";
        facts.descriptorSwizzleBytes = BK * 4;
        facts.descriptorBytesPerTile = nw * BK * 4.0;
        facts.warpgroups = warpgroups;
    }
    if (MMA)
        for (const auto &st : facts.streams)
            if (st.shared && !st.store)
                facts.fragmentWavefronts += bankWavefronts(st, problem.arch.sharedMemoryBanks).wavefronts * st.requests / std::max(blocks, 1.0);
    const double tileFloats = static_cast<double>(BM + BN) * BK / T; // per thread and k-tile
    // cp.async keeps stages - 1 tiles in flight, register staging one (two buffers) or none.
    facts.bytesInFlightPerThread =
        tileFloats * 4.0 * (ASYNC ? std::max(STAGES - 1, 1) : (STAGES == 2 ? 2 : 1));
    const double lds = 2.0 * (TM / 2) / std::min(TM / 2, 4) + 2.0 * (TN / 2) / std::min(TN / 2, 4);
    // Per k step: register staging loads and stores every tile float (vectors where they fit);
    // cp.async issues one copy with its address and predicate per element group.
    const int copies = (a.aRowMajor ? BM * BK : BM * BK / VEC) / T + (!a.bRowMajor ? BN * BK : BN * BK / VEC) / T;
    const double tileOverhead = ASYNC ? 3.0 * copies / BK + 2.0 : 2.0 * tileFloats / BK + 2.0;
    facts.fmaShare = TM * TN / (TM * TN + lds + tileOverhead);
}

void StreamBuilder::mmaFragments()
{
    // Per 8-deep step each warp loads TM/2 A fragments (4 registers: rows g and g + 8, k rows 2t and
    // 2t + 1) and TN/2 B fragments (2 registers: column g, k rows 2t and 2t + 1), as MmaGemm.cpp
    // emits them: one 4-byte load per register from a k-major tile, one 8-byte load per register
    // pair from a k-contiguous one. Addresses of the first register; the others are the same
    // pattern shifted by whole rows.
    const auto &g = facts.kernel->group;
    const int BM = g.value("block_m"), BN = g.value("block_n"), BK = g.value("block_k"), TM = g.value("thread_m"),
              TN = g.value("thread_n"), PAD = g.value("smem_pad"), STAGES = g.value("stages"),
              SPLIT = g.value("split_k");
    const int T = (BM / TM) * (BN / TN), warps = std::max(T / 32, 1);
    const std::int64_t K = evalSize(a.k, sizes());
    const std::int64_t kChunk = SPLIT > 1 ? ceilDiv(ceilDiv(K, SPLIT), BK) * BK : K;
    const double steps = static_cast<double>(facts.blocks) * static_cast<double>(ceilDiv(kChunk, BK)) * (BK / 8) * warps;
    const bool aContiguous = a.aRowMajor, bContiguous = !a.bRowMajor;
    const int strideA = aContiguous ? schedule::mmaKContiguousStride(BK, PAD) : BM + PAD;
    const int strideB = bContiguous ? schedule::mmaKContiguousStride(BK, PAD) : BN + PAD;
    const std::int64_t baseB = static_cast<std::int64_t>(STAGES) * (aContiguous ? BM : BK) * strideA * 4;
    auto fragment = [&](bool isA, bool contiguous, int stride, std::int64_t base, int perStep) {
        add(std::string("read ") + (isA ? "A" : "B") + " mma fragments from shared memory (" +
                (contiguous ? "8 B per lane, k rows 2t and 2t + 1 together" : "4 B per lane") + ")",
            true, false, contiguous ? 8 : 4, steps * perStep / (contiguous ? 2 : 1),
            [=](std::int64_t, int t) -> std::int64_t {
                const int lane = t % 32, gid = lane / 4, tig = lane % 4;
                return base + (contiguous ? static_cast<std::int64_t>(gid) * stride + 2 * tig
                                          : static_cast<std::int64_t>(2 * tig) * stride + gid) *
                                  4;
            });
    };
    fragment(true, aContiguous, strideA, 0, 4 * (TM / 2));
    fragment(false, bContiguous, strideB, baseB, 2 * (TN / 2));
}

// core/codegen/WgmmaGemm.cpp's shared layout: the descriptor operand's tile first (nw rows of
// block_k floats, 16-byte chunks swizzled within each 8-row atom: schedule::wgmmaSwizzledChunk), then
// the register operand's ([other][block_k + 4] when its rows run along k, else [block_k][other + 8]).
// Offsets within a stage.
namespace {

std::int64_t swizzledOffset(int o, int kk, int rowFloats)
{
    const int chunk = schedule::wgmmaSwizzledChunk(o, kk >> 2, rowFloats * 4);
    return static_cast<std::int64_t>(o) * rowFloats + ((chunk << 2) | (kk & 3));
}

/// Byte offset of the register operand's tile: after `stages` descriptor tiles.
std::int64_t registerTileBase(const schedule::WgmmaLayout &wl, int stages)
{
    return static_cast<std::int64_t>(stages) * wl.descStageFloats() * 4;
}

} // namespace

void StreamBuilder::wgmmaFill(const schedule::WgmmaLayout &wl, const std::string &name, bool descriptor,
                              bool kFastest, int width, int perRow, double requests)
{
    // GemmKernel.cpp's copyOperand: copy v of a thread (v = thread + l x threads) takes row o and k
    // column kk of the tile, o = v / perRow, kk = (v % perRow) x width along k (rows along k), else
    // kk = v / perRow, o = (v % perRow) x width. The first copy (l = 0); the others are whole rows
    // further (8-row multiples for the swizzled tile), the same banks.
    const auto &g = facts.kernel->group;
    const int BK = g.value("block_k");
    const std::int64_t regBase = registerTileBase(wl, g.value("stages"));
    if (descriptor || wl.shared) { // transpose_b=on: B's tile (after A's) is a descriptor tile too
        const std::int64_t base = descriptor ? 0 : regBase;
        add("cp.async " + name + " tile to shared memory for the descriptor (" + std::to_string(BK * 4) +
                "-byte swizzled k-contiguous rows, " + std::to_string(width * 4) + " B per lane)",
            true, true, width * 4, requests, [=](std::int64_t, int t) -> std::int64_t {
                return base + swizzledOffset(t / perRow, (t % perRow) * width, BK) * 4;
            });
        return;
    }
    const int stride = wl.regStride;
    add("cp.async " + name + " tile to shared memory for the fragments (" +
            (wl.regKContiguous ? "k-contiguous rows" : "k-major rows") + " of stride " + std::to_string(stride) +
            " floats, " + std::to_string(width * 4) + " B per lane)",
        true, true, width * 4, requests, [=](std::int64_t, int t) -> std::int64_t {
            const int o = kFastest ? t / perRow : (t % perRow) * width;
            const int kk = kFastest ? (t % perRow) * width : t / perRow;
            return regBase + (wl.regKContiguous ? static_cast<std::int64_t>(o) * stride + kk
                                                : static_cast<std::int64_t>(kk) * stride + o) *
                                 4;
        });
}

void StreamBuilder::wgmmaFragments(const schedule::WgmmaLayout &wl, double requests)
{
    // WgmmaGemm.cpp's emitWgmmaTile: per 8-deep step s each thread loads its 4 register-fragment
    // values (row g, g + 8 and k t, t + 4 of its warp's 16 rows: lane g = lane / 4, t = lane % 4) as
    // 4-byte loads from the register tile. Addresses of the first; the others are whole rows (or 4
    // k columns) further, the same banks.
    const std::int64_t regBase = registerTileBase(wl, facts.kernel->group.value("stages"));
    const int stride = wl.regStride;
    const bool kContiguous = wl.regKContiguous;
    add(std::string("read ") + (wl.swap ? "B" : "A") +
            " fragments from shared memory for the wgmma register operand (4 B per lane: rows g and g + 8, k t "
            "and t + 4; 4 per 8-deep step)",
        true, false, 4, requests, [=](std::int64_t, int t) -> std::int64_t {
            const int wg = t / 128, warp = (t / 32) % 4, lane = t % 32, gid = lane / 4, tig = lane % 4;
            const std::int64_t o = wg * 64 + warp * 16 + gid;
            return regBase + (kContiguous ? o * stride + tig : static_cast<std::int64_t>(tig) * stride + o) * 4;
        });
}

void StreamBuilder::gemmTranspose()
{
    // GemmKernel.cpp's transposeKernel: 64 x 64 tiles, 256 threads. Interior tiles: thread t reads
    // float4 (k = t / 16 + 16 j, n = 4 (t % 16)) of B and stores it to the tile's swizzled row k;
    // then lane (qa, nn) of warp w reads rows 4 q .. 4 q + 3 of column n (q = 8 (cell / 16) + qa,
    // n = 4 (cell % 16) + nn, cell = w + 8 j) and writes them as one float4 of bt_ row n. Boundary
    // tiles (and rows not a multiple of 4 floats) go one float at a time: counted as the fast path.
    const std::int64_t N = evalSize(a.domain[1], sizes()), K = evalSize(a.k, sizes());
    const TensorLayout lb = layoutOf(tensor(a.b), sizes());
    const std::int64_t ldb = lb.extents.size() > 1 ? lb.extents[1] : N;
    constexpr int tile = codegen::transpose::kTile;
    const std::int64_t tilesN = ceilDiv(N, std::int64_t(tile));
    const double requests = static_cast<double>(facts.blocks) * 4 * (facts.threads / 32);
    auto origin = [=](std::int64_t block) {
        return std::pair<std::int64_t, std::int64_t>{(block / tilesN) * tile, (block % tilesN) * tile};
    };
    auto swizzled = [](int k, int n) { return static_cast<std::int64_t>(codegen::transpose::tileIndex(k, n)) * 4; };
    add("read " + tensor(a.b).name + " rows: float4 per lane along j", false, false, 16, requests,
        [=](std::int64_t block, int t) -> std::int64_t {
            auto [k0, n0] = origin(block);
            const std::int64_t k = k0 + t / 16, n = n0 + 4 * (t % 16);
            return k < K && n < N ? lb.base + (k * ldb + n) * 4 : -1;
        });
    add("store the tile to shared memory (float4, 16-byte chunks swizzled by row)", true, true, 16, requests,
        [=](std::int64_t, int t) -> std::int64_t { return swizzled(t / 16, 4 * (t % 16)); });
    add("read the tile transposed from shared memory (4 B per lane)", true, false, 4, requests * 4,
        [=](std::int64_t, int t) -> std::int64_t {
            const int lane = t % 32, q = lane % 8, n = 4 * ((t / 32) % 16) + lane / 8;
            return swizzled(4 * q, n);
        });
    const TensorLayout bt = transposedBLayout(N, K);
    add("store " + tensor(a.b).name + " transposed (bt_): float4 per lane along k", false, true, 16, requests,
        [=](std::int64_t block, int t) -> std::int64_t {
            auto [k0, n0] = origin(block);
            const int lane = t % 32;
            const std::int64_t n = n0 + 4 * ((t / 32) % 16) + lane / 8, k = k0 + 4 * (lane % 8);
            return k < K && n < N ? bt.base + (n * K + k) * 4 : -1;
        });
    const double launched =
        static_cast<double>(tilesN * tile) * static_cast<double>(ceilDiv(K, std::int64_t(tile)) * tile);
    facts.usefulLaneFraction = std::min(1.0, static_cast<double>(N) * K / std::max(1.0, launched));
    facts.boundary = std::to_string(K) + "x" + std::to_string(N) + " elements of " + tensor(a.b).name + " on " +
                     std::to_string(facts.blocks) + " tiles of " + std::to_string(tile) + "x" + std::to_string(tile);
    if (facts.usefulLaneFraction < 1)
        facts.branches.push_back({"boundary tiles: one float at a time, guarded", 1 - facts.usefulLaneFraction});
    facts.ilp = 4;
    facts.bytesInFlightPerThread = 64;
    facts.fmaShare = 0;
}

void StreamBuilder::gemmSum()
{
    const int SPLIT = facts.kernel->group.value("split_k");
    const std::int64_t M = evalSize(a.domain[0], sizes()), N = evalSize(a.domain[1], sizes());
    const std::int64_t total = M * N;
    const double requests = static_cast<double>(ceilDiv(total, 32));
    const TensorLayout p = partialSumsLayout(SPLIT, M, N);
    auto elem = [&](std::int64_t block, int t) { return block * facts.threads + t; };
    add("read partial sums: 4 B per lane, consecutive", false, false, 4, requests * SPLIT,
        [&, p](std::int64_t block, int t) -> std::int64_t {
            const std::int64_t e = elem(block, t);
            return e < total ? p.base + e * 4 : -1;
        });
    for (const auto *op : a.ops) {
        for (const auto &r : globalReads(*op, op != a.ops.front(), true, a.a, a.b))
            add("read " + r.toString() + " in the epilogue", false, false, ir::dtypeSize(r.tensor().dtype), requests,
                [&, op, r](std::int64_t block, int t) -> std::int64_t {
                    const std::int64_t e = elem(block, t);
                    if (e >= total)
                        return -1;
                    return readAddress(r, {{op->domain[0].name, e / N}, {op->domain[1].name, e % N}});
                });
    }
    for (ir::TensorId id : a.stored) {
        const TensorLayout l = layoutOf(tensor(id), sizes());
        add("store " + tensor(id).name + ": 4 B per lane, consecutive", false, true, l.elementBytes, requests,
            [&, l](std::int64_t block, int t) -> std::int64_t {
                const std::int64_t e = elem(block, t);
                return e < total ? l.at({e / N, e % N}) : -1;
            });
    }
    const double launched = static_cast<double>(facts.blocks) * facts.threads;
    facts.usefulLaneFraction = std::min(1.0, static_cast<double>(total) / std::max(1.0, launched));
    facts.boundary = std::to_string(total) + " results on " + std::to_string(facts.blocks) + " blocks of " +
                     std::to_string(facts.threads);
    if (facts.usefulLaneFraction < 1)
        facts.branches.push_back({"e_ < total_: the last block's tail", 1 - facts.usefulLaneFraction});
    facts.ilp = SPLIT;
    facts.bytesInFlightPerThread = 4.0 * SPLIT;
    facts.fmaShare = 0.2;
}

} // namespace stitch::rubric::detail
