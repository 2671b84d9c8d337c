// Launch-plan files, kernel-name resolution, and the CPU reference path (NVRTC needs no GPU).
#include "core/ir/Interpreter.h"
#include "core/runner/HostData.h"
#include "core/runner/PlanFile.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace stitch;
using namespace stitch::runner;

namespace {

const std::string kExamples = fixtures::sourceDir() + "/examples/";

std::string read(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

const char *kMinimal = R"({
  "schema": "stitchcuda-plan/1",
  "source": "k.cu",
  "buffers": [{"name": "X", "dtype": "float32", "count": 10}],
  "launches": [{"kernel": "k", "grid": 1, "block": [32], "args": ["X", {"int32": 10}]}]
})";

} // namespace

TEST(PlanFile, ParsesTheExample)
{
    const std::string path = kExamples + "matmul_naive.plan.json";
    auto plan = parsePlanFile(read(path), path);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    EXPECT_EQ(plan->sourcePath, kExamples + "matmul_naive.cu");
    ASSERT_EQ(plan->plan.buffers.size(), 3u);
    EXPECT_EQ(plan->plan.buffers[0].count, 256u * 64u);
    EXPECT_EQ(plan->plan.buffers[2].role, BufferRole::Output);
    ASSERT_EQ(plan->plan.launches.size(), 1u);
    const auto &c = plan->plan.launches[0].config;
    EXPECT_EQ(c.gridX, 4u);
    EXPECT_EQ(c.gridY, 8u);
    EXPECT_EQ(c.gridZ, 1u);
    EXPECT_EQ(c.blockX, 32u);
    EXPECT_EQ(std::get<ScalarArg>(plan->plan.launches[0].args[3].value).intValue, 256);
    ASSERT_TRUE(plan->cpuReference.has_value());
    EXPECT_EQ(plan->cpuReference->graphPath, kExamples + "matmul.te");
    EXPECT_EQ(plan->cpuReference->sizes.at("K"), 64);
    EXPECT_TRUE(plan->measure.profile);
    EXPECT_FALSE(plan->seed.has_value());
}

TEST(PlanFile, SyntaxErrorsAreLocated)
{
    auto plan = parsePlanFile("{\n  \"schema\": \"stitchcuda-plan/1\",\n  \"source\" \"k.cu\"\n}", "bad.json");
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().kind, ErrorKind::Parse);
    ASSERT_TRUE(plan.error().location.has_value());
    EXPECT_EQ(plan.error().location->file, "bad.json");
    EXPECT_EQ(plan.error().location->line, 3);
    EXPECT_GT(plan.error().location->column, 1);
}

TEST(PlanFile, MistakesNameTheMember)
{
    struct Case {
        std::string from, to, needle;
    };
    const Case cases[] = {
        {"\"grid\": 1", "\"grid\": [0]", "launches[0].grid[0]: expected an integer in [1"},
        {"\"grid\": 1", "\"grid\": [1, 2, 3, 4]", "launches[0].grid: expected 1 to 3"},
        {"\"count\": 10", "\"count\": 10, \"colour\": 1", "buffers[0]: unknown member \"colour\""},
        {"\"float32\"", "\"float33\"", "buffers[0].dtype: unknown type"},
        {"{\"int32\": 10}", "{\"int32\": 1.5}", "launches[0].args[1]: expected an integer"},
        {"stitchcuda-plan/1", "stitchcuda-plan/9", "schema: expected"},
        {"\"count\": 10", "\"count\": 10, \"shape\": [10]", "either \"shape\" or \"count\""},
        {"\"source\": \"k.cu\"", "\"source\": \"k.cu\", \"model\": {\"graph\": \"k.te\"}", "model: give \"graph\" and \"schedule\""},
        {"\"source\": \"k.cu\"", "\"source\": \"k.cu\", \"model\": {\"graph\": \"k.te\", \"schedule\": \"s.json\", \"arch\": 1}",
         "model: unknown member \"arch\""},
    };
    for (const auto &c : cases) {
        std::string text = kMinimal;
        text.replace(text.find(c.from), c.from.size(), c.to);
        auto plan = parsePlanFile(text, "p.json");
        ASSERT_FALSE(plan.ok()) << c.to;
        EXPECT_NE(plan.error().message.find(c.needle), std::string::npos) << plan.error().message;
    }
    EXPECT_TRUE(parsePlanFile(kMinimal, "p.json").ok());
}

TEST(PlanFile, ModelNamesTheGeneratingGraphAndSchedule)
{
    std::string text = kMinimal;
    text.replace(text.find("\"source\": \"k.cu\""), 16,
                 "\"source\": \"k.cu\", \"model\": {\"graph\": \"k.te\", \"schedule\": \"k.schedule.json\", \"sizes\": {\"N\": 7}}");
    auto plan = parsePlanFile(text, "/plans/p.json");
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    ASSERT_TRUE(plan->model.has_value());
    EXPECT_EQ(plan->model->graphPath, "/plans/k.te");
    EXPECT_EQ(plan->model->schedulePath, "/plans/k.schedule.json");
    EXPECT_EQ(plan->model->sizes.at("N"), 7);
}

TEST(PlanFile, KernelNamesResolveToMangledNames)
{
    std::vector<cuda::KernelResources> kernels(3);
    kernels[0].name = "scale", kernels[0].mangledName = "_Z5scalePfi";
    kernels[1].name = "over", kernels[1].mangledName = "_Z4overPf";
    kernels[2].name = "over", kernels[2].mangledName = "_Z4overPd";
    LaunchPlan plan;
    plan.launches.resize(2);
    plan.launches[0].kernel = "scale";
    plan.launches[1].kernel = "_Z4overPd";
    ASSERT_TRUE(resolveKernelNames(plan, kernels).ok());
    EXPECT_EQ(plan.launches[0].kernel, "_Z5scalePfi");
    EXPECT_EQ(plan.launches[1].kernel, "_Z4overPd");
    plan.launches[1].kernel = "over";
    auto ambiguous = resolveKernelNames(plan, kernels);
    ASSERT_FALSE(ambiguous.ok());
    EXPECT_NE(ambiguous.error().message.find("overloaded"), std::string::npos);
    plan.launches[1].kernel = "missing";
    auto unknown = resolveKernelNames(plan, kernels);
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().message.find("it has: scale, over, over"), std::string::npos);
}

// The whole CPU-reference path without a GPU: the example plan compiles with NVRTC, its graph
// lifts, and outputs computed on the host from the same seed verify (and a corrupted one fails).
TEST(PlanFile, ExampleBuildsAndItsCpuReferenceVerifiesHostOutputs)
{
    const std::string path = kExamples + "matmul_naive.plan.json";
    auto plan = parsePlanFile(read(path), path);
    ASSERT_TRUE(plan.ok());
    auto request = buildRunRequest(*plan, "sm_90");
    ASSERT_TRUE(request.ok()) << request.error().toString();
    EXPECT_FALSE(request->job.module.empty());
    EXPECT_EQ(request->job.plan.launches[0].kernel, "_Z12matmul_naivePKfS0_Pfiii");
    ASSERT_TRUE(request->cpuReference.has_value());
    ASSERT_TRUE(validateJob(request->job).ok());
    ASSERT_TRUE(validateCpuReference(request->job.plan, *request->cpuReference).ok());

    const LaunchPlan &lp = request->job.plan;
    const std::uint64_t seed = 1234;
    const auto A = toDoubles(initialBytes(lp, lp.buffers[0], seed), ir::DType::F32);
    const auto B = toDoubles(initialBytes(lp, lp.buffers[1], seed), ir::DType::F32);
    Bytes C(lp.buffers[2].bytes());
    for (int i = 0; i < 256; ++i)
        for (int j = 0; j < 128; ++j) {
            float sum = 0;
            for (int k = 0; k < 64; ++k)
                sum += static_cast<float>(A[std::size_t(i) * 64 + k]) * static_cast<float>(B[std::size_t(k) * 128 + j]);
            storeElement(C.data(), ir::DType::F32, std::size_t(i) * 128 + j, sum);
        }
    std::vector<OutputData> outputs = {OutputData{"C", ir::DType::F32, C}};
    auto ok = verifyWithInterpreter(lp, seed, outputs, *request->cpuReference, PrecisionPolicy::FP32);
    ASSERT_TRUE(ok.ok()) << ok.error().toString();
    EXPECT_TRUE(ok->verified);
    EXPECT_EQ(ok->reference, "cpu");
    EXPECT_LT(ok->outputs[0].relativeError, 1e-6);

    storeElement(outputs[0].bytes.data(), ir::DType::F32, 130, 42.0);
    auto bad = verifyWithInterpreter(lp, seed, outputs, *request->cpuReference, PrecisionPolicy::FP32);
    ASSERT_TRUE(bad.ok());
    EXPECT_FALSE(bad->verified);
    ASSERT_FALSE(bad->outputs[0].firstMismatches.empty());
    EXPECT_EQ(bad->outputs[0].firstMismatches[0].coords, (std::vector<std::int64_t>{1, 2}));

    // Another seed draws other inputs: the same outputs no longer verify.
    auto otherSeed = verifyWithInterpreter(lp, seed + 1, {OutputData{"C", ir::DType::F32, C}}, *request->cpuReference, PrecisionPolicy::FP32);
    ASSERT_TRUE(otherSeed.ok());
    EXPECT_FALSE(otherSeed->verified);
}

// A second compile of the same program on a machine with a driver may come from the CUDA compute
// cache, without ptxas's report; plans then find their kernels in the PTX.
TEST(PlanFile, KernelNamesCanComeFromThePtx)
{
    cuda::CompileOptions co;
    co.arch = "sm_90";
    auto compiled = cuda::compile("template <typename T> __global__ void k(T *x, int n) { x[0] = n; }\n"
                                  "template __global__ void k<float>(float *, int);\n"
                                  "extern \"C\" __global__ void plain(int *p) { *p = 1; }\n",
                                  co);
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    auto kernels = kernelsFromPtx(compiled->ptx, "sm_90");
    ASSERT_EQ(kernels.size(), 2u);
    LaunchPlan plan;
    plan.launches.resize(2);
    plan.launches[0].kernel = "k<float>";
    plan.launches[1].kernel = "plain";
    auto st = resolveKernelNames(plan, kernels);
    ASSERT_TRUE(st.ok()) << st.error().toString();
    EXPECT_EQ(plan.launches[0].kernel, "_Z1kIfEvPT_i");
    EXPECT_EQ(plan.launches[1].kernel, "plain");
}

TEST(PlanFile, CompileErrorsComeBackWithDiagnostics)
{
    fixtures::TempDir dir;
    std::ofstream(dir.file("k.cu")) << "__global__ void k(float *x, int n) { x[0] = undefined_name; }\n";
    auto plan = parsePlanFile(kMinimal, dir.file("plan.json"));
    ASSERT_TRUE(plan.ok());
    auto request = buildRunRequest(*plan, "sm_90");
    ASSERT_FALSE(request.ok());
    EXPECT_EQ(request.error().kind, ErrorKind::Compile);
    ASSERT_FALSE(request.error().diagnostics.empty());
    EXPECT_EQ(request.error().diagnostics[0].location.line, 1);
}

namespace {

void expectSameBuffers(const std::vector<BufferSpec> &a, const std::vector<BufferSpec> &b)
{
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].name, b[i].name);
        EXPECT_EQ(a[i].dtype, b[i].dtype);
        EXPECT_EQ(a[i].count, b[i].count);
        EXPECT_EQ(a[i].shape, b[i].shape);
        EXPECT_EQ(a[i].role, b[i].role);
        EXPECT_EQ(a[i].init, b[i].init) << a[i].name;
    }
}

void expectSameLaunches(const std::vector<KernelLaunch> &a, const std::vector<KernelLaunch> &b)
{
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].kernel, b[i].kernel);
        EXPECT_EQ(a[i].config.gridX, b[i].config.gridX);
        EXPECT_EQ(a[i].config.blockY, b[i].config.blockY);
        EXPECT_EQ(a[i].config.dynamicSharedBytes, b[i].config.dynamicSharedBytes);
        ASSERT_EQ(a[i].args.size(), b[i].args.size());
        for (std::size_t k = 0; k < a[i].args.size(); ++k)
            EXPECT_EQ(a[i].args[k].value, b[i].args[k].value) << a[i].kernel << " argument " << k;
        EXPECT_EQ(a[i].library, b[i].library) << "launch " << i;
    }
}

} // namespace

TEST(PlanFile, WrittenPlansReadBackTheSame)
{
    // Every member the format has, paths inside and outside the plan's folder.
    PlanFile p;
    p.path = "/work/gen/out/matmul.plan.json";
    p.sourcePath = "/work/gen/out/matmul.cu";
    p.defines = {"TILE=16"};
    BufferSpec a{"A", ir::DType::F32, 12, {3, 4}, BufferRole::Input, {BufferInit::Kind::Random, -2.0, 3.0, ""}};
    BufferSpec b{"B", ir::DType::F32, 12, {}, BufferRole::InOut, {BufferInit::Kind::CopyOf, -1.0, 1.0, "A"}};
    BufferSpec c{"C", ir::DType::F64, 9, {3, 3}, BufferRole::Output, {}};
    BufferSpec s{"S", ir::DType::F32, 5, {}, BufferRole::Scratch, {BufferInit::Kind::Zero, -1.0, 1.0, ""}};
    p.plan.buffers = {a, b, c, s};
    KernelLaunch l;
    l.kernel = "matmul";
    l.config.gridX = 7;
    l.config.blockX = 256;
    l.config.blockY = 2;
    l.config.dynamicSharedBytes = 50688;
    l.args = {KernelArg::buffer("A"), KernelArg::scalar(ir::DType::I32, std::int64_t{4097}),
              KernelArg::scalar(ir::DType::F32, 0.5)};
    LibraryCall gemm;
    gemm.math = LibraryCall::Math::TF32;
    gemm.a = "A";
    gemm.b = "B";
    gemm.c = "C";
    gemm.m = 3;
    gemm.n = 3;
    gemm.k = 4;
    gemm.batch = 2;
    gemm.transA = true;
    gemm.strideB = 0;
    gemm.strideC = 9;
    p.plan.launches = {l, KernelLaunch::libraryCall(gemm)};
    p.measure.repeats = 7;
    p.measure.flushL2 = false;
    p.measure.metrics = true;
    p.measure.metricsKernels = {"matmul"};
    p.measure.settleMs = 250;
    p.precision = PrecisionPolicy::TF32;
    p.deadlineMs = 1234;
    p.seed = 42;
    p.model = PlanFile::Model{"/work/examples/matmul.te", "/work/gen/out/matmul.schedule.json", {{"M", 3}, {"N", 3}}};
    PlanCpuReference cpu;
    cpu.graphPath = "/work/examples/matmul.te";
    cpu.sizes = {{"M", 3}, {"K", 4}};
    cpu.tensorForBuffer = {{"A", "A"}};
    p.cpuReference = cpu;

    const std::string text = planFileText(p);
    EXPECT_NE(text.find("\"source\": \"matmul.cu\""), std::string::npos) << "inside the folder: relative\n" << text;
    EXPECT_NE(text.find("\"graph\": \"/work/examples/matmul.te\""), std::string::npos) << "outside: absolute\n" << text;
    auto back = parsePlanFile(text, p.path);
    ASSERT_TRUE(back.ok()) << back.error().toString() << "\n" << text;
    EXPECT_EQ(back->sourcePath, p.sourcePath);
    EXPECT_EQ(back->defines, p.defines);
    expectSameBuffers(back->plan.buffers, p.plan.buffers);
    expectSameLaunches(back->plan.launches, p.plan.launches);
    EXPECT_EQ(back->measure, p.measure);
    EXPECT_EQ(back->precision, p.precision);
    EXPECT_EQ(back->deadlineMs, p.deadlineMs);
    EXPECT_EQ(back->seed, p.seed);
    ASSERT_TRUE(back->model && back->cpuReference);
    EXPECT_EQ(back->model->graphPath, p.model->graphPath);
    EXPECT_EQ(back->model->schedulePath, p.model->schedulePath);
    EXPECT_EQ(back->model->sizes, p.model->sizes);
    EXPECT_EQ(back->cpuReference->graphPath, cpu.graphPath);
    EXPECT_EQ(back->cpuReference->sizes, cpu.sizes);
    EXPECT_EQ(back->cpuReference->tensorForBuffer, cpu.tensorForBuffer);
    EXPECT_FALSE(back->gpuReference);

    // The original program as the reference instead.
    p.cpuReference.reset();
    PlanGpuReference gpu;
    gpu.sourcePath = "/work/gen/out/original/naive.cu";
    gpu.defines = {"N=3"};
    gpu.plan.buffers = {a, c};
    gpu.plan.launches = {l};
    gpu.bufferMap = {{"C", "C"}};
    p.gpuReference = gpu;
    auto again = parsePlanFile(planFileText(p), p.path);
    ASSERT_TRUE(again.ok()) << again.error().toString();
    ASSERT_TRUE(again->gpuReference);
    EXPECT_EQ(again->gpuReference->sourcePath, gpu.sourcePath);
    EXPECT_EQ(again->gpuReference->defines, gpu.defines);
    expectSameBuffers(again->gpuReference->plan.buffers, gpu.plan.buffers);
    expectSameLaunches(again->gpuReference->plan.launches, gpu.plan.launches);
    EXPECT_EQ(again->gpuReference->bufferMap, gpu.bufferMap);
}

namespace {

// cuBLAS beside a kernel, and a plan of the library call alone (docs/RUNNER.md, "Library calls").
const char *kWithCublas = R"({
  "schema": "stitchcuda-plan/1",
  "source": "k.cu",
  "buffers": [{"name": "A", "dtype": "float32", "shape": [8, 4]}, {"name": "B", "dtype": "float32", "shape": [4, 6]},
              {"name": "C", "dtype": "float32", "shape": [8, 6], "role": "output"}],
  "launches": [{"kernel": "k", "grid": 1, "block": [32], "args": ["C"]},
               {"library": "cublas", "routine": "sgemm", "math": "tf32", "a": "A", "b": "B", "c": "C",
                "m": 8, "n": 6, "k": 4, "batch": 1, "transB": false, "strideA": 32}]
})";

} // namespace

TEST(PlanFile, LibraryCallsAreLaunchesOfTheirOwn)
{
    auto plan = parsePlanFile(kWithCublas, "/work/p.json");
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    ASSERT_EQ(plan->plan.launches.size(), 2u);
    EXPECT_FALSE(plan->plan.launches[0].isLibraryCall());
    ASSERT_TRUE(plan->plan.launches[1].isLibraryCall());
    const LibraryCall &call = *plan->plan.launches[1].library;
    EXPECT_EQ(call.routine, LibraryCall::Routine::CublasSgemm);
    EXPECT_EQ(call.math, LibraryCall::Math::TF32);
    EXPECT_EQ(call.a, "A");
    EXPECT_EQ(call.c, "C");
    EXPECT_EQ(call.m, 8);
    EXPECT_EQ(call.n, 6);
    EXPECT_EQ(call.k, 4);
    EXPECT_EQ(call.strideA, 32);
    EXPECT_FALSE(call.strideB);
    Job job;
    job.module = {'x'};
    job.plan = plan->plan;
    job.plan.launches[0].kernel = "_Z1kPf";
    EXPECT_TRUE(validateJob(job).ok()) << validateJob(job).error().message;

    struct Case {
        std::string from, to, needle;
    };
    const Case cases[] = {
        {"\"routine\": \"sgemm\"", "\"routine\": \"dgemm\"", "launches[1]: unknown library routine \"cublas.dgemm\""},
        {"\"math\": \"tf32\"", "\"math\": \"fp16\"", "launches[1].math: expected fp32 or tf32"},
        {"\"m\": 8", "\"m\": 0", "launches[1].m: expected an integer in [1"},
        {"\"m\": 8, ", "", "launches[1]: a library call needs \"m\""},
        {"\"transB\": false", "\"transB\": 1", "launches[1].transB: expected true or false"},
        {"\"strideA\": 32", "\"strideA\": -1", "launches[1].strideA: expected an integer in [0"},
        {"\"batch\": 1", "\"batch\": 1, \"grid\": 1", "launches[1]: unknown member \"grid\""},
        {"\"source\": \"k.cu\",", "", "plan: missing \"source\""},
    };
    for (const auto &c : cases) {
        std::string text = kWithCublas;
        ASSERT_NE(text.find(c.from), std::string::npos) << c.from;
        text.replace(text.find(c.from), c.from.size(), c.to);
        auto bad = parsePlanFile(text, "p.json");
        ASSERT_FALSE(bad.ok()) << c.to;
        EXPECT_NE(bad.error().message.find(c.needle), std::string::npos) << bad.error().message;
    }
}

TEST(PlanFile, APlanOfLibraryCallsAloneNeedsNoSource)
{
    std::string text = kWithCublas;
    text.erase(text.find("\"source\": \"k.cu\","), std::string("\"source\": \"k.cu\",").size());
    text.erase(text.find("{\"kernel\""), text.find("{\"library\"") - text.find("{\"kernel\""));
    auto plan = parsePlanFile(text, "/work/p.json");
    ASSERT_TRUE(plan.ok()) << plan.error().toString() << "\n" << text;
    EXPECT_TRUE(plan->sourcePath.empty());
    EXPECT_FALSE(plan->plan.hasKernelLaunches());

    // Nothing to compile: the job has no module, and is valid as it is.
    auto request = buildRunRequest(*plan, "sm_90");
    ASSERT_TRUE(request.ok()) << request.error().toString();
    EXPECT_TRUE(request->job.module.empty());
    EXPECT_TRUE(validateJob(request->job).ok()) << validateJob(request->job).error().message;

    // Written back: no "source", the call with its members at their defaults left out.
    plan->path = "/work/q.json";
    plan->plan.launches[0].library->strideA.reset();
    plan->plan.launches[0].library->math = LibraryCall::Math::FP32;
    const std::string written = planFileText(*plan);
    EXPECT_EQ(written.find("\"source\""), std::string::npos) << written;
    EXPECT_EQ(written.find("\"math\""), std::string::npos) << written;
    EXPECT_EQ(written.find("\"batch\""), std::string::npos) << written;
    auto back = parsePlanFile(written, plan->path);
    ASSERT_TRUE(back.ok()) << back.error().toString() << "\n" << written;
    expectSameLaunches(back->plan.launches, plan->plan.launches);
}
