#pragma once
// The Hopper warpgroup tensor-core part of the gemm strategy (math=tf32_wgmma, sm_90a): which operand
// the asynchronous wgmma.mma_async reads from shared memory through a matrix descriptor and which
// from registers, the swizzled shared layout the descriptor describes, and the code that loads the
// register fragments, issues the MMAs and maps the accumulators back to C. Internal to core/codegen
// (and its tests).
//   GemmKernel.cpp (cp.async ring, boundary zero-fill, epilogue) -> emitWgmmaSetup / emitWgmmaTile
//
// wgmma with .tf32 operands reads its shared-memory operand only k-major (k contiguous), so that
// operand must be one whose rows run along k in global memory (A row-major, or B transposed); the
// other operand goes through registers, loaded from any shared layout. For C = A B with both row-major
// (the usual case) the kernel computes C^T = B^T A^T: the warpgroup's 64 MMA rows run along n (B from
// registers), the MMA's N columns along m (A through the descriptor).

#include "core/codegen/CudaWriter.h"
#include "core/codegen/MmaGemm.h"

#include <string>

namespace stitch::codegen::wgmma {

/// Bytes of a row of the descriptor operand's tile (block_k floats) and so its swizzle mode: 128, 64
/// or 32 (CUTLASS's Layout_K_SW128/64/32_Atom for 32-bit elements; the descriptor's layout type 1, 2, 3).
int swizzleBytes(int blockK);
/// The descriptor's layout-type field (bits 62-63) for a swizzle of `rowBytes`.
int layoutType(int rowBytes);

/// The block tile as warpgroups: `warpgroups` of 64 MMA rows, each a 64 x nw MMA (m64n{nw}k8).
struct WgmmaTiles {
    int bm = 0, bn = 0, bk = 0;
    bool swap = false; ///< MMA rows run along n (B in registers, A by descriptor); else along m
    bool shared = false; ///< transpose_b=on: B (the MMA rows' operand) by descriptor too, from B transposed
    int nw = 0;        ///< the MMA's N: block_m (swap) or block_n
    int warpgroups = 0;
    mma::SharedTile reg, desc; ///< the register operand's tile and the descriptor operand's (swizzled) tile
    int threads() const { return 128 * warpgroups; }
    int accRows() const { return swap ? nw / 4 : 2; }
    int accCols() const { return swap ? 2 : nw / 4; }
};

/// `aKContiguous`: A's rows run along k (A[i, k]); `bKContiguous`: B's do (B[j, k]); `transposedB`:
/// transpose_b=on (B read from its transposed copy, both tiles by descriptor). The arrangement is
/// schedule::wgmmaLayout's (the legality rules and the rubric read the same one).
WgmmaTiles wgmmaTiles(int bm, int bn, int bk, bool aKContiguous, bool bKContiguous, bool transposedB = false);

/// Warpgroup, warp and lane indices, the lane's offset in the register tile and the descriptor's
/// constant part. Needs As_, Bs_ (the shared tiles) declared.
void emitWgmmaSetup(CudaWriter &w, const WgmmaTiles &t);
/// The math on shared stage `stage`: the register fragments of every 8-deep step into rf_, rounded
/// to TF32, then block_k / 8 wgmma.mma_async into acc_ and one commit group. The caller waits
/// (wgmma.wait_group 0) before the next tile's call and before the stage is reused. With `shared`
/// tiles no fragments: both operands by descriptor, and the caller may leave the group running
/// (wgmma.wait_group 1) while it publishes the next tile.
void emitWgmmaTile(CudaWriter &w, const WgmmaTiles &t, const std::string &stage);
/// The block-tile row of acc_[i_][...] and the first column of acc_[...][h_ * W] for the epilogue,
/// W = epilogueWidth adjacent columns.
std::string epilogueRow(const WgmmaTiles &t);
std::string epilogueColumn(const WgmmaTiles &t);
int epilogueWidth(const WgmmaTiles &t);
/// How many such groups a thread's acc_[i_] row holds (h_ runs over them).
int epilogueColumnGroups(const WgmmaTiles &t);

} // namespace stitch::codegen::wgmma
