#include "core/agents/Problems.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace stitch::resources {
const char *agentsHeldOut();
}

namespace stitch::agents {

namespace {

struct Family {
    const char *name;
    int dims;          ///< 3: MxNxK, 2: MxN
    const char *text;  ///< the program, with $M, $N, $K
};

const std::vector<Family> &families()
{
    static const std::vector<Family> f = {
        {"gemm", 3, R"(graph gemm
size M = $M, N = $N, K = $K
input  A: f32[M, K]
input  B: f32[K, N]
output C: f32[M, N]
C[i, j] = sum(k) A[i, k] * B[k, j]
)"},
        {"gemm_bias_gelu", 3, R"(graph gemm_bias_gelu
size M = $M, N = $N, K = $K
input  A: f32[M, K]
input  W: f32[K, N]
input  bias: f32[N]
tensor G: f32[M, N]
tensor H: f32[M, N]
output Y: f32[M, N]
G[i, j] = sum(k) A[i, k] * W[k, j]
H[i, j] = G[i, j] + bias[j]
Y[i, j] = 0.5 * H[i, j] * (1.0 + erf(H[i, j] * 0.7071067811865476))
)"},
        {"gemm_bias_relu", 3, R"(graph gemm_bias_relu
size M = $M, N = $N, K = $K
input  A: f32[M, K]
input  W: f32[K, N]
input  bias: f32[N]
tensor G: f32[M, N]
output Y: f32[M, N]
G[i, j] = sum(k) A[i, k] * W[k, j]
Y[i, j] = relu(G[i, j] + bias[j])
)"},
        {"gemm_softmax", 3, R"(graph gemm_softmax
size M = $M, N = $N, K = $K
input  A: f32[M, K]
input  B: f32[K, N]
tensor S: f32[M, N]
tensor rowMax: f32[M]
tensor rowSum: f32[M]
output Y: f32[M, N]
S[i, j] = sum(k) A[i, k] * B[k, j]
rowMax[i] = max(j) S[i, j]
rowSum[i] = sum(j) exp(S[i, j] - rowMax[i])
Y[i, j] = exp(S[i, j] - rowMax[i]) / rowSum[i]
)"},
        {"softmax", 2, R"(graph softmax_rows
size M = $M, N = $N
input  X: f32[M, N]
tensor rowMax: f32[M]
tensor rowSum: f32[M]
output Y: f32[M, N]
rowMax[i] = max(j) X[i, j]
rowSum[i] = sum(j) exp(X[i, j] - rowMax[i])
Y[i, j]   = exp(X[i, j] - rowMax[i]) / rowSum[i]
)"},
        {"layernorm", 2, R"(graph layernorm
size M = $M, N = $N
input  X: f32[M, N]
input  gamma: f32[N]
input  beta: f32[N]
tensor mean: f32[M]
tensor variance: f32[M]
output Y: f32[M, N]
mean[i]     = sum(j) X[i, j] / N
variance[i] = sum(j) (X[i, j] - mean[i]) * (X[i, j] - mean[i]) / N
Y[i, j]     = (X[i, j] - mean[i]) * rsqrt(variance[i] + 1e-5) * gamma[j] + beta[j]
)"},
        {"rmsnorm", 2, R"(graph rmsnorm
size M = $M, N = $N
input  X: f32[M, N]
input  gamma: f32[N]
tensor ms: f32[M]
output Y: f32[M, N]
ms[i]   = sum(j) X[i, j] * X[i, j] / N
Y[i, j] = X[i, j] * rsqrt(ms[i] + 1e-6) * gamma[j]
)"},
        {"chain", 2, R"(graph elementwise_chain
size M = $M, N = $N
input  X: f32[M, N]
input  Y: f32[M, N]
tensor t0: f32[M, N]
tensor t1: f32[M, N]
tensor t2: f32[M, N]
tensor t3: f32[M, N]
output Z: f32[M, N]
t0[i, j] = X[i, j] * Y[i, j]
t1[i, j] = t0[i, j] + 1.0
t2[i, j] = tanh(t1[i, j])
t3[i, j] = t2[i, j] * 0.5 - X[i, j]
Z[i, j]  = relu(t3[i, j])
)"},
        {"bias_relu", 2, R"(graph bias_relu
size M = $M, N = $N
input  X: f32[M, N]
input  b: f32[N]
tensor T: f32[M, N]
output Y: f32[M, N]
T[i, j] = X[i, j] + b[j]
Y[i, j] = relu(T[i, j])
)"},
    };
    return f;
}

const Family *findFamily(const std::string &name)
{
    for (const auto &f : families())
        if (name == f.name)
            return &f;
    return nullptr;
}

std::string familyList()
{
    std::string s;
    for (const auto &f : families())
        s += (s.empty() ? "" : ", ") + std::string(f.name) + (f.dims == 3 ? ":MxNxK" : ":MxN");
    return s;
}

void replaceAll(std::string &s, const std::string &from, const std::string &to)
{
    for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
}

} // namespace

std::string ProblemSpec::text() const
{
    std::string s = family + ":";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? "x" : "") + std::to_string(shape[i]);
    return s;
}

const std::vector<std::string> &problemFamilies()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto &f : families())
            n.push_back(f.name);
        return n;
    }();
    return names;
}

Result<ProblemSpec> parseProblemSpec(const std::string &text)
{
    const auto colon = text.find(':');
    auto bad = [&](const std::string &why) {
        return makeError(ErrorKind::InvalidArgument, "problem '" + text + "': " + why + " (the problems: " + familyList() + ")");
    };
    if (colon == std::string::npos)
        return bad("expected FAMILY:SHAPE");
    ProblemSpec spec;
    spec.family = text.substr(0, colon);
    const Family *f = findFamily(spec.family);
    if (!f)
        return bad("unknown family '" + spec.family + "'");
    std::stringstream shape(text.substr(colon + 1));
    std::string part;
    while (std::getline(shape, part, 'x')) {
        std::int64_t v = 0;
        try {
            std::size_t used = 0;
            v = std::stoll(part, &used);
            if (used != part.size())
                return bad("'" + part + "' is not a whole number");
        } catch (const std::exception &) {
            return bad("'" + part + "' is not a whole number");
        }
        if (v < 1 || v > (std::int64_t{1} << 31))
            return bad("size " + part + " is out of range (1 to 2^31)");
        spec.shape.push_back(v);
    }
    if (static_cast<int>(spec.shape.size()) != f->dims)
        return bad(std::string("family ") + f->name + " takes " + (f->dims == 3 ? "MxNxK" : "MxN"));
    return spec;
}

std::string teSource(const ProblemSpec &spec)
{
    const Family *f = findFamily(spec.family);
    if (!f)
        return {};
    std::string s = f->text;
    const char *names[] = {"$M", "$N", "$K"};
    for (std::size_t i = 0; i < spec.shape.size() && i < 3; ++i)
        replaceAll(s, names[i], std::to_string(spec.shape[i]));
    return s;
}

Result<std::unique_ptr<TrainingProblem>> makeProblem(const ProblemSpec &spec, const ArchLimits &arch)
{
    auto lifted = frontend::liftTensorExpressions(teSource(spec), spec.text() + ".te");
    if (!lifted.ok())
        return lifted.error();
    auto p = std::make_unique<TrainingProblem>();
    p->name = spec.text();
    p->lifted = std::move(*lifted);
    p->arch = &arch;
    return p;
}

std::vector<ProblemSpec> generateTrainingSpecs(std::uint64_t seed, int count, const std::vector<ProblemSpec> &exclude)
{
    std::mt19937_64 rng(seed);
    auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
    // Log-uniform in [lo, hi], then aligned to 128, to 4, or left as drawn.
    auto draw = [&](double lo, double hi) {
        auto v = static_cast<std::int64_t>(std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo))));
        const double a = uniform();
        if (a < 1.0 / 3)
            v = std::max<std::int64_t>(128, (v + 64) / 128 * 128);
        else if (a < 2.0 / 3)
            v = std::max<std::int64_t>(4, (v + 2) / 4 * 4);
        return v;
    };
    std::vector<ProblemSpec> out;
    const auto &fams = families();
    while (static_cast<int>(out.size()) < count) {
        const Family &f = fams[rng() % fams.size()];
        ProblemSpec spec{f.name, {}};
        if (f.dims == 3) {
            for (int d = 0; d < 3; ++d)
                spec.shape.push_back(draw(64, 8192));
        } else {
            const std::int64_t n = draw(32, 524288);
            const double maxRows = std::max(64.0, std::min(65536.0, std::pow(2.0, 27) / static_cast<double>(n)));
            spec.shape = {draw(16, maxRows), n};
        }
        if (std::find(exclude.begin(), exclude.end(), spec) != exclude.end())
            continue;
        out.push_back(std::move(spec));
    }
    return out;
}

Result<std::vector<ProblemSpec>> readSpecList(const std::string &text, const std::string &fileName)
{
    std::vector<ProblemSpec> out;
    std::stringstream in(text);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (auto hash = line.find('#'); hash != std::string::npos)
            line = line.substr(0, hash);
        line.erase(0, line.find_first_not_of(" \t\r"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (line.empty())
            continue;
        auto spec = parseProblemSpec(line);
        if (!spec.ok())
            return makeError(ErrorKind::Parse, spec.error().message, SourceLocation{fileName, n, 1});
        out.push_back(*spec);
    }
    return out;
}

const std::vector<ProblemSpec> &heldOutSpecs()
{
    static const std::vector<ProblemSpec> specs = [] {
        auto list = readSpecList(resources::agentsHeldOut(), "resources/agents/heldout.txt");
        return list.ok() ? *list : std::vector<ProblemSpec>{};
    }();
    return specs;
}

} // namespace stitch::agents
