// Library calls in launch plans (cuBLAS SGEMM, core/runner/Cublas.h) without a GPU: the job JSON
// and its hash, validation, the row-major to column-major mapping checked by running cuBLAS's
// semantics on the host, loading libcublas (found, or a clear error naming what was tried), and the
// fake worker answering a library job end to end through the Runner and the CPU interpreter.
#include "core/runner/Cublas.h"
#include "core/runner/JobJson.h"
#include "core/runner/Runner.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

using namespace stitch;
using namespace stitch::runner;

namespace {

LibraryCall firstCall(const Job &job)
{
    return *job.plan.launches.at(0).library;
}

Status validWith(const std::function<void(Job &)> &change)
{
    Job job = fixtures::sgemmJob({});
    change(job);
    return validateJob(job);
}

std::string problem(const Status &st)
{
    return st ? std::string("(valid)") : st.error().message;
}

/// Sets an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char *name, const char *value) : m_name(name)
    {
        if (const char *old = std::getenv(name))
            m_old = old;
        ::setenv(name, value, 1);
    }
    ~ScopedEnv()
    {
        if (m_old)
            ::setenv(m_name, m_old->c_str(), 1);
        else
            ::unsetenv(m_name);
    }

private:
    const char *m_name;
    std::optional<std::string> m_old;
};

WorkerOptions fakeWorker()
{
    WorkerOptions o;
    o.workerPath = STITCHCUDA_FAKE_WORKER_PATH;
    return o;
}

} // namespace

TEST(LibraryCall, JobRoundTripKeepsEveryMember)
{
    fixtures::Sgemm s;
    s.transA = true;
    s.batch = 3;
    s.sharedB = true;
    s.math = LibraryCall::Math::TF32;
    Job job = fixtures::sgemmJob(s);
    job.plan.launches[0].library->strideC = 48 * 40 + 8; // a gap between C's matrices
    job.plan.buffers[2].count += 16;
    ASSERT_TRUE(validateJob(job).ok()) << problem(validateJob(job));

    BlobSink sink;
    const nlohmann::json j = jobToJson(job, sink);
    const nlohmann::json &step = j["plan"]["launches"][0];
    EXPECT_EQ(step["library"], "cublas");
    EXPECT_EQ(step["routine"], "sgemm");
    EXPECT_EQ(step["math"], "tf32");
    EXPECT_FALSE(step.contains("kernel"));
    EXPECT_FALSE(step.contains("strideA")) << "unset strides stay unset (packed)";
    EXPECT_EQ(step["strideB"], 0);
    const auto bytes = sink.takeBytes();
    auto back = jobFromJson(nlohmann::json::parse(j.dump()), BlobSource(bytes.data(), bytes.size()));
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_TRUE(back->module.empty());
    ASSERT_TRUE(back->plan.launches.at(0).isLibraryCall());
    EXPECT_EQ(firstCall(*back), firstCall(job));
    EXPECT_EQ(planToJson(back->plan), planToJson(job.plan));
    EXPECT_EQ(programHash(*back), programHash(job));
}

TEST(LibraryCall, TheProgramHashSeesTheCall)
{
    const Job base = fixtures::sgemmJob({});
    for (auto change : std::vector<std::function<void(LibraryCall &)>>{
             [](LibraryCall &c) { c.math = LibraryCall::Math::TF32; }, [](LibraryCall &c) { c.k = 12; },
             [](LibraryCall &c) { c.transB = true; }, [](LibraryCall &c) { c.strideA = 48 * 24; }}) {
        Job other = base;
        change(*other.plan.launches[0].library);
        EXPECT_NE(programHash(other), programHash(base)) << planToJson(other.plan).dump();
    }
    // A kernel-only plan keeps the JSON (and the cached measurements' keys) it had before.
    const Job add = fixtures::addJob("add", 64);
    EXPECT_FALSE(planToJson(add.plan)["launches"][0].contains("library"));
}

TEST(LibraryCall, UnknownRoutinesAndMathAreParseErrors)
{
    Job job = fixtures::sgemmJob({});
    BlobSink sink;
    for (auto [member, value] :
         {std::pair{"routine", "dgemm"}, std::pair{"library", "rocblas"}, std::pair{"math", "fp16"}}) {
        nlohmann::json j = jobToJson(job, sink);
        j["plan"]["launches"][0][member] = value;
        auto back = jobFromJson(j, BlobSource(sink.bytes().data(), sink.bytes().size()));
        ASSERT_FALSE(back.ok()) << member;
        EXPECT_EQ(back.error().kind, ErrorKind::Parse);
        EXPECT_NE(back.error().message.find(value), std::string::npos) << back.error().message;
    }
}

TEST(LibraryCall, ValidationNamesTheProblem)
{
    EXPECT_TRUE(validWith([](Job &) {}).ok()) << "a plan of library calls needs no module";
    struct Case {
        const char *needle;
        std::function<void(Job &)> change;
    };
    const std::vector<Case> cases = {
        {"unknown buffer 'X' for B", [](Job &j) { j.plan.launches[0].library->b = "X"; }},
        {"A ('A') is int32; sgemm takes float32", [](Job &j) { j.plan.buffers[0].dtype = ir::DType::I32; }},
        {"A ('A') holds 1151 elements; the call reads 1152 (48 x 24)", [](Job &j) { j.plan.buffers[0].count -= 1; }},
        {"B ('B') holds 960 elements; the call reads 1920 (24 x 40, batch 2, stride 960)",
         [](Job &j) {
             j.plan.launches[0].library->batch = 2;
             j.plan.buffers[0].count *= 2;
             j.plan.buffers[2].count *= 2;
         }},
        {"C ('A') is also an operand", [](Job &j) { j.plan.launches[0].library->c = "A"; }},
        {"the batch's C matrices overlap",
         [](Job &j) {
             auto &c = *j.plan.launches[0].library;
             c.batch = 2;
             c.strideA = c.strideB = 0;
             c.strideC = 10;
         }},
        {"M, N, K and the batch must be positive", [](Job &j) { j.plan.launches[0].library->k = 0; }},
        {"32-bit integers", [](Job &j) { j.plan.launches[0].library->m = std::int64_t{1} << 31; }},
        {"a library call names no kernel", [](Job &j) { j.plan.launches[0].kernel = "add"; }},
        {"the job has no module (CUBIN)",
         [](Job &j) { j.plan.launches.push_back(fixtures::addJob("add", 8).plan.launches[0]); }},
    };
    for (const Case &c : cases) {
        const Status st = validWith(c.change);
        ASSERT_FALSE(st.ok()) << c.needle;
        EXPECT_EQ(st.error().kind, ErrorKind::InvalidArgument);
        EXPECT_NE(st.error().message.find(c.needle), std::string::npos) << st.error().message;
        if (std::string(c.needle).find("CUBIN") == std::string::npos) {
            EXPECT_NE(st.error().message.find("launch 1 (cuBLAS sgemm"), std::string::npos) << st.error().message;
        }
    }
}

TEST(LibraryCall, DescribeNamesShapeTransposesAndMath)
{
    LibraryCall c = firstCall(fixtures::sgemmJob({}));
    EXPECT_EQ(c.describe(), "cuBLAS sgemm 48x40x24 (FP32)");
    c.batch = 4;
    c.transA = true;
    c.math = LibraryCall::Math::TF32;
    EXPECT_EQ(c.describe(), "cuBLAS sgemm batch 4 of 48x40x24, A transposed (TF32)");
    EXPECT_DOUBLE_EQ(c.flops(), 2.0 * 48 * 40 * 24 * 4);
}

// The column-major trick, checked on the host: what cuBLAS computes with the arguments the worker
// passes equals the row-major product the plan means, for every transposition and batched.
TEST(LibraryCall, TheColumnMajorArgumentsComputeTheRowMajorProduct)
{
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (bool transA : {false, true})
        for (bool transB : {false, true})
            for (std::int64_t batch : {1, 3})
                for (bool sharedB : {false, true}) {
                    if (batch == 1 && sharedB)
                        continue;
                    fixtures::Sgemm s{7, 5, 3, transA, transB, batch, sharedB};
                    const Job job = fixtures::sgemmJob(s);
                    ASSERT_TRUE(validateJob(job).ok()) << problem(validateJob(job));
                    const LibraryCall call = firstCall(job);
                    std::vector<float> a(job.plan.buffers[0].count), b(job.plan.buffers[1].count),
                        c(job.plan.buffers[2].count, std::nanf(""));
                    for (float &v : a)
                        v = uniform(rng);
                    for (float &v : b)
                        v = uniform(rng);
                    const CublasGemmArguments g = cublasGemmArguments(call);
                    EXPECT_EQ(g.first, "B");
                    EXPECT_EQ(g.second, "A");
                    EXPECT_EQ(g.m, s.n);
                    EXPECT_EQ(g.n, s.m);
                    emulateCublasSgemm(g, call.math, b.data(), a.data(), c.data());
                    for (std::int64_t p = 0; p < batch; ++p)
                        for (std::int64_t i = 0; i < s.m; ++i)
                            for (std::int64_t j = 0; j < s.n; ++j) {
                                double want = 0;
                                for (std::int64_t k = 0; k < s.k; ++k) {
                                    const float av = a[static_cast<std::size_t>(p * s.m * s.k +
                                                                                (transA ? k * s.m + i : i * s.k + k))];
                                    const std::int64_t bBase = sharedB ? 0 : p * s.k * s.n;
                                    const float bv =
                                        b[static_cast<std::size_t>(bBase + (transB ? j * s.k + k : k * s.n + j))];
                                    want += double(av) * double(bv);
                                }
                                const float got = c[static_cast<std::size_t>(p * s.m * s.n + i * s.n + j)];
                                ASSERT_NEAR(got, want, 1e-5)
                                    << "transA " << transA << " transB " << transB << " batch " << batch << " shared "
                                    << sharedB << " at " << p << "," << i << "," << j;
                            }
                }
}

TEST(LibraryCall, Tf32KeepsTenMantissaBits)
{
    EXPECT_EQ(roundToTf32(1.0f), 1.0f);
    EXPECT_EQ(roundToTf32(1.0f + std::ldexp(1.0f, -10)), 1.0f + std::ldexp(1.0f, -10)); // representable
    EXPECT_EQ(roundToTf32(1.0f + std::ldexp(1.0f, -12)), 1.0f);                         // below half a step
    EXPECT_EQ(roundToTf32(1.0f + std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -10)); // a tie: away from zero
    EXPECT_EQ(roundToTf32(-1.0f - std::ldexp(1.0f, -11)), -1.0f - std::ldexp(1.0f, -10));
    EXPECT_TRUE(std::isnan(roundToTf32(std::nanf(""))));
}

TEST(Cublas, CandidatesAreTheOverrideAloneWhenSet)
{
    {
        ScopedEnv env("STITCHCUDA_LIBCUBLAS", "/opt/mine/libcublas.so");
        EXPECT_EQ(cublasCandidatePaths(), std::vector<std::string>{"/opt/mine/libcublas.so"});
    }
    ScopedEnv env("STITCHCUDA_LIBCUBLAS", "");
    const auto paths = cublasCandidatePaths();
    EXPECT_NE(std::find(paths.begin(), paths.end(), "libcublas.so.13"), paths.end());
    EXPECT_NE(std::find(paths.begin(), paths.end(), "libcublas.so.12"), paths.end());
    EXPECT_NE(std::find(paths.begin(), paths.end(), "/usr/local/cuda/lib64/libcublas.so.12"), paths.end());
}

TEST(Cublas, MissingLibraryNamesEveryPathTried)
{
    auto lib = openCublas({"/nonexistent/libcublas.so.13", "/nonexistent/libcublas.so.12"});
    ASSERT_FALSE(lib.ok());
    EXPECT_EQ(lib.error().kind, ErrorKind::Unsupported);
    for (const char *needle :
         {"cuBLAS not found", "/nonexistent/libcublas.so.13", "/nonexistent/libcublas.so.12", "STITCHCUDA_LIBCUBLAS"})
        EXPECT_NE(lib.error().message.find(needle), std::string::npos) << lib.error().message;
}

TEST(Cublas, ALibraryWithoutTheEntryPointsIsRefused)
{
    auto lib = openCublas({"libm.so.6"});
    ASSERT_FALSE(lib.ok());
    EXPECT_NE(lib.error().message.find("libm.so.6 lacks cublasCreate_v2"), std::string::npos) << lib.error().message;
}

TEST(Cublas, TheToolkitsLibraryLoadsWithoutAGpu)
{
    ScopedEnv env("STITCHCUDA_LIBCUBLAS", "");
    auto lib = openCublas();
    if (!lib)
        GTEST_SKIP() << lib.error().message;
    EXPECT_FALSE((*lib)->path().empty());
    EXPECT_NE((*lib)->statusName(7).find("INVALID_VALUE"), std::string::npos) << (*lib)->statusName(7);
}

// The fake worker answers a library job as cuBLAS would (on the host); the Runner verifies it
// against the CPU interpreter of the product, so the mapping is checked end to end.
TEST(LibraryCall, TheFakeWorkerRunsLibraryCallsVerifiedByTheInterpreter)
{
    Runner runner(fakeWorker(), nullptr);
    std::vector<fixtures::Sgemm> shapes = {fixtures::Sgemm{}, fixtures::Sgemm{33, 17, 9, true, true},
                                           fixtures::Sgemm{16, 8, 12, false, true, 4, true}};
    fixtures::Sgemm tf32;
    tf32.math = LibraryCall::Math::TF32;
    tf32.k = 256;
    shapes.push_back(tf32);
    for (const fixtures::Sgemm &s : shapes) {
        auto r = runner.run(RunRequest{fixtures::sgemmJob(s), fixtures::sgemmReference(s), false});
        ASSERT_TRUE(r.ok()) << r.error().toString();
        ASSERT_TRUE(r->verification.has_value());
        EXPECT_TRUE(r->verification->verified) << firstCall(fixtures::sgemmJob(s)).describe() << ": relative error "
                                               << r->verification->outputs.at(0).relativeError;
        EXPECT_EQ(r->verification->outputs.at(0).unwrittenCount, 0u);
        EXPECT_EQ(r->library, "cuBLAS emulated by the fake worker");
        ASSERT_TRUE(r->timing.has_value());
    }
}

// TF32 tensor ops are not FP32: under FP32's bound the same product fails (the check is real).
TEST(LibraryCall, Tf32IsOutsideTheFp32Bound)
{
    Runner runner(fakeWorker(), nullptr);
    fixtures::Sgemm s;
    s.math = LibraryCall::Math::TF32;
    s.k = 256;
    Job job = fixtures::sgemmJob(s);
    job.precision = PrecisionPolicy::FP32;
    auto r = runner.run(RunRequest{job, fixtures::sgemmReference(s), false});
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_FALSE(r->verification->verified);
    EXPECT_GT(r->verification->outputs.at(0).relativeError, 1e-5);
}

// A transpose flag the graph does not have is a wrong answer, not a silent pass.
TEST(LibraryCall, AWrongTransposeIsAWrongAnswer)
{
    Runner runner(fakeWorker(), nullptr);
    fixtures::Sgemm s{32, 32, 32};
    Job job = fixtures::sgemmJob(s);
    job.plan.launches[0].library->transB = true;
    auto r = runner.run(RunRequest{job, fixtures::sgemmReference(s), false});
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_FALSE(r->verification->verified);
}

TEST(LibraryCall, AnInvalidCallIsRefusedBeforeAnyWorkerRuns)
{
    Runner runner(fakeWorker(), nullptr);
    Job job = fixtures::sgemmJob({});
    job.plan.launches[0].library->c = "B";
    auto r = runner.run(RunRequest{job, std::nullopt, false});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument) << r.error().toString();
    EXPECT_EQ(runner.client().workersStarted(), 0);
}
