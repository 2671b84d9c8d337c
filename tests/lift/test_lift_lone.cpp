// Kernels that no host code launches ("lone" kernels): integer parameters become sizes, the
// launch is inferred from the kernel's guards and stride loops, buffers are sized by their
// accesses; what still cannot lift stays opaque with a located reason.
#include "core/frontend/Lift.h"
#include "core/frontend/LiftJson.h"
#include "core/frontend/cudalift/CudaLift.h"
#include "core/ir/Interpreter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

using namespace stitch;
using namespace stitch::frontend::cudalift;

namespace {

Result<CudaLiftDetail> lift(const std::string &source)
{
    return liftCudaProgramDetailed(source, "lone.cu");
}

std::string opText(const CudaLiftDetail &d, std::size_t i = 0)
{
    return i < d.program.graph.ops().size() ? d.program.graph.ops()[i].toString() : std::string("<no op>");
}

std::string shapeOf(const CudaLiftDetail &d, const std::string &tensor)
{
    const ir::Tensor *t = d.program.graph.findTensor(tensor);
    return t ? t->shape.toString() : "<no tensor " + tensor + ">";
}

std::string opaqueReasons(const CudaLiftDetail &d)
{
    std::string text;
    for (const frontend::OpaqueKernel &k : d.program.opaque)
        text += k.why.toString() + "\n";
    return text;
}

std::vector<double> ramp(std::size_t n, double scale, double offset)
{
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = scale * static_cast<double>(i) + offset;
    return v;
}

const std::string kMatmul = R"(
__global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
)";

TEST(LoneKernel, MatmulLiftsToAContractionOverSymbolicSizes)
{
    auto lifted = lift(kMatmul);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_TRUE(lifted->program.opaque.empty()) << opaqueReasons(*lifted);
    ASSERT_EQ(lifted->program.graph.ops().size(), 1u);
    EXPECT_EQ(opText(*lifted), "C[row, col] = sum(k) A[row, k] * B[k, col]");
    EXPECT_EQ(shapeOf(*lifted, "A"), "[M, K]");
    EXPECT_EQ(shapeOf(*lifted, "B"), "[K, N]");
    EXPECT_EQ(shapeOf(*lifted, "C"), "[M, N]");
    EXPECT_EQ(lifted->program.graph.findTensor("A")->role, ir::TensorRole::Input);
    EXPECT_EQ(lifted->program.graph.findTensor("B")->role, ir::TensorRole::Input);
    EXPECT_EQ(lifted->program.graph.findTensor("C")->role, ir::TensorRole::Output);
    // The sizes are symbols without values: they come from --size.
    std::vector<std::string> sizes = lifted->program.graph.sizeVars();
    std::sort(sizes.begin(), sizes.end());
    EXPECT_EQ(sizes, (std::vector<std::string>{"K", "M", "N"}));
    EXPECT_TRUE(lifted->program.sizes.empty());

    // The inferred launch: one 16 x 16 block per tile of C, as the guards ask.
    ASSERT_EQ(lifted->program.launches.size(), 1u);
    const frontend::LiftedLaunch &launch = lifted->program.launches[0];
    EXPECT_TRUE(launch.inferred);
    EXPECT_EQ(launch.grid, "dim3((N + 15) / 16, (M + 15) / 16)");
    EXPECT_EQ(launch.block, "dim3(16, 16)");
    EXPECT_EQ(launch.arguments, (std::vector<std::string>{"A", "B", "C", "M", "N", "K"}));
    EXPECT_EQ(launch.ops, std::vector<std::string>{"matmul"});
    EXPECT_EQ(launch.location.line, 2);
    const auto note = std::find_if(lifted->program.diagnostics.begin(), lifted->program.diagnostics.end(),
                                   [](const Diagnostic &d) { return d.message.find("launched by no host code") != std::string::npos; });
    ASSERT_NE(note, lifted->program.diagnostics.end());
    EXPECT_EQ(note->severity, Severity::Note);
    EXPECT_NE(note->message.find("sizes (M, N, K)"), std::string::npos) << note->message;
    EXPECT_TRUE(frontend::liftToJson(lifted->program).at("launches").at(0).at("inferred").get<bool>());

    // The buffer plans follow the inferred extents.
    ASSERT_EQ(lifted->buffers.size(), 3u);
    EXPECT_EQ(lifted->buffers[0].elements.toString(), "M * K");
}

TEST(LoneKernel, MatmulRunsInTheInterpreterAgainstAHandComputedProduct)
{
    auto lifted = lift(kMatmul);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    const std::size_t M = 3, N = 4, K = 5;
    const std::vector<double> a = ramp(M * K, 0.5, -1.0), b = ramp(K * N, -0.25, 2.0);
    auto run = ir::interpret(lifted->program.graph, {{"M", 3}, {"N", 4}, {"K", 5}}, {{"A", a}, {"B", b}});
    ASSERT_TRUE(run.ok()) << run.error().toString();
    const std::vector<double> &c = run->at("C");
    ASSERT_EQ(c.size(), M * N);
    for (std::size_t i = 0; i < M; ++i) {
        for (std::size_t j = 0; j < N; ++j) {
            double expected = 0;
            for (std::size_t k = 0; k < K; ++k)
                expected += a[i * K + k] * b[k * N + j];
            EXPECT_DOUBLE_EQ(c[i * N + j], expected) << i << ", " << j;
        }
    }
    // Without a value for a size the graph does not run, and says which one.
    auto missing = ir::interpret(lifted->program.graph, {{"M", 3}, {"N", 4}}, {{"A", a}, {"B", b}});
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("K"), std::string::npos) << missing.error().message;
}

TEST(LoneKernel, SaxpyReadsItsScalarAndUpdatesYInPlace)
{
    auto lifted = lift(R"(
__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_TRUE(lifted->program.opaque.empty()) << opaqueReasons(*lifted);
    EXPECT_EQ(opText(*lifted), "y_1[i] = a[] * x[i] + y[i]");
    EXPECT_EQ(shapeOf(*lifted, "a"), "[]");
    EXPECT_EQ(shapeOf(*lifted, "x"), "[n]");
    EXPECT_EQ(shapeOf(*lifted, "y"), "[n]");
    EXPECT_EQ(lifted->program.graph.findTensor("a")->role, ir::TensorRole::Input);
    EXPECT_EQ(lifted->program.graph.findTensor("y_1")->role, ir::TensorRole::Output);
    EXPECT_EQ(lifted->program.launches.at(0).grid, "(n + 255) / 256");
    EXPECT_EQ(lifted->program.launches.at(0).block, "256");

    auto run = ir::interpret(lifted->program.graph, {{"n", 4}},
                             {{"a", {2.0}}, {"x", {1.0, 2.0, 3.0, 4.0}}, {"y", {10.0, 20.0, 30.0, 40.0}}});
    ASSERT_TRUE(run.ok()) << run.error().toString();
    EXPECT_EQ(run->at("y_1"), (std::vector<double>{12.0, 24.0, 36.0, 48.0}));
}

TEST(LoneKernel, AGridStrideLoopGivesTheDomain)
{
    auto lifted = lift(R"(
__global__ void saxpy(int n, float a, const float *x, float *y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_TRUE(lifted->program.opaque.empty()) << opaqueReasons(*lifted);
    EXPECT_EQ(opText(*lifted), "y_1[i] = a[] * x[i] + y[i]");
    EXPECT_EQ(shapeOf(*lifted, "x"), "[n]");
    EXPECT_EQ(lifted->program.launches.at(0).grid, "(n + 255) / 256");
    auto run = ir::interpret(lifted->program.graph, {{"n", 3}}, {{"a", {-1.0}}, {"x", {1.0, 2.0, 3.0}}, {"y", {1.0, 1.0, 1.0}}});
    ASSERT_TRUE(run.ok()) << run.error().toString();
    EXPECT_EQ(run->at("y_1"), (std::vector<double>{0.0, -1.0, -2.0}));
}

TEST(LoneKernel, ARowSumIsOneThreadPerRowReducingOverColumns)
{
    auto lifted = lift(R"(
__global__ void rowSum(const float *A, float *out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; c++)
        s += A[r * cols + c];
    out[r] = s;
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_TRUE(lifted->program.opaque.empty()) << opaqueReasons(*lifted);
    EXPECT_EQ(opText(*lifted), "out[r] = sum(c) A[r, c]");
    EXPECT_EQ(shapeOf(*lifted, "A"), "[rows, cols]");
    EXPECT_EQ(shapeOf(*lifted, "out"), "[rows]");
    auto run = ir::interpret(lifted->program.graph, {{"rows", 2}, {"cols", 3}}, {{"A", {1, 2, 3, 4, 5, 6}}});
    ASSERT_TRUE(run.ok()) << run.error().toString();
    EXPECT_EQ(run->at("out"), (std::vector<double>{6.0, 15.0}));
}

TEST(LoneKernel, ADataDependentIndexStaysOpaqueWithALocatedReason)
{
    auto lifted = lift(R"(
__global__ void gather(const float *x, const int *idx, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[idx[i]];
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    const frontend::OpaqueKernel &k = lifted->program.opaque[0];
    EXPECT_EQ(k.name, "gather");
    EXPECT_NE(k.why.message.find("depends on data read from memory"), std::string::npos) << k.why.toString();
    EXPECT_EQ(k.why.location.line, 5);
    EXPECT_EQ(k.reads, (std::vector<std::string>{"x", "idx", "y"}));
    EXPECT_EQ(k.writes, std::vector<std::string>{"y"});
    EXPECT_TRUE(lifted->program.graph.ops().empty());
}

TEST(LoneKernel, AnUnguardedThreadIndexStaysOpaqueSayingNothingBoundsIt)
{
    auto lifted = lift(R"(
__global__ void twice(const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = 2.0f * x[i];
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    const Diagnostic &why = lifted->program.opaque[0].why;
    EXPECT_NE(why.message.find("'i': no guard bounds this thread index (blockIdx.x * blockDim.x + threadIdx.x)"),
              std::string::npos)
        << why.toString();
    EXPECT_EQ(why.location.line, 4);
}

TEST(LoneKernel, SeveralKernelsLiftInSourceOrderEachWithItsOwnTensors)
{
    auto lifted = lift(R"(
__global__ void scale(const float *x, float *y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = s * x[i];
}
__global__ void shift(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_TRUE(lifted->program.opaque.empty()) << opaqueReasons(*lifted);
    ASSERT_EQ(lifted->program.launches.size(), 2u);
    EXPECT_EQ(lifted->program.launches[0].kernel, "scale");
    EXPECT_EQ(lifted->program.launches[1].kernel, "shift");
    // No dataflow through parameter names: shift's x and y are not scale's.
    EXPECT_EQ(opText(*lifted, 0), "y[i] = s[] * x[i]");
    EXPECT_EQ(opText(*lifted, 1), "shift_y[i] = shift_x[i] + 1.0");
    EXPECT_EQ(lifted->program.graph.findTensor("shift_x")->role, ir::TensorRole::Input);
    EXPECT_EQ(lifted->program.graph.findTensor("y")->role, ir::TensorRole::Output);
    auto run = ir::interpret(lifted->program.graph, {{"n", 2}},
                             {{"x", {1.0, 2.0}}, {"s", {3.0}}, {"shift_x", {5.0, 6.0}}});
    ASSERT_TRUE(run.ok()) << run.error().toString();
    EXPECT_EQ(run->at("y"), (std::vector<double>{3.0, 6.0}));
    EXPECT_EQ(run->at("shift_y"), (std::vector<double>{6.0, 7.0}));
}

TEST(LoneKernel, OneKernelThatCannotLiftLeavesTheOthersLifted)
{
    auto lifted = lift(R"(
__global__ void histogram(const int *data, int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i]], 1);
}
__global__ void square(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    EXPECT_EQ(lifted->program.opaque[0].name, "histogram");
    EXPECT_EQ(lifted->program.opaque[0].why.location.line, 4);
    EXPECT_EQ(opText(*lifted), "y[i] = x[i] * x[i]");
    EXPECT_EQ(lifted->program.launches.at(1).ops, std::vector<std::string>{"square"});
}

TEST(LoneKernel, AKernelLaunchedFromMainIsNotLiftedAlone)
{
    // With host launches the old rule stands: a kernel main never launches stays opaque.
    auto lifted = lift(R"(
__global__ void used(float *c, int n) { int i = threadIdx.x; if (i < n) c[i] = 1.0f; }
__global__ void unused(float *c, int n) { int i = threadIdx.x; if (i < n) c[i] = 2.0f; }
int main() {
    float *d_c;
    cudaMalloc(&d_c, 32 * sizeof(float));
    used<<<1, 32>>>(d_c, 32);
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    EXPECT_EQ(lifted->program.opaque[0].name, "unused");
    EXPECT_NE(lifted->program.opaque[0].why.message.find("never launched"), std::string::npos);
    EXPECT_FALSE(lifted->program.launches.at(0).inferred);
}

TEST(LoneKernel, ThreadIndicesAloneGiveGridOrBlockExtents)
{
    // One block per row (blockIdx.y), one thread per column (threadIdx.x).
    auto lifted = lift(R"(
__global__ void addRows(const float *a, float *b, int rows, int cols) {
    int r = blockIdx.y;
    int c = threadIdx.x;
    if (r < rows && c < cols)
        b[r * cols + c] = a[r * cols + c] + 1.0f;
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_TRUE(lifted->program.opaque.empty()) << opaqueReasons(*lifted);
    EXPECT_EQ(opText(*lifted), "b[r, c] = a[r, c] + 1.0");
    EXPECT_EQ(lifted->program.launches.at(0).grid, "dim3(1, rows)");
    EXPECT_EQ(lifted->program.launches.at(0).block, "cols");
}

TEST(LoneKernel, ABufferIsAsLongAsTheElementsTheKernelTouches)
{
    // Writes 1 .. n-2 of out, reads 0 .. n-1 of in: out has n - 1 elements the kernel knows of,
    // and element 0 keeps what the caller had there.
    auto lifted = lift(R"(
__global__ void smooth(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1)
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_TRUE(lifted->program.opaque.empty()) << opaqueReasons(*lifted);
    EXPECT_EQ(shapeOf(*lifted, "in"), "[n]");
    EXPECT_EQ(shapeOf(*lifted, "out"), "[n - 1]");
    EXPECT_EQ(opText(*lifted), "out_1[i] = select(i >= 1, 0.25 * in[i - 1] + 0.5 * in[i] + 0.25 * in[i + 1], out[i])");
    auto run = ir::interpret(lifted->program.graph, {{"n", 4}}, {{"in", {4, 8, 12, 16}}, {"out", {-1, -1, -1}}});
    ASSERT_TRUE(run.ok()) << run.error().toString();
    EXPECT_EQ(run->at("out_1"), (std::vector<double>{-1.0, 8.0, 12.0}));
}

TEST(LoneKernel, ATiledKernelThatAssumesItsBlockSizeStaysOpaqueSayingWhy)
{
    auto lifted = lift(R"(
#define TILE 16
__global__ void tiled(const float *A, const float *B, float *C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < K / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * K + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
)");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    const Diagnostic &why = lifted->program.opaque[0].why;
    EXPECT_NE(why.message.find("blockDim.y threads"), std::string::npos) << why.toString();
    EXPECT_NE(why.message.find("its block and grid sizes are unknown: launch it from main"), std::string::npos)
        << why.toString();
    EXPECT_GT(why.location.line, 2);
    EXPECT_EQ(lifted->program.launches.at(0).grid, "?");
}

} // namespace
