// transpose_b=on (GemmEmitter.h): the pass before the warpgroup-MMA GEMM that writes B transposed
// and rounded to TF32 into the workspace bt_, which the GEMM copies like A (rows along k) and its
// MMAs read by descriptor (docs/SCHEDULE.md, "transpose_b").
#include "core/codegen/GemmEmitter.h"
#include "core/codegen/TransposeTile.h"

namespace stitch::codegen::gemm {

ScratchBuffer GemmEmitter::transposedBBuffer() const
{
    return {ctx.kernelName + "_bt", B.shape[0] * B.shape[1], ir::DType::F32, false};
}

KernelCode GemmEmitter::transposeKernel()
{
    KernelCode r;
    r.name = ctx.kernelName + "_transpose_b";
    r.role = KernelRole::TransposeB;
    KernelParam in;
    in.name = cIdentifier(B.name);
    in.tensor = true;
    in.tensorId = a.b;
    in.dtype = B.dtype;
    r.params = {in};
    addWorkspace(r, "bt_", transposedBBuffer(), true);
    for (const KernelParam &p : kernelParams(ctx))
        if (!p.tensor)
            r.params.push_back(p);
    r.block = {transpose::kThreads, 1, 1};
    CudaWriter rw;
    const std::string T = std::to_string(transpose::kTile);
    rw.comment(ctx.kernelName + " reads B transposed (transpose_b=on): bt_[j, k] = " + B.name +
               "[k, j] rounded to TF32 (cvt.rna), so that its tiles\nare copied like A's, rows along k, and read by the "
               "warpgroup MMAs by descriptor. " + T + " x " + T + " tiles through shared memory, rows along k\nof 16 16-byte chunks "
               "swizzled by (k / 4) % 8: a warp reads two 256-byte rows of " + B.name + " as float4s and writes four\n"
               "128-byte runs of bt_ rows, and neither the float4 stores nor the transposed 4-byte reads of the tile "
               "conflict.\nBoundary tiles (and rows not a multiple of 4 floats) go one float at a time.");
    rw.line("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(transpose::kThreads) + ") " + r.name + "(" + paramList(r.params) + ")");
    rw.open("");
    rw.line("__shared__ __align__(16) float t_[" + T + " * " + T + "];");
    rw.line("const int N_ = " + emitExpr(a.domain[1], base) + ", K_ = " + emitExpr(a.k, base) + ";");
    rw.line("const long long ldb_ = " + emitExpr(B.shape[1], base) + ";");
    rw.line("const int tilesN_ = (N_ + " + std::to_string(transpose::kTile - 1) + ") / " + T + ";");
    rw.line("const int n0_ = (int)(blockIdx.x % tilesN_) * " + T + ", k0_ = (int)(blockIdx.x / tilesN_) * " + T + ";");
    rw.line("const bool full_ = n0_ + " + T + " <= N_ && k0_ + " + T + " <= K_ && ldb_ % 4 == 0 && K_ % 4 == 0;");
    rw.comment("Element (k, n) of the tile.");
    rw.line("auto at_ = [](int k, int n) { return k * " + T + " + (((n >> 2) ^ ((k >> 2) & 7)) << 2) + (n & 3); };");
    rw.line("const int c4_ = threadIdx.x % 16, r_ = threadIdx.x / 16;");
    rw.open("if (full_)");
    rw.line("#pragma unroll");
    rw.open("for (int j_ = 0; j_ < 4; ++j_)");
    rw.line("const int k_ = r_ + 16 * j_;");
    rw.line("*reinterpret_cast<float4 *>(&t_[at_(k_, 4 * c4_)]) = *reinterpret_cast<const float4 *>(" + in.name +
            " + (long long)(k0_ + k_) * ldb_ + n0_ + 4 * c4_);");
    rw.close();
    rw.close();
    rw.open("else");
    rw.line("#pragma unroll");
    rw.open("for (int j_ = 0; j_ < 4; ++j_)");
    rw.line("const int k_ = r_ + 16 * j_;");
    rw.line("#pragma unroll");
    rw.open("for (int e_ = 0; e_ < 4; ++e_)");
    rw.line("const int n_ = 4 * c4_ + e_;");
    rw.line("t_[at_(k_, n_)] = k0_ + k_ < K_ && n0_ + n_ < N_ ? " + in.name + "[(long long)(k0_ + k_) * ldb_ + n0_ + n_] : 0.0f;");
    rw.close();
    rw.close();
    rw.close();
    rw.line("__syncthreads();");
    rw.comment("Warp w_ writes cells w_, w_ + 8, ...: 4 columns n (lanes / 8) x 32 rows k (4 per lane) of bt_.");
    rw.line("const int w_ = threadIdx.x / 32, qa_ = threadIdx.x % 8, nn_ = (threadIdx.x % 32) / 8;");
    rw.line("auto tf32_ = [](float x) { unsigned u; asm(\"cvt.rna.tf32.f32 %0, %1;\\n\" : \"=r\"(u) : \"f\"(x)); return __uint_as_float(u); };");
    rw.line("#pragma unroll");
    rw.open("for (int j_ = 0; j_ < 4; ++j_)");
    rw.line("const int cell_ = w_ + 8 * j_, n_ = (cell_ % 16) * 4 + nn_, q_ = (cell_ / 16) * 8 + qa_;");
    rw.line("float4 v_ = make_float4(tf32_(t_[at_(4 * q_, n_)]), tf32_(t_[at_(4 * q_ + 1, n_)]), tf32_(t_[at_(4 * q_ + 2, n_)]), tf32_(t_[at_(4 * q_ + 3, n_)]));");
    rw.line("float *dst_ = bt_ + (long long)(n0_ + n_) * K_ + k0_ + 4 * q_;");
    rw.open("if (full_)");
    rw.line("*reinterpret_cast<float4 *>(dst_) = v_;");
    rw.close();
    rw.open("else if (n0_ + n_ < N_)");
    rw.line("const float e_[4] = {v_.x, v_.y, v_.z, v_.w};");
    rw.line("#pragma unroll");
    rw.line("for (int i_ = 0; i_ < 4; ++i_)");
    rw.line("    if (k0_ + 4 * q_ + i_ < K_)");
    rw.line("        dst_[i_] = e_[i_];");
    rw.close();
    rw.close();
    rw.close();
    r.source = rw.str();
    r.grid = {ceilDivExpr(a.domain[1], transpose::kTile) * ceilDivExpr(a.k, transpose::kTile), Expr(1), Expr(1)};
    return r;
}

} // namespace stitch::codegen::gemm
