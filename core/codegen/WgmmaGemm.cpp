// The Hopper warpgroup MMA math of the gemm strategy (math=tf32_wgmma, sm_90a). GemmKernel.cpp's
// cp.async ring fills the shared tiles (boundary tiles zero-filled) and its epilogue and split K take
// the accumulators; this file lays out the tiles and emits the fragments and the MMAs.
//
// PTX ISA 9.7.15 (wgmma), for wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32 d, a, b-desc, ...:
// - the four warps of a warpgroup (threads 128 w .. 128 w + 127) compute one 64 x N tile together,
//   warp q of the group rows 16 q .. 16 q + 15;
// - register A fragment (16 x 8 per warp, as mma.m16n8k8's; groupID g = lane / 4, t = lane % 4):
//   a0 (g, t)  a1 (g + 8, t)  a2 (g, t + 4)  a3 (g + 8, t + 4)                          (row, k);
// - accumulator register i of N / 2: row g + 8 ((i / 2) % 2), column 8 (i / 4) + 2 t + i % 2;
// - B (8 x N) from shared memory by a 64-bit matrix descriptor: start address / 16 (bits 0-13),
//   leading-dimension byte offset / 16 (16-29; unused by swizzled k-major layouts, 1), stride
//   byte offset / 16 (32-45: from one 8-row group to the next), layout type (62-63: 1 = 128-byte
//   swizzle, 2 = 64, 3 = 32). With .tf32 the shared operand must be k-major: N rows of block_k
//   floats, 16-byte chunks swizzled within each 8-row group, the tile aligned to the swizzle atom;
//   the k-th 8-deep step starts 32 k bytes further (the descriptor's address + 2 k).
// - the hardware reads the TF32 bits of the FP32 values in shared memory (the low 13 mantissa bits
//   ignored); the register operand is rounded with cvt.rna like math=tf32_mma's operands.
// Ordering: cp.async writes are generic-proxy writes and wgmma reads through the async proxy, so a
// thread's landed copies are fenced (fence.proxy.async.shared::cta) before the barrier that publishes
// them; wgmma.fence orders the fragment registers' loads before the MMAs that read them.
#include "core/codegen/WgmmaGemm.h"

namespace stitch::codegen::wgmma {

namespace {

std::string str(long long v) { return std::to_string(v); }

} // namespace

int swizzleBytes(int blockK) { return blockK * 4; }

int layoutType(int rowBytes) { return rowBytes == 128 ? 1 : rowBytes == 64 ? 2 : 3; }

WgmmaTiles wgmmaTiles(int bm, int bn, int bk, bool aKContiguous, bool bKContiguous, bool transposedB)
{
    const schedule::WgmmaLayout l = schedule::wgmmaLayout(bm, bn, bk, aKContiguous, bKContiguous, transposedB);
    WgmmaTiles t;
    t.bm = bm;
    t.bn = bn;
    t.bk = bk;
    t.swap = l.swap;
    t.shared = l.shared;
    t.nw = l.nw;
    t.warpgroups = l.warpgroups;
    t.reg = {l.regKContiguous, bk, l.regRows, l.regStride, l.shared ? swizzleBytes(bk) : 0};
    t.desc = {true, bk, l.descRows, l.descStride, swizzleBytes(bk)};
    return t;
}

namespace {

std::string descriptorBits(const std::string &address, int rowBytes)
{
    return "(unsigned long long)((((unsigned)__cvta_generic_to_shared(" + address + ")) & 0x3FFFF) >> 4) | (1ULL << 16) | ((unsigned long long)" +
           str(8 * rowBytes / 16) + " << 32) | ((unsigned long long)" + str(layoutType(rowBytes)) + " << 62)";
}

} // namespace

void emitWgmmaSetup(CudaWriter &w, const WgmmaTiles &t)
{
    const std::string regTile = t.swap ? "Bs_" : "As_", descTile = t.swap ? "As_" : "Bs_";
    const int rowBytes = t.desc.swizzle;
    const std::string mma = "math=tf32_wgmma" + std::string(t.shared ? ", transpose_b=on" : "") +
                            ": warpgroup wg_ computes MMA rows wg_ * 64 .. + 63 (along " + (t.swap ? "n" : "m") + ") by " +
                            str(t.nw) + " columns (along " + (t.swap ? "m" : "n") + ") as m64n" + str(t.nw) + "k8 wgmma, " +
                            str(t.bk / 8) + " per tile;\n";
    if (t.shared)
        w.comment(mma + "both operands from shared memory by descriptor (" + str(rowBytes) +
                  "-byte swizzled rows): wg_'s 64 rows of B transposed, all of A.");
    else
        w.comment(mma + (t.swap ? "B" : "A") + " from registers (rLane_: the lane's first fragment element), " +
                  (t.swap ? "A" : "B") + " from shared memory by descriptor (" + str(rowBytes) + "-byte swizzled rows).");
    w.line("const int wg_ = threadIdx.x / 128, warp_ = (threadIdx.x / 32) % 4, g_ = (threadIdx.x % 32) / 4, t_ = threadIdx.x % 4;");
    if (!t.shared) {
        w.line("const float *Rs_ = " + regTile + ";");
        w.line("const int rLane_ = " + t.reg.at("0", "t_", "wg_ * 64 + warp_ * 16 + g_") + ";");
    }
    w.comment(std::string(t.shared ? "Descriptors" : "Descriptor") +
              " of stage 0: start address / 16, leading byte offset 16 (unused), stride byte offset " + str(8 * rowBytes) +
              " (8 rows), layout type " + str(layoutType(rowBytes)) + " (" + str(rowBytes) + "-byte swizzle).");
    w.line("const unsigned long long descBase_ = " + descriptorBits(descTile, rowBytes) + ";");
    if (t.shared) { // the "register" operand's tile, B transposed: this warpgroup's 64 rows
        w.line("const unsigned long long rowDescBase_ = " + descriptorBits(regTile + " + wg_ * " + str(64 * t.bk), rowBytes) + ";");
        return;
    }
    w.comment("Operands rounded to the nearest TF32 value (cvt.rna).");
    w.line("auto tf32_ = [](float x) {");
    w.line("    unsigned u;");
    w.line("    asm(\"cvt.rna.tf32.f32 %0, %1;\\n\" : \"=r\"(u) : \"f\"(x));");
    w.line("    return u;");
    w.line("};");
}

namespace {

/// acc_ element of accumulator register i (PTX ISA's order for m64nNk8 .f32). (PTX ISA's order for m64nNk8 .f32).
std::string accElement(const WgmmaTiles &t, int i)
{
    const int half = (i >> 1) & 1, column = (i >> 2) * 2 + (i & 1);
    return t.swap ? "acc_[" + str(column) + "][" + str(half) + "]" : "acc_[" + str(half) + "][" + str(column) + "]";
}

std::string accOperands(const WgmmaTiles &t, std::string &regs)
{
    std::string acc;
    for (int i = 0; i < t.nw / 2; ++i) {
        regs += (i ? ", %" : "%") + str(i);
        acc += std::string(i ? ", " : "") + "\"+f\"(" + accElement(t, i) + ")";
    }
    return acc;
}

/// transpose_b=on: block_k / 8 MMAs with both operands by descriptor (wgmma's A: the warpgroup's 64
/// rows of B transposed; its B: A's tile), one commit group.
void emitSharedTile(CudaWriter &w, const WgmmaTiles &t, const std::string &stage)
{
    const int steps = t.bk / 8, nacc = t.nw / 2;
    w.open("");
    w.line("const unsigned long long desc_ = descBase_ + (unsigned long long)(" + stage + " * " +
           str(t.desc.stageFloats() * 4 / 16) + ");");
    w.line("const unsigned long long rowDesc_ = rowDescBase_ + (unsigned long long)(" + stage + " * " +
           str(t.reg.stageFloats() * 4 / 16) + ");");
    std::string fenceInputs;
    for (int s = 0; s < steps; ++s) {
        w.line("const unsigned long long desc" + str(s) + "_ = desc_ + " + str(s * 2) + "ULL, rowDesc" + str(s) +
               "_ = rowDesc_ + " + str(s * 2) + "ULL; // + 32 bytes per 8-deep step");
        fenceInputs += std::string(s ? ", " : "") + "\"l\"(desc" + str(s) + "_), \"l\"(rowDesc" + str(s) + "_)";
    }
    w.line("asm volatile(\"wgmma.fence.sync.aligned;\\n\" :: " + fenceInputs + " : \"memory\");");
    std::string regs;
    const std::string acc = accOperands(t, regs);
    for (int s = 0; s < steps; ++s) {
        w.line("asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\nwgmma.mma_async.sync.aligned.m64n" + str(t.nw) +
               "k8.f32.tf32.tf32 {" + regs + "}, %" + str(nacc) + ", %" + str(nacc + 1) + ", p, 1, 1;\\n}\\n\"");
        w.line("    : " + acc);
        w.line("    : \"l\"(rowDesc" + str(s) + "_), \"l\"(desc" + str(s) + "_)");
        w.line("    : \"memory\");");
    }
    w.line("asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");");
    w.close();
}

} // namespace

void emitWgmmaTile(CudaWriter &w, const WgmmaTiles &t, const std::string &stage)
{
    if (t.shared) {
        emitSharedTile(w, t, stage);
        return;
    }
    const int steps = t.bk / 8;
    w.open("");
    // The fragments load only once the previous tile's MMAs are done (the caller waits with none
    // pending): loaded while MMAs run, into the same or other registers, they were measured wrong
    // (ptxas merges the copies) or serialized by ptxas (C7513).
    w.line("unsigned rf_[" + str(steps) + "][4];");
    w.line("const float *rt_ = Rs_ + " + stage + " * " + str(t.reg.stageFloats()) + " + rLane_;");
    for (int s = 0; s < steps; ++s)
        for (int r = 0; r < 4; ++r) {
            const int row = (r & 1) * 8, k = s * 8 + (r >> 1) * 4;
            w.line("rf_[" + str(s) + "][" + str(r) + "] = tf32_(rt_[" + t.reg.at("0", str(k), str(row)) + "]);");
        }
    // The descriptors and fragments are inputs of the fence, so they are all computed before it: ptxas
    // serializes the MMAs when other instructions define their inputs inside the pipeline stage.
    w.line("const unsigned long long desc_ = descBase_ + (unsigned long long)(" + stage + " * " +
           str(t.desc.stageFloats() * 4 / 16) + ");");
    std::string fenceInputs;
    for (int s = 0; s < steps; ++s) {
        w.line("const unsigned long long desc" + str(s) + "_ = desc_ + " + str(s * 2) + "ULL; // + 32 bytes per 8-deep step");
        fenceInputs += std::string(s ? ", " : "") + "\"l\"(desc" + str(s) + "_)";
        for (int r = 0; r < 4; ++r)
            fenceInputs += ", \"r\"(rf_[" + str(s) + "][" + str(r) + "])";
    }
    w.line("asm volatile(\"wgmma.fence.sync.aligned;\\n\" :: " + fenceInputs + " : \"memory\");");
    const int nacc = t.nw / 2;
    std::string regs;
    const std::string acc = accOperands(t, regs);
    for (int s = 0; s < steps; ++s) {
        // scale-d is a predicate (D = A B + D when true).
        w.line("asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\nwgmma.mma_async.sync.aligned.m64n" + str(t.nw) +
               "k8.f32.tf32.tf32 {" + regs + "}, {%" + str(nacc) + ", %" + str(nacc + 1) + ", %" + str(nacc + 2) + ", %" +
               str(nacc + 3) + "}, %" + str(nacc + 4) + ", p, 1, 1;\\n}\\n\"");
        w.line("    : " + acc);
        w.line("    : \"r\"(rf_[" + str(s) + "][0]), \"r\"(rf_[" + str(s) + "][1]), \"r\"(rf_[" + str(s) + "][2]), \"r\"(rf_[" +
               str(s) + "][3]), \"l\"(desc" + str(s) + "_)");
        w.line("    : \"memory\");");
    }
    w.line("asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");");
    w.close();
}

std::string epilogueRow(const WgmmaTiles &t)
{
    if (t.swap)
        return "(i_ >> 1) * 8 + 2 * t_ + (i_ & 1)";
    return "wg_ * 64 + warp_ * 16 + i_ * 8 + g_";
}

std::string epilogueColumn(const WgmmaTiles &t)
{
    if (t.swap)
        return "wg_ * 64 + warp_ * 16 + h_ * 8 + g_";
    return "h_ * 8 + 2 * t_";
}

int epilogueWidth(const WgmmaTiles &t) { return t.swap ? 1 : 2; }

int epilogueColumnGroups(const WgmmaTiles &t) { return t.swap ? 2 : t.nw / 8; }

} // namespace stitch::codegen::wgmma
