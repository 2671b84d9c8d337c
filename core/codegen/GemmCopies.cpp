// The gemm kernel's copies from global to shared memory (GemmEmitter.h): register staging (loads,
// then k-major stores), the cp.async copies of a tile with boundary zero-fill, the interior tiles'
// fast path from per-thread base pointers, and the cp.async ring's prologue, refill and advance.
#include "core/codegen/GemmEmitter.h"

namespace stitch::codegen::gemm {

void GemmEmitter::loadOperand(const std::string &tensor, const std::string &regs, int loads, bool kFastest, int tileOther,
                              const std::string &other0, const std::string &otherLimit)
{
    // kFastest: rows of `tileOther` elements along the other dimension, each BK deep and contiguous in k.
    const int perRow = (kFastest ? BK : tileOther) / VEC;
    w.line("#pragma unroll");
    w.open("for (int l_ = 0; l_ < " + str(loads) + "; ++l_)");
    w.line("const int v_ = threadIdx.x + l_ * " + str(T) + ";");
    if (kFastest) {
        w.line("const int o_ = " + other0 + " + v_ / " + str(perRow) + ", kk_ = k0_ + (v_ % " + str(perRow) + ") * " +
               str(VEC) + ";");
        w.line("const long long at_ = (long long)o_ * " + std::string(tensor == an ? "lda_" : "ldb_") + " + kk_;");
    } else {
        w.line("const int kk_ = k0_ + v_ / " + str(perRow) + ", o_ = " + other0 + " + (v_ % " + str(perRow) + ") * " +
               str(VEC) + ";");
        w.line("const long long at_ = (long long)kk_ * " + std::string(tensor == an ? "lda_" : "ldb_") + " + o_;");
    }
    w.open("if (o_ < " + otherLimit + " && kk_ < kEnd_)");
    if (VEC > 1) {
        w.line("const " + vecType(VEC) + " t_ = *reinterpret_cast<const " + vecType(VEC) + " *>(" + tensor + " + at_);");
        for (int q = 0; q < VEC; ++q)
            w.line(regs + "[l_ * " + str(VEC) + " + " + str(q) + "] = t_." + lane(q) + ";");
    } else {
        w.line(regs + "[l_] = __ldg(" + tensor + " + at_);");
    }
    w.close();
    w.open("else");
    w.line("#pragma unroll");
    w.line("for (int q_ = 0; q_ < " + str(VEC) + "; ++q_)");
    w.line("    " + regs + "[l_ * " + str(VEC) + " + q_] = 0.0f;");
    w.close();
    w.close();
}

void GemmEmitter::storeOperand(const std::string &tile, const std::string &regs, int loads, bool kFastest, int tileOther,
                               int stride)
{
    const int perRow = (kFastest ? BK : tileOther) / VEC;
    w.line("#pragma unroll");
    w.open("for (int l_ = 0; l_ < " + str(loads) + "; ++l_)");
    w.line("const int v_ = threadIdx.x + l_ * " + str(T) + ";");
    if (kFastest) {
        w.line("const int o_ = v_ / " + str(perRow) + ", kk_ = (v_ % " + str(perRow) + ") * " + str(VEC) + ";");
        w.line("#pragma unroll");
        w.line("for (int q_ = 0; q_ < " + str(VEC) + "; ++q_)");
        w.line("    " + tile + "[(s_ * " + str(BK) + " + kk_ + q_) * " + str(stride) + " + o_] = " + regs + "[l_ * " +
               str(VEC) + " + q_];");
    } else {
        w.line("const int kk_ = v_ / " + str(perRow) + ", o_ = (v_ % " + str(perRow) + ") * " + str(VEC) + ";");
        if (VEC > 1) {
            std::string init;
            for (int q = 0; q < VEC; ++q)
                init += (q ? ", " : "") + regs + "[l_ * " + str(VEC) + " + " + str(q) + "]";
            w.line("*reinterpret_cast<" + vecType(VEC) + " *>(&" + tile + "[(s_ * " + str(BK) + " + kk_) * " +
                   str(stride) + " + o_]) = make_" + vecType(VEC) + "(" + init + ");");
        } else {
            w.line(tile + "[(s_ * " + str(BK) + " + kk_) * " + str(stride) + " + o_] = " + regs + "[l_];");
        }
    }
    w.close();
}

void GemmEmitter::loadTile(const std::string &k0)
{
    w.open("");
    w.line("const int k0_ = " + k0 + ";");
    loadOperand(an, "ra_", LA, a.aRowMajor, BM, "m0_", "M_");
    loadOperand(bn, "rb_", LB, bKFast, BN, "n0_", "N_");
    w.close();
}

void GemmEmitter::storeTile(const std::string &stage)
{
    w.open("");
    w.line("const int s_ = " + stage + ";");
    storeOperand("As_", "ra_", LA, a.aRowMajor, BM, SA);
    storeOperand("Bs_", "rb_", LB, bKFast, BN, SB);
    w.close();
}

int GemmEmitter::copyWidth(bool kFastest, const mma::SharedTile &layout)
{
    return kFastest && !layout.kContiguous ? 1 : VEC;
}

const char *GemmEmitter::copyUnroll(int copies)
{
    return (MMA || WG) && copies > 8 ? "#pragma unroll 4" : "#pragma unroll";
}

void GemmEmitter::copyOperand(const std::string &tensor, const std::string &tile, bool kFastest, int tileOther,
                              const std::string &other0, const std::string &otherLimit, const std::string &ld,
                              const mma::SharedTile &layout)
{
    const int width = copyWidth(kFastest, layout), bytes = width * 4;
    const int perRow = (kFastest ? BK : tileOther) / width, copies = tileOther * BK / (width * CT);
    w.line(copyUnroll(copies));
    w.open("for (int l_ = 0; l_ < " + str(copies) + "; ++l_)");
    w.line("const int v_ = " + copyThread + " + l_ * " + str(CT) + ";");
    if (kFastest)
        w.line("const int o_ = v_ / " + str(perRow) + ", kk_ = " +
               (width > 1 ? "(v_ % " + str(perRow) + ") * " + str(width) : "v_ % " + str(perRow)) + ";");
    else
        w.line("const int kk_ = v_ / " + str(perRow) + ", o_ = (v_ % " + str(perRow) + ") * " + str(width) + ";");
    w.line("const int go_ = " + other0 + " + o_, gk_ = k0_ + kk_;");
    w.line("const bool in_ = go_ < " + otherLimit + " && gk_ < kEnd_;");
    w.line("const float *src_ = " + tensor + " + (in_ ? " +
           (kFastest ? "(long long)go_ * " + ld + " + gk_" : "(long long)gk_ * " + ld + " + go_") + " : 0);");
    w.line("const unsigned dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" + layout.at("s_", "kk_", "o_") +
           "]);");
    w.line(std::string("asm volatile(\"cp.async.") + (bytes == 16 ? "cg" : "ca") + ".shared.global [%0], [%1], " +
           str(bytes) + ", %2;\\n\" :: \"r\"(dst_), \"l\"(src_), \"r\"(in_ ? " + str(bytes) + " : 0));");
    w.close();
}

void GemmEmitter::planFastCopies()
{
    auto plan = [&](const std::string &prefix, const std::string &tensor, const std::string &ld, bool kFastest,
                    int tileOther, const mma::SharedTile &layout) {
        const int width = copyWidth(kFastest, layout), perRow = (kFastest ? BK : tileOther) / width;
        // A swizzled tile's XOR pattern repeats every 8 rows: a thread's copies must stay 8k rows apart.
        if (CT % perRow == 0 && (!layout.swizzle || (CT / perRow) % 8 == 0))
            fast.push_back({prefix, tensor, ld, kFastest, width, perRow, tileOther * BK / (width * CT), layout});
    };
    if (ASYNC) {
        plan("a", an, "lda_", a.aRowMajor, BM, tileA);
        plan("b", bn, "ldb_", bKFast, BN, tileB);
        if (fast.size() != 2)
            fast.clear();
    }
}

void GemmEmitter::fastSetup()
{
    if (fast.empty())
        return;
    w.comment("Interior tiles: per-thread sources and destinations, advanced by whole copies and tiles.");
    w.line("const bool fullMN_ = m0_ + " + str(BM) + " <= M_ && n0_ + " + str(BN) + " <= N_;");
    for (const FastCopy &f : fast) {
        const std::string p = f.prefix, other0 = p == "a" ? "m0_" : "n0_", tile = p == "a" ? "As_" : "Bs_";
        const int rowsPerStep = CT / f.perRow; // tile rows between a thread's consecutive copies
        w.line("const int " + p + "Row_ = " + copyThread + " / " + str(f.perRow) + ", " + p + "Col_ = (" + copyThread +
               " % " + str(f.perRow) + ") * " + str(f.width) + ";");
        if (f.kFastest) {
            w.line("const float *" + p + "Src_ = " + f.tensor + " + (long long)(" + other0 + " + " + p + "Row_) * " + f.ld +
                   " + kBegin_ + " + p + "Col_;");
            w.line("const long long " + p + "Step_ = " + str(rowsPerStep) + "LL * " + f.ld + ", " + p + "Tile_ = " +
                   str(BK) + ";");
            if (f.layout.swizzle)
                w.line("const unsigned " + p + "Dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" +
                       f.layout.at("0", p + "Col_", p + "Row_") + "]);");
            else if (f.layout.kContiguous)
                w.line("const unsigned " + p + "Dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" + p +
                       "Row_ * " + str(f.layout.stride) + " + " + p + "Col_]);");
            else
                w.line("const unsigned " + p + "Dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" + p +
                       "Col_ * " + str(f.layout.stride) + " + " + p + "Row_]);");
        } else {
            w.line("const float *" + p + "Src_ = " + f.tensor + " + (long long)(kBegin_ + " + p + "Row_) * " + f.ld +
                   " + " + other0 + " + " + p + "Col_;");
            w.line("const long long " + p + "Step_ = " + str(rowsPerStep) + "LL * " + f.ld + ", " + p + "Tile_ = " +
                   str(BK) + "LL * " + f.ld + ";");
            w.line("const unsigned " + p + "Dst_ = (unsigned)__cvta_generic_to_shared(&" + tile + "[" + p +
                   "Row_ * " + str(f.layout.stride) + " + " + p + "Col_]);");
        }
    }
}

void GemmEmitter::fastCopies()
{
    for (const FastCopy &f : fast) {
        const std::string p = f.prefix;
        const int rowsPerStep = CT / f.perRow, bytes = f.width * 4;
        // Shared bytes between consecutive copies: along the other dimension (transposed tile)
        // or down the rows (k rows, or the rows of a k-contiguous tile).
        const int dstStep = (f.kFastest && !f.layout.kContiguous ? rowsPerStep : rowsPerStep * f.layout.stride) * 4;
        w.line("const float *" + p + "s_ = " + p + "Src_ + (long long)kt0_ * " + p + "Tile_;");
        w.line("const unsigned " + p + "d_ = " + p + "Dst_ + s_ * " + str(f.layout.stageFloats() * 4) + ";");
        w.line(copyUnroll(f.copies));
        w.line("for (int l_ = 0; l_ < " + str(f.copies) + "; ++l_)");
        w.line(std::string("    asm volatile(\"cp.async.") + (bytes == 16 ? "cg" : "ca") +
               ".shared.global [%0], [%1], " + str(bytes) + ";\\n\" :: \"r\"(" + p + "d_ + l_ * " + str(dstStep) +
               "), \"l\"(" + p + "s_ + l_ * " + p + "Step_));");
    }
}

void GemmEmitter::copyTile(const std::string &kt, const std::string &stage)
{
    w.open("");
    w.line("const int kt0_ = " + kt + ", s_ = " + stage + ";");
    w.line("const int k0_ = kBegin_ + kt0_ * " + str(BK) + ";");
    if (!fast.empty()) {
        w.open("if (fullMN_ && k0_ + " + str(BK) + " <= kEnd_)");
        fastCopies();
        w.close();
        w.open("else");
    }
    copyOperand(an, "As_", a.aRowMajor, BM, "m0_", "M_", "lda_", tileA);
    copyOperand(bn, "Bs_", bKFast, BN, "n0_", "N_", "ldb_", tileB);
    if (!fast.empty())
        w.close();
    w.close();
}

void GemmEmitter::commitGroup()
{
    w.line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
}

void GemmEmitter::waitGroups(int pending)
{
    w.line("asm volatile(\"cp.async.wait_group " + str(pending) + ";\\n\" ::: \"memory\");");
}

void GemmEmitter::ringPrologue()
{
    fastSetup();
    for (int s = 0; s + 1 < STAGES; ++s) {
        w.line("if (" + str(s) + " < kTiles_)");
        copyTile(str(s), str(s));
        commitGroup();
    }
}

void GemmEmitter::refill()
{
    w.line("if (kt_ + " + str(STAGES - 1) + " < kTiles_)");
    copyTile("kt_ + " + str(STAGES - 1), "write_");
    commitGroup();
}

void GemmEmitter::advanceRing()
{
    w.line("read_ = read_ + 1 == " + str(STAGES) + " ? 0 : read_ + 1;");
    w.line("write_ = write_ + 1 == " + str(STAGES) + " ? 0 : write_ + 1;");
}

void GemmEmitter::publishForWgmma()
{
    w.line("asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");");
    w.line("__syncthreads();");
}

} // namespace stitch::codegen::gemm
