// The gemm kernel's stream-K parts (stream_k=on, GemmEmitter.h; Osama et al., "Stream-K", PPoPP
// 2023; docs/SCHEDULE.md): which k steps of which tiles a block runs, the loop over its tile
// segments (last to first), and the partial sums of a shared tile meeting in the last block to
// arrive.
//   header (workspaces) -> tileSetup -> streamKLoop -> mainLoop -> streamKFixup -> epilogue -> closeKernel
#include "core/codegen/GemmEmitter.h"

namespace stitch::codegen::gemm {

void GemmEmitter::streamKLoop()
{
    w.comment("Stream-K: blocks 0.." + str(SKB - 1) + " (one per SM slot of the target) share the k steps of the first skTiles_ tiles\n"
              "evenly, in order; every other block computes one whole tile. Each block runs its tile segments from the\n"
              "last back to the first, so every shared block starts at the first k step of a tile and they walk k\n"
              "together, as a wave of whole tiles does (blocks on the same rows of A or columns of B then read each\n"
              "k-slice from L2 once). A shared tile's last block to finish adds the others' partial sums and stores it.");
    w.line("const int tiles_ = gridM_ * gridN_;");
    ExprScope tileScope;
    tileScope.vars["tiles_"] = "tiles_";
    w.comment("All tiles below one wave; else the last partial wave's tiles, with one whole wave when they are fewer\n"
              "than half a wave (schedule::streamKTilesExpr).");
    w.line("const int skTiles_ = " + emitExpr(schedule::streamKTilesExpr(ir::var("tiles_"), SKB), tileScope) + ";");
    w.line("const int steps_ = max(1, (K_ + " + str(BK - 1) + ") / " + str(BK) + "); // k steps per tile");
    w.line("const long long skSteps_ = (long long)skTiles_ * steps_;");
    w.comment("Shared block b runs steps [begin(b), begin(b + 1)) of the shared tiles' steps, counted tile after tile.");
    w.line("auto begin_ = [&](long long b) { return skSteps_ * b / " + str(SKB) + "; };");
    w.line("long long first_, last_;");
    w.open("if (blockIdx.x < " + str(SKB) + ")");
    w.line("first_ = begin_(blockIdx.x);");
    w.line("last_ = begin_(blockIdx.x + 1);");
    w.close();
    w.open("else");
    w.line("first_ = (long long)(skTiles_ + (int)blockIdx.x - " + str(SKB) + ") * steps_;");
    w.line("last_ = first_ + steps_;");
    w.close();
    w.line("long long segBegin_ = last_;");
    w.open("for (long long end_ = last_; end_ > first_; end_ = segBegin_)");
    w.line("const int tile_ = (int)((end_ - 1) / steps_);");
    w.line("const long long tileFirst_ = (long long)tile_ * steps_;");
    w.line("segBegin_ = max(first_, tileFirst_);");
    w.line("const int kBegin_ = (int)(segBegin_ - tileFirst_) * " + str(BK) + ", kEnd_ = min(K_, (int)(end_ - tileFirst_) * " +
           str(BK) + ");");
    w.open("if (end_ != last_)");
    w.comment("The previous tile's copies and reads of the shared ring are done before this tile's copies.");
    if (ASYNC)
        w.line("asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");");
    w.line("__syncthreads();");
    w.close();
}

void GemmEmitter::streamKFixup()
{
    // A serial reduction by the last block to arrive (no block waits for another, so nothing depends
    // on which blocks are resident or in what order they run): each block that ran part of a shared
    // tile stores its partial sums, then counts itself in the tile's counter; the one that completes
    // the count adds the others' sums (its own stay in registers), resets the counter for the next
    // launch and runs the epilogue. A block has at most two partial segments, its first (starting
    // mid-tile: workspace slot 1) and its last (starting at the tile's first step: slot 0).
    const int n = accRows * accCols;
    auto each = [&] { // every accumulator: the loops' heads, the body follows indented
        w.line("#pragma unroll");
        w.line("for (int i_ = 0; i_ < " + str(accRows) + "; ++i_)");
        w.line("    #pragma unroll");
        w.line("    for (int j_ = 0; j_ < " + str(accCols) + "; ++j_)");
    };
    auto slot = [&](const std::string &block, const std::string &slotIndex) {
        return "partials_ + ((long long)" + block + " * 2 + " + slotIndex + ") * " + str(n * T) + " + threadIdx.x";
    };
    w.open("if (segBegin_ != tileFirst_ || end_ != tileFirst_ + steps_)");
    w.comment("A shared tile: the blocks whose steps meet it, b0_ .. b1_ (those with no steps at all left out).");
    w.line("const int b0_ = (int)(((tileFirst_ + 1) * " + str(SKB) + " + skSteps_ - 1) / skSteps_) - 1;");
    w.line("const int b1_ = (int)(((tileFirst_ + steps_) * " + str(SKB) + " + skSteps_ - 1) / skSteps_) - 1;");
    w.line("int parts_ = 0;");
    w.line("for (int p_ = b0_; p_ <= b1_; ++p_)");
    w.line("    parts_ += begin_(p_ + 1) > begin_(p_) ? 1 : 0;");
    w.line("float *ws_ = " + slot("blockIdx.x", "(segBegin_ != tileFirst_ ? 1 : 0)") + ";");
    each();
    w.line("        __stcg(ws_ + (i_ * " + str(accCols) + " + j_) * " + str(T) + ", acc_[i_][j_]);");
    w.line("__shared__ int lastArrival_;");
    w.line("__syncthreads();");
    w.open("if (threadIdx.x == 0)");
    w.comment("Released at GPU scope after every thread's stores (the barrier above); acquired by the last block.");
    w.line("int before_;");
    w.line("asm volatile(\"atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\\n\" : \"=r\"(before_) : \"l\"(flags_ + tile_) : \"memory\");");
    w.line("lastArrival_ = before_ == parts_ - 1;");
    w.line("if (lastArrival_)");
    w.line("    flags_[tile_] = 0; // every other part has counted itself: ready for the next launch");
    w.close();
    w.line("__syncthreads();");
    w.line("if (!lastArrival_)");
    w.line("    continue;");
    w.open("for (int p_ = b0_; p_ <= b1_; ++p_)");
    w.line("if (p_ == (int)blockIdx.x || begin_(p_ + 1) == begin_(p_))");
    w.line("    continue;");
    w.line("const float *pw_ = " + slot("p_", "(begin_(p_) > tileFirst_ ? 1 : 0)") + ";");
    each();
    w.line("        acc_[i_][j_] += __ldcg(pw_ + (i_ * " + str(accCols) + " + j_) * " + str(T) + ");");
    w.close();
    w.close();
}

} // namespace stitch::codegen::gemm
