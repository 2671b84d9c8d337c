#pragma once
// The schedule space's rules, shared by the files that hold them (private to core/schedule):
//   Space.cpp      checkGroup, legal values, a group's resources, validation, enumeration
//   GemmSpace.cpp  the gemm strategy: its shapes (GemmShape), legality and shared-memory rules
//   RowSpace.cpp   the row_reduction strategy: cached rows, register budgets, its legality rules

#include "core/schedule/Space.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace stitch::schedule::detail {

inline std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

inline int sharedLimit(const ArchLimits &arch)
{
    return std::max(arch.sharedMemoryPerBlock, arch.sharedMemoryPerBlockOptin);
}

inline std::string kv(const std::string &key, int v) { return key + "=" + std::to_string(v); }

/// A gemm group's decisions and what they imply (threads, shared memory, registers).
struct GemmShape {
    int bm, bn, bk, tm, tn, vector, pad, stages, minBlocks;
    bool async;            ///< copy=async: cp.async straight to shared memory, no staging registers
    bool mma;              ///< math=tf32_mma: warps of 8*tm x 4*tn results on TF32 tensor cores
    bool aKFastest, bKFastest; ///< the operand's rows run along k in memory
    bool wgmma = false;    ///< math=tf32_wgmma: warpgroups of 64 x N (wgmmaLayout) on sm_90a warpgroup MMAs
    bool producer = false; ///< copy=producer: one more warpgroup only copies (cp.async), the others only compute
    bool transposeB = false; ///< transpose_b=on: B is read from its transposed copy (rows along k), by descriptor
    int computeThreads() const { return (bm / tm) * (bn / tn); }
    int copyThreads() const { return producer ? 128 : computeThreads(); }
    int threads() const { return computeThreads() + (producer ? 128 : 0); }
    WgmmaLayout wgmmaLayout() const { return schedule::wgmmaLayout(bm, bn, bk, aKFastest, bKFastest, transposeB); }
    /// B's rows as the kernel copies them: along k when B is stored so or read from its transposed copy.
    bool bCopiedKFastest() const { return bKFastest || transposeB; }
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
    int widthB() const { return async && bCopiedKFastest() && !mma && !wgmma ? 1 : vector; }
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
        // MMA warps hold no copy addresses (no spills at 216 there). transpose_b=on: no fragments (ptxas
        // for sm_90a: 242 registers at m64n256, block_k 32).
        if (wgmma)
            return wgmmaLayout().nw / 2 + (transposeB ? 0 : 4 * (bk / 8)) + (producer ? 72 : 100);
        return tm * tn + tm + tn + (!async && stages == 2 ? (loadsA() + loadsB()) * vector : 0) + 28;
    }
};

GemmShape gemmShape(const GroupAnalysis &a, const KernelGroup &g);

void checkGemm(const GroupAnalysis &a, const KernelGroup &g, const Problem &p, std::vector<Violation> &out);
void checkRows(const GroupAnalysis &a, const KernelGroup &g, const Problem &p, std::vector<Violation> &out);

/// Registers per thread a row kernel needs besides `data` registers of cached row data: about 24,
/// 40 past 64 of data (128 of data compiled to 151-168 in all, no spills).
int rowOverheadRegisters(int data);

/// Registers per thread for cached row data: the row's elements, twice with prefetch (the next
/// row's elements load while this row is used).
int rowRegisters(const GroupAnalysis &a, const KernelGroup &g, const Problem &p);

} // namespace stitch::schedule::detail
