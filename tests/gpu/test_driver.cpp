// GPU tests: run where a driver and a GPU are present (the GPU machine), skip elsewhere.
#include "core/arch/ArchDatabase.h"
#include "core/cuda/DriverApi.h"
#include "core/cuda/SourceCompiler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

using namespace stitch;
using namespace stitch::cuda;

namespace {

std::shared_ptr<DriverApi> driverOrSkip()
{
    auto api = DriverApi::load();
    if (!api)
        return nullptr;
    auto devs = (*api)->devices();
    if (!devs || devs->empty())
        return nullptr;
    return *api;
}

#define REQUIRE_GPU(api)                                                                           \
    auto api = driverOrSkip();                                                                     \
    if (!api) {                                                                                    \
        GTEST_SKIP() << "no CUDA driver or GPU on this machine";                                   \
    }

std::string readExample(const std::string &name)
{
    std::ifstream in(std::string(STITCHCUDA_SOURCE_DIR) + "/examples/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<float> randomVector(std::size_t n, std::mt19937 &rng)
{
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto &x : v)
        x = d(rng);
    return v;
}

} // namespace

TEST(Gpu, DeviceQueryMatchesTheArchDatabase)
{
    REQUIRE_GPU(api);
    auto devs = api->devices();
    ASSERT_TRUE(devs.ok());
    for (const auto &d : *devs) {
        EXPECT_FALSE(d.name.empty());
        EXPECT_GT(d.multiprocessors, 0);
        EXPECT_EQ(d.warpSize, 32);
        const ArchLimits *a = ArchDatabase::builtin().arch(d.arch());
        ASSERT_NE(a, nullptr) << d.arch() << " missing from the arch database";
        EXPECT_EQ(d.sharedMemoryPerBlockOptin, a->sharedMemoryPerBlockOptin) << d.name;
        EXPECT_EQ(d.registersPerMultiprocessor, a->registersPerSm) << d.name;
        EXPECT_EQ(d.maxThreadsPerMultiprocessor, a->maxThreadsPerSm) << d.name;
        if (const GpuSpec *g = ArchDatabase::builtin().gpu(d.name)) {
            EXPECT_EQ(g->multiprocessors, d.multiprocessors) << d.name;
        }
    }
}

// The example kernel, compiled by NVRTC for the device's own architecture, computes the right
// product on sizes that are not multiples of the block: checked against a float64 reference,
// with the output poisoned first so unwritten elements show.
TEST(Gpu, NaiveMatmulExampleRunsCorrectly)
{
    REQUIRE_GPU(api);
    auto ctx = api->createContext(0);
    ASSERT_TRUE(ctx.ok()) << ctx.error().toString();
    Context &c = **ctx;

    CompileOptions co;
    co.arch = c.device().arch();
    co.fileName = "examples/matmul_naive.cu";
    auto compiled = compileProgram(readExample("matmul_naive.cu"), co);
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    ASSERT_EQ(compiled->kernels.size(), 1u) << "NVRTC log:\n" << compiled->log;
    auto module = c.loadModule(compiled->cubin);
    ASSERT_TRUE(module.ok()) << module.error().toString();

    for (auto [m, n, k] : {std::tuple{100, 70, 37}, std::tuple{257, 129, 513}}) {
        std::mt19937 rng(static_cast<unsigned>(m * 131 + n));
        const auto A = randomVector(static_cast<std::size_t>(m) * k, rng);
        const auto B = randomVector(static_cast<std::size_t>(k) * n, rng);
        auto dA = c.allocate(A.size() * 4), dB = c.allocate(B.size() * 4), dC = c.allocate(std::size_t(m) * n * 4);
        ASSERT_TRUE(dA.ok() && dB.ok() && dC.ok());
        ASSERT_TRUE(c.upload(*dA, A.data(), A.size() * 4).ok());
        ASSERT_TRUE(c.upload(*dB, B.data(), B.size() * 4).ok());
        ASSERT_TRUE(c.fill(*dC, 0x7fc00000u).ok()); // quiet NaN: an unwritten element fails

        std::uint64_t pa = dA->address(), pb = dB->address(), pc = dC->address();
        int im = m, in = n, ik = k;
        void *args[] = {&pa, &pb, &pc, &im, &in, &ik};
        LaunchConfig lc;
        lc.blockX = 32;
        lc.blockY = 32;
        lc.gridX = static_cast<unsigned>((n + 31) / 32);
        lc.gridY = static_cast<unsigned>((m + 31) / 32);
        auto st = (*module)->launch(compiled->kernels.at(0).mangledName, lc, args);
        ASSERT_TRUE(st.ok()) << st.error().toString();

        std::vector<float> C(std::size_t(m) * n);
        ASSERT_TRUE(c.download(C.data(), *dC, C.size() * 4).ok());
        double num = 0, den = 0;
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double ref = 0;
                for (int p = 0; p < k; ++p)
                    ref += double(A[std::size_t(i) * k + p]) * B[std::size_t(p) * n + j];
                const double got = C[std::size_t(i) * n + j];
                ASSERT_FALSE(std::isnan(got)) << "C[" << i << "][" << j << "] not written";
                num += (got - ref) * (got - ref);
                den += ref * ref;
            }
        EXPECT_LT(std::sqrt(num / den), 1e-5) << m << "x" << n << "x" << k;
    }
}

// A faulting kernel is a typed fault, not a crash of the test process.
TEST(Gpu, IllegalAddressIsATypedFault)
{
    REQUIRE_GPU(api);
    // A fault is sticky for the whole process (CUDA's rule: the primary context cannot even be
    // retained again), so the faulting launch runs in a child: gtest's threadsafe death-test style
    // re-executes this binary for it, and the tests after this one keep a clean GPU when the binary
    // runs all of them in one process. The child exits 0 only if the fault is reported as typed.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto faultInChild = [] {
        auto child = DriverApi::load();
        if (!child.ok())
            std::exit(2);
        auto ctx = (*child)->createContext(0);
        if (!ctx.ok())
            std::exit(3);
        CompileOptions co;
        co.arch = (*ctx)->device().arch();
        auto compiled = compile("extern \"C\" __global__ void bad(float *p) { p[threadIdx.x + (1ull << 40)] = 1.0f; }", co);
        if (!compiled.ok())
            std::exit(4);
        auto module = (*ctx)->loadModule(compiled->cubin);
        if (!module.ok())
            std::exit(5);
        std::uint64_t p = 0;
        void *args[] = {&p};
        LaunchConfig lc;
        lc.blockX = 32;
        auto st = (*module)->launch("bad", lc, args);
        if (st.ok())
            std::exit(6);
        std::fprintf(stderr, "%s\n", st.error().message.c_str());
        const bool typed = st.error().kind == ErrorKind::Fault &&
                           st.error().message.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos;
        std::_Exit(typed ? 0 : 7); // no destructors: the faulted context cannot be torn down cleanly
    };
    EXPECT_EXIT(faultInChild(), ::testing::ExitedWithCode(0), "CUDA_ERROR_ILLEGAL_ADDRESS");
}

// The ptxas report (registers, shared memory) must not depend on whether the driver is loaded or
// on how the file was named: the studio compiles with a GPU present and an absolute path.
TEST(Gpu, ResourceReportWithTheDriverLoaded)
{
    REQUIRE_GPU(api);
    auto ctx = api->createContext(0);
    ASSERT_TRUE(ctx.ok());
    const std::string source = readExample("matmul_naive.cu");
    for (const std::string &name : {std::string(STITCHCUDA_SOURCE_DIR) + "/examples/matmul_naive.cu",
                                   std::string("examples/matmul_naive.cu"), std::string("matmul_naive.cu")}) {
        CompileOptions co;
        co.arch = (*ctx)->device().arch();
        co.fileName = name;
        auto compiled = compileProgram(source, co);
        ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
        EXPECT_EQ(compiled->kernels.size(), 1u) << name << ": NVRTC log (" << compiled->log.size() << " bytes):\n"
                                                << compiled->log;
        auto direct = compile("extern \"C\" __global__ void k(float *p) { p[threadIdx.x] = 1.0f; }", co);
        ASSERT_TRUE(direct.ok());
        EXPECT_EQ(direct->kernels.size(), 1u) << name << " (no -I): log " << direct->log;
    }
}
