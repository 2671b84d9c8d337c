// Index arithmetic (IntPoly, IndexMath) and lifting behaviours on small inline programs.
#include "core/frontend/Lift.h"
#include "core/frontend/cudalift/CudaLift.h"
#include "core/frontend/cudalift/IndexMath.h"
#include "core/frontend/cudalift/IntPoly.h"
#include "core/ir/Interpreter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

using namespace stitch;
using namespace stitch::frontend::cudalift;
using ir::Expr;

namespace {

TEST(IntPoly, KeepsACanonicalForm)
{
    const IntPoly i = IntPoly::atom("v:i"), n = IntPoly::atom("s:N");
    EXPECT_EQ((i + IntPoly::constant(1)) * n, i * n + n);
    EXPECT_TRUE((i * n - n * i).isZero());
    EXPECT_EQ((i * n + n).dividedBy(n), i + IntPoly::constant(1));
    EXPECT_FALSE((i * n + IntPoly::constant(1)).dividedBy(n).has_value());
    auto [q, r] = (i * n * IntPoly::constant(4) + IntPoly::atom("v:j")).splitDivisible(n);
    EXPECT_EQ(q, i * IntPoly::constant(4));
    EXPECT_EQ(r, IntPoly::atom("v:j"));
}

TEST(IntPoly, OverflowThrowsInsteadOfWrapping)
{
    const IntPoly big = IntPoly::constant(std::int64_t{1} << 62);
    EXPECT_THROW((void)(big * IntPoly::constant(4)), std::overflow_error);
}

TEST(IndexMath, FoldsDivisionAndModuloWhenRangesProveThem)
{
    IndexMath math;
    const Expr i = ir::var("i"), j = ir::var("j"), N = ir::sizeVar("N"), M = ir::sizeVar("M");
    math.setRange("i", Expr(0), M);
    math.setRange("j", Expr(0), N);
    EXPECT_EQ(math.simplify((i * N + j) / N).toString(), "i");
    EXPECT_EQ(math.simplify((i * N + j) % N).toString(), "j");
    // Without knowing j < N nothing is folded.
    math.setRange("j", Expr(0), N + 1);
    EXPECT_EQ(math.simplify((i * N + j) / N).toString(), "(i * N + j) / N");
}

TEST(IndexMath, PeelsAFactorOfANestedDivisor)
{
    IndexMath math;
    const Expr a = ir::var("a"), b = ir::var("b"), B = ir::sizeVar("B"), C = ir::sizeVar("C");
    math.setRange("a", Expr(0), C * ir::sizeVar("D"));
    math.setRange("b", Expr(0), B);
    EXPECT_EQ(math.simplify((a * B + b) / (B * C)).toString(), "a / C");
    EXPECT_EQ(math.simplify((a * B + b) % (B * C)).toString(), "b + B * (a % C)");
}

TEST(IndexMath, ProvesThatARoundedUpGridCoversTheData)
{
    IndexMath math;
    const Expr n = ir::sizeVar("n");
    auto covered = math.toPoly((n + 255) / Expr(256) * Expr(256));
    auto data = math.toPoly(n);
    ASSERT_TRUE(covered && data);
    EXPECT_TRUE(math.lessEqual(*data, *covered));
    auto floorGrid = math.toPoly(n / Expr(256) * Expr(256));
    EXPECT_FALSE(math.lessEqual(*data, *floorGrid)) << "n / 256 * 256 may be less than n";
    EXPECT_TRUE(math.lessEqual(*floorGrid, *data));
}

TEST(IndexMath, UsesGuardFactsAndSizeLowerBounds)
{
    IndexMath math;
    const Expr k = ir::var("k"), H = ir::sizeVar("H"), P = ir::sizeVar("P");
    math.setRange("k", Expr(0), ir::sizeVar("K"));
    auto index = *math.toPoly(k - P);
    EXPECT_FALSE(math.nonNegative(index));
    for (const IntPoly &f : math.factsOf(ir::logicalAnd(ir::ge(k - P, Expr(0)), ir::lt(k - P, H))))
        math.pushFact(f);
    EXPECT_TRUE(math.nonNegative(index));
    EXPECT_TRUE(math.less(index, *math.toPoly(H)));
    math.truncateFacts(0);
    // Sizes are at least 1 unless the program sets one to 0.
    EXPECT_TRUE(math.nonNegative(*math.toPoly(P - Expr(1))));
    math.setSizeLowerBound("P", 0);
    EXPECT_FALSE(math.nonNegative(*math.toPoly(P - Expr(1))));
}

Result<CudaLiftDetail> lift(const std::string &source)
{
    return liftCudaProgramDetailed(source, "unit.cu");
}

std::string opText(const CudaLiftDetail &d, std::size_t i = 0)
{
    return i < d.program.graph.ops().size() ? d.program.graph.ops()[i].toString() : std::string("<no op>");
}

// A host main that allocates n floats for each named buffer, copies the inputs in and launches.
std::string program(const std::string &kernels, const std::string &launch, const std::string &extraHost = {})
{
    return kernels + R"(
int main() {
    const int n = 1000;
    float *h = (float *)malloc(n * sizeof(float));
    float *d_a, *d_b, *d_c;
    cudaMalloc(&d_a, n * sizeof(float));
    cudaMalloc(&d_b, n * sizeof(float));
    cudaMalloc(&d_c, n * sizeof(float));
    cudaMemcpy(d_a, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, h, n * sizeof(float), cudaMemcpyHostToDevice);
)" + extraHost + "    " + launch + R"(
    cudaMemcpy(h, d_c, n * sizeof(float), cudaMemcpyDeviceToHost);
    return 0;
}
)";
}

const std::string kIndex = "int i = blockIdx.x * blockDim.x + threadIdx.x;";

TEST(LiftCuda, PublicEntryPointReturnsTheProgram)
{
    const std::string src = program("__global__ void k(const float *a, float *c, int n) { " + kIndex
                                        + " if (i < n) c[i] = 2.0f * a[i]; }",
                                    "k<<<(n + 127) / 128, 128>>>(d_a, d_c, n);");
    auto lifted = frontend::liftCudaProgram(src, "unit.cu");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_EQ(lifted->language, "cuda");
    EXPECT_EQ(lifted->sourceFile, "unit.cu");
    EXPECT_EQ(lifted->sizes.at("n"), 1000);
    ASSERT_EQ(lifted->launches.size(), 1u);
    EXPECT_EQ(lifted->launches[0].grid, "(n + 127) / 128");
    EXPECT_EQ(lifted->launches[0].ops, std::vector<std::string>{"k"});
    EXPECT_EQ(lifted->graph.ops().at(0).toString(), "d_c[i] = 2.0 * d_a[i]");
    ASSERT_TRUE(lifted->graph.ops().at(0).source.has_value());
    EXPECT_EQ(lifted->graph.ops().at(0).source->begin.line, 1);
}

TEST(LiftCuda, WhatTheGrammarCannotReadKeepsTheKernelOpaqueWithALocatedReason)
{
    // Truly broken text and text the grammar merely misreads look the same to tree-sitter: the
    // file is not refused, the kernel stays opaque, located where the grammar gave up.
    auto lifted = lift("__global__ void k(float *a) {\n    a[0] = (1 + ;\n}\n");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_TRUE(lifted->program.graph.ops().empty());
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    const Diagnostic &why = lifted->program.opaque[0].why;
    EXPECT_EQ(why.location.file, "unit.cu");
    EXPECT_EQ(why.location.line, 2);
    EXPECT_NE(why.message.find("the CUDA grammar (tree-sitter-cuda "), std::string::npos) << why.message;
    EXPECT_NE(why.message.find("cannot read this construct, so the kernel stays opaque"), std::string::npos)
        << why.message;
    EXPECT_NE(why.message.find("nvcc/NVRTC is the authority"), std::string::npos) << why.message;
    EXPECT_EQ(why.message.find("syntax error"), std::string::npos) << why.message;
    // The place itself is a located warning of the program.
    const auto limit = std::find_if(lifted->program.diagnostics.begin(), lifted->program.diagnostics.end(),
                                    [](const Diagnostic &d) {
                                        return d.message.starts_with("the CUDA grammar");
                                    });
    ASSERT_NE(limit, lifted->program.diagnostics.end());
    EXPECT_EQ(limit->severity, Severity::Warning);
    EXPECT_EQ(limit->location.toString(), "unit.cu:2:10");
}

TEST(LiftCuda, ADeviceFunctionTheGrammarCannotReadKeepsItsCallerOpaque)
{
    // nvcc accepts the #if inside the parameter list; tree-sitter-cuda 0.21.1 cannot read it, and
    // a condition on __CUDA_ARCH__ is left to the compiler (SourceExpansion.h), so it stays.
    auto lifted = lift("__device__ float shifted(float x\n#if __CUDA_ARCH__ >= 800\n    , float s\n#endif\n)\n"
                       "{\n    return x + s;\n}\n"
                       "__global__ void k(const float *a, float *b, int n) {\n"
                       "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       "    if (i < n) b[i] = shifted(a[i], 1.0f);\n}\n"
                       "int main() {\n    float *a, *b;\n    cudaMalloc(&a, 1024 * sizeof(float));\n"
                       "    cudaMalloc(&b, 1024 * sizeof(float));\n    k<<<4, 256>>>(a, b, 1024);\n    return 0;\n}\n");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    EXPECT_EQ(lifted->program.opaque[0].why.toString(),
              "unit.cu:2:1: warning: cannot lift kernel 'k': '#if __CUDA_ARCH__ >': the CUDA grammar (tree-sitter-cuda "
              "0.21.1) cannot read this construct, so the kernel calling 'shifted' stays opaque. This is the "
              "grammar's limit, not a verdict on the code: nvcc/NVRTC is the authority on whether it is valid CUDA");
}

TEST(LiftCuda, HostCodeTheGrammarCannotReadKeepsLaterLaunchesOpaque)
{
    const std::string kernels =
        "__global__ void twice(const float *a, float *b, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) b[i] = 2.0f * a[i];\n}\n";
    const std::string setup = "int main() {\n    float *a, *b;\n    cudaMalloc(&a, 1024 * sizeof(float));\n"
                              "    cudaMalloc(&b, 1024 * sizeof(float));\n";
    // Before the statement the grammar cannot read (typeid(double), line 9): lifted. After it: opaque,
    // located there, since what it does to sizes and buffers is unknown.
    auto lifted = lift("#include <typeinfo>\n" + kernels + setup + "    twice<<<4, 256>>>(a, b, 1024);\n"
                       "    bool same = typeid(double) == typeid(float);\n    twice<<<4, 256>>>(b, a, 1024);\n"
                       "    return same ? 1 : 0;\n}\n");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.launches.size(), 2u);
    EXPECT_FALSE(lifted->program.launches[0].ops.empty());
    EXPECT_TRUE(lifted->program.launches[1].ops.empty());
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    const Diagnostic &why = lifted->program.opaque[0].why;
    EXPECT_EQ(why.location.line, 11) << why.toString();
    EXPECT_NE(why.message.find("cannot read this construct, so every kernel launched after it stays opaque (what "
                               "that host code does to sizes and buffers is unknown)"),
              std::string::npos)
        << why.toString();

    // A launch inside such a statement is not seen at all: the kernel's reason says where it may be.
    const std::string copy = "__global__ void copy(const float *a, float *b, int n) {\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) b[i] = a[i];\n}\n";
    auto hidden = lift("#include <typeinfo>\n" + kernels + copy + setup + "    copy<<<4, 256>>>(a, b, 1024);\n"
                       + "    if (typeid(double) != typeid(float)) twice<<<4, 256>>>(a, b, 1024);\n    return 0;\n}\n");
    ASSERT_TRUE(hidden.ok()) << hidden.error().toString();
    ASSERT_EQ(hidden->program.opaque.size(), 1u);
    EXPECT_EQ(hidden->program.opaque[0].name, "twice");
    EXPECT_NE(hidden->program.opaque[0].why.message.find("it is never launched from host code the lifter follows"),
              std::string::npos);
    EXPECT_NE(hidden->program.opaque[0].why.message.find(
                  "(the host code at unit.cu:15:15, which the CUDA grammar cannot read, may launch it)"),
              std::string::npos)
        << hidden->program.opaque[0].why.toString();

    // With no launch the lifter can read, the kernel lifts alone, and the note says what it may miss.
    auto lone = lift("#include <typeinfo>\n" + kernels + setup
                     + "    if (typeid(double) != typeid(float)) twice<<<4, 256>>>(a, b, 1024);\n    return 0;\n}\n");
    ASSERT_TRUE(lone.ok()) << lone.error().toString();
    EXPECT_TRUE(lone->program.opaque.empty());
    ASSERT_EQ(lone->program.launches.size(), 1u);
    EXPECT_TRUE(lone->program.launches[0].inferred);
    const auto note = std::find_if(lone->program.diagnostics.begin(), lone->program.diagnostics.end(),
                                   [](const Diagnostic &d) { return d.severity == Severity::Note; });
    ASSERT_NE(note, lone->program.diagnostics.end());
    EXPECT_NE(note->message.find("(the host code at unit.cu:10:15, which the CUDA grammar cannot read, may launch "
                                 "it with other sizes)"),
              std::string::npos)
        << note->toString();
}

TEST(LiftCuda, AFileWithoutKernelsIsUnsupported)
{
    auto lifted = lift("int main() { return 0; }\n");
    ASSERT_FALSE(lifted.ok());
    EXPECT_EQ(lifted.error().kind, ErrorKind::Unsupported);
}

TEST(LiftCuda, IfElseOnDataBecomesASelect)
{
    auto lifted = lift(program("__global__ void k(const float *a, float *c, int n) { " + kIndex
                                   + " if (i < n) { if (a[i] > 0.5f) c[i] = a[i]; else c[i] = -a[i]; } }",
                               "k<<<(n + 127) / 128, 128>>>(d_a, d_c, n);"));
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_EQ(opText(*lifted), "d_c[i] = select(d_a[i] > 0.5, d_a[i], -d_a[i])");
}

TEST(LiftCuda, InlinesDeviceFunctionsWithEarlyReturnsAndFunctionMacros)
{
    const std::string kernels = R"(
#define AT(p, i) p[(i)]
__device__ float clampUnit(float x) {
    if (x < 0.0f) return 0.0f;
    if (x > 1.0f) return 1.0f;
    return x;
}
__global__ void k(const float *a, float *c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    c[i] = clampUnit(AT(a, i));
})";
    auto lifted = lift(program(kernels, "k<<<(n + 127) / 128, 128>>>(d_a, d_c, n);"));
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    // The second test runs only where the first failed: its path condition (a >= 0) is dropped.
    EXPECT_EQ(opText(*lifted), "d_c[i] = select(d_a[i] < 0.0, 0.0, select(d_a[i] > 1.0, 1.0, d_a[i]))");
}

TEST(LiftCuda, AccumulatingIntoGlobalMemoryAfterMemsetIsAReductionWithInit)
{
    const std::string kernels = R"(
__global__ void rowSums(const float *a, float *c, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows)
        for (int j = 0; j < cols; j++)
            c[r] += a[r * cols + j];
}
int main() {
    const int rows = 100, cols = 30;
    float *d_a, *d_c;
    cudaMalloc(&d_a, rows * cols * sizeof(float));
    cudaMalloc(&d_c, rows * sizeof(float));
    cudaMemcpy(d_a, h, rows * cols * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_c, 0, rows * sizeof(float));
    rowSums<<<(rows + 31) / 32, 32>>>(d_a, d_c, rows, cols);
    cudaMemcpy(h, d_c, rows * sizeof(float), cudaMemcpyDeviceToHost);
})";
    auto lifted = lift(kernels);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.graph.ops().size(), 2u) << lifted->program.graph.toString();
    EXPECT_EQ(opText(*lifted, 0), "d_c[i] = 0.0");
    EXPECT_EQ(opText(*lifted, 1), "d_c_1[r] = sum(j, init=d_c[r]) d_a[r, j]");
}

TEST(LiftCuda, SingleThreadStoresArePinned)
{
    auto lifted = lift(program("__global__ void k(const float *a, float *c, int n) { if (threadIdx.x == 0) c[0] = a[0] + a[1]; }",
                               "k<<<1, 64>>>(d_a, d_c, n);"));
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_TRUE(lifted->program.opaque.empty());
    EXPECT_EQ(opText(*lifted), "d_c[i] = d_a[0] + d_a[1]") << lifted->program.graph.toString();
    EXPECT_EQ(lifted->program.graph.ops().at(0).domainString(), "i < 1");
}

TEST(LiftCuda, PartialWritesOfFreshBuffersAreReported)
{
    const std::string src = R"(
__global__ void interior(const float *a, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) c[i] = a[i - 1] + a[i + 1];
}
int main() {
    const int n = 1000;
    float *d_a, *d_c;
    cudaMalloc(&d_a, n * sizeof(float));
    cudaMalloc(&d_c, n * sizeof(float));
    cudaMemcpy(d_a, h, n * sizeof(float), cudaMemcpyHostToDevice);
    interior<<<(n + 127) / 128, 128>>>(d_a, d_c, n);
    cudaMemcpy(h, d_c, n * sizeof(float), cudaMemcpyDeviceToHost);
})";
    auto lifted = lift(src);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_EQ(opText(*lifted), "d_c[i] = d_a[i - 1] + d_a[i + 1]");
    EXPECT_EQ(lifted->program.graph.ops()[0].domainString(), "i in [1, 1 + (n - 2))");
    auto warning = std::find_if(lifted->program.diagnostics.begin(), lifted->program.diagnostics.end(),
                                [](const Diagnostic &d) { return d.message.find("writes only part of 'd_c'") != std::string::npos; });
    ASSERT_NE(warning, lifted->program.diagnostics.end());
    EXPECT_EQ(warning->severity, Severity::Warning);
}

struct RefusalCase {
    const char *name;
    std::string kernels;
    std::string launch;
    int line;
    std::string fragment;
};

class Refusals : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(Refusals, AreLocatedAndKeepTheKernelOpaque)
{
    const RefusalCase &c = GetParam();
    auto lifted = lift(program(c.kernels, c.launch));
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.opaque.size(), 1u) << lifted->program.graph.toString();
    const Diagnostic &why = lifted->program.opaque[0].why;
    EXPECT_EQ(why.location.line, c.line) << why.toString();
    EXPECT_NE(why.message.find(c.fragment), std::string::npos) << why.toString();
    EXPECT_TRUE(lifted->program.graph.validate().ok());
}

const std::string kLaunch = "k<<<(n + 127) / 128, 128>>>(d_a, d_c, n);";

INSTANTIATE_TEST_SUITE_P(
    LiftCuda, Refusals,
    ::testing::Values(
        RefusalCase{"WhileLoop", "__global__ void k(const float *a, float *c, int n) {\n int i = 0;\n while (i < n) i++;\n c[0] = a[i];\n}",
                    kLaunch, 3, "while/do loops have no known trip count"},
        RefusalCase{"Break", "__global__ void k(const float *a, float *c, int n) {\n " + kIndex
                                 + "\n float s = 0; for (int j = 0; j < n; j++) { if (a[j] < 0) break; s += a[j]; }\n c[i] = s;\n}",
                    kLaunch, 3, "break"},
        RefusalCase{"OnlineSoftmax", "__global__ void k(const float *a, float *c, int n) {\n " + kIndex
                                         + "\n float m = -1e30f, s = 0.0f;\n for (int j = 0; j < n; j++) {\n   float mn = fmaxf(m, a[j]);\n   s = s * expf(m - mn) + expf(a[j] - mn);\n   m = mn;\n }\n if (i < n) c[i] = s;\n}",
                    kLaunch, 4, "depends on the running value"},
        RefusalCase{"LastValue", "__global__ void k(const float *a, float *c, int n) {\n " + kIndex
                                     + "\n float last = 0;\n for (int j = 0; j < n; j++) last = a[j];\n if (i < n) c[i] = last;\n}",
                    kLaunch, 4, "not a running sum"},
        RefusalCase{"UnknownFunction", "__global__ void k(const float *a, float *c, int n) {\n " + kIndex
                                           + "\n if (i < n) c[i] = mystery(a[i]);\n}",
                    kLaunch, 3, "call of unknown function 'mystery'"},
        RefusalCase{"LocalArray", "__global__ void k(const float *a, float *c, int n) {\n float r[4];\n c[0] = a[0];\n}",
                    kLaunch, 2, "thread-local array"},
        RefusalCase{"Uninitialized", "__global__ void k(const float *a, float *c, int n) {\n " + kIndex
                                         + "\n float v;\n if (a[i] > 0) v = 1.0f;\n if (i < n) c[i] = v;\n}",
                    kLaunch, 5, "uninitialized"},
        RefusalCase{"EveryThreadWritesOneElement", "__global__ void k(const float *a, float *c, int n) {\n " + kIndex
                                                       + "\n if (i < n)\n  c[0] = a[i];\n}",
                    kLaunch, 4, "cannot be written as one thread index per dimension"},
        RefusalCase{"TwoThreadsPerElement", "__global__ void k(const float *a, float *c, int n) {\n " + kIndex
                                                + "\n if (i < n)\n  c[i / 2] = a[i];\n}",
                    kLaunch, 4, "cannot be written as one thread index per dimension"},
        RefusalCase{"MissingGuard", "__global__ void k(const float *a, float *c, int n) {\n " + kIndex + "\n c[i] = a[i];\n}",
                    kLaunch, 3, "cannot prove that the store stays inside 'd_c'"},
        RefusalCase{"LaunchInHostLoop", "__global__ void k(const float *a, float *c, int n) { " + kIndex + " if (i < n) c[i] = a[i]; }",
                    "for (int it = 0; it < 10; ++it)\n        k<<<(n + 127) / 128, 128>>>(d_a, d_c, n);", 12,
                    "launched inside a loop or branch of the host program"},
        RefusalCase{"LaunchOnAStream", "__global__ void k(const float *a, float *c, int n) { " + kIndex + " if (i < n) c[i] = a[i]; }",
                    "k<<<(n + 127) / 128, 128, 0, stream>>>(d_a, d_c, n);", 11, "runs on stream 'stream'"},
        RefusalCase{"HostPointerArgument", "__global__ void k(const float *a, float *c, int n) { " + kIndex + " if (i < n) c[i] = a[i]; }",
                    "k<<<(n + 127) / 128, 128>>>(h, d_c, n);", 11, "argument 'h' is not device memory"}),
    [](const ::testing::TestParamInfo<RefusalCase> &info) { return std::string(info.param.name); });

TEST(LiftCuda, AGlobalScopeQualifiedLaunchNamesTheFileScopeKernel)
{
    // `::k<<<...>>>`, as StitchCUDA's own host launchers write it.
    const std::string src = program("__global__ void k(const float *a, float *c, int n) { " + kIndex
                                        + " if (i < n) c[i] = 2.0f * a[i]; }",
                                    "::k<<<(n + 127) / 128, 128>>>(d_a, d_c, n);");
    auto lifted = frontend::liftCudaProgram(src, "unit.cu");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->launches.size(), 1u);
    EXPECT_EQ(lifted->launches[0].kernel, "k");
    EXPECT_EQ(lifted->launches[0].ops, std::vector<std::string>{"k"});
    EXPECT_TRUE(lifted->opaque.empty());
    EXPECT_EQ(lifted->graph.ops().at(0).toString(), "d_c[i] = 2.0 * d_a[i]");
}

TEST(LiftCuda, LaunchesOfOneKernelBecomeSeparateOpsAndVersions)
{
    const std::string src = program("__global__ void k(const float *a, float *c, int n) { " + kIndex
                                        + " if (i < n) c[i] = a[i] * 2.0f; }",
                                    "k<<<(n + 127) / 128, 128>>>(d_a, d_b, n);\n    k<<<(n + 127) / 128, 128>>>(d_b, d_c, n);");
    auto lifted = lift(src);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.graph.ops().size(), 2u);
    // The copy into d_b is never read, so the first version the graph sees is the kernel's.
    EXPECT_EQ(opText(*lifted, 0), "d_b[i] = d_a[i] * 2.0");
    EXPECT_EQ(opText(*lifted, 1), "d_c[i] = d_b[i] * 2.0");
    EXPECT_EQ(lifted->program.graph.ops()[1].name, "k_2");
    const ir::Tensor *b = lifted->program.graph.findTensor("d_b");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->role, ir::TensorRole::Intermediate);
}

TEST(LiftCuda, FollowsLaunchesIntoHostHelperFunctions)
{
    const std::string src = R"(
#define N 4096
__global__ void scale(const float *in, float *out, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = s * in[i];
}
void launchScale(const float *in, float *out, float s, int n) {
    int threads = 128;
    scale<<<(n + threads - 1) / threads, threads>>>(in, out, s, n);
}
int main() {
    float *d_in, *d_tmp, *d_out;
    cudaMalloc(&d_in, N * sizeof(float));
    cudaMalloc(&d_tmp, N * sizeof(float));
    cudaMalloc(&d_out, N * sizeof(float));
    cudaMemcpy(d_in, h, N * sizeof(float), cudaMemcpyHostToDevice);
    launchScale(d_in, d_tmp, 0.5f, N);
    launchScale(d_tmp, d_out, 3.0f, N);
    cudaMemcpy(h, d_out, N * sizeof(float), cudaMemcpyDeviceToHost);
})";
    auto lifted = lift(src);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.launches.size(), 2u);
    EXPECT_EQ(opText(*lifted, 0), "d_tmp[i] = 0.5 * d_in[i]");
    EXPECT_EQ(opText(*lifted, 1), "d_out[i] = 3.0 * d_tmp[i]");
    EXPECT_EQ(lifted->program.sizes.at("N"), 4096);
}

TEST(LiftCuda, WithoutMainTheLaunchingFunctionIsTheEntryAndUnsizedBuffersAreRefused)
{
    const std::string src = R"(
__global__ void add(const float *a, float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] += a[i];
}
void run(const float *a, float *b, int n) {
    add<<<(n + 255) / 256, 256>>>(a, b, n);
})";
    auto lifted = lift(src);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    EXPECT_NE(lifted->program.opaque[0].why.message.find("not device memory allocated in this program"), std::string::npos)
        << lifted->program.opaque[0].why.toString();
    EXPECT_EQ(lifted->program.opaque[0].why.location.line, 7);
}

TEST(LiftCuda, ConstantMemoryFilledWithMemcpyToSymbolIsAnInput)
{
    // Kirk & Hwu's 1-D convolution with the mask in constant memory and zero ghost elements.
    const std::string src = R"(
#define MASK_WIDTH 5
__constant__ float M[MASK_WIDTH];
__global__ void convolution1D(const float *N, float *P, int width) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= width) return;
    float pValue = 0;
    int start = i - (MASK_WIDTH / 2);
    for (int j = 0; j < MASK_WIDTH; j++)
        if (start + j >= 0 && start + j < width)
            pValue += N[start + j] * M[j];
    P[i] = pValue;
}
int main() {
    int width = 10000;
    float h_M[MASK_WIDTH] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
    float *h_N = (float *)malloc(width * sizeof(float));
    float *d_N, *d_P;
    cudaMalloc(&d_N, width * sizeof(float));
    cudaMalloc(&d_P, width * sizeof(float));
    cudaMemcpy(d_N, h_N, width * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpyToSymbol(M, h_M, MASK_WIDTH * sizeof(float));
    convolution1D<<<(width + 255) / 256, 256>>>(d_N, d_P, width);
    cudaMemcpy(h_N, d_P, width * sizeof(float), cudaMemcpyDeviceToHost);
})";
    auto lifted = lift(src);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_TRUE(lifted->program.opaque.empty()) << lifted->program.diagnostics.front().toString();
    const ir::Tensor *mask = lifted->program.graph.findTensor("M");
    ASSERT_NE(mask, nullptr);
    EXPECT_EQ(mask->role, ir::TensorRole::Input);
    EXPECT_EQ(opText(*lifted),
              "d_P[i] = sum(j) select(i + j - MASK_WIDTH / 2 >= 0 && i + j - MASK_WIDTH / 2 < width, "
              "d_N[i + j - MASK_WIDTH / 2] * M[j], 0.0)");

    const std::vector<double> n = {1, 2, 3, 4, 5, 6, 7}, m = {0.1, 0.2, 0.4, 0.2, 0.1};
    auto run = ir::interpret(lifted->program.graph, {{"width", 7}, {"MASK_WIDTH", 5}}, {{"d_N", n}, {"M", m}});
    ASSERT_TRUE(run.ok()) << run.error().toString();
    for (int i = 0; i < 7; ++i) {
        double expected = 0;
        for (int j = 0; j < 5; ++j) {
            const int at = i - 2 + j;
            if (at >= 0 && at < 7)
                expected += n[static_cast<std::size_t>(at)] * m[static_cast<std::size_t>(j)];
        }
        EXPECT_NEAR(run->at("d_P")[static_cast<std::size_t>(i)], expected, 1e-12) << i;
    }
}

TEST(LiftCuda, RuntimeSizesAreSymbolsWithoutValues)
{
    const std::string src = R"(
__global__ void k(const float *a, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + 1.0f;
}
int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    float *d_a, *d_c;
    cudaMalloc(&d_a, n * sizeof(float));
    cudaMalloc(&d_c, n * sizeof(float));
    cudaMemcpy(d_a, h, n * sizeof(float), cudaMemcpyHostToDevice);
    k<<<(n + 255) / 256, 256>>>(d_a, d_c, n);
    cudaMemcpy(h, d_c, n * sizeof(float), cudaMemcpyDeviceToHost);
})";
    auto lifted = lift(src);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_EQ(opText(*lifted), "d_c[i] = d_a[i] + 1.0");
    EXPECT_EQ(lifted->program.sizes.count("n"), 0u);
    auto run = ir::interpret(lifted->program.graph, {{"n", 3}}, {{"d_a", {1.0, 2.0, 3.0}}});
    ASSERT_TRUE(run.ok()) << run.error().toString();
    EXPECT_EQ(run->at("d_c"), (std::vector<double>{2.0, 3.0, 4.0}));
}

TEST(LiftCuda, APartialWriteFromAboveZeroKeepsTheOtherElements)
{
    // The guard starts at 1: element 0 (and n - 1) keep the copied-in values, and the stencil's
    // left neighbour is never read at i = 0.
    const std::string src = R"(
__global__ void smooth(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) out[i] = 0.5f * in[i - 1] + 0.5f * in[i + 1];
}
int main() {
    const int n = 6;
    float h[n];
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemcpy(d_in, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_out, h, n * sizeof(float), cudaMemcpyHostToDevice);
    smooth<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
    cudaMemcpy(h, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
})";
    auto lifted = lift(src);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_EQ(opText(*lifted), "d_out_1[i] = select(i >= 1 && i < n - 1, 0.5 * d_in[i - 1] + 0.5 * d_in[i + 1], d_out[i])");
    auto run = ir::interpret(lifted->program.graph, {{"n", 4}}, {{"d_in", {2, 4, 6, 8}}, {"d_out", {-1, -1, -1, -1}}});
    ASSERT_TRUE(run.ok()) << run.error().toString();
    EXPECT_EQ(run->at("d_out_1"), (std::vector<double>{-1.0, 4.0, 6.0, -1.0}));
}

} // namespace

TEST(LiftCuda, ASizeSetInABranchKeepsItsDefaultAndSaysTheRunMayChangeIt)
{
    auto lifted = lift("__global__ void gain(float *img, float g, int w, int h) {\n"
                       "    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       "    int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
                       "    if (x < w && y < h) img[y * w + x] *= g;\n}\n"
                       "int main(int argc, char **argv) {\n    int w = 1920;\n    int h = 1080;\n"
                       "    if (argc > 2) {\n        w = atoi(argv[1]);\n        h = atoi(argv[2]);\n    }\n"
                       "    float *img;\n    cudaMalloc(&img, w * h * sizeof(float));\n"
                       "    dim3 block(16, 16);\n    dim3 grid((w + 15) / 16, (h + 15) / 16);\n"
                       "    gain<<<grid, block>>>(img, 1.5f, w, h);\n    return 0;\n}\n");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_TRUE(lifted->program.opaque.empty());
    EXPECT_EQ(lifted->program.sizes.at("w"), 1920);
    bool noted = false;
    for (const Diagnostic &d : lifted->program.diagnostics)
        noted = noted || (d.location.line == 10 && d.message.starts_with("size 'w' may change at run time"));
    EXPECT_TRUE(noted);
}

TEST(LiftCuda, TypeAliasesNameTheirElementType)
{
    for (const char *alias : {"typedef float real_t;\n", "using real_t = float;\n", "#define real_t float\n"}) {
        auto lifted = lift(std::string(alias) +
                           "__global__ void twice(const real_t *x, real_t *y, int n) {\n"
                           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = x[i] * 2.0f;\n}\n"
                           "int main() {\n    real_t *x, *y;\n    cudaMalloc(&x, 4096 * sizeof(real_t));\n"
                           "    cudaMalloc(&y, 4096 * sizeof(real_t));\n    twice<<<16, 256>>>(x, y, 4096);\n    return 0;\n}\n");
        ASSERT_TRUE(lifted.ok()) << alias << lifted.error().toString();
        EXPECT_TRUE(lifted->program.opaque.empty()) << alias << lifted->program.opaque[0].why.toString();
        ASSERT_FALSE(lifted->program.graph.tensors().empty());
        EXPECT_EQ(lifted->program.graph.tensors().front().dtype, ir::DType::F32) << alias;
    }
}

TEST(LiftCuda, ASharedTileStoredInALoopIsRefusedSayingSo)
{
    auto lifted = lift("__global__ void k(const float *in, float *out, int n) {\n"
                       "    __shared__ float buf[256];\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       "    for (int j = 0; j < 1; ++j)\n        buf[threadIdx.x] = in[i];\n    __syncthreads();\n"
                       "    if (i < n) out[i] = buf[threadIdx.x] * 2.0f;\n}\n"
                       "int main() {\n    float *a, *b;\n    cudaMalloc(&a, 4096 * sizeof(float));\n"
                       "    cudaMalloc(&b, 4096 * sizeof(float));\n    k<<<16, 256>>>(a, b, 4096);\n    return 0;\n}\n");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    EXPECT_NE(lifted->program.opaque[0].why.message.find("'buf' is written inside a loop (at unit.cu:5:9)"), std::string::npos)
        << lifted->program.opaque[0].why.toString();
}

TEST(LiftCuda, AFlatIndexOverARowMajorAllocationKeepsTheBufferFlatWhenRowsDoNotDivideTheBound)
{
    // The grid covers ROWS * COLS / 256 * 256 threads exactly: not whole rows of [ROWS, COLS] in
    // general, so the buffer stays one-dimensional instead of being refused as out of bounds.
    auto lifted = lift("#define ROWS 64\n#define COLS 4096\n"
                       "__global__ void twice(const float *in, float *out, int n) {\n"
                       "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) out[i] = in[i] * 2.0f;\n}\n"
                       "int main() {\n    float *a, *b;\n    cudaMalloc(&a, ROWS * COLS * sizeof(float));\n"
                       "    cudaMalloc(&b, ROWS * COLS * sizeof(float));\n    cudaMemset(a, 0, ROWS * COLS * sizeof(float));\n"
                       "    twice<<<ROWS * COLS / 256, 256>>>(a, b, ROWS * COLS);\n    return 0;\n}\n");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_TRUE(lifted->program.opaque.empty()) << lifted->program.opaque[0].why.toString();
    for (const ir::Tensor &t : lifted->program.graph.tensors())
        EXPECT_EQ(t.shape.rank(), 1u) << t.toString();
}

TEST(LiftCuda, UnsignedBuffersLiftAsTheSignedTypeOfTheirWidthWithANote)
{
    auto lifted = lift("__global__ void inc(const unsigned *a, unsigned *b, int n) {\n"
                       "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) b[i] = a[i] + 1u;\n}\n"
                       "int main() {\n    unsigned *a, *b;\n    cudaMalloc(&a, 4096 * sizeof(unsigned));\n"
                       "    cudaMalloc(&b, 4096 * sizeof(unsigned));\n    inc<<<16, 256>>>(a, b, 4096);\n    return 0;\n}\n");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_TRUE(lifted->program.opaque.empty());
    ASSERT_FALSE(lifted->program.graph.tensors().empty());
    EXPECT_EQ(lifted->program.graph.tensors().front().dtype, ir::DType::I32);
    bool noted = false;
    for (const Diagnostic &d : lifted->program.diagnostics)
        noted = noted || (d.location.line == 7 && d.message.starts_with("'a' holds unsigned elements, lifted as int32"));
    EXPECT_TRUE(noted);
}
