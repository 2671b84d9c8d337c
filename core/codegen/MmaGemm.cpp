// The TF32 tensor-core math of the gemm strategy (math=tf32_mma). GemmKernel.cpp's cp.async ring
// fills the shared tiles (boundary tiles zero-filled), and its epilogue and split K take the
// accumulators. An operand whose rows run along m or n keeps the SIMT kernel's k-major tile
// [stage][block_k][other + pad]; one whose rows run along k (A row-major, B transposed) gets a
// k-contiguous tile [stage][other][stride] (stride: mmaKContiguousStride), copied 16 bytes at a time.
//
// Fragments (PTX ISA 9.7.14.5.7, "Matrix Fragments for mma.m16n8k8", .tf32; groupID g = lane >> 2,
// threadID_in_group t = lane % 4):
//   A (16x8, .row):  a0 (g, t)   a1 (g + 8, t)   a2 (g, t + 4)   a3 (g + 8, t + 4)     (row, k)
//   B (8x8, .col):   b0 (t, g)   b1 (t + 4, g)                                          (k, column)
//   C/D (16x8):      c0 (g, 2t)  c1 (g, 2t + 1)  c2 (g + 8, 2t)  c3 (g + 8, 2t + 1)     (row, column)
// The k index is a summation index: lane t takes fragment k = t and t + 4 from shared k rows 2t and
// 2t + 1, for A and B alike (the products pair up as before). In a k-major tile with k rows
// other + 4 floats apart (smem_pad=4; 4 more than a multiple of 8), k rows 2t start 8t or 24t banks
// apart (mod 32), so the 32 lanes of a load hit 32 different banks (k rows t would collide 2-way,
// smem_pad=0 4-way). In a k-contiguous tile, k rows 2t and 2t + 1 are adjacent: one 8-byte load,
// rows 8 more than a multiple of 16 floats apart, so each half warp reads 16 different bank pairs.
// Not used (yet): ldmatrix (it moves 16-bit elements; a 32-bit fragment fits its 8x8 b16 matrices
// only from a k-contiguous tile with k unpermuted, which the k-major tile of the other operand
// would then read 2-way conflicted) and sm_90's wgmma (asynchronous warpgroup MMA from shared-memory
// descriptors; what cuBLAS uses on the H200).
#include "core/codegen/MmaGemm.h"

namespace stitch::codegen::mma {

namespace {

std::string str(long long v) { return std::to_string(v); }

/// The `regs` registers of one fragment, each rounded to TF32; `offset(reg)` gives its row (along m
/// or n) and shared k row relative to the lane's first element. A k-contiguous tile holds k rows
/// 2t and 2t + 1 side by side: one 8-byte load for both.
template <typename Offset>
void fragmentLoads(CudaWriter &w, const SharedTile &tile, const std::string &dst, const std::string &base,
                   const std::string &row0, int regs, Offset offset)
{
    for (int r = 0; r < regs; ++r) {
        const FragmentOffset o = offset(r);
        if (!tile.kContiguous) {
            w.line(dst + "[" + str(r) + "] = tf32_(" + base + "[" +
                   tile.at("0", "ks_ + " + str(o.col), row0 + " + " + str(o.row)) + "]);");
            continue;
        }
        if (o.col != 0)
            continue; // loaded with its partner from k row 2t
        int partner = -1;
        for (int q = 0; q < regs; ++q)
            if (offset(q).row == o.row && offset(q).col == 1)
                partner = q;
        const std::string name = "p" + str(r) + "_";
        w.line("const float2 " + name + " = *reinterpret_cast<const float2 *>(" + base + " + " +
               tile.at("0", "ks_", row0 + " + " + str(o.row)) + ");");
        w.line(dst + "[" + str(r) + "] = tf32_(" + name + ".x);");
        w.line(dst + "[" + str(partner) + "] = tf32_(" + name + ".y);");
    }
}

} // namespace

FragmentOffset aLoad(int reg) { return {reg & 1 ? 8 : 0, reg >= 2 ? 1 : 0}; }

FragmentOffset bLoad(int reg) { return {reg == 1 ? 1 : 0, 0}; }

FragmentOffset cElement(int reg) { return {reg >= 2 ? 8 : 0, reg & 1}; }

int sharedK(int k) { return 2 * (k % 4) + k / 4; }

std::string SharedTile::at(const std::string &stage, const std::string &kk, const std::string &o) const
{
    // Stage "0": the offset within a stage (the caller adds the stage's base).
    if (swizzle) {
        // Chunk (kk / 4) of row o lies at chunk (kk / 4) ^ f(o), f = schedule::wgmmaSwizzledChunk's row term.
        const int rowShift = swizzle == 128 ? 0 : swizzle == 64 ? 1 : 2, mask = swizzle / 16 - 1;
        return (stage == "0" ? "" : stage + " * " + str(stageFloats()) + " + ") + "(" + o + ") * " + str(stride) +
               " + (((((" + kk + ") >> 2) ^ (((" + o + ") >> " + str(rowShift) + ") & " + str(mask) + ")) << 2) | ((" +
               kk + ") & 3))";
    }
    if (kContiguous)
        return (stage == "0" ? "" : stage + " * " + str(stageFloats()) + " + ") + "(" + o + ") * " + str(stride) + " + " + kk;
    return "(" + (stage == "0" ? "" : stage + " * " + str(depth) + " + ") + kk + ") * " + str(stride) + " + " + o;
}

SharedTile sharedTile(bool kContiguous, int blockK, int other, int pad)
{
    if (kContiguous)
        return {true, blockK, other, schedule::mmaKContiguousStride(blockK, pad)};
    return {false, blockK, blockK, other + pad};
}

void emitMmaSetup(CudaWriter &w, const MmaTiles &t)
{
    w.comment("math=tf32_mma: warp wm_, wn_ computes a " + str(t.warpM()) + "x" + str(t.warpN()) + " tile as " +
              str(t.tm / 2) + "x" + str(t.tn / 2) + " m16n8k8 MMAs per 8-deep step; lane = 4 g_ + t_ (the PTX\n"
              "ISA's groupID and threadID_in_group). aLane_ and bLane_: the lane's first element of the A and B\n"
              "fragments in a shared stage (row g_, k row 2 t_; column g_, k row 2 t_).");
    w.line("const int warp_ = threadIdx.x / 32, g_ = (threadIdx.x % 32) / 4, t_ = threadIdx.x % 4;");
    w.line("const int wm_ = warp_ / " + str(t.warpsN()) + ", wn_ = warp_ % " + str(t.warpsN()) + ";");
    w.line("const int aLane_ = " + t.a.at("0", "2 * t_", "wm_ * " + str(t.warpM()) + " + g_") + ";");
    w.line("const int bLane_ = " + t.b.at("0", "2 * t_", "wn_ * " + str(t.warpN()) + " + g_") + ";");
    w.comment("Operands rounded to the nearest TF32 value (cvt.rna): the MMA's .tf32 operands must be TF32.");
    w.line("auto tf32_ = [](float x) {");
    w.line("    unsigned u;");
    w.line("    asm(\"cvt.rna.tf32.f32 %0, %1;\\n\" : \"=r\"(u) : \"f\"(x));");
    w.line("    return u;");
    w.line("};");
}

void emitMmaStage(CudaWriter &w, const MmaTiles &t, const std::string &stage)
{
    const int MI = t.tm / 2, NI = t.tn / 2;
    w.open("");
    w.line("const float *at_ = As_ + " + stage + " * " + str(t.a.stageFloats()) + " + aLane_;");
    w.line("const float *bt_ = Bs_ + " + stage + " * " + str(t.b.stageFloats()) + " + bLane_;");
    w.line("#pragma unroll");
    w.open("for (int ks_ = 0; ks_ < " + str(t.bk) + "; ks_ += 8)");
    w.line("unsigned a_[" + str(MI) + "][4], b_[" + str(NI) + "][2];");
    w.line("#pragma unroll");
    w.open("for (int mi_ = 0; mi_ < " + str(MI) + "; ++mi_)");
    fragmentLoads(w, t.a, "a_[mi_]", "at_", "mi_ * 16", 4, aLoad);
    w.close();
    w.line("#pragma unroll");
    w.open("for (int ni_ = 0; ni_ < " + str(NI) + "; ++ni_)");
    fragmentLoads(w, t.b, "b_[ni_]", "bt_", "ni_ * 8", 2, [](int reg) {
        const FragmentOffset o = bLoad(reg);
        return FragmentOffset{o.col, o.row}; // as (column of B, k)
    });
    w.close();
    std::string acc;
    for (int r = 0; r < 4; ++r) {
        const FragmentOffset c = cElement(r);
        acc += std::string(r ? ", " : "") + "\"+f\"(acc_[2 * mi_ + " + str(c.row / 8) + "][2 * ni_ + " + str(c.col) + "])";
    }
    w.line("#pragma unroll");
    w.line("for (int mi_ = 0; mi_ < " + str(MI) + "; ++mi_)");
    w.line("    #pragma unroll");
    w.line("    for (int ni_ = 0; ni_ < " + str(NI) + "; ++ni_)");
    w.line("        asm(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
           "{%8, %9}, {%0, %1, %2, %3};\\n\"");
    w.line("            : " + acc);
    w.line("            : \"r\"(a_[mi_][0]), \"r\"(a_[mi_][1]), \"r\"(a_[mi_][2]), \"r\"(a_[mi_][3]), \"r\"(b_[ni_][0]), "
           "\"r\"(b_[ni_][1]));");
    w.close();
    w.close();
}

std::string epilogueRow(const MmaTiles &t)
{
    return "wm_ * " + str(t.warpM()) + " + (i_ >> 1) * 16 + (i_ & 1) * " + str(cElement(2).row) + " + g_";
}

std::string epilogueColumn(const MmaTiles &t) { return "wn_ * " + str(t.warpN()) + " + h_ * 8 + 2 * t_"; }

} // namespace stitch::codegen::mma
