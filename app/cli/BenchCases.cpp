#include "BenchCases.h"

#include "core/ir/Programs.h"

#include <tuple>
#include <utility>

namespace stitch::cli {

std::vector<BenchCase> allCases()
{
    std::vector<BenchCase> out;
    auto gemm = [&](const std::string &family, ir::Graph g, std::int64_t M, std::int64_t N, std::int64_t K) {
        BenchCase c{family, std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K), std::move(g),
                    {{"M", M}, {"N", N}, {"K", K}}, 2.0 * M * N * K, 4.0 * (M * K + K * N + M * N)};
        out.push_back(std::move(c));
    };
    gemm("gemm", ir::makeMatmul(), 4096, 4096, 4096);
    gemm("gemm", ir::makeMatmul(), 4097, 4097, 4097);
    gemm("gemm", ir::makeMatmul(), 1000, 3000, 700);
    gemm("gemm", ir::makeMatmul(), 128, 8192, 8192);
    // The same GEMM with TF32 allowed (PyTorch's allow_tf32): against cuBLAS on TF32 tensor cores.
    for (std::int64_t n : {4096, 8192}) {
        gemm("gemm_tf32", ir::makeMatmul(), n, n, n);
        out.back().precision = schedule::Precision::TF32;
    }
    auto rows = [&](const std::string &family, ir::Graph g, std::int64_t M, std::int64_t N, double extraBytes) {
        out.push_back({family, std::to_string(M) + "x" + std::to_string(N), std::move(g), {{"M", M}, {"N", N}}, 0,
                       8.0 * M * N + extraBytes});
    };
    for (auto [M, N] : {std::pair<std::int64_t, std::int64_t>{32768, 8192}, {65536, 512}, {256, 262144}})
        rows("softmax", ir::makeSoftmaxRows(), M, N, 0);
    for (auto [M, N] : {std::pair<std::int64_t, std::int64_t>{32768, 8192}, {65536, 512}, {256, 262144}})
        rows("layernorm", ir::makeLayerNormRows(), M, N, 8.0 * N);
    out.push_back({"chain5", "8192x8192", ir::makeElementwiseChain(), {{"M", 8192}, {"N", 8192}}, 0, 12.0 * 8192 * 8192});
    for (auto [M, N, K] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{8192, 8192, 128}, {8192, 8192, 64},
                           {4096, 4096, 4096}}) {
        BenchCase c{"gemm_bias_gelu", std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K),
                    ir::makeGemmBiasGelu(), {{"M", M}, {"N", N}, {"K", K}}, 2.0 * M * N * K,
                    4.0 * (M * K + K * N + M * N + N)};
        out.push_back(std::move(c));
    }
    return out;
}

const BenchCase *findCase(const std::vector<BenchCase> &cases, const std::string &family, const std::string &shape)
{
    for (const auto &c : cases)
        if (c.family == family && c.shape == shape)
            return &c;
    return nullptr;
}

} // namespace stitch::cli
