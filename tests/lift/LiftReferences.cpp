// The corpus programs rewritten by hand as plain loops, one function per program.
#include "tests/lift/LiftReferences.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace stitch::testing {

namespace {

using Sizes = ir::SizeBindings;
using V = std::vector<double>;

long z(const Sizes &s, const char *name)
{
    return static_cast<long>(s.at(name));
}

BufferValues vectorAdd(const Sizes &s, const BufferValues &in)
{
    const long n = z(s, "numElements");
    V c(n);
    for (long i = 0; i < n; ++i)
        c[i] = in.at("d_A")[i] + in.at("d_B")[i];
    return {{"d_C", c}};
}

BufferValues saxpy(const Sizes &s, const BufferValues &in)
{
    V y = in.at("d_y");
    for (long i = 0; i < z(s, "N"); ++i)
        y[i] = 2.0 * in.at("d_x")[i] + y[i];
    return {{"d_y", y}};
}

BufferValues activationChain(const Sizes &s, const BufferValues &in)
{
    const long total = z(s, "M") * z(s, "N");
    const V &x = in.at("d_x"), &y = in.at("d_y");
    V t(total), u(total), out(total);
    for (long i = 0; i < total; ++i) {
        t[i] = x[i] * y[i] + 1.0;
        u[i] = std::tanh(t[i]);
        out[i] = std::max(u[i] * 0.5 - x[i], 0.0);
    }
    return {{"d_t", t}, {"d_u", u}, {"d_z", out}};
}

BufferValues matvec(const Sizes &s, const BufferValues &in)
{
    const long rows = z(s, "ROWS"), cols = z(s, "COLS");
    V y(rows, 0.0);
    for (long r = 0; r < rows; ++r)
        for (long c = 0; c < cols; ++c)
            y[r] += in.at("d_A")[r * cols + c] * in.at("d_x")[c];
    return {{"d_y", y}};
}

V matmulRowMajor(const V &a, const V &b, long m, long k, long n)
{
    V c(m * n, 0.0);
    for (long i = 0; i < m; ++i)
        for (long j = 0; j < n; ++j)
            for (long p = 0; p < k; ++p)
                c[i * n + j] += a[i * k + p] * b[p * n + j];
    return c;
}

BufferValues matmul(const Sizes &s, const BufferValues &in)
{
    return {{"dC", matmulRowMajor(in.at("dA"), in.at("dB"), z(s, "M"), z(s, "K"), z(s, "N"))}};
}

BufferValues matmulTransposed(const Sizes &s, const BufferValues &in)
{
    const long m = z(s, "M"), n = z(s, "N"), k = z(s, "K");
    V c(m * n, 0.0);
    for (long i = 0; i < m; ++i)
        for (long j = 0; j < n; ++j)
            for (long p = 0; p < k; ++p)
                c[i * n + j] += in.at("dA")[i * k + p] * in.at("dB")[j * k + p];
    return {{"dC", c}};
}

BufferValues matmulBatched(const Sizes &s, const BufferValues &in)
{
    const long batch = z(s, "BATCH"), m = z(s, "Mdim"), n = z(s, "Ndim"), k = z(s, "Kdim");
    V c;
    for (long b = 0; b < batch; ++b) {
        V a(in.at("dA").begin() + b * m * k, in.at("dA").begin() + (b + 1) * m * k);
        V bm(in.at("dB").begin() + b * k * n, in.at("dB").begin() + (b + 1) * k * n);
        V part = matmulRowMajor(a, bm, m, k, n);
        c.insert(c.end(), part.begin(), part.end());
    }
    return {{"dC", c}};
}

BufferValues transpose(const Sizes &s, const BufferValues &in)
{
    const long width = z(s, "width"), height = z(s, "height");
    V out(width * height);
    for (long y = 0; y < height; ++y)
        for (long x = 0; x < width; ++x)
            out[x * height + y] = in.at("d_idata")[y * width + x];
    return {{"d_odata", out}};
}

BufferValues rowReduction(const Sizes &s, const BufferValues &in)
{
    const long rows = z(s, "ROWS"), cols = z(s, "COLS");
    V sums(rows, 0.0);
    for (long r = 0; r < rows; ++r)
        for (long c = 0; c < cols; ++c)
            sums[r] += in.at("d_mat")[r * cols + c];
    return {{"d_sums", sums}};
}

BufferValues columnReduction(const Sizes &s, const BufferValues &in)
{
    const long n = z(s, "n"), m = z(s, "m");
    V mx(m, -static_cast<double>(FLT_MAX)), sum(m, 0.0);
    for (long c = 0; c < m; ++c)
        for (long r = 0; r < n; ++r) {
            mx[c] = std::max(mx[c], in.at("d_data")[r * m + c]);
            sum[c] += in.at("d_data")[r * m + c];
        }
    return {{"d_max", mx}, {"d_sum", sum}};
}

V softmax(const V &x, long rows, long cols, V *maxOut = nullptr, V *sumOut = nullptr)
{
    V y(rows * cols);
    for (long r = 0; r < rows; ++r) {
        double m = -INFINITY;
        for (long c = 0; c < cols; ++c)
            m = std::max(m, x[r * cols + c]);
        double s = 0.0;
        for (long c = 0; c < cols; ++c)
            s += std::exp(x[r * cols + c] - m);
        for (long c = 0; c < cols; ++c)
            y[r * cols + c] = std::exp(x[r * cols + c] - m) / s;
        if (maxOut)
            maxOut->push_back(m);
        if (sumOut)
            sumOut->push_back(s);
    }
    return y;
}

BufferValues softmaxSingle(const Sizes &s, const BufferValues &in)
{
    return {{"d_out", softmax(in.at("d_in"), z(s, "rows"), z(s, "cols"))}};
}

BufferValues softmaxThree(const Sizes &s, const BufferValues &in)
{
    V mx, sum;
    V y = softmax(in.at("d_x"), z(s, "M"), z(s, "N"), &mx, &sum);
    return {{"d_max", mx}, {"d_sum", sum}, {"d_y", y}};
}

BufferValues layerNorm(const Sizes &s, const BufferValues &in)
{
    const long rows = z(s, "rows"), hidden = z(s, "hidden");
    const V &x = in.at("d_x");
    V y(rows * hidden);
    for (long r = 0; r < rows; ++r) {
        double mean = 0.0, var = 0.0;
        for (long i = 0; i < hidden; ++i)
            mean += x[r * hidden + i];
        mean /= hidden;
        for (long i = 0; i < hidden; ++i)
            var += (x[r * hidden + i] - mean) * (x[r * hidden + i] - mean);
        var /= hidden;
        const double inv = 1.0 / std::sqrt(var + 1e-5);
        for (long i = 0; i < hidden; ++i)
            y[r * hidden + i] = (x[r * hidden + i] - mean) * inv * in.at("d_g")[i] + in.at("d_b")[i];
    }
    return {{"d_y", y}};
}

BufferValues stencil1d(const Sizes &s, const BufferValues &in)
{
    const long n = z(s, "N");
    const V &x = in.at("d_in");
    V y(n);
    for (long i = 0; i < n; ++i)
        y[i] = 0.25 * (i > 0 ? x[i - 1] : 0.0) + 0.5 * x[i] + 0.25 * (i < n - 1 ? x[i + 1] : 0.0);
    return {{"d_out", y}};
}

BufferValues stencil2d(const Sizes &s, const BufferValues &in)
{
    const long nx = z(s, "NX"), ny = z(s, "NY");
    const V &u = in.at("d_u");
    V out(nx * ny);
    for (long y = 0; y < ny; ++y)
        for (long x = 0; x < nx; ++x) {
            const long i = y * nx + x;
            const bool interior = x > 0 && x < nx - 1 && y > 0 && y < ny - 1;
            out[i] = interior ? 0.25 * (u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx]) : u[i];
        }
    return {{"d_unew", out}};
}

BufferValues conv2d(const Sizes &s, const BufferValues &in)
{
    const long batch = z(s, "BATCH"), cin = z(s, "C_IN"), cout = z(s, "C_OUT"), h = z(s, "H"), w = z(s, "W");
    const long kh = z(s, "KH"), kw = z(s, "KW"), pad = z(s, "PAD"), stride = z(s, "STRIDE");
    const long oh = (h + 2 * pad - kh) / stride + 1, ow = (w + 2 * pad - kw) / stride + 1;
    V out(batch * cout * oh * ow);
    for (long n = 0; n < batch; ++n)
        for (long oc = 0; oc < cout; ++oc)
            for (long y = 0; y < oh; ++y)
                for (long x = 0; x < ow; ++x) {
                    double acc = in.at("d_b")[oc];
                    for (long ic = 0; ic < cin; ++ic)
                        for (long i = 0; i < kh; ++i)
                            for (long j = 0; j < kw; ++j) {
                                const long iy = y * stride + i - pad, ix = x * stride + j - pad;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                    continue;
                                acc += in.at("d_in")[((n * cin + ic) * h + iy) * w + ix]
                                    * in.at("d_w")[((oc * cin + ic) * kh + i) * kw + j];
                            }
                    out[((n * cout + oc) * oh + y) * ow + x] = acc;
                }
    return {{"d_out", out}};
}

BufferValues avgPool(const Sizes &s, const BufferValues &in)
{
    const long c = z(s, "C"), h = z(s, "H"), w = z(s, "W"), k = z(s, "K"), st = z(s, "S");
    const long oh = (h - k) / st + 1, ow = (w - k) / st + 1;
    V out(c * oh * ow);
    for (long ch = 0; ch < c; ++ch)
        for (long y = 0; y < oh; ++y)
            for (long x = 0; x < ow; ++x) {
                double acc = 0.0;
                for (long i = 0; i < k; ++i)
                    for (long j = 0; j < k; ++j)
                        acc += in.at("d_in")[(ch * h + y * st + i) * w + x * st + j];
                out[(ch * oh + y) * ow + x] = acc / static_cast<double>(k * k);
            }
    return {{"d_out", out}};
}

BufferValues maxPool(const Sizes &s, const BufferValues &in)
{
    const long c = z(s, "channels"), h = z(s, "height"), w = z(s, "width");
    const long pool = z(s, "POOL"), st = z(s, "STRIDE"), pad = z(s, "PAD");
    const long oh = (h + 2 * pad - pool) / st + 1, ow = (w + 2 * pad - pool) / st + 1;
    V out(c * oh * ow);
    for (long ch = 0; ch < c; ++ch)
        for (long y = 0; y < oh; ++y)
            for (long x = 0; x < ow; ++x) {
                double m = -static_cast<double>(FLT_MAX);
                for (long i = 0; i < pool; ++i)
                    for (long j = 0; j < pool; ++j) {
                        const long iy = y * st - pad + i, ix = x * st - pad + j;
                        if (iy >= 0 && iy < h && ix >= 0 && ix < w)
                            m = std::max(m, in.at("d_in")[(ch * h + iy) * w + ix]);
                    }
                out[(ch * oh + y) * ow + x] = m;
            }
    return {{"d_out", out}};
}

BufferValues mlpLayer(const Sizes &s, const BufferValues &in)
{
    const long m = z(s, "BATCH"), k = z(s, "IN_FEATURES"), n = z(s, "OUT_FEATURES");
    V h = matmulRowMajor(in.at("d_x"), in.at("d_w"), m, k, n);
    V y(m * n);
    for (long i = 0; i < m * n; ++i) {
        h[i] += in.at("d_b")[i % n];
        const double x = h[i];
        y[i] = 0.5 * x * (1.0 + std::tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
    }
    return {{"d_h", h}, {"d_y", y}};
}

BufferValues gridStrideRelu(const Sizes &s, const BufferValues &in)
{
    V y(z(s, "N"));
    for (std::size_t i = 0; i < y.size(); ++i) {
        const double x = in.at("x")[i];
        y[i] = x > 0.0 ? x : 0.01 * x;
    }
    return {{"y", y}};
}

BufferValues tiledMatmul(const Sizes &s, const BufferValues &in)
{
    return {{"dP", matmulRowMajor(in.at("dM"), in.at("dN"), z(s, "m"), z(s, "k"), z(s, "n"))}};
}

} // namespace

Reference referenceFor(const std::string &program)
{
    static const std::map<std::string, Reference> references = {
        {"vector_add", vectorAdd},
        {"saxpy", saxpy},
        {"activation_chain", activationChain},
        {"matvec", matvec},
        {"matmul", matmul},
        {"matmul_transposed", matmulTransposed},
        {"matmul_batched", matmulBatched},
        {"transpose", transpose},
        {"row_reduction", rowReduction},
        {"column_reduction", columnReduction},
        {"softmax_single", softmaxSingle},
        {"softmax_three", softmaxThree},
        {"layernorm", layerNorm},
        {"stencil_1d", stencil1d},
        {"stencil_2d", stencil2d},
        {"conv2d", conv2d},
        {"avg_pool", avgPool},
        {"max_pool", maxPool},
        {"mlp_layer", mlpLayer},
        {"grid_stride_relu", gridStrideRelu},
        {"tiled_matmul", tiledMatmul},
    };
    auto it = references.find(program);
    return it != references.end() ? it->second : Reference();
}

} // namespace stitch::testing
