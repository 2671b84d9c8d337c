#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/DeviceCode.h"
#include "tests/TimeScale.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

using namespace stitch;
using namespace stitch::frontend;
using stitch::testing::kTimeScale;

TEST(CudaSourceIndex, FindsKernelsParametersAndLaunches)
{
    const std::string src = R"(#include <cstdio>
#define N 64
template <int B>
__global__ void __launch_bounds__(256) scale(const float *__restrict__ in, float *out, int n) {
    __shared__ float s[B];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x] * 2.0f;
}
__device__ __forceinline__ float sq(float x) { return x * x; }
void host_helper() {}
int main() {
    scale<256><<<dim3(N / 256), 256>>>(nullptr, nullptr, N);
    return 0;
}
)";
    const auto idx = indexCudaSource(src, "s.cu");
    EXPECT_TRUE(idx.syntaxErrors.empty());
    ASSERT_EQ(idx.kernels.size(), 2u);
    const auto &k = idx.kernels[0];
    EXPECT_EQ(k.name, "scale");
    EXPECT_EQ(k.qualifier, "__global__");
    EXPECT_EQ(k.range.begin.line, 3); // the template line
    EXPECT_EQ(k.nameLocation.line, 4);
    EXPECT_TRUE(k.hasSharedMemory);
    EXPECT_TRUE(k.hasSyncThreads);
    ASSERT_EQ(k.parameters.size(), 3u);
    EXPECT_EQ(k.parameters[0].name, "in");
    EXPECT_EQ(k.parameters[0].type, "const float *__restrict__");
    EXPECT_EQ(k.parameters[2].type, "int");
    EXPECT_EQ(idx.kernels[1].name, "sq");
    EXPECT_EQ(idx.kernels[1].qualifier, "__device__");
    EXPECT_EQ(idx.hostFunctions.size(), 2u);
    ASSERT_EQ(idx.launches.size(), 1u);
    EXPECT_EQ(idx.launches[0].grid, "dim3(N / 256)");
    EXPECT_EQ(idx.launches[0].block, "256");
    EXPECT_EQ(idx.launches[0].location.line, 13);
    ASSERT_EQ(idx.includes.size(), 1u);
    EXPECT_EQ(idx.includes[0].path, "cstdio");
}

TEST(CudaSourceIndex, ClusterKernelsStayDeviceCode)
{
    // __cluster_dims__ (and __maxnreg__) are launch attributes the grammar does not know: the
    // kernel after them must still be a kernel, not a host function that the device compilation
    // leaves out (every generated cluster program failed `stitchcuda compile` and `run` that way).
    const std::string src = R"(#include <cooperative_groups.h>
extern "C" __global__ void __launch_bounds__(128, 3) __cluster_dims__(16, 1, 1) rows(const float *x, float *y)
{
    cooperative_groups::cluster_group cluster_ = cooperative_groups::this_cluster();
    y[threadIdx.x] = x[threadIdx.x] + (float)cluster_.block_rank();
}
__global__ void __maxnreg__(64) capped(float *y) { y[0] = 1.0f; }
void host_helper() {}
void launcher(float *y) { ::capped<<<1, 32>>>(y); }
)";
    const auto idx = indexCudaSource(src, "c.cu");
    EXPECT_TRUE(idx.syntaxErrors.empty());
    ASSERT_EQ(idx.kernels.size(), 2u);
    EXPECT_EQ(idx.kernels[0].name, "rows");
    EXPECT_EQ(idx.kernels[0].qualifier, "__global__");
    EXPECT_EQ(idx.kernels[0].parameters.size(), 2u);
    EXPECT_EQ(idx.kernels[0].nameLocation.line, 2);
    EXPECT_EQ(idx.kernels[1].name, "capped");
    ASSERT_EQ(idx.hostFunctions.size(), 2u);
    EXPECT_EQ(idx.hostFunctions[0].begin.line, 8);
    // `::capped<<<...>>>` (as the generated host launchers write it) launches the file-scope kernel.
    ASSERT_EQ(idx.launches.size(), 1u);
    EXPECT_EQ(idx.launches[0].kernel, "capped");
    const auto tu = deviceTranslationUnit(src, idx);
    EXPECT_NE(tu.source.find("__cluster_dims__(16, 1, 1) rows("), std::string::npos) << "the source itself is kept";
    EXPECT_NE(tu.source.find("this_cluster()"), std::string::npos);
    EXPECT_EQ(tu.source.find("host_helper"), std::string::npos);
    EXPECT_EQ(tu.source.find("launcher"), std::string::npos);
}

TEST(CudaSourceIndex, WhatTheGrammarCannotReadIsLocatedAndNeverCrashes)
{
    const std::string src = "__global__ void k(float *a) {\n    a[0] = (1 + ;\n}\n";
    const auto idx = indexCudaSource(src, "bad.cu");
    ASSERT_FALSE(idx.syntaxErrors.empty());
    EXPECT_EQ(idx.syntaxErrors[0].location.file, "bad.cu");
    EXPECT_EQ(idx.syntaxErrors[0].location.line, 2);
    // The grammar's limit, not a verdict: a warning that names the grammar and the authority.
    EXPECT_EQ(idx.syntaxErrors[0].severity, Severity::Warning);
    EXPECT_NE(idx.syntaxErrors[0].message.find("the CUDA grammar (tree-sitter-cuda "), std::string::npos)
        << idx.syntaxErrors[0].message;
    EXPECT_NE(idx.syntaxErrors[0].message.find("nvcc/NVRTC is the authority"), std::string::npos);
    EXPECT_EQ(idx.syntaxErrors[0].message.find("syntax error"), std::string::npos);
    ASSERT_EQ(idx.kernels.size(), 1u);
    EXPECT_EQ(idx.kernels[0].name, "k");

    // Truncated and garbage input: no crash, something reported.
    for (const std::string &s : {std::string("__global__ void k(float *a) { a[0] = "), std::string("}}}{{{<<<>>>"),
                                 std::string("\0\xff\xfe", 3), std::string()}) {
        const auto r = indexCudaSource(s, "x.cu");
        EXPECT_TRUE(s.empty() || !r.syntaxErrors.empty()) << s;
    }
}

namespace {

/// Text tree-sitter recovers from slowly (~25 us per byte): the fuzzer's reproducer, repeated.
std::string slowGarbage(std::size_t bytes)
{
    std::ifstream in(std::string(STITCHCUDA_SOURCE_DIR) + "/tests/fuzz/corpus/slow-treesitter-error-recovery",
                     std::ios::binary);
    std::ostringstream seed;
    seed << in.rdbuf();
    std::string text;
    while (text.size() < bytes)
        text += seed.str();
    return text;
}

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

TEST(CudaSourceIndex, ComparisonsAreNotReadAsTemplateArguments)
{
    // tree-sitter-cuda 0.20 read `prop.major < 2)` and `threadIdx.x < lenA)` as the start of a
    // template argument list ("missing '>'"); 0.21 reads them as comparisons.
    const std::string src = "__global__ void k(float *a, int lenA) {\n"
                            "    if (threadIdx.x < lenA) a[threadIdx.x] = 0.0f;\n}\n"
                            "int main() {\n    cudaDeviceProp prop;\n    cudaGetDeviceProperties(&prop, 0);\n"
                            "    if (prop.major < 2) return 1;\n    return 0;\n}\n";
    const auto idx = indexCudaSource(src, "cmp.cu");
    EXPECT_TRUE(idx.syntaxErrors.empty()) << idx.syntaxErrors[0].toString();
    ASSERT_EQ(idx.kernels.size(), 1u);
    EXPECT_EQ(idx.kernels[0].parameters.size(), 2u);
}

TEST(CudaSourceIndex, ParseBudgetGrowsWithTheFileFromAFloor)
{
    const CudaParseLimits limits;
    EXPECT_EQ(limits.budgetFor(0), std::chrono::seconds(2));
    EXPECT_EQ(limits.budgetFor(100000), std::chrono::seconds(2));
    EXPECT_EQ(limits.budgetFor(limits.maxSourceBytes), std::chrono::microseconds((8 << 20) * 2));
}

TEST(CudaSourceIndex, OversizedFileIsOneLocatedErrorWithoutParsing)
{
    const auto start = std::chrono::steady_clock::now();
    const auto idx = indexCudaSource(std::string((9 << 20) + 17, ';'), "big.cu");
    EXPECT_LT(secondsSince(start), 1.0 * kTimeScale);
    EXPECT_TRUE(idx.kernels.empty());
    ASSERT_EQ(idx.syntaxErrors.size(), 1u);
    EXPECT_EQ(idx.syntaxErrors[0].toString(),
              "big.cu:1:1: error: big.cu is 9.0 MiB; CUDA files over 8.0 MiB are not parsed (the file is probably "
              "not CUDA source)");
}

TEST(CudaSourceIndex, InputThatOutlastsTheParseBudgetIsALocatedTimeout)
{
    // Without a budget this takes seconds (it is what made the fuzzer's -timeout fire).
    const std::string garbage = slowGarbage(256 * 1024);
    CudaParseLimits limits;
    limits.minBudget = std::chrono::milliseconds(50);
    limits.budgetPerByte = std::chrono::nanoseconds(0);
    const auto start = std::chrono::steady_clock::now();
    const auto idx = indexCudaSource(garbage, "noise.cu", limits);
    EXPECT_LT(secondsSince(start), 1.0 * kTimeScale);
    ASSERT_EQ(idx.syntaxErrors.size(), 1u);
    EXPECT_EQ(idx.syntaxErrors[0].location.toString(), "noise.cu:1:1");
    EXPECT_NE(idx.syntaxErrors[0].message.find("parsing noise.cu took longer than 50 ms for 262"), std::string::npos)
        << idx.syntaxErrors[0].message;
    EXPECT_NE(idx.syntaxErrors[0].message.find("the file is probably not CUDA"), std::string::npos);

    // The fuzzer's 1.4 KB reproducer itself fits the default budget: ordinary syntax errors.
    const auto small = indexCudaSource(slowGarbage(1), "repro.cu");
    ASSERT_FALSE(small.syntaxErrors.empty());
    EXPECT_EQ(small.syntaxErrors[0].message.find("took longer"), std::string::npos) << small.syntaxErrors[0].message;
}

TEST(DeviceCode, BlanksHostCodeKeepingLinesAndColumns)
{
    const std::string src = "#include <cstdio>\n#include \"mine.cuh\"\n__global__ void k(float *a) { a[0] = 1; }\n"
                            "int main() {\n  printf(\"x\");\n}\n";
    const auto idx = indexCudaSource(src, "p.cu");
    const auto tu = deviceTranslationUnit(src, idx);
    ASSERT_EQ(tu.source.size(), src.size());
    EXPECT_EQ(std::count(tu.source.begin(), tu.source.end(), '\n'), std::count(src.begin(), src.end(), '\n'));
    EXPECT_EQ(tu.source.find("cstdio"), std::string::npos);
    EXPECT_EQ(tu.source.find("main"), std::string::npos);
    EXPECT_NE(tu.source.find("#include \"mine.cuh\""), std::string::npos); // user headers stay
    EXPECT_NE(tu.source.find("__global__ void k(float *a) { a[0] = 1; }"), std::string::npos);
    EXPECT_EQ(tu.notes.size(), 2u);
    EXPECT_TRUE(isHostOnlyHeader("cuda_runtime.h"));
    EXPECT_FALSE(isHostOnlyHeader("cuda_fp16.h"));
}
