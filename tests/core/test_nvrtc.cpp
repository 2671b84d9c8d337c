#include "core/cuda/CubinInfo.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/cuda/SourceCompiler.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace stitch;
using namespace stitch::cuda;

namespace {
std::string readExample(const std::string &name)
{
    std::ifstream in(std::string(STITCHCUDA_SOURCE_DIR) + "/examples/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
} // namespace

TEST(Nvrtc, VersionAndArchitectures)
{
    const auto v = nvrtcVersion();
    EXPECT_GE(v.major, 12);
    const auto archs = supportedArchitectures();
    EXPECT_NE(std::find(archs.begin(), archs.end(), "sm_90"), archs.end());
}

TEST(Nvrtc, CompilesTheExampleProgramAndReportsResources)
{
    CompileOptions o;
    o.arch = "sm_90";
    o.fileName = "examples/matmul_naive.cu";
    auto r = compileProgram(readExample("matmul_naive.cu"), o);
    ASSERT_TRUE(r.ok()) << r.error().toString() << "\n" << (r.ok() ? "" : r.error().message);
    ASSERT_EQ(r->kernels.size(), 1u);
    const auto &k = r->kernels[0];
    EXPECT_EQ(k.name, "matmul_naive");
    EXPECT_EQ(k.mangledName, "_Z12matmul_naivePKfS0_Pfiii");
    EXPECT_GT(k.registers, 8);
    EXPECT_LE(k.registers, 255);
    EXPECT_EQ(k.sharedBytes, 0);
    EXPECT_EQ(k.spillStoreBytes, 0);
    EXPECT_EQ(k.arch, "sm_90");
    EXPECT_NE(r->ptx.find(".entry _Z12matmul_naivePKfS0_Pfiii"), std::string::npos);
    EXPECT_NE(r->ptx.find(".target sm_90"), std::string::npos);
    ASSERT_GT(r->cubin.size(), 4u);
    EXPECT_EQ(std::string(r->cubin.data() + 1, 3), "ELF");
    // The removed host code is reported as notes, not errors.
    bool noted = false;
    for (const auto &d : r->diagnostics)
        noted |= d.severity == Severity::Note && d.message.find("host function") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(Nvrtc, ReportsSharedMemoryBarriersAndStack)
{
    const char *src = R"(
__global__ void tiled(const float *in, float *out) {
    __shared__ float tile[32][33];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    out[threadIdx.x * 32 + threadIdx.y] = tile[threadIdx.x][threadIdx.y];
}
__global__ void local(float *o) {
    float v[64];
    for (int i = 0; i < 64; ++i) v[(i * 7 + threadIdx.x) & 63] = o[i];
    o[threadIdx.x] = v[(int)o[1] & 63];
}
)";
    CompileOptions o;
    o.arch = "sm_80";
    auto r = compile(src, o);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    const auto *t = r->kernel("tiled");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->sharedBytes, 32 * 33 * 4);
    EXPECT_EQ(t->barriers, 1);
    const auto *l = r->kernel("local");
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->stackFrameBytes, 256);
}

TEST(Nvrtc, CompileErrorsAreLocated)
{
    const std::string src = "__global__ void k(float *a)\n{\n    int x = ;\n    a[0] = y;\n}\n";
    CompileOptions o;
    o.fileName = "broken.cu";
    auto r = compile(src, o);
    ASSERT_FALSE(r.ok());
    const Error &e = r.error();
    EXPECT_EQ(e.kind, ErrorKind::Compile);
    ASSERT_EQ(e.diagnostics.size(), 2u);
    EXPECT_EQ(e.diagnostics[0].location.file, "broken.cu");
    EXPECT_EQ(e.diagnostics[0].location.line, 3);
    EXPECT_EQ(e.diagnostics[0].location.column, 13); // the ';'
    EXPECT_EQ(e.diagnostics[1].location.line, 4);
    EXPECT_EQ(e.diagnostics[1].location.column, 12); // 'y'
    EXPECT_NE(e.diagnostics[1].message.find("\"y\" is undefined"), std::string::npos);
    ASSERT_TRUE(e.location.has_value());
    EXPECT_EQ(e.location->line, 3);
}

TEST(Nvrtc, UnknownArchitectureIsRefused)
{
    CompileOptions o;
    o.arch = "sm_ninety";
    auto r = compile("__global__ void k(){}", o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
}

TEST(Nvrtc, ToolkitHeadersResolve)
{
    const char *src = "#include <cuda_fp16.h>\n#include <stdio.h>\n"
                      "__global__ void h(__half *x) { x[threadIdx.x] = __float2half(1.0f); }\n"
                      "int main() { printf(\"hi\"); return 0; }\n";
    CompileOptions o;
    o.fileName = "half.cu";
    auto r = compileProgram(src, o);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_NE(r->kernel("h"), nullptr);
}

TEST(PtxasReport, ParsesEveryField)
{
    const std::string log = "ptxas info    : 0 bytes gmem\n"
                            "ptxas info    : Compiling entry function '_Z1tPf' for 'sm_90'\n"
                            "ptxas info    : Function properties for _Z1tPf\n"
                            "ptxas         .     256 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
                            "ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, "
                            "1024 bytes smem, 368 bytes cmem[0], 8 bytes cmem[2]\n";
    const auto ks = parsePtxasReport(log);
    ASSERT_EQ(ks.size(), 1u);
    EXPECT_EQ(ks[0].name, "t");
    EXPECT_EQ(ks[0].registers, 32);
    EXPECT_EQ(ks[0].barriers, 1);
    EXPECT_EQ(ks[0].sharedBytes, 1024);
    EXPECT_EQ(ks[0].constantBytes, 376);
    EXPECT_EQ(parsePtxasReport("ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Used 8 registers, used 0 barriers\n")[0].constantBytes, -1);
    EXPECT_EQ(ks[0].stackFrameBytes, 256);
    EXPECT_EQ(ks[0].spillStoreBytes, 8);
    EXPECT_EQ(ks[0].spillLoadBytes, 12);
}

TEST(PtxasReport, ShortNamesOfTemplatesAndExternC)
{
    EXPECT_EQ(shortKernelName("_Z2tkILi128EEvPf"), "tk<128>");
    EXPECT_EQ(shortKernelName("_Z12matmul_naivePKfS0_Pfiii"), "matmul_naive");
    EXPECT_EQ(shortKernelName("plain_c_kernel"), "plain_c_kernel");
}

TEST(Cubin, ResourcesMatchThePtxasReport)
{
    const char *src = R"(
template <int N> __global__ void tk(float *p) { __shared__ float t[N]; t[threadIdx.x] = p[threadIdx.x];
    __syncthreads(); p[threadIdx.x] = t[(threadIdx.x + 1) % N]; }
template __global__ void tk<300>(float *);
extern "C" __global__ void local(float *p, int n) { float l[64]; for (int i = 0; i < 64; ++i) l[i] = p[i * n];
    float s = 0; for (int i = 0; i < n; ++i) s += l[(i * 7) % 64]; p[threadIdx.x] = s; }
__global__ void plain(const float *a, float *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i] * 2.0f; }
)";
    for (const std::string arch : {"sm_80", "sm_90"}) {
        CompileOptions o;
        o.arch = arch;
        auto r = compile(src, o);
        ASSERT_TRUE(r.ok()) << r.error().toString();
        auto fromCubin = readCubinResources(r->cubin, arch);
        ASSERT_TRUE(fromCubin.ok()) << fromCubin.error().toString();
        ASSERT_EQ(fromCubin->size(), 3u);
        ASSERT_EQ(r->kernels.size(), 3u);
        for (const auto &reported : r->kernels) {
            const KernelResources *k = nullptr;
            for (const auto &c : *fromCubin)
                if (c.mangledName == reported.mangledName)
                    k = &c;
            ASSERT_NE(k, nullptr) << reported.mangledName;
            EXPECT_EQ(k->name, reported.name);
            EXPECT_EQ(k->registers, reported.registers) << k->name;
            EXPECT_EQ(k->sharedBytes, reported.sharedBytes) << k->name;
            EXPECT_EQ(k->stackFrameBytes, reported.stackFrameBytes) << k->name;
            EXPECT_EQ(k->barriers, reported.barriers) << k->name;
            EXPECT_EQ(k->spillStoreBytes, -1);
            EXPECT_EQ(k->arch, arch);
        }
    }
}

TEST(Cubin, MalformedImagesAreErrorsNotCrashes)
{
    CompileOptions o;
    auto r = compile("extern \"C\" __global__ void k(float *p) { __shared__ float s[32]; s[threadIdx.x] = 1; "
                     "__syncthreads(); p[threadIdx.x] = s[31 - threadIdx.x]; }",
                     o);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(readCubinResources(std::vector<char>(10, 'x'), "sm_90").ok());
    EXPECT_FALSE(readCubinResources(std::span<const char>(r->cubin.data(), 40), "sm_90").ok());
    // Every truncation and single-byte corruption either parses or is refused; none reads out of bounds.
    for (std::size_t n = 0; n < r->cubin.size(); n += 7)
        (void)readCubinResources(std::span<const char>(r->cubin.data(), n), "sm_90");
    for (std::size_t i = 0; i < r->cubin.size(); i += 3) {
        auto copy = r->cubin;
        copy[i] = static_cast<char>(copy[i] ^ 0x5a);
        (void)readCubinResources(copy, "sm_90");
    }
}
