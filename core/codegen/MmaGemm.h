#pragma once
// The TF32 tensor-core part of the gemm strategy (math=tf32_mma): where each register of
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 comes from in the shared tiles, and the code
// that loads those fragments and issues the MMAs. Internal to core/codegen (and its tests).
//   GemmKernel.cpp (tiles, cp.async ring, epilogue) -> emitMmaSetup / emitMmaStage -> mma.sync

#include "core/codegen/CudaWriter.h"
#include "core/schedule/Space.h"

#include <string>

namespace stitch::codegen::mma {

/// A fragment register's element, as offsets from the lane's own position: the PTX ISA numbers a
/// lane as groupID g = lane / 4 and threadID_in_group t = lane % 4.
struct FragmentOffset {
    int row = 0;
    int col = 0;
};

/// A register `reg` (a0..a3) of the A fragment as the kernel loads it from the shared tile of A:
/// row g + row of the 16-row tile, shared k row 2t + col of the 8-deep step.
FragmentOffset aLoad(int reg);
/// A register `reg` (b0, b1) of the B fragment as the kernel loads it from the shared tile of B:
/// shared k row 2t + row of the 8-deep step, column g + col of the 8-column tile.
FragmentOffset bLoad(int reg);
/// An accumulator register `reg` (c0..c3): row g + row, column 2t + col of the 16x8 tile (PTX ISA
/// 9.7.14.5.7). acc_[2 * mi + row / 8][2 * ni + col] holds it.
FragmentOffset cElement(int reg);
/// The shared k row (within an 8-deep step) whose values go where the PTX ISA puts fragment column
/// `k`: lane t's k = t and k = t + 4 come from rows 2t and 2t + 1, for A and B alike, so the sum over
/// k is unchanged and the loads are free of bank conflicts with smem_pad=4.
int sharedK(int k);

/// How an operand's tile sits in one shared stage: k-major rows ([block_k][other + pad], the SIMT
/// kernel's layout, which an operand whose rows run along k reaches transposed, one float per
/// cp.async), or k-contiguous rows ([other][block_k + pad], math=tf32_mma for such an operand: 16-byte
/// copies, no transposition).
struct SharedTile {
    bool kContiguous = false;
    int depth = 0;  ///< block_k
    int rows = 0;   ///< block_k (k-major) or the tile's extent along m or n (k-contiguous)
    int stride = 0; ///< floats from one row to the next
    /// A k-contiguous tile read by a wgmma descriptor (math=tf32_wgmma): its 16-byte chunks swizzled
    /// within rows of `swizzle` bytes (= stride * 4; WgmmaGemm.h). 0: plain rows.
    int swizzle = 0;
    int stageFloats() const { return rows * stride; }
    /// Element (k row kk, column o along m or n) of stage `stage`, as a C expression.
    std::string at(const std::string &stage, const std::string &kk, const std::string &o) const;
};

/// The tile of an operand: `other` is its extent along m or n; k-contiguous rows are padded to
/// schedule::mmaKContiguousStride.
SharedTile sharedTile(bool kContiguous, int blockK, int other, int pad);

/// The block tile, its warp tiles and the shared tiles of A and B.
struct MmaTiles {
    int bm, bn, bk, tm, tn;
    SharedTile a, b;
    int warpM() const { return 8 * tm; }
    int warpN() const { return 4 * tn; }
    int warpsN() const { return bn / warpN(); }
};

/// Lane and warp indices, per-lane offsets into the shared tiles and the TF32 rounding helper.
void emitMmaSetup(CudaWriter &w, const MmaTiles &t);
/// The math on shared stage `stage`: for each 8-deep step, every A and B fragment of the warp
/// tile, rounded to TF32, then (tm / 2) x (tn / 2) mma.sync into acc_.
void emitMmaStage(CudaWriter &w, const MmaTiles &t, const std::string &stage);
/// The block-tile row of acc_[i_][...] and the first column of acc_[...][2 * h_] (the pair h_ * 2,
/// h_ * 2 + 1 is two adjacent columns), as expressions of i_ and h_ for the epilogue.
std::string epilogueRow(const MmaTiles &t);
std::string epilogueColumn(const MmaTiles &t);

} // namespace stitch::codegen::mma
