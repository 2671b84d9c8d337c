// The input as written (core/codegen/AsWritten.h): every liftable corpus program becomes a launch
// plan at the corpus's test sizes whose device code compiles with NVRTC for sm_90 and defines
// every launched kernel; a few plans are checked by hand; what cannot be run as written is a
// located Unsupported error. The GPU runs are in test_corpus_gpu.
#include "tests/lift/LiftCorpus.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/AsWritten.h"
#include "core/codegen/Program.h"
#include "core/runner/PlanFile.h"
#include "core/schedule/Space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iostream>

using namespace stitch;
using namespace stitch::testing;
using frontend::cudalift::liftCudaProgramDetailed;

namespace {

Result<codegen::AsWrittenProgram> asWritten(const std::string &name, const ir::SizeBindings &small)
{
    const std::string source = readTextFile(corpusPath(name));
    auto lifted = liftCudaProgramDetailed(source, name + ".cu");
    if (!lifted)
        return lifted.error();
    return codegen::asWrittenProgram(source, name + ".cu", *lifted, testBindings(*lifted, small));
}

Result<codegen::AsWrittenProgram> asWrittenText(const std::string &source)
{
    auto lifted = liftCudaProgramDetailed(source, "inline.cu");
    if (!lifted)
        return lifted.error();
    return codegen::asWrittenProgram(source, "inline.cu", *lifted, {});
}

std::array<unsigned, 6> dims(const runner::KernelLaunch &l)
{
    return {l.config.gridX, l.config.gridY, l.config.gridZ, l.config.blockX, l.config.blockY, l.config.blockZ};
}

const runner::ScalarArg &scalar(const runner::KernelLaunch &l, std::size_t a)
{
    return std::get<runner::ScalarArg>(l.args.at(a).value);
}

std::string bufferArg(const runner::KernelLaunch &l, std::size_t a)
{
    return std::get<std::string>(l.args.at(a).value);
}

class AsWrittenCorpus : public ::testing::TestWithParam<CorpusProgram> {};

} // namespace

TEST_P(AsWrittenCorpus, CompilesAndDefinesEveryLaunchedKernel)
{
    auto program = asWritten(GetParam().name, GetParam().small);
    ASSERT_TRUE(program.ok()) << program.error().toString();
    ASSERT_FALSE(program->plan.launches.empty());
    for (const auto &b : program->plan.buffers)
        EXPECT_GT(b.count, 0u) << b.name;
    auto compiled = codegen::compileAsWritten(*program, "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    EXPECT_FALSE(compiled->module.empty());
    // compileAsWritten resolved every launch to a kernel NVRTC compiled (mangled, or extern "C").
    ASSERT_EQ(compiled->plan.launches.size(), program->plan.launches.size());
    for (std::size_t l = 0; l < compiled->plan.launches.size(); ++l)
        EXPECT_EQ(cuda::shortKernelName(compiled->plan.launches[l].kernel), program->plan.launches[l].kernel);
    runner::Job job;
    job.module = compiled->module;
    job.plan = compiled->plan;
    EXPECT_TRUE(runner::validateJob(job).ok()) << runner::validateJob(job).error().toString();
}

// What the GPU test relies on, checked without a GPU: the CPU reference covers every graph input
// and maps every checked buffer to a computed tensor; as the GPU reference of the optimized program
// (default schedule) every output of that program has a counterpart of the same type and size.
TEST_P(AsWrittenCorpus, ReferencesFitTheGraphAndTheOptimizedProgram)
{
    const std::string name = GetParam().name;
    const std::string source = readTextFile(corpusPath(name));
    auto lifted = liftCudaProgramDetailed(source, name + ".cu");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    const ir::Graph &graph = lifted->program.graph;
    const ir::SizeBindings bindings = testBindings(*lifted, GetParam().small);
    auto program = codegen::asWrittenProgram(source, name + ".cu", *lifted, bindings);
    ASSERT_TRUE(program.ok()) << program.error().toString();
    auto cpu = runner::validateCpuReference(program->plan, codegen::asWrittenCpuReference(*program, graph));
    EXPECT_TRUE(cpu.ok()) << cpu.error().toString();

    ir::SizeBindings sizes;
    for (const auto &s : graph.sizeVars())
        sizes[s] = bindings.at(s);
    schedule::Problem problem{graph, sizes, *ArchDatabase::builtin().arch("sm_90"), schedule::Precision::FP32};
    auto sched = schedule::defaultSchedule(problem);
    ASSERT_TRUE(sched.ok()) << sched.error().toString();
    auto generated = codegen::generateProgram(problem, *sched);
    ASSERT_TRUE(generated.ok()) << generated.error().toString();
    auto plan = codegen::toLaunchPlan(*generated, graph, sizes);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    runner::Job job;
    job.module = {'x'}; // validateJob checks the plans, not the code
    job.plan = *plan;
    job.reference = runner::GpuReference{{'x'}, program->plan, program->bufferForTensor};
    auto st = runner::validateJob(job);
    EXPECT_TRUE(st.ok()) << st.error().toString();
    for (const auto &b : plan->buffers) {
        if (b.role == runner::BufferRole::Input || b.role == runner::BufferRole::Output) {
            EXPECT_NE(job.reference->plan.buffer(job.reference->referenceBufferFor(b.name)), nullptr)
                << name << ": " << b.name;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, AsWrittenCorpus, ::testing::ValuesIn(liftableCorpus()),
                         [](const ::testing::TestParamInfo<CorpusProgram> &info) { return info.param.name; });

TEST(AsWritten, VectorAddByHand)
{
    auto p = asWritten("vector_add", {{"numElements", 700}});
    ASSERT_TRUE(p.ok()) << p.error().toString();
    ASSERT_EQ(p->plan.launches.size(), 1u);
    const auto &l = p->plan.launches[0];
    EXPECT_EQ(l.kernel, "vectorAdd");
    EXPECT_EQ(dims(l), (std::array<unsigned, 6>{3, 1, 1, 256, 1, 1}));
    ASSERT_EQ(l.args.size(), 4u);
    EXPECT_EQ(bufferArg(l, 0), "d_A");
    EXPECT_EQ(bufferArg(l, 2), "d_C");
    EXPECT_EQ(scalar(l, 3), (runner::ScalarArg{ir::DType::I32, 700, 0.0}));
    ASSERT_NE(p->plan.buffer("d_A"), nullptr);
    EXPECT_EQ(p->plan.buffer("d_A")->role, runner::BufferRole::Input);
    EXPECT_EQ(p->plan.buffer("d_C")->role, runner::BufferRole::Output);
    EXPECT_EQ(p->plan.buffer("d_C")->count, 700u);
    EXPECT_EQ(p->plan.buffer("d_C")->dtype, ir::DType::F32);
}

TEST(AsWritten, MatmulByHand)
{
    auto p = asWritten("matmul", {{"M", 40}, {"K", 5}, {"N", 33}});
    ASSERT_TRUE(p.ok()) << p.error().toString();
    ASSERT_EQ(p->plan.launches.size(), 1u);
    const auto &l = p->plan.launches[0];
    EXPECT_EQ(dims(l), (std::array<unsigned, 6>{3, 3, 1, 16, 16, 1}));
    ASSERT_EQ(l.args.size(), 6u);
    EXPECT_EQ(scalar(l, 3).intValue, 40);
    EXPECT_EQ(scalar(l, 4).intValue, 5);
    EXPECT_EQ(scalar(l, 5).intValue, 33);
    EXPECT_EQ(p->plan.buffer("dA")->count, 200u);
    EXPECT_EQ(p->plan.buffer("dC")->count, 40u * 33u);
    // The device code is compiled at these sizes: its #defines are rewritten, nothing else.
    EXPECT_NE(p->source.find("#define M 40"), std::string::npos);
    EXPECT_NE(p->source.find("#define N 33"), std::string::npos);
    EXPECT_NE(p->source.find("#define BLOCK_SIZE 16"), std::string::npos);
}

TEST(AsWritten, SoftmaxThreeByHand)
{
    auto p = asWritten("softmax_three", {{"M", 300}, {"N", 9}});
    ASSERT_TRUE(p.ok()) << p.error().toString();
    ASSERT_EQ(p->plan.launches.size(), 3u);
    EXPECT_EQ(p->plan.launches[0].kernel, "rowMax");
    EXPECT_EQ(dims(p->plan.launches[0]), (std::array<unsigned, 6>{3, 1, 1, 128, 1, 1}));
    EXPECT_EQ(p->plan.launches[1].kernel, "rowExpSum");
    EXPECT_EQ(dims(p->plan.launches[1]), (std::array<unsigned, 6>{3, 1, 1, 128, 1, 1}));
    EXPECT_EQ(p->plan.launches[2].kernel, "normalize");
    EXPECT_EQ(dims(p->plan.launches[2]), (std::array<unsigned, 6>{11, 1, 1, 256, 1, 1}));
    EXPECT_EQ(p->plan.buffer("d_x")->role, runner::BufferRole::Input);
    EXPECT_EQ(p->plan.buffer("d_y")->role, runner::BufferRole::Output);
    EXPECT_EQ(p->plan.buffer("d_max")->count, 300u);
}

TEST(AsWritten, SaxpyIsInPlace)
{
    auto p = asWritten("saxpy", {{"N", 45}});
    ASSERT_TRUE(p.ok()) << p.error().toString();
    const auto &l = p->plan.launches.at(0);
    EXPECT_EQ(scalar(l, 0), (runner::ScalarArg{ir::DType::I32, 45, 0.0}));
    EXPECT_EQ(scalar(l, 1), (runner::ScalarArg{ir::DType::F32, 0, 2.0}));
    EXPECT_EQ(p->plan.buffer("d_y")->role, runner::BufferRole::InOut);
    // d_y starts as one graph input and ends as another tensor; a generated program's buffers of
    // both names map onto it.
    ASSERT_TRUE(p->inputTensorForBuffer.count("d_y"));
    ASSERT_TRUE(p->tensorForBuffer.count("d_y"));
    EXPECT_NE(p->inputTensorForBuffer.at("d_y"), p->tensorForBuffer.at("d_y"));
    EXPECT_EQ(p->bufferForTensor.at(p->inputTensorForBuffer.at("d_y")), "d_y");
    EXPECT_EQ(p->bufferForTensor.at(p->tensorForBuffer.at("d_y")), "d_y");
}

TEST(AsWritten, RefusedLaunchesAreLocatedErrors)
{
    std::size_t checked = 0;
    for (const RefusedProgram &r : refusedCorpus()) {
        const std::string source = readTextFile(corpusPath(r.name));
        auto lifted = liftCudaProgramDetailed(source, r.name + ".cu");
        if (!lifted)
            continue; // nothing lifted, nothing to run as written
        auto p = codegen::asWrittenProgram(source, r.name + ".cu", *lifted, {});
        ASSERT_FALSE(p.ok()) << r.name;
        EXPECT_EQ(p.error().kind, ErrorKind::Unsupported) << r.name << ": " << p.error().toString();
        ASSERT_TRUE(p.error().location.has_value()) << r.name << ": " << p.error().toString();
        EXPECT_GT(p.error().location->line, 0) << r.name;
        std::cout << "  " << r.name << ": " << p.error().toString() << "\n";
        ++checked;
    }
    EXPECT_EQ(checked, refusedCorpus().size());
}

TEST(AsWritten, LaunchInAHostLoopIsRefusedWithItsLine)
{
    const std::string source = R"(
__global__ void twice(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f * x[i];
}
int main()
{
    const int n = 1000;
    float *d_x;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMemset(d_x, 0, n * sizeof(float));
    for (int r = 0; r < 3; ++r)
        twice<<<(n + 255) / 256, 256>>>(d_x, n);
    return 0;
}
)";
    auto p = asWrittenText(source);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().kind, ErrorKind::Unsupported) << p.error().toString();
    ASSERT_TRUE(p.error().location.has_value()) << p.error().toString();
    EXPECT_EQ(p.error().location->line, 14) << p.error().toString();
    EXPECT_NE(p.error().message.find("twice"), std::string::npos) << p.error().toString();
}

TEST(AsWritten, ScalarsFollowTheDeclaredParameterTypes)
{
    const std::string source = R"(
__global__ void scale(float *y, const float *x, double a, unsigned int n, long m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
int main()
{
    const int n = 1000;
    float *h = (float *)malloc(n * sizeof(float));
    float *d_x, *d_y;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    scale<<<(n + 127) / 128, 128>>>(d_y, d_x, 0.5, n, n);
    cudaMemcpy(h, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
    return 0;
}
)";
    auto p = asWrittenText(source);
    ASSERT_TRUE(p.ok()) << p.error().toString();
    const auto &l = p->plan.launches.at(0);
    EXPECT_EQ(dims(l), (std::array<unsigned, 6>{8, 1, 1, 128, 1, 1}));
    EXPECT_EQ(scalar(l, 2), (runner::ScalarArg{ir::DType::F64, 0, 0.5}));
    EXPECT_EQ(scalar(l, 3), (runner::ScalarArg{ir::DType::I32, 1000, 0.0}));
    EXPECT_EQ(scalar(l, 4), (runner::ScalarArg{ir::DType::I64, 1000, 0.0}));
}

TEST(AsWritten, AHostCopyBetweenLaunchesIsRefused)
{
    const std::string source = R"(
__global__ void twice(float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
int main()
{
    const int n = 1000;
    float *h = (float *)malloc(n * sizeof(float));
    float *d_x, *d_y;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    twice<<<(n + 127) / 128, 128>>>(d_y, d_x, n);
    cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    twice<<<(n + 127) / 128, 128>>>(d_y, d_x, n);
    cudaMemcpy(h, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
    return 0;
}
)";
    auto p = asWrittenText(source);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().kind, ErrorKind::Unsupported) << p.error().toString();
    ASSERT_TRUE(p.error().location.has_value()) << p.error().toString();
    EXPECT_EQ(p.error().location->line, 16) << p.error().toString();
}

TEST(AsWritten, TheFileSizesAreTheDefault)
{
    auto p = asWritten("vector_add", {});
    ASSERT_TRUE(p.ok()) << p.error().toString(); // the file's own size
    EXPECT_EQ(p->plan.buffer("d_A")->count, 50000u);
}

TEST(AsWritten, PlanFileRoundTrip)
{
    auto p = asWritten("saxpy", {{"N", 45}});
    ASSERT_TRUE(p.ok()) << p.error().toString();
    runner::PlanFile plan;
    plan.path = "/tmp/x/saxpy.input.plan.json";
    plan.sourcePath = "/tmp/x/saxpy.input.cu";
    plan.defines = p->defines;
    plan.plan = p->plan;
    plan.cpuReference =
        runner::PlanCpuReference{corpusPath("saxpy"), {{"N", 45}}, p->tensorForBuffer, p->inputTensorForBuffer};
    auto back = runner::parsePlanFile(runner::planFileText(plan), plan.path);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    ASSERT_TRUE(back->cpuReference.has_value());
    EXPECT_EQ(back->cpuReference->inputTensorForBuffer, p->inputTensorForBuffer);
    EXPECT_EQ(back->cpuReference->tensorForBuffer, p->tensorForBuffer);
    EXPECT_EQ(back->plan.launches.size(), 1u);
    EXPECT_EQ(back->defines, p->defines);
}
