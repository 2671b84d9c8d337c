// The gemm strategy's part of the schedule space (SpaceRules.h): tensor-core layouts, the shape a
// group's decisions imply, its legality rules, stream-K's shared tiles and the shared memory.
#include "core/schedule/SpaceRules.h"

#include <algorithm>

namespace stitch::schedule {

using namespace detail;

int mmaKContiguousStride(int blockK, int pad)
{
    if (pad == 0)
        return blockK;
    int stride = blockK + 8;
    while (stride % 16 != 8)
        stride += 8;
    return stride;
}

WgmmaLayout wgmmaLayout(int blockM, int blockN, int blockK, bool aKContiguous, bool bKContiguous, bool transposedB)
{
    WgmmaLayout l;
    l.swap = !bKContiguous;
    l.nw = l.swap ? blockM : blockN;
    l.warpgroups = (l.swap ? blockN : blockM) / 64;
    l.shared = transposedB && l.swap;
    l.regKContiguous = l.shared || (!l.swap && aKContiguous);
    const int regOther = l.swap ? blockN : blockM;
    l.regRows = l.regKContiguous ? regOther : blockK;
    l.regStride = l.shared ? blockK : l.regKContiguous ? blockK + 4 : regOther + 8;
    l.descRows = l.nw;
    l.descStride = blockK;
    return l;
}

ProducerRegisters producerRegisters(int computeThreads, int mmaNeed, int registersPerSm)
{
    ProducerRegisters r;
    r.launch = std::min(255, registersPerSm / (computeThreads + 128)) / 8 * 8;
    r.producer = r.mma = r.launch;
    const int need = (mmaNeed + 7) / 8 * 8;
    if (need > r.launch) {
        r.adjust = true;
        r.mma = need;
        r.producer = (r.launch * 128 - (need - r.launch) * computeThreads) / 128 / 8 * 8;
    }
    return r;
}

int wgmmaSwizzledChunk(int row, int chunk, int rowBytes)
{
    const int f = rowBytes == 128 ? row % 8 : rowBytes == 64 ? (row / 2) % 4 : (row / 4) % 2;
    return chunk ^ f;
}

namespace detail {

GemmShape gemmShape(const GroupAnalysis &a, const KernelGroup &g)
{
    return {g.value("block_m"), g.value("block_n"), g.value("block_k"), g.value("thread_m"), g.value("thread_n"),
            g.value("vector"),  g.value("smem_pad"), g.value("stages"), g.value("min_blocks"),
            g.value("copy") >= 1, g.value("math") == 1, a.aRowMajor, !a.bRowMajor, g.value("math") == 2,
            g.value("copy") == 2, g.value("transpose_b") == 1};
}

namespace {

/// `store`: scalar and copy change the epilogue's wide stores of the accumulators, so they need
/// those stores (math=simt, >= 2 adjacent columns per thread, rows of C aligned to them), and copy
/// needs the accumulators stored as they are.
void checkGemmStore(const GroupAnalysis &a, const KernelGroup &g, const GemmShape &s, std::int64_t N,
                    std::vector<Violation> &out)
{
    const int store = g.value("store");
    if (store == 0)
        return;
    const std::string value = store == 1 ? "store=scalar" : "store=copy";
    if (s.mma || s.wgmma) {
        out.push_back({{"store", "math"}, value + " changes the stores of FP32 accumulators; a tensor core's "
                                                  "accumulators sit where its MMA instruction puts them: math must be simt"});
        return;
    }
    const int width = std::min(s.tn / 2, 4);
    if (width < 2)
        out.push_back({{"store", "thread_n", "math"}, value + " changes the wide stores of adjacent results; with " +
                                                  kv("thread_n", s.tn) + " a thread's columns are single"});
    else if (N >= 0 && epilogueStoreWidth(s.tn / 2, N) == 1)
        out.push_back({{"store", "thread_n", "math"}, value + " changes the " + std::to_string(width * 32) + "-bit stores of " +
                                      std::to_string(width) + " adjacent results; rows of C have " + std::to_string(N) +
                                      " elements, not a multiple of " + std::to_string(width) +
                                      ", so every store is already a 32-bit one"});
    if (store == 2 && a.ops.size() > 1 && g.value("split_k") == 1)
        out.push_back({{"store", "split_k", "math"}, "store=copy stores fresh copies of the accumulators; the fused epilogue ops already "
                                  "store values of their own"});
}

// The decisions each derived figure of GemmShape reads: a rule names all of them, since the walks
// of the legal space (enumerateLegal, sampleLegal) skip the later decisions once the named ones are
// set and the rule is broken. Built once: checkGemm runs at every node of those walks.
using Keys = std::vector<std::string>;

Keys join(std::initializer_list<Keys> lists)
{
    Keys out;
    for (const Keys &l : lists)
        for (const auto &k : l)
            if (std::find(out.begin(), out.end(), k) == out.end())
                out.push_back(k);
    return out;
}

const Keys threadKeys{"block_m", "thread_m", "block_n", "thread_n", "copy"}; // copy=producer: 128 more
const Keys sharedKeys{"block_m", "block_n", "block_k", "stages", "smem_pad", "math", "transpose_b"};
const Keys registerKeys{"thread_m", "thread_n", "block_m", "block_n", "block_k", "stages", "vector", "copy", "math", "transpose_b"};
const Keys threadRegisterKeys = join({threadKeys, registerKeys});
const Keys loadKeys = join({threadKeys, {"block_k", "vector", "math", "transpose_b"}});
const Keys minBlocksRegisterKeys = join({{"min_blocks"}, threadKeys, registerKeys});
const Keys minBlocksSharedKeys = join({{"min_blocks"}, sharedKeys});
const Keys minBlocksThreadKeys = join({{"min_blocks"}, threadKeys});

} // namespace

void checkGemm(const GroupAnalysis &a, const KernelGroup &g, const Problem &p, std::vector<Violation> &out)
{
    const GemmShape s = gemmShape(a, g);
    const std::int64_t M = sizeValue(a.domain[0], p), N = sizeValue(a.domain[1], p), K = sizeValue(a.k, p);
    const int T = s.threads();
    if (T % 32 != 0 || T < 32)
        out.push_back({{"block_m", "thread_m", "block_n", "thread_n"},
                       "(block_m/thread_m) x (block_n/thread_n) = " + std::to_string(T) +
                           " threads is not a whole number of warps"});
    if (T > p.arch.maxThreadsPerBlock)
        out.push_back({threadKeys,
                       std::to_string(T) + " threads per block > the limit of " +
                           std::to_string(p.arch.maxThreadsPerBlock)});
    if (s.mma) {
        if (p.precision != Precision::TF32)
            out.push_back({{"math"}, "math=tf32_mma rounds A and B to TF32: the schedule's precision is fp32 (precision "
                                     "tf32 allows it)"});
        if (!p.arch.tensorCoresTf32)
            out.push_back({{"math"}, "math=tf32_mma: " + p.arch.name + " has no TF32 tensor cores (sm_80 and newer)"});
        if (!s.async)
            out.push_back({{"math", "copy"}, "math=tf32_mma stages its tiles through the cp.async ring: it needs copy=async"});
        // A warp computes (thread_m / 2) x (thread_n / 2) m16n8 tiles: 8 * thread_m rows, 4 * thread_n columns.
        if (s.bm % (8 * s.tm) != 0)
            out.push_back({{"math", "block_m", "thread_m"},
                           "math=tf32_mma: a warp computes 8 x thread_m = " + std::to_string(8 * s.tm) +
                               " rows, which does not divide block_m=" + std::to_string(s.bm)});
        if (s.bn % (4 * s.tn) != 0)
            out.push_back({{"math", "block_n", "thread_n"},
                           "math=tf32_mma: a warp computes 4 x thread_n = " + std::to_string(4 * s.tn) +
                               " columns, which does not divide block_n=" + std::to_string(s.bn)});
    }
    if (s.wgmma) {
        const std::string wg = "math=tf32_wgmma";
        if (p.precision != Precision::TF32)
            out.push_back({{"math"}, wg + " rounds A and B to TF32: the schedule's precision is fp32 (precision tf32 allows it)"});
        if (p.arch.computeMajor != 9 || p.arch.computeMinor != 0 || !p.arch.tensorCoresTf32)
            out.push_back({{"math"}, wg + ": warpgroup MMAs (wgmma) are sm_90a instructions; " + p.arch.name + " has none"});
        if (!s.async)
            out.push_back({{"math", "copy"}, wg + " stages its tiles through the cp.async ring: it needs copy=async"});
        if (s.stages < 3)
            out.push_back({{"math", "stages"}, wg + " waits for the next tile while this tile's MMAs run and refills the "
                                                     "one before: it needs stages >= 3"});
        if (!s.aKFastest && !s.bKFastest)
            out.push_back({{"math"}, wg + " reads one operand k-contiguous from shared memory: A or B must have rows along k "
                                          "(here A is stored [k, i] and B [k, j])"});
        const WgmmaLayout layout = s.wgmmaLayout();
        const int rows = layout.swap ? s.bn : s.bm;
        const std::string rowKey = layout.swap ? "block_n" : "block_m";
        if (rows % 64 != 0)
            out.push_back({{"math", rowKey}, wg + ": a warpgroup computes 64 MMA rows along " +
                                                 std::string(layout.swap ? "n" : "m") + ", which does not divide " +
                                                 kv(rowKey, rows)});
        const int nw = layout.nw;
        if (s.tm != 8 || nw % 16 != 0 || s.tn != nw / 16)
            out.push_back({{"math", "thread_m", "thread_n", "block_m", "block_n"},
                           wg + ": a thread holds " + std::to_string(nw / 2) + " results of its warpgroup's 64 x " +
                               std::to_string(nw) + " tile, so thread_m must be 8 and thread_n " +
                               std::to_string(std::max(nw / 16, 1)) + " (the block then has 128 threads per warpgroup)"});
        if (s.pad != 0)
            out.push_back({{"math", "smem_pad"}, wg + " lays out its shared tiles itself (a swizzled tile for the "
                                                      "descriptor, a conflict-free padding for the fragments): smem_pad must be 0"});
    }
    checkGemmStore(a, g, s, N, out);
    if (s.transposeB) {
        if (!s.wgmma)
            out.push_back({{"transpose_b", "math"}, "transpose_b=on writes B transposed so that warpgroup MMAs read both "
                                                    "operands by descriptor: it needs math=tf32_wgmma"});
        if (!a.bRowMajor)
            out.push_back({{"transpose_b"}, "transpose_b=on: B is stored [j, k], its rows already run along k"});
        if (s.producer)
            out.push_back({{"transpose_b", "copy"}, "transpose_b=on copies B's tiles like A's through the cp.async ring of "
                                                    "copy=async; copy=producer's ring is not offered with it"});
    }
    if (s.producer && !s.wgmma)
        out.push_back({{"copy", "math"}, "copy=producer hands each stage to warpgroup MMAs through mbarriers: it needs "
                                         "math=tf32_wgmma"});
    if (s.async && !p.arch.asyncCopy)
        out.push_back({{"copy"}, "copy=async: " + p.arch.name + " has no cp.async (sm_80 and newer)"});
    if (s.async && s.stages < 2)
        out.push_back({{"copy", "stages"},
                       "copy=async needs stages >= 2 (a buffer is filled while another one is read)"});
    if (!s.async && s.stages > 2)
        out.push_back({{"copy", "stages"}, kv("stages", s.stages) +
                                               ": copy=registers stages one tile in registers; more than 2 "
                                               "buffers need copy=async"});
    if (s.widthA() > 1) {
        const std::int64_t aRow = a.aRowMajor ? K : M;
        if (aRow % s.vector != 0)
            out.push_back({{"vector", "copy", "math"}, kv("vector", s.vector) + ": rows of A have " + std::to_string(aRow) +
                                           " elements, not a multiple of " + std::to_string(s.vector) +
                                           ", so " + std::to_string(s.vector * 4) + "-byte loads would be misaligned"});
    }
    if (s.widthB() > 1) {
        const std::int64_t bRow = s.bCopiedKFastest() ? K : N;
        if (bRow % s.vector != 0)
            out.push_back({{"vector", "copy", "math", "transpose_b"}, kv("vector", s.vector) + ": rows of " +
                                           std::string(s.transposeB ? "B transposed" : "B") + " have " + std::to_string(bRow) +
                                           " elements, not a multiple of " + std::to_string(s.vector) +
                                           ", so " + std::to_string(s.vector * 4) + "-byte loads would be misaligned"});
    }
    const int aVecDim = a.aRowMajor ? s.bk : s.bm, bVecDim = s.bCopiedKFastest() ? s.bk : s.bn;
    if (aVecDim % s.widthA() != 0 || bVecDim % s.widthB() != 0)
        out.push_back({{"vector", "block_k", "block_m", "block_n", "copy", "math", "transpose_b"}, kv("vector", s.vector) + " does not divide the tile rows it loads"});
    const int CT = s.copyThreads();
    if (CT > 0 && ((s.bm * s.bk) % (s.widthA() * CT) != 0 || s.loadsA() < 1))
        out.push_back({loadKeys,
                       "the " + std::to_string(s.bm) + "x" + std::to_string(s.bk) + " tile of A is not a whole number (>= 1) of " +
                           std::to_string(s.widthA()) + "-wide loads for each of " + std::to_string(CT) + " threads"});
    if (CT > 0 && ((s.bn * s.bk) % (s.widthB() * CT) != 0 || s.loadsB() < 1))
        out.push_back({loadKeys,
                       "the " + std::to_string(s.bk) + "x" + std::to_string(s.bn) + " tile of B is not a whole number (>= 1) of " +
                           std::to_string(s.widthB()) + "-wide loads for each of " + std::to_string(CT) + " threads"});
    const int split = g.value("split_k");
    if (split > 1 && K >= 0 && split > (K + s.bk - 1) / s.bk)
        out.push_back({{"split_k", "block_k"}, kv("split_k", split) + ": K = " + std::to_string(K) + " has only " +
                                                   std::to_string((K + s.bk - 1) / s.bk) + " steps of block_k=" +
                                                   std::to_string(s.bk)});
    if (g.value("stream_k") == 1) {
        if (split > 1)
            out.push_back({{"stream_k", "split_k"}, "stream_k=on splits K itself (a shared tile's partial sums meet in "
                                                    "the last block to arrive): split_k must be 1"});
        if (s.producer)
            out.push_back({{"stream_k", "copy"}, "stream_k=on runs several tiles' k steps in one block, one after "
                                                 "another; copy=producer's copy loop runs one tile per block"});
        if (streamKBlocks(p.arch, g) <= 0)
            out.push_back({{"stream_k"}, "stream_k=on balances its blocks over the SMs of the target's GPU, and " +
                                             p.arch.name + " has no known GPU"});
    }
    const int smemLimit = sharedLimit(p.arch) - p.arch.reservedSharedMemoryPerBlock;
    if (s.shared() > smemLimit)
        out.push_back({sharedKeys,
                       "tiles need " + std::to_string(s.shared()) + " B of shared memory > the " + p.arch.name +
                           " limit of " + std::to_string(smemLimit) + " B per block"});
    if (s.registers() > p.arch.maxRegistersPerThread)
        out.push_back({registerKeys,
                       "about " + std::to_string(s.registers()) + " registers per thread > the limit of " +
                           std::to_string(p.arch.maxRegistersPerThread)});
    if (s.producer) {
        const ProducerRegisters regs = producerRegisters(s.computeThreads(), s.registers(), p.arch.registersPerSm);
        if (regs.producer < kMinProducerRegisters)
            out.push_back({threadRegisterKeys,
                           "copy=producer: the MMA warpgroups need about " + std::to_string(s.registers()) +
                               " registers per thread; of " + std::to_string(s.threads()) + " threads' " +
                               std::to_string(regs.launch) + " that leaves the producer " +
                               std::to_string(regs.producer) + " (its copies need " +
                               std::to_string(kMinProducerRegisters) + ")"});
    }
    if (!s.producer && static_cast<long long>(s.registers()) * T > p.arch.registersPerBlock)
        out.push_back({threadRegisterKeys,
                       std::to_string(T) + " threads x about " + std::to_string(s.registers()) +
                           " registers exceed the block's " + std::to_string(p.arch.registersPerBlock) +
                           " registers (the compiler would spill)"});
    if (s.minBlocks > 1) {
        const int budget = p.arch.registersPerSm / std::max(T * s.minBlocks, 1);
        if (s.registers() > budget)
            out.push_back({minBlocksRegisterKeys,
                           kv("min_blocks", s.minBlocks) + " with " + std::to_string(T) + " threads leaves " +
                               std::to_string(budget) + " registers per thread; the tile needs about " +
                               std::to_string(s.registers())});
        if (s.minBlocks * (s.shared() + p.arch.reservedSharedMemoryPerBlock) > p.arch.sharedMemoryPerSm)
            out.push_back({minBlocksSharedKeys,
                           kv("min_blocks", s.minBlocks) + " blocks of " + std::to_string(s.shared()) +
                               " B shared memory do not fit the SM's " + std::to_string(p.arch.sharedMemoryPerSm) + " B"});
        if (T * s.minBlocks > p.arch.maxThreadsPerSm)
            out.push_back({minBlocksThreadKeys, kv("min_blocks", s.minBlocks) + " blocks of " + std::to_string(T) +
                                                " threads exceed the SM's " + std::to_string(p.arch.maxThreadsPerSm) +
                                                " threads"});
    }
}

} // namespace detail

int gemmRegisterEstimate(const GroupAnalysis &analysis, const KernelGroup &group)
{
    return detail::gemmShape(analysis, group).registers();
}

int epilogueStoreWidth(int groupWidth, std::int64_t n)
{
    const int width = std::min(groupWidth, 4);
    return width >= 2 && n % width == 0 ? width : 1;
}

int streamKBlocks(const ArchLimits &arch, const KernelGroup &g)
{
    const GpuSpec *gpu = ArchDatabase::builtin().defaultGpuFor(arch.name);
    return gpu ? gpu->multiprocessors * std::max(1, g.value("min_blocks")) : 0;
}

ir::Expr streamKTilesExpr(const ir::Expr &tiles, int blocks)
{
    // tiles < B ? tiles : rest >= ceil(B / 2) ? rest : rest + B, with rest = tiles % B.
    const ir::Expr b = ir::intLiteralFor(tiles, blocks);
    const ir::Expr rest = tiles % b;
    return ir::select(ir::binary(ir::BinaryOp::Lt, tiles, b), tiles,
                      ir::select(ir::binary(ir::BinaryOp::Ge, rest, ir::intLiteralFor(tiles, (blocks + 1) / 2)), rest,
                                 rest + b));
}

ir::Expr streamKGridExpr(const ir::Expr &tiles, int blocks)
{
    // B (q + [r >= ceil(B / 2)]) for tiles = q B + r, at least B: B + tiles - streamKTilesExpr(tiles)
    // in the short form the launcher prints.
    const ir::Expr b = ir::intLiteralFor(tiles, blocks);
    return b * ir::max(ir::intLiteralFor(tiles, 1), (tiles + ir::intLiteralFor(tiles, blocks - (blocks + 1) / 2)) / b);
}

std::int64_t streamKTiles(std::int64_t tiles, int blocks)
{
    if (blocks <= 0 || tiles <= 0)
        return std::max<std::int64_t>(tiles, 0);
    const auto v = ir::evaluateSizeExpr(streamKTilesExpr(ir::intConst(tiles, ir::DType::I64), blocks), {});
    return v.ok() ? *v : tiles;
}

int gemmSharedBytes(const GroupAnalysis &a, const KernelGroup &g)
{
    return detail::gemmShape(a, g).shared();
}

} // namespace stitch::schedule
