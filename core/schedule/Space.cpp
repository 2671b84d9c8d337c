#include "core/schedule/Space.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <set>

namespace stitch::schedule {

std::int64_t sizeValue(const ir::Expr &e, const Problem &p)
{
    auto v = ir::evaluateSizeExpr(e, p.sizes);
    return v.ok() ? *v : -1;
}

namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

int sharedLimit(const ArchLimits &arch)
{
    return std::max(arch.sharedMemoryPerBlock, arch.sharedMemoryPerBlockOptin);
}

std::string kv(const std::string &key, int v) { return key + "=" + std::to_string(v); }

} // namespace

int mmaKContiguousStride(int blockK, int pad)
{
    if (pad == 0)
        return blockK;
    int stride = blockK + 8;
    while (stride % 16 != 8)
        stride += 8;
    return stride;
}

WgmmaLayout wgmmaLayout(int blockM, int blockN, int blockK, bool aKContiguous, bool bKContiguous)
{
    WgmmaLayout l;
    l.swap = !bKContiguous;
    l.nw = l.swap ? blockM : blockN;
    l.warpgroups = (l.swap ? blockN : blockM) / 64;
    l.regKContiguous = !l.swap && aKContiguous;
    const int regOther = l.swap ? blockN : blockM;
    l.regRows = l.regKContiguous ? regOther : blockK;
    l.regStride = l.regKContiguous ? blockK + 4 : regOther + 8;
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

namespace {

struct GemmShape {
    int bm, bn, bk, tm, tn, vector, pad, stages, minBlocks;
    bool async;            ///< copy=async: cp.async straight to shared memory, no staging registers
    bool mma;              ///< math=tf32_mma: warps of 8*tm x 4*tn results on TF32 tensor cores
    bool aKFastest, bKFastest; ///< the operand's rows run along k in memory
    bool wgmma = false;    ///< math=tf32_wgmma: warpgroups of 64 x N (wgmmaLayout) on sm_90a warpgroup MMAs
    bool producer = false; ///< copy=producer: one more warpgroup only copies (cp.async), the others only compute
    int computeThreads() const { return (bm / tm) * (bn / tn); }
    int copyThreads() const { return producer ? 128 : computeThreads(); }
    int threads() const { return computeThreads() + (producer ? 128 : 0); }
    WgmmaLayout wgmmaLayout() const { return schedule::wgmmaLayout(bm, bn, bk, aKFastest, bKFastest); }
    /// Floats of one stage of an operand's tile: k-major rows of other + pad, or (tensor cores, rows
    /// along k) k-contiguous rows.
    int tileFloats(int other, bool kFastest) const
    {
        return mma && kFastest ? other * mmaKContiguousStride(bk, pad) : bk * (other + pad);
    }
    int shared() const
    {
        if (wgmma) { // plus 1 KiB to align the descriptor's tile to its swizzle atom
            const WgmmaLayout l = wgmmaLayout();
            return stages * (l.descStageFloats() + l.regStageFloats()) * 4 + 1024;
        }
        return stages * (tileFloats(bm, aKFastest) + tileFloats(bn, bKFastest)) * 4;
    }
    /// Elements per global load (or cp.async) of an operand: the SIMT kernel's cp.async copies an
    /// operand whose rows run along k one float at a time, transposing it into the k-major tile.
    int widthA() const { return async && aKFastest && !mma && !wgmma ? 1 : vector; }
    int widthB() const { return async && bKFastest && !mma && !wgmma ? 1 : vector; }
    int loadsA() const { return bm * bk / (widthA() * std::max(copyThreads(), 1)); }
    int loadsB() const { return bn * bk / (widthB() * std::max(copyThreads(), 1)); }
    int registers() const
    {
        // Tensor cores: the fragments of a k step (4 registers per 16 rows of A, 2 per 8 columns of B:
        // 2 tm + tn), half of them again for the next step's loads, and the cp.async ring's addresses
        // (ptxas for sm_90: a 64x64 warp tile takes 250 registers, 64x32 ones spill under 128).
        if (mma)
            return tm * tn + 3 * (2 * tm + tn) / 2 + 56;
        // wgmma: the accumulators, a tile's fragments (4 registers per 8-deep step) and the ring's
        // addresses (ptxas for sm_90a: 244 registers at m64n256, block_k 32); with copy=producer the
        // MMA warps hold no copy addresses (no spills at 216 there).
        if (wgmma)
            return wgmmaLayout().nw / 2 + 4 * (bk / 8) + (producer ? 72 : 100);
        return tm * tn + tm + tn + (!async && stages == 2 ? (loadsA() + loadsB()) * vector : 0) + 28;
    }
};

GemmShape gemmShape(const GroupAnalysis &a, const KernelGroup &g)
{
    return {g.value("block_m"), g.value("block_n"), g.value("block_k"), g.value("thread_m"), g.value("thread_n"),
            g.value("vector"),  g.value("smem_pad"), g.value("stages"), g.value("min_blocks"),
            g.value("copy") >= 1, g.value("math") == 1, a.aRowMajor, !a.bRowMajor, g.value("math") == 2,
            g.value("copy") == 2};
}

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
        out.push_back({{"block_m", "thread_m", "block_n", "thread_n"},
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
            out.push_back({{"math", "thread_m", "thread_n"},
                           wg + ": a thread holds " + std::to_string(nw / 2) + " results of its warpgroup's 64 x " +
                               std::to_string(nw) + " tile, so thread_m must be 8 and thread_n " +
                               std::to_string(std::max(nw / 16, 1)) + " (the block then has 128 threads per warpgroup)"});
        if (s.pad != 0)
            out.push_back({{"math", "smem_pad"}, wg + " lays out its shared tiles itself (a swizzled tile for the "
                                                      "descriptor, a conflict-free padding for the fragments): smem_pad must be 0"});
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
            out.push_back({{"vector"}, kv("vector", s.vector) + ": rows of A have " + std::to_string(aRow) +
                                           " elements, not a multiple of " + std::to_string(s.vector) +
                                           ", so " + std::to_string(s.vector * 4) + "-byte loads would be misaligned"});
    }
    if (s.widthB() > 1) {
        const std::int64_t bRow = a.bRowMajor ? N : K;
        if (bRow % s.vector != 0)
            out.push_back({{"vector"}, kv("vector", s.vector) + ": rows of B have " + std::to_string(bRow) +
                                           " elements, not a multiple of " + std::to_string(s.vector) +
                                           ", so " + std::to_string(s.vector * 4) + "-byte loads would be misaligned"});
    }
    const int aVecDim = a.aRowMajor ? s.bk : s.bm, bVecDim = a.bRowMajor ? s.bn : s.bk;
    if (aVecDim % s.widthA() != 0 || bVecDim % s.widthB() != 0)
        out.push_back({{"vector", "block_k"}, kv("vector", s.vector) + " does not divide the tile rows it loads"});
    const int CT = s.copyThreads();
    if (CT > 0 && ((s.bm * s.bk) % (s.widthA() * CT) != 0 || s.loadsA() < 1))
        out.push_back({{"block_m", "block_k", "vector", "thread_m", "thread_n", "copy"},
                       "the " + std::to_string(s.bm) + "x" + std::to_string(s.bk) + " tile of A is not a whole number (>= 1) of " +
                           std::to_string(s.widthA()) + "-wide loads for each of " + std::to_string(CT) + " threads"});
    if (CT > 0 && ((s.bn * s.bk) % (s.widthB() * CT) != 0 || s.loadsB() < 1))
        out.push_back({{"block_n", "block_k", "vector", "thread_m", "thread_n", "copy"},
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
        out.push_back({{"block_m", "block_n", "block_k", "stages", "smem_pad"},
                       "tiles need " + std::to_string(s.shared()) + " B of shared memory > the " + p.arch.name +
                           " limit of " + std::to_string(smemLimit) + " B per block"});
    if (s.registers() > p.arch.maxRegistersPerThread)
        out.push_back({{"thread_m", "thread_n", "stages", "vector", "copy"},
                       "about " + std::to_string(s.registers()) + " registers per thread > the limit of " +
                           std::to_string(p.arch.maxRegistersPerThread)});
    if (s.producer) {
        const ProducerRegisters regs = producerRegisters(s.computeThreads(), s.registers(), p.arch.registersPerSm);
        if (regs.producer < kMinProducerRegisters)
            out.push_back({{"copy", "block_m", "block_n", "thread_m", "thread_n"},
                           "copy=producer: the MMA warpgroups need about " + std::to_string(s.registers()) +
                               " registers per thread; of " + std::to_string(s.threads()) + " threads' " +
                               std::to_string(regs.launch) + " that leaves the producer " +
                               std::to_string(regs.producer) + " (its copies need " +
                               std::to_string(kMinProducerRegisters) + ")"});
    }
    if (!s.producer && static_cast<long long>(s.registers()) * T > p.arch.registersPerBlock)
        out.push_back({{"thread_m", "thread_n", "block_m", "block_n"},
                       std::to_string(T) + " threads x about " + std::to_string(s.registers()) +
                           " registers exceed the block's " + std::to_string(p.arch.registersPerBlock) +
                           " registers (the compiler would spill)"});
    if (s.minBlocks > 1) {
        const int budget = p.arch.registersPerSm / std::max(T * s.minBlocks, 1);
        if (s.registers() > budget)
            out.push_back({{"min_blocks", "thread_m", "thread_n"},
                           kv("min_blocks", s.minBlocks) + " with " + std::to_string(T) + " threads leaves " +
                               std::to_string(budget) + " registers per thread; the tile needs about " +
                               std::to_string(s.registers())});
        if (s.minBlocks * (s.shared() + p.arch.reservedSharedMemoryPerBlock) > p.arch.sharedMemoryPerSm)
            out.push_back({{"min_blocks", "block_m", "block_n", "block_k", "stages"},
                           kv("min_blocks", s.minBlocks) + " blocks of " + std::to_string(s.shared()) +
                               " B shared memory do not fit the SM's " + std::to_string(p.arch.sharedMemoryPerSm) + " B"});
        if (T * s.minBlocks > p.arch.maxThreadsPerSm)
            out.push_back({{"min_blocks"}, kv("min_blocks", s.minBlocks) + " blocks of " + std::to_string(T) +
                                                " threads exceed the SM's " + std::to_string(p.arch.maxThreadsPerSm) +
                                                " threads"});
    }
}

int cachedArrays(const GroupAnalysis &a)
{
    // Row inputs plus element-wise intermediates the row passes read back.
    int n = static_cast<int>(a.rowInputs.size());
    for (const ir::ComputeOp *op : a.ops)
        if (!op->reduction && a.isLocal(op->output.id))
            ++n;
    return std::max(n, 1);
}

int rowItems(const GroupAnalysis &a, const KernelGroup &g, const ir::SizeBindings &sizes)
{
    const auto C = ir::evaluateSizeExpr(a.domain.back(), sizes);
    const std::int64_t perPass = std::int64_t(g.value("threads_per_row")) * g.value("vector") * g.value("cluster");
    return static_cast<int>(std::max<std::int64_t>(1, ceilDiv(std::max<std::int64_t>(C.ok() ? *C : 1, 1), perPass)));
}

/// Registers per thread a row kernel needs besides `data` registers of cached row data: about 24,
/// 40 past 64 of data (128 of data compiled to 151-168 in all, no spills).
int rowOverheadRegisters(int data) { return data > 64 ? 40 : 24; }

/// Registers per thread for cached row data: the row's elements, twice with prefetch (the next
/// row's elements load while this row is used).
int rowRegisters(const GroupAnalysis &a, const KernelGroup &g, const Problem &p)
{
    return rowItems(a, g, p.sizes) * g.value("vector") * cachedArrays(a) * (g.value("prefetch") == 1 ? 2 : 1);
}

} // namespace

int rowStagingBytes(const GroupAnalysis &a, const KernelGroup &g, const ir::SizeBindings &sizes)
{
    if (g.value("prefetch") != 2)
        return 0;
    const std::int64_t bytes = std::int64_t(a.rowInputs.size()) * g.value("rows_per_block") *
                               g.value("threads_per_row") * rowItems(a, g, sizes) * g.value("vector") * 4;
    return static_cast<int>(std::min<std::int64_t>(bytes, std::int64_t(1) << 30));
}

bool hasOnlineSoftmaxPair(const GroupAnalysis &a)
{
    std::vector<const ir::ComputeOp *> reductions;
    for (const ir::ComputeOp *op : a.ops)
        if (op->reduction)
            reductions.push_back(op);
    if (reductions.size() != 2)
        return false;
    const ir::ComputeOp &m = *reductions[0], &s = *reductions[1];
    if (m.reduction->kind != ir::ReduceKind::Max || s.reduction->kind != ir::ReduceKind::Sum ||
        m.reduction->init.defined() || s.reduction->init.defined() || m.output.dtype != ir::DType::F32 ||
        s.output.dtype != ir::DType::F32 || m.reduction->vars.size() != 1 || s.reduction->vars.size() != 1 ||
        m.domain.size() != s.domain.size())
        return false;
    // s's body: exp(E' - m[rows]) with E' = m's body in s's variables.
    const ir::Expr &body = s.body;
    if (body.kind() != ir::ExprKind::Unary || body.unaryOp() != ir::UnaryOp::Exp)
        return false;
    const ir::Expr &diff = body.operand(0);
    if (diff.kind() != ir::ExprKind::Binary || diff.binaryOp() != ir::BinaryOp::Sub || diff.dtype() != ir::DType::F32)
        return false;
    const ir::Expr &shift = diff.operand(1);
    if (shift.kind() != ir::ExprKind::Read || shift.tensor().id != m.output.id ||
        shift.operands().size() != s.domain.size())
        return false;
    std::map<std::string, ir::Expr> rename{{m.reduction->vars[0].name, s.reduction->vars[0].var()}};
    for (std::size_t d = 0; d < s.domain.size(); ++d) {
        const ir::Expr &index = shift.operands()[d];
        if (index.kind() != ir::ExprKind::IterVar || index.name() != s.domain[d].name)
            return false;
        rename[m.domain[d].name] = s.domain[d].var();
    }
    return ir::substitute(m.body, rename).equals(diff.operand(0));
}

bool computesFloatExp(const GroupAnalysis &a)
{
    bool found = false;
    for (const ir::ComputeOp *op : a.ops)
        ir::visitExpr(op->body, [&](const ir::Expr &e) {
            found = found || (e.kind() == ir::ExprKind::Unary && e.unaryOp() == ir::UnaryOp::Exp &&
                              e.operand(0).dtype() == ir::DType::F32);
        });
    return found;
}

bool computesOnePlusErf(const GroupAnalysis &a)
{
    bool found = false;
    for (const ir::ComputeOp *op : a.ops)
        ir::visitExpr(op->body, [&](const ir::Expr &e) { found = found || ir::matchOnePlusErf(e).has_value(); });
    return found;
}

namespace {

void checkRows(const GroupAnalysis &a, const KernelGroup &g, const Problem &p, std::vector<Violation> &out)
{
    const int tpr = g.value("threads_per_row"), rpb = g.value("rows_per_block"), vec = g.value("vector"),
              cluster = g.value("cluster");
    const std::int64_t C = sizeValue(a.domain.back(), p);
    if (tpr * rpb > p.arch.maxThreadsPerBlock)
        out.push_back({{"threads_per_row", "rows_per_block"},
                       std::to_string(tpr) + " x " + std::to_string(rpb) + " threads per block > the limit of " +
                           std::to_string(p.arch.maxThreadsPerBlock)});
    if (vec > 1 && C % vec != 0)
        out.push_back({{"vector"}, kv("vector", vec) + ": rows have " + std::to_string(C) +
                                       " elements, not a multiple of " + std::to_string(vec) +
                                       ", so vector loads would be misaligned"});
    if (cluster > 1) {
        if (p.arch.computeMajor < 9)
            out.push_back({{"cluster"}, kv("cluster", cluster) + ": thread block clusters need sm_90 or newer, not " +
                                            p.arch.name});
        if (rpb != 1)
            out.push_back({{"cluster", "rows_per_block"}, "a cluster shares one row: rows_per_block must be 1"});
        if (cluster > 8 && tpr > 512)
            out.push_back({{"cluster", "threads_per_row"}, kv("cluster", cluster) + " (non-portable) with " +
                                                              std::to_string(tpr) +
                                                              " threads per block does not fit one GPC's SMs"});
        if (C % (std::int64_t(cluster) * vec) != 0)
            out.push_back({{"cluster", "vector"}, kv("cluster", cluster) + ": " + std::to_string(C) +
                                                      " elements do not split evenly into " + std::to_string(cluster) +
                                                      " parts of whole vectors"});
    }
    const int steps = g.value("row_steps"), prefetch = g.value("prefetch");
    const std::string prefetchText = prefetch == 2 ? "prefetch=shared" : "prefetch=next_row";
    if (prefetch != 0 && steps == 1)
        out.push_back({{"prefetch", "row_steps"}, prefetchText + " needs row_steps > 1: with one row per block "
                                                                "there is no next row"});
    if (prefetch != 0 && g.value("cache") != 1)
        out.push_back({{"prefetch", "cache"}, prefetchText + " loads the next row for the register cache: it "
                                                             "needs cache=registers"});
    if (prefetch == 2) {
        if (p.arch.computeMajor < 8)
            out.push_back({{"prefetch"}, "prefetch=shared copies with cp.async, which needs sm_80 or newer, not " +
                                             p.arch.name});
        if (a.rowInputs.empty())
            out.push_back({{"prefetch"}, "prefetch=shared: the group reads no row input to prefetch"});
        for (ir::TensorId id : a.rowInputs)
            if (ir::dtypeSize(p.graph.tensor(id)->dtype) != 4)
                out.push_back({{"prefetch"}, "prefetch=shared copies 4-byte elements; " + p.graph.tensor(id)->name +
                                                 " is " + ir::dtypeName(p.graph.tensor(id)->dtype)});
        const int bytes = rowStagingBytes(a, g, p.sizes);
        const int limit = sharedLimit(p.arch) - p.arch.reservedSharedMemoryPerBlock - 1024;
        if (bytes > limit)
            out.push_back({{"prefetch", "threads_per_row", "rows_per_block", "vector", "cluster"},
                           "prefetch=shared stages " + std::to_string(bytes) + " B of the next row per block > the " +
                               std::to_string(limit) + " B of shared memory " + p.arch.name +
                               " leaves for it: use a larger cluster or prefetch=off"});
    }
    if (steps > 1) {
        std::int64_t rows = 1;
        for (int i = 0; i < a.rowRank; ++i)
            rows *= sizeValue(a.domain[static_cast<std::size_t>(i)], p);
        if (rows < std::int64_t(rpb) * steps)
            out.push_back({{"row_steps", "rows_per_block"},
                           kv("row_steps", steps) + ": " + std::to_string(rows) + " rows are fewer than rows_per_block x row_steps = " +
                               std::to_string(rpb * steps) + " rows per block"});
    }
    const int minBlocks = g.value("min_blocks");
    if (std::int64_t(tpr) * rpb * minBlocks > p.arch.maxThreadsPerSm)
        out.push_back({{"min_blocks", "threads_per_row", "rows_per_block"},
                       kv("min_blocks", minBlocks) + " blocks of " + std::to_string(tpr * rpb) + " threads > the " +
                           std::to_string(p.arch.maxThreadsPerSm) + " threads an SM of " + p.arch.name + " holds"});
    if (g.value("combine") == 1 && !hasOnlineSoftmaxPair(a))
        out.push_back({{"combine"}, "combine=online needs the softmax pattern, m = max(j) E then sum(j) exp(E - m) over "
                                    "float32 with no other reduction; this group's reductions differ"});
    if (g.value("combine") == 1 && g.value("reduce") == 1)
        out.push_back({{"combine", "reduce"}, "combine=online exchanges (maximum, sum) pairs by warp shuffles: it needs "
                                              "reduce=shuffle"});
    if (g.value("exp") == 1 && !computesFloatExp(a))
        out.push_back({{"exp"}, "exp=fast changes float32 exp, and this group computes none"});
    if (g.value("cache") == 1) {
        // What is left for data once min_blocks blocks share the SM's registers, 128 at most.
        const int perThread = p.arch.registersPerSm / std::max(tpr * rpb * minBlocks, 1);
        const int regs = rowRegisters(a, g, p);
        const int budget = std::min(128, perThread - rowOverheadRegisters(regs));
        if (regs > budget)
            out.push_back({{"cache", "threads_per_row", "rows_per_block", "vector", "cluster", "prefetch", "min_blocks"},
                           "keeping the row in registers needs " + std::to_string(regs) + " registers per thread for data" +
                               (prefetch == 1 ? " (this row and the next, prefetch=next_row)" : "") + "; " +
                               std::to_string(minBlocks) + " x " + std::to_string(tpr * rpb) +
                               " threads per SM leave " + std::to_string(budget) +
                               ": use more threads, a cluster, fewer min_blocks or cache=none"});
    }
}

void checkElementwise(const GroupAnalysis &a, const KernelGroup &g, const Problem &p, std::vector<Violation> &out)
{
    const int vec = g.value("vector");
    const std::int64_t inner = a.domain.empty() ? 1 : sizeValue(a.domain.back(), p);
    if (vec > 1 && inner % vec != 0)
        out.push_back({{"vector"}, kv("vector", vec) + ": the innermost dimension has " + std::to_string(inner) +
                                       " elements, not a multiple of " + std::to_string(vec)});
    if (g.value("threads") > p.arch.maxThreadsPerBlock)
        out.push_back({{"threads"}, "threads per block > the limit"});
}

} // namespace

std::vector<Violation> checkGroup(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem)
{
    std::vector<Violation> out;
    for (const auto &[key, value] : group.values) {
        const DecisionDef *d = findDecision(group.strategy, key);
        if (!d)
            out.push_back({{key}, "\"" + key + "\" is not a decision of strategy " + strategyName(group.strategy)});
        else if (std::find(d->candidates.begin(), d->candidates.end(), value) == d->candidates.end())
            out.push_back({{key}, kv(key, value) + " is not one of the offered values"});
    }
    for (const ir::Expr &e : analysis.domain)
        if (sizeValue(e, problem) < 0)
            out.push_back({{}, "the size " + e.toString() + " has no value"});
    if (!out.empty())
        return out;
    switch (group.strategy) {
    case Strategy::Gemm: checkGemm(analysis, group, problem, out); break;
    case Strategy::RowReduction: checkRows(analysis, group, problem, out); break;
    case Strategy::Elementwise: checkElementwise(analysis, group, problem, out); break;
    case Strategy::Generic:
        if (group.value("threads") > problem.arch.maxThreadsPerBlock)
            out.push_back({{"threads"}, "threads per block > the limit"});
        break;
    }
    if (group.strategy != Strategy::Generic && group.value("erf") == 1 && !computesOnePlusErf(analysis))
        out.push_back({{"erf"}, "erf=erfc changes 1 + erf(z) and 1 - erf(z) over float32, and this group computes neither"});
    return out;
}

std::vector<ValueOption> legalValues(const GroupAnalysis &analysis, const KernelGroup &group, const std::string &key,
                                     const Problem &problem)
{
    std::vector<ValueOption> out;
    const DecisionDef *d = findDecision(group.strategy, key);
    if (!d)
        return out;
    for (int v : d->candidates) {
        KernelGroup g = group;
        g.set(key, v);
        ValueOption o{v, d->valueText(v), true, {}};
        for (const Violation &violation : checkGroup(analysis, g, problem)) {
            if (std::find(violation.keys.begin(), violation.keys.end(), key) != violation.keys.end()) {
                o.legal = false;
                o.why = violation.message;
                break;
            }
        }
        out.push_back(std::move(o));
    }
    return out;
}

int gemmRegisterEstimate(const GroupAnalysis &analysis, const KernelGroup &group)
{
    return gemmShape(analysis, group).registers();
}

int streamKBlocks(const ArchLimits &arch, const KernelGroup &g)
{
    const GpuSpec *gpu = ArchDatabase::builtin().defaultGpuFor(arch.name);
    return gpu ? gpu->multiprocessors * std::max(1, g.value("min_blocks")) : 0;
}

std::int64_t streamKTiles(std::int64_t tiles, int blocks)
{
    if (blocks <= 0 || tiles < blocks)
        return std::max<std::int64_t>(tiles, 0);
    const std::int64_t rest = tiles % blocks;
    return rest >= (blocks + 1) / 2 ? rest : rest + blocks;
}

int gemmSharedBytes(const GroupAnalysis &a, const KernelGroup &g)
{
    return gemmShape(a, g).shared();
}

Result<GroupResources> groupResources(const GroupAnalysis &a, const KernelGroup &g, const Problem &p)
{
    GroupResources r;
    switch (g.strategy) {
    case Strategy::Gemm: {
        const GemmShape s = gemmShape(a, g);
        r.threadsPerBlock = s.threads();
        r.sharedBytes = s.shared();
        r.estimatedRegisters = s.registers();
        r.blocks = ceilDiv(sizeValue(a.domain[0], p), s.bm) * ceilDiv(sizeValue(a.domain[1], p), s.bn) * g.value("split_k");
        if (g.value("stream_k") == 1) { // the stream-K blocks, then one block per remaining tile
            const int sk = streamKBlocks(p.arch, g);
            r.blocks = sk + r.blocks - streamKTiles(r.blocks, sk);
        }
        break;
    }
    case Strategy::RowReduction: {
        const int tpr = g.value("threads_per_row"), rpb = g.value("rows_per_block");
        std::int64_t rows = 1;
        for (int i = 0; i < a.rowRank; ++i)
            rows *= sizeValue(a.domain[static_cast<std::size_t>(i)], p);
        r.threadsPerBlock = tpr * rpb;
        int rowOps = 0;
        for (const auto *op : a.ops)
            rowOps += op->reduction ? 1 : 0;
        const int parity = g.value("row_steps") > 1 ? 2 : 1; // shared slots alternate between row steps
        r.sharedBytes = parity * (rowOps * rpb * std::max(tpr / 32, 1) * 8 + (g.value("cluster") > 1 ? rowOps * 8 : 0)) +
                        rowStagingBytes(a, g, p.sizes);
        const int data = g.value("cache") ? rowRegisters(a, g, p) : 8;
        r.estimatedRegisters = data + rowOverheadRegisters(data);
        r.blocks = ceilDiv(rows, std::int64_t(rpb) * g.value("row_steps")) * g.value("cluster");
        break;
    }
    case Strategy::Elementwise:
    case Strategy::Generic: {
        std::int64_t total = 1;
        for (const auto &e : a.domain)
            total *= sizeValue(e, p);
        const int threads = g.value("threads");
        const int perThread = g.strategy == Strategy::Elementwise ? g.value("vector") * g.value("items") : 1;
        r.threadsPerBlock = threads;
        r.estimatedRegisters = 32;
        r.blocks = std::max<std::int64_t>(1, ceilDiv(total, std::int64_t(threads) * perThread));
        break;
    }
    }
    return r;
}

Status validateSchedule(const Schedule &schedule, const Problem &problem)
{
    std::vector<Diagnostic> problems;
    auto add = [&](const std::string &message) {
        problems.push_back(Diagnostic{Severity::Error, SourceLocation{}, message});
    };
    if (schedule.arch != problem.arch.name)
        add("the schedule is for " + schedule.arch + ", the target is " + problem.arch.name);
    if (schedule.precision == Precision::TF32 && !problem.arch.tensorCoresTf32)
        add("precision tf32: " + problem.arch.name + " has no TF32 tensor cores");
    std::set<std::string> seenOps, seenNames;
    std::set<ir::TensorId> available;
    for (const auto &t : problem.graph.tensors())
        if (!problem.graph.producer(t.id))
            available.insert(t.id);
    for (const KernelGroup &g : schedule.groups) {
        const std::string where = "group " + g.name;
        if (g.name.empty() || !std::all_of(g.name.begin(), g.name.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
            }) || std::isdigit(static_cast<unsigned char>(g.name[0])))
            add(where + ": the name must be a C identifier");
        if (!seenNames.insert(g.name).second)
            add(where + ": two groups have this name");
        for (const auto &op : g.ops)
            if (!seenOps.insert(op).second)
                add(where + ": op '" + op + "' is in more than one group");
        auto a = analyzeGroup(problem.graph, g.ops, g.strategy);
        if (!a.ok()) {
            add(where + " (" + strategyName(g.strategy) + "): " + a.error().message);
            continue;
        }
        std::set<ir::TensorId> own;
        for (const auto *op : a->ops)
            own.insert(op->output.id);
        for (ir::TensorId t : a->reads)
            if (!available.contains(t) && !own.contains(t))
                add(where + ": reads " + problem.graph.tensor(t)->name + " before the group that computes it");
        for (const auto *op : a->ops)
            available.insert(op->output.id);
        for (const Violation &v : checkGroup(*a, g, problem)) {
            std::string keys;
            for (const auto &k : v.keys)
                keys += (keys.empty() ? "" : ", ") + k;
            add(where + (keys.empty() ? "" : " [" + keys + "]") + ": " + v.message);
        }
    }
    for (const auto &op : problem.graph.ops())
        if (!seenOps.contains(op.name))
            add("op '" + op.name + "' is in no group");
    for (const auto &name : seenOps)
        if (!problem.graph.findOp(name))
            add("op '" + name + "' is not in graph " + problem.graph.name());
    if (problems.empty())
        return Ok{};
    Error e = makeError(ErrorKind::InvalidArgument, "illegal schedule: " + problems.front().message);
    e.diagnostics = std::move(problems);
    return e;
}

std::vector<KernelGroup> enumerateLegal(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem,
                                        std::size_t limit)
{
    std::vector<KernelGroup> out;
    const auto &defs = decisionDefs(group.strategy);
    KernelGroup g = group;
    std::function<void(std::size_t)> walk = [&](std::size_t d) {
        if (out.size() >= limit)
            return;
        if (d == defs.size()) {
            if (checkGroup(analysis, g, problem).empty())
                out.push_back(g);
            return;
        }
        for (int v : defs[d].candidates) {
            g.set(defs[d].key, v);
            walk(d + 1);
        }
    };
    walk(0);
    return out;
}

} // namespace stitch::schedule
