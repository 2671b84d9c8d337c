#include "core/bench/Cases.h"

#include "core/ir/Programs.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace stitch::bench {

namespace {

/// "4096x4096x4096" -> {4096, 4096, 4096}: `count` positive sizes joined by 'x', or empty.
std::vector<std::int64_t> parseSizes(const std::string &shape, std::size_t count)
{
    std::vector<std::int64_t> sizes;
    std::size_t at = 0;
    while (sizes.size() < count) {
        const std::size_t x = std::min(shape.find('x', at), shape.size());
        std::int64_t v = 0;
        const char *first = shape.data() + at, *last = shape.data() + x;
        const auto [next, ec] = std::from_chars(first, last, v);
        if (first == last || ec != std::errc{} || next != last || v <= 0)
            return {};
        sizes.push_back(v);
        at = x + 1;
    }
    return at == shape.size() + 1 ? sizes : std::vector<std::int64_t>{};
}

/// A bench family: its program, the sizes its shape names, and the least DRAM bytes a run moves.
struct Family {
    const char *name;
    std::size_t dims;            ///< M, N (rows) or M, N, K (GEMMs)
    ir::Graph (*graph)();
    double (*bytes)(double M, double N, double K);
    schedule::Precision precision = schedule::Precision::FP32;
};
double gemmBytes(double M, double N, double K) { return 4.0 * (M * K + K * N + M * N); }
// Row families read and write each element once; layer norm also reads gamma and beta, the chain
// two inputs; the fused GEMM reads its bias.
const Family kFamilies[] = {
    {"gemm", 3, [] { return ir::makeMatmul(); }, gemmBytes},
    // TF32 allowed (PyTorch's allow_tf32): against cuBLAS on TF32 tensor cores.
    {"gemm_tf32", 3, [] { return ir::makeMatmul(); }, gemmBytes, schedule::Precision::TF32},
    {"gemm_bias_gelu", 3, [] { return ir::makeGemmBiasGelu(); }, [](double M, double N, double K) { return gemmBytes(M, N, K) + 4.0 * N; }},
    {"softmax", 2, [] { return ir::makeSoftmaxRows(); }, [](double M, double N, double) { return 8.0 * M * N; }},
    {"layernorm", 2, [] { return ir::makeLayerNormRows(); }, [](double M, double N, double) { return 8.0 * M * N + 8.0 * N; }},
    {"chain5", 2, [] { return ir::makeElementwiseChain(); }, [](double M, double N, double) { return 12.0 * M * N; }},
};

} // namespace

Result<BenchCase> makeCase(const std::string &family, const std::string &shape)
{
    const Family *f = nullptr;
    for (const auto &k : kFamilies)
        if (family == k.name)
            f = &k;
    if (!f) {
        std::string names;
        for (const auto &k : kFamilies)
            names += std::string(names.empty() ? "" : ", ") + k.name;
        return Error{ErrorKind::InvalidArgument, "no bench family '" + family + "' (one of " + names + ")"};
    }
    const auto s = parseSizes(shape, f->dims);
    if (s.empty())
        return Error{ErrorKind::InvalidArgument, "bench shape '" + shape + "' of " + family + ": expected " +
                                                     (f->dims == 3 ? "MxNxK" : "MxN") + " with positive sizes"};
    const double M = double(s[0]), N = double(s[1]), K = f->dims == 3 ? double(s[2]) : 0.0;
    BenchCase c{family, shape, f->graph(), {{"M", s[0]}, {"N", s[1]}}, 0, f->bytes(M, N, K), f->precision};
    if (f->dims == 3) {
        c.sizes["K"] = s[2];
        c.flops = 2.0 * M * N * K;
    }
    return c;
}

std::vector<BenchCase> allCases()
{
    static const char *const table[][2] = {
        {"gemm", "4096x4096x4096"},         {"gemm", "4097x4097x4097"},
        {"gemm", "1000x3000x700"},          {"gemm", "128x8192x8192"},
        {"gemm_tf32", "4096x4096x4096"},    {"gemm_tf32", "8192x8192x8192"},
        {"softmax", "32768x8192"},          {"softmax", "65536x512"},
        {"softmax", "256x262144"},          {"layernorm", "32768x8192"},
        {"layernorm", "65536x512"},         {"layernorm", "256x262144"},
        {"chain5", "8192x8192"},            {"gemm_bias_gelu", "8192x8192x128"},
        {"gemm_bias_gelu", "8192x8192x64"}, {"gemm_bias_gelu", "4096x4096x4096"},
    };
    std::vector<BenchCase> out;
    for (const auto &[family, shape] : table)
        out.push_back(std::move(*makeCase(family, shape))); // the table's entries are valid
    return out;
}

const BenchCase *findCase(const std::vector<BenchCase> &cases, const std::string &family, const std::string &shape)
{
    for (const auto &c : cases)
        if (c.family == family && c.shape == shape)
            return &c;
    return nullptr;
}

Status addCase(std::vector<BenchCase> &cases, const std::string &family, const std::string &shape)
{
    if (findCase(cases, family, shape))
        return Ok{};
    auto c = makeCase(family, shape);
    if (!c)
        return c.error();
    cases.push_back(std::move(*c));
    return Ok{};
}

Result<std::vector<BenchCase>> selectCases(const std::vector<std::string> &only, const std::vector<std::string> &shapes)
{
    auto named = [&](const std::string &id) {
        return std::any_of(only.begin(), only.end(), [&](const std::string &o) { return id.find(o) != std::string::npos; });
    };
    std::vector<BenchCase> out;
    for (auto &c : allCases())
        if ((only.empty() && shapes.empty()) || named(c.family + ":" + c.shape))
            out.push_back(std::move(c));
    for (const auto &text : shapes) {
        const auto colon = text.find(':');
        if (colon == std::string::npos)
            return Error{ErrorKind::InvalidArgument, "--shape " + text + ": expected FAMILY:SHAPE (gemm:2048x2048x512)"};
        if (auto st = addCase(out, text.substr(0, colon), text.substr(colon + 1)); !st)
            return Error{ErrorKind::InvalidArgument, "--shape " + text + ": " + st.error().message};
    }
    return out;
}

} // namespace stitch::bench
