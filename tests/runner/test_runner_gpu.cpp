// GPU tests of the runner (label gpu): planted faulty kernels each come back as the right typed
// error and the next job succeeds on a fresh worker; correct kernels verify against the CPU
// interpreter and against the original program; timing twice agrees within the reported spread;
// CUPTI reports every kernel; hardware metrics tell coalesced from strided loads, conflicting from
// conflict-free shared memory and divergent from uniform branches; cuBLAS SGEMMs as plan steps
// verify against the CPU interpreter, in program order among kernels. They skip where the worker
// reports no GPU.
#include "core/cuda/NvrtcCompiler.h"
#include "core/runner/PlanFile.h"
#include "core/runner/Runner.h"
#include "core/runner/WorkerClient.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

using namespace stitch;
using namespace stitch::runner;

namespace {

const char *kKernels = R"(
#define IDX (blockIdx.x * blockDim.x + threadIdx.x)
extern "C" __global__ void add(const float *a, const float *b, float *c, int n)
{ int i = IDX; if (i < n) c[i] = a[i] + b[i]; }
extern "C" __global__ void add4(const float *a, const float *b, float *c, int n)
{ int i = IDX * 4; for (int k = 0; k < 4; ++k) if (i + k < n) c[i + k] = a[i + k] + b[i + k]; }
extern "C" __global__ void sub(const float *a, const float *b, float *c, int n)
{ int i = IDX; if (i < n) c[i] = a[i] - b[i]; }
extern "C" __global__ void add_skip_last(const float *a, const float *b, float *c, int n)
{ int i = IDX; if (i < n - 1) c[i] = a[i] + b[i]; }
extern "C" __global__ void oob_write(const float *a, const float *b, float *c, int n)
{ int i = IDX; if (i < n) c[i + (1ll << 36)] = a[i]; }
// The offset (n % 16 bytes, 3 here) is known only at run time, so the compiler keeps the 16-byte load.
extern "C" __global__ void misaligned(const float *a, const float *b, float *c, int n)
{ int i = IDX; const float4 *p = reinterpret_cast<const float4 *>(reinterpret_cast<const char *>(a) + (n & 15));
  if (i < n / 4 - 1) { float4 v = p[i]; c[i] = v.x + v.w; } }
extern "C" __global__ void spin(const float *a, const float *b, float *c, int n)
{ volatile float *v = c; while (v[0] != 12345.0f) { } }
extern "C" __global__ void trap(const float *a, const float *b, float *c, int n)
{ if (IDX == 0) __trap(); }
extern "C" __global__ void scale(float *c, float s, int n)
{ int i = IDX; if (i < n) c[i] *= s; }
extern "C" __global__ void racy_sum(const int *a, int *out, int n)
{ int i = IDX; if (i < n) { int v = out[0]; out[0] = v + a[i]; } }
extern "C" __global__ void atomic_sum(const int *a, int *out, int n)
{ int i = IDX; if (i < n) atomicAdd(out, a[i]); }
)";

// Kernels whose hardware counters are known in advance (RunnerGpu.Metrics*).
const char *kMetricKernels = R"(
#define IDX (blockIdx.x * blockDim.x + threadIdx.x)
// Each warp loads 32 consecutive floats: 128 bytes, 4 sectors per request.
extern "C" __global__ void m_copy(const float *in, float *out, int n)
{ int i = IDX; if (i < n) out[i] = in[i]; }
// Lane i loads in[32 i]: every lane its own 32-byte sector, 32 sectors per request.
extern "C" __global__ void m_stride(const float *in, float *out, int n)
{ int i = IDX; if (i < n) out[i] = in[(long long)i * 32]; }
// One warp per block. Each lane reads its neighbour's element, so the compiler cannot forward the
// store to the load. s[32 t] puts all 32 lanes on bank 0: 32-way conflicts; s[t] has none.
extern "C" __global__ void m_smem_conflict(const float *in, float *out, int n)
{ __shared__ float s[32 * 32]; int t = threadIdx.x, i = blockIdx.x * 32 + t;
  s[t * 32] = in[i]; __syncwarp(); out[i] = s[((t + 1) & 31) * 32]; }
extern "C" __global__ void m_smem_free(const float *in, float *out, int n)
{ __shared__ float s[32 * 32]; int t = threadIdx.x, i = blockIdx.x * 32 + t;
  s[t] = in[i]; __syncwarp(); out[i] = s[(t + 1) & 31]; }
// A loop whose trip count is the lane index: at every iteration one lane leaves, so the loop's
// branch splits the warp. In m_uniform the count is the block's, the same for every lane.
extern "C" __global__ void m_divergent(const float *in, float *out, int n)
{ int i = IDX; float v = in[i]; int iters = threadIdx.x & 31;
  for (int k = 0; k < iters; ++k) v = v * 1.0001f + 0.5f; out[i] = v; }
extern "C" __global__ void m_uniform(const float *in, float *out, int n)
{ int i = IDX; float v = in[i]; int iters = blockIdx.x & 31;
  for (int k = 0; k < iters; ++k) v = v * 1.0001f + 0.5f; out[i] = v; }
)";

class RunnerGpu : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        s_client = new WorkerClient(options());
        auto info = s_client->start();
        if (!info) {
            s_skipReason = info.error().message;
            return;
        }
        s_arch = info->device.arch;
        cuda::CompileOptions co;
        co.arch = s_arch;
        co.fileName = "runner_kernels.cu";
        auto compiled = cuda::compile(kKernels, co);
        ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
        s_module = compiled->cubin;
        co.fileName = "metric_kernels.cu";
        auto metricKernels = cuda::compile(kMetricKernels, co);
        ASSERT_TRUE(metricKernels.ok()) << metricKernels.error().toString();
        s_metricModule = metricKernels->cubin;
    }
    static void TearDownTestSuite()
    {
        delete s_client;
        s_client = nullptr;
    }
    void SetUp() override
    {
        if (!s_skipReason.empty())
            GTEST_SKIP() << "no GPU: " << s_skipReason;
    }

    static WorkerOptions options()
    {
        WorkerOptions o;
        o.workerPath = fixtures::workerPath();
        return o;
    }
    static Job job(const std::string &kernel, std::uint64_t n = 100003)
    {
        Job j = fixtures::addJob(kernel, n, s_module);
        j.measure.time = false;
        return j;
    }
    static Result<JobResult> submit(const Job &j) { return s_client->submit(j, s_nextId++); }

    /// The fault comes back typed and named; the worker is replaced and the next job succeeds.
    static void expectFaultThenRecovery(const Job &bad, ErrorKind kind, const std::string &needle)
    {
        const int before = s_client->workersStarted();
        auto r = submit(bad);
        ASSERT_FALSE(r.ok()) << "expected " << errorKindName(kind);
        EXPECT_EQ(r.error().kind, kind) << r.error().toString();
        EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
        std::cout << "  [" << errorKindName(r.error().kind) << "] " << r.error().message.substr(0, 300) << "\n";
        auto next = submit(job("add"));
        ASSERT_TRUE(next.ok()) << next.error().toString();
        EXPECT_EQ(s_client->workersStarted(), before + 1) << "the next job runs on a fresh worker";
    }

    static inline WorkerClient *s_client = nullptr;
    static inline std::string s_skipReason;
    static inline std::string s_arch;
    static inline std::vector<char> s_module;
    static inline std::vector<char> s_metricModule;
    static inline std::uint64_t s_nextId = 1;
};

Job sumJob(const std::vector<char> &module, const std::string &kernel, int n)
{
    Job j;
    j.module = module;
    j.plan.buffers = {BufferSpec{"a", ir::DType::I32, std::uint64_t(n), {}, BufferRole::Input, {BufferInit::Kind::Random, 1, 9, {}}},
                      BufferSpec{"out", ir::DType::I32, 1, {}, BufferRole::Output, {BufferInit::Kind::Zero, 0, 0, {}}}};
    KernelLaunch l;
    l.kernel = kernel;
    l.config.blockX = 256;
    l.config.gridX = static_cast<unsigned>((n + 255) / 256);
    l.args = {KernelArg::buffer("a"), KernelArg::buffer("out"), KernelArg::scalar(ir::DType::I32, std::int64_t{n})};
    j.plan.launches = {l};
    j.measure.time = false;
    j.precision = PrecisionPolicy::Exact;
    return j;
}

} // namespace

TEST_F(RunnerGpu, CorrectKernelVerifiesAgainstTheCpuInterpreter)
{
    Runner runner(options(), nullptr);
    Job j = job("add");
    j.measure.time = true;
    auto r = runner.run(RunRequest{j, fixtures::addReference(100003), false});
    ASSERT_TRUE(r.ok()) << r.error().toString();
    ASSERT_TRUE(r->verification.has_value());
    EXPECT_TRUE(r->verification->verified);
    EXPECT_EQ(r->verification->reference, "cpu");
    EXPECT_EQ(r->verification->outputs[0].unwrittenCount, 0u);
    EXPECT_LT(r->verification->outputs[0].relativeError, 1e-7);
    ASSERT_TRUE(r->timing.has_value());
    EXPECT_GT(r->timing->medianMs, 0.0);
    EXPECT_GT(r->timing->l2FlushBytes, 0u);
    EXPECT_FALSE(r->device.name.empty());
}

TEST_F(RunnerGpu, CorrectKernelVerifiesAgainstTheOriginalProgram)
{
    Job j = job("add4");
    j.plan.launches[0].config.gridX = static_cast<unsigned>((100003 / 4 + 256) / 256);
    GpuReference ref;
    ref.module = s_module;
    ref.plan = job("add").plan;
    j.reference = ref;
    auto r = submit(j);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    ASSERT_TRUE(r->verification.has_value());
    EXPECT_EQ(r->verification->reference, "gpu");
    EXPECT_TRUE(r->verification->verified);
    EXPECT_EQ(r->verification->outputs[0].relativeError, 0.0);
}

TEST_F(RunnerGpu, ExamplePlanCompilesRunsAndVerifies)
{
    const std::string path = fixtures::sourceDir() + "/examples/matmul_naive.plan.json";
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    auto plan = parsePlanFile(text.str(), path);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    auto request = buildRunRequest(*plan, s_arch);
    ASSERT_TRUE(request.ok()) << request.error().toString();
    Runner runner(options(), nullptr);
    auto r = runner.run(std::move(*request));
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_TRUE(r->verification->verified) << r->verification->outputs[0].relativeError;
    ASSERT_TRUE(r->profile.has_value());
    EXPECT_TRUE(r->profile->available) << r->profile->message;
}

TEST_F(RunnerGpu, WrongKernelIsAWrongAnswerResultWithMismatches)
{
    Runner runner(options(), nullptr);
    auto r = runner.run(RunRequest{job("sub"), fixtures::addReference(100003), false});
    ASSERT_TRUE(r.ok()) << "a wrong answer is a result: " << r.error().toString();
    EXPECT_FALSE(r->verification->verified);
    EXPECT_GT(r->verification->outputs[0].mismatchCount, 100000u);
    ASSERT_FALSE(r->verification->outputs[0].firstMismatches.empty());
    EXPECT_EQ(r->verification->outputs[0].firstMismatches[0].index, 0u);
}

TEST_F(RunnerGpu, UnwrittenElementIsCaughtByThePoison)
{
    Runner runner(options(), nullptr);
    auto r = runner.run(RunRequest{job("add_skip_last"), fixtures::addReference(100003), false});
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_FALSE(r->verification->verified);
    EXPECT_EQ(r->verification->outputs[0].unwrittenCount, 1u);
    EXPECT_EQ(r->verification->outputs[0].firstMismatches.at(0).index, 100002u);
}

TEST_F(RunnerGpu, OutOfBoundsWriteIsAFault)
{
    expectFaultThenRecovery(job("oob_write"), ErrorKind::Fault, "CUDA_ERROR_ILLEGAL_ADDRESS");
}

TEST_F(RunnerGpu, MisalignedVectorLoadIsAFault)
{
    expectFaultThenRecovery(job("misaligned"), ErrorKind::Fault, "CUDA_ERROR_MISALIGNED_ADDRESS");
}

TEST_F(RunnerGpu, TrapIsAFaultNamingTheLaunch)
{
    expectFaultThenRecovery(job("trap"), ErrorKind::Fault, "launch 1 of 1 (kernel 'trap'");
}

TEST_F(RunnerGpu, InfiniteLoopTimesOut)
{
    Job j = job("spin");
    j.deadlineMs = 3000;
    expectFaultThenRecovery(j, ErrorKind::Timeout, "ran past its deadline of 3000 ms");
}

TEST_F(RunnerGpu, OutOfMemoryIsTyped)
{
    Job j = job("add");
    j.plan.buffers[2].count = std::uint64_t{1} << 38; // 1 TiB
    expectFaultThenRecovery(j, ErrorKind::OutOfMemory, "buffer 'C'");
}

TEST_F(RunnerGpu, RaceIsAWrongAnswer)
{
    Job j = sumJob(s_module, "racy_sum", 1 << 20);
    GpuReference ref;
    ref.module = s_module;
    ref.plan = sumJob(s_module, "atomic_sum", 1 << 20).plan;
    j.reference = ref;
    auto r = submit(j);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_FALSE(r->verification->verified);
    const auto &m = r->verification->outputs[0].firstMismatches.at(0);
    std::cout << "  racy sum " << m.got << ", atomic sum " << m.expected << "\n";
    EXPECT_LT(m.got, m.expected);
}

TEST_F(RunnerGpu, RefusedLaunchKeepsTheWorker)
{
    ASSERT_TRUE(submit(job("add")).ok());
    const int before = s_client->workersStarted();
    Job j = job("add");
    j.plan.launches[0].config.blockX = 2048;
    auto r = submit(j);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Launch) << r.error().toString();
    EXPECT_TRUE(submit(job("add")).ok());
    EXPECT_EQ(s_client->workersStarted(), before);
}

TEST_F(RunnerGpu, TimingTheSameProgramTwiceAgreesWithinTheSpread)
{
    Job j = job("add", std::uint64_t{1} << 26); // 3 x 256 MiB: about 0.2 ms on an H200
    j.measure.verify = false;
    j.measure.time = true;
    j.measure.warmup = 5;
    j.measure.repeats = 30;
    auto a = submit(j);
    auto b = submit(j);
    ASSERT_TRUE(a.ok() && b.ok()) << (a ? b.error().toString() : a.error().toString());
    const Timing &ta = *a->timing, &tb = *b->timing;
    std::cout << "  first  median " << ta.medianMs << " ms [" << ta.minMs << ", " << ta.maxMs << "]\n"
              << "  second median " << tb.medianMs << " ms [" << tb.minMs << ", " << tb.maxMs << "]\n";
    EXPECT_LE(std::abs(ta.medianMs - tb.medianMs), std::max(ta.spreadMs(), tb.spreadMs()) + 1e-3);
    EXPECT_EQ(ta.samplesMs.size(), 30u);
    EXPECT_LE(ta.minMs, ta.medianMs);
    EXPECT_LE(ta.medianMs, ta.maxMs);
}

TEST_F(RunnerGpu, CuptiReportsEveryKernel)
{
    Job j = job("add");
    KernelLaunch s;
    s.kernel = "scale";
    s.config = j.plan.launches[0].config;
    s.args = {KernelArg::buffer("C"), KernelArg::scalar(ir::DType::F32, 2.0), KernelArg::scalar(ir::DType::I32, std::int64_t{100003})};
    j.plan.launches.push_back(s);
    j.measure.verify = false;
    j.measure.profile = true;
    auto r = submit(j);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    ASSERT_TRUE(r->profile.has_value());
    ASSERT_TRUE(r->profile->available) << r->profile->message;
    ASSERT_EQ(r->profile->kernels.size(), 2u);
    EXPECT_EQ(r->profile->kernels[0].name, "add");
    EXPECT_EQ(r->profile->kernels[1].name, "scale");
    for (const auto &k : r->profile->kernels) {
        EXPECT_GT(k.registers, 0);
        EXPECT_GT(k.durationUs, 0.0);
        EXPECT_EQ(k.block[0], 256u);
        EXPECT_EQ(k.grid[0], j.plan.launches[0].config.gridX);
    }
}

namespace {

/// in (inCount floats, random) -> out (n floats): each kernel one launch of n threads in blocks of
/// `block`, hardware metrics on, nothing verified or timed.
Job metricJob(const std::vector<char> &module, const std::vector<std::string> &kernels, std::uint64_t n,
              std::uint64_t inCount, unsigned block = 256)
{
    Job j;
    j.module = module;
    j.plan.buffers = {BufferSpec{"in", ir::DType::F32, inCount, {}, BufferRole::Input, {}},
                      BufferSpec{"out", ir::DType::F32, n, {}, BufferRole::Output, {}}};
    for (const auto &k : kernels) {
        KernelLaunch l;
        l.kernel = k;
        l.config.blockX = block;
        l.config.gridX = static_cast<unsigned>((n + block - 1) / block);
        l.args = {KernelArg::buffer("in"), KernelArg::buffer("out"), KernelArg::scalar(ir::DType::I32, static_cast<std::int64_t>(n))};
        j.plan.launches.push_back(l);
    }
    j.measure.verify = false;
    j.measure.time = false;
    j.measure.metrics = true;
    return j;
}

double metric(const KernelMetrics &k, const std::string &name)
{
    if (auto it = k.values.find(name); it != k.values.end())
        return it->second;
    if (auto it = k.derived.find(name); it != k.derived.end())
        return it->second;
    ADD_FAILURE() << k.name << " #" << k.launch << " has no " << name;
    return std::numeric_limits<double>::quiet_NaN();
}

void printMetrics(const MetricsReport &m)
{
    std::cout << "  chip " << m.chip << ", " << m.passes << " passes" << (m.message.empty() ? "" : ", ") << m.message << "\n";
    for (const auto &k : m.kernels) {
        std::cout << "  " << k.name << " #" << k.launch << " (range '" << k.range << "')\n";
        for (const auto &[name, value] : k.values)
            std::cout << "    " << name << " = " << value << "\n";
        for (const auto &[name, value] : k.derived)
            std::cout << "    [" << name << "] = " << value << "\n";
    }
}

/// The job's metrics, available, with one entry per launch named by kernel and launch index. The
/// reference points into `r`: keep the result in a variable, never pass a temporary.
const MetricsReport &expectMetrics(const Result<JobResult> &r, const Job &j)
{
    static const MetricsReport none;
    EXPECT_TRUE(r.ok()) << r.error().toString();
    if (!r.ok() || !r->metrics) {
        ADD_FAILURE() << "no metrics in the result";
        return none;
    }
    const MetricsReport &m = *r->metrics;
    printMetrics(m);
    EXPECT_TRUE(m.available) << m.message;
    EXPECT_TRUE(m.dropped.empty()) << m.message;
    EXPECT_GE(m.passes, 1);
    EXPECT_EQ(m.kernels.size(), j.plan.launches.size()) << m.message;
    for (std::size_t i = 0; i < std::min(m.kernels.size(), j.plan.launches.size()); ++i) {
        EXPECT_EQ(m.kernels[i].name, j.plan.launches[i].kernel);
        EXPECT_EQ(m.kernels[i].launch, static_cast<int>(i));
    }
    return m;
}

const MetricsReport &expectMetrics(Result<JobResult> &&, const Job &) = delete; // would dangle

} // namespace

TEST_F(RunnerGpu, MetricsOfACoalescedCopy)
{
    // 256 MiB each way, five times the H200's L2, so the reads come from DRAM whatever is cached.
    const std::uint64_t n = std::uint64_t{1} << 26;
    Job j = metricJob(s_metricModule, {"m_copy"}, n, n);
    j.measure.time = true; // metrics come after timing and leave it intact
    j.measure.repeats = 5;
    auto r = submit(j);
    const MetricsReport &m = expectMetrics(r, j);
    if (m.kernels.size() != 1)
        return;
    ASSERT_TRUE(r->timing.has_value());
    EXPECT_EQ(r->timing->samplesMs.size(), 5u);
    const KernelMetrics &k = m.kernels[0];
    const double bytes = static_cast<double>(n * 4);
    EXPECT_NEAR(metric(k, "globalLoadSectorsPerRequest"), 4.0, 0.1);
    EXPECT_NEAR(metric(k, "globalStoreSectorsPerRequest"), 4.0, 0.1);
    EXPECT_NEAR(metric(k, "dram__bytes_read.sum"), bytes, 0.1 * bytes);
    EXPECT_GT(metric(k, "dram__bytes_write.sum"), 0.5 * bytes);
    EXPECT_GT(metric(k, "sm__warps_active.avg.pct_of_peak_sustained_active"), 10.0);
    EXPECT_LE(metric(k, "sm__warps_active.avg.pct_of_peak_sustained_active"), 100.0);
    EXPECT_GT(metric(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed"), 10.0);
    EXPECT_GT(metric(k, "gpu__time_duration.sum"), 0.0);
    EXPECT_GT(metric(k, "smsp__inst_executed.sum"), static_cast<double>(n / 32));
    EXPECT_NEAR(metric(k, "smsp__sass_inst_executed_op_global_ld.sum"), static_cast<double>(n / 32), 0.01 * static_cast<double>(n / 32));
}

TEST_F(RunnerGpu, MetricsOfAStridedLoad)
{
    const std::uint64_t n = std::uint64_t{1} << 20;
    Job j = metricJob(s_metricModule, {"m_stride"}, n, n * 32);
    const auto r = submit(j); // keep the result alive: the report is a reference into it
    const MetricsReport &m = expectMetrics(r, j);
    if (m.kernels.size() != 1)
        return;
    EXPECT_NEAR(metric(m.kernels[0], "globalLoadSectorsPerRequest"), 32.0, 1.0);
    EXPECT_NEAR(metric(m.kernels[0], "globalStoreSectorsPerRequest"), 4.0, 0.1);
}

TEST_F(RunnerGpu, MetricsOfSharedMemoryBankConflictsPerLaunch)
{
    // Two launches in one program: the ranges must land on the right launch.
    const std::uint64_t n = std::uint64_t{1} << 20;
    Job j = metricJob(s_metricModule, {"m_smem_free", "m_smem_conflict"}, n, n, 32);
    const auto r = submit(j); // keep the result alive: the report is a reference into it
    const MetricsReport &m = expectMetrics(r, j);
    if (m.kernels.size() != 2)
        return;
    const double freeConflicts = metric(m.kernels[0], "sharedBankConflicts");
    const double conflicts = metric(m.kernels[1], "sharedBankConflicts");
    EXPECT_GT(metric(m.kernels[1], "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), 0.0);
    EXPECT_GT(metric(m.kernels[1], "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), 0.0);
    EXPECT_GT(conflicts, static_cast<double>(n)) << "about 31 extra wavefronts per warp-wide access";
    EXPECT_LE(freeConflicts, 0.01 * conflicts) << "the conflict-free layout shows about none";
    EXPECT_GT(metric(m.kernels[1], "sharedLoadWavefrontsPerInstruction"), 8.0);
    EXPECT_NEAR(metric(m.kernels[0], "sharedLoadWavefrontsPerInstruction"), 1.0, 0.1);
}

TEST_F(RunnerGpu, MetricsOfBranchEfficiency)
{
    const std::uint64_t n = std::uint64_t{1} << 20;
    Job j = metricJob(s_metricModule, {"m_divergent", "m_uniform"}, n, n);
    const auto r = submit(j); // keep the result alive: the report is a reference into it
    const MetricsReport &m = expectMetrics(r, j);
    if (m.kernels.size() != 2)
        return;
    const double divergent = metric(m.kernels[0], "smsp__sass_average_branch_targets_threads_uniform.pct");
    const double uniform = metric(m.kernels[1], "smsp__sass_average_branch_targets_threads_uniform.pct");
    EXPECT_LT(divergent, 90.0);
    EXPECT_GT(uniform, 99.0);
    EXPECT_LE(uniform, 100.0 + 1e-9);
    EXPECT_GT(metric(m.kernels[1], "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"), 0.0);
}

TEST_F(RunnerGpu, MetricsOfChosenKernelsOnly)
{
    // All three launches run (the program is whole); only the chosen kernel's two launches are
    // profiled, each in a range-profiler window of its own around the launch between them, and
    // only their counters come back, each under its own launch index.
    const std::uint64_t n = std::uint64_t{1} << 20;
    Job j = metricJob(s_metricModule, {"m_smem_conflict", "m_smem_free", "m_smem_conflict"}, n, n, 32);
    j.measure.metricsKernels = {"m_smem_conflict"};
    const auto r = submit(j);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    ASSERT_TRUE(r->metrics.has_value());
    const MetricsReport &m = *r->metrics;
    EXPECT_TRUE(m.available) << m.message;
    ASSERT_EQ(m.kernels.size(), 2u) << m.message;
    EXPECT_EQ(m.kernels[0].launch, 0);
    EXPECT_EQ(m.kernels[1].launch, 2);
    for (const KernelMetrics &k : m.kernels) {
        EXPECT_EQ(k.name, "m_smem_conflict");
        EXPECT_GT(metric(k, "sharedLoadWavefrontsPerInstruction"), 8.0) << "launch " << k.launch;
    }
    EXPECT_EQ(m.message.find("ranges for"), std::string::npos) << "one range per profiled launch: " << m.message;
    EXPECT_NE(m.message.find("1 launches of kernels not chosen left out"), std::string::npos) << m.message;
}

// cuBLAS as a plan step (LibraryCall, dlopen'ed by the worker): single and strided-batched SGEMMs,
// transposed operands, FP32 and TF32 tensor ops, each verified against the CPU interpreter, timed,
// and cuBLAS's own kernels in CUPTI's trace.
TEST_F(RunnerGpu, CublasSgemmVerifiesAgainstTheCpuInterpreter)
{
    Runner runner(options(), nullptr);
    std::vector<fixtures::Sgemm> shapes = {fixtures::Sgemm{512, 384, 256}, fixtures::Sgemm{257, 129, 65, true, false},
                                           fixtures::Sgemm{96, 80, 48, false, true, 6, true},
                                           fixtures::Sgemm{64, 64, 64, true, true, 4, false}};
    fixtures::Sgemm tf32{512, 512, 512}; // the CPU interpreter checks it: 1.3e8 multiply-adds
    tf32.math = LibraryCall::Math::TF32;
    shapes.push_back(tf32);
    for (const fixtures::Sgemm &s : shapes) {
        Job j = fixtures::sgemmJob(s);
        j.measure.profile = true;
        const std::string what = j.plan.launches[0].library->describe();
        auto r = runner.run(RunRequest{j, fixtures::sgemmReference(s), false});
        ASSERT_TRUE(r.ok()) << what << ": " << r.error().toString();
        ASSERT_TRUE(r->verification.has_value());
        EXPECT_TRUE(r->verification->verified)
            << what << ": relative error " << r->verification->outputs.at(0).relativeError;
        EXPECT_EQ(r->verification->outputs.at(0).unwrittenCount, 0u) << what;
        EXPECT_EQ(r->library.rfind("cuBLAS ", 0), 0u) << r->library;
        ASSERT_TRUE(r->timing.has_value());
        EXPECT_GT(r->timing->medianMs, 0.0);
        ASSERT_TRUE(r->profile.has_value());
        if (r->profile->available) {
            EXPECT_FALSE(r->profile->kernels.empty()) << "cuBLAS's kernels are traced: " << r->profile->message;
        }
        std::cout << "  " << what << ": relative error " << r->verification->outputs.at(0).relativeError << ", median "
                  << r->timing->medianMs << " ms, " << r->library
                  << (r->profile->kernels.empty() ? std::string() : ", kernel " + r->profile->kernels[0].name) << "\n";
    }
}

// A library call runs in its place among the kernels, on the same stream: C = A B, then a kernel
// halves C. Had the kernel run first, cuBLAS would have overwritten its work.
TEST_F(RunnerGpu, CublasRunsInProgramOrderAmongKernels)
{
    const fixtures::Sgemm s{200, 120, 72};
    Job j = fixtures::sgemmJob(s);
    j.module = s_module;
    KernelLaunch half;
    half.kernel = "scale";
    half.config.blockX = 256;
    half.config.gridX = static_cast<unsigned>((s.m * s.n + 255) / 256);
    half.args = {KernelArg::buffer("C"), KernelArg::scalar(ir::DType::F32, 0.5),
                 KernelArg::scalar(ir::DType::I32, s.m * s.n)};
    j.plan.launches.push_back(half);
    j.measure.profile = true;
    j.measure.metrics = true;

    ir::GraphBuilder b("sgemm_half");
    const ir::Expr M = ir::sizeVar("M"), N = ir::sizeVar("N"), K = ir::sizeVar("K");
    const ir::Tensor A = b.input("A", ir::DType::F32, {M, K}), B = b.input("B", ir::DType::F32, {K, N});
    const ir::Tensor C = b.output("C", ir::DType::F32, {M, N});
    const ir::Expr i = ir::var("i"), jv = ir::var("j"), k = ir::var("k");
    b.compute(C, {i, jv}, ir::reduceSum({{"k", K}}), A(i, k) * B(k, jv) * 0.5);
    CpuReference ref;
    auto graph = b.build();
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    ref.graph = *graph;
    ref.sizes = {{"M", s.m}, {"N", s.n}, {"K", s.k}};

    Runner runner(options(), nullptr);
    auto r = runner.run(RunRequest{j, ref, false});
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_TRUE(r->verification->verified) << r->verification->outputs.at(0).relativeError;
    // CUPTI's activity trace holds cuBLAS's kernels and ours; the hardware counters only ours.
    ASSERT_TRUE(r->profile.has_value());
    if (r->profile->available) {
        EXPECT_GE(r->profile->kernels.size(), 2u);
        EXPECT_NE(r->profile->message.find("1 library calls"), std::string::npos) << r->profile->message;
    }
    ASSERT_TRUE(r->metrics.has_value());
    if (r->metrics->available) {
        ASSERT_EQ(r->metrics->kernels.size(), 1u) << r->metrics->message;
        EXPECT_EQ(r->metrics->kernels[0].name, "scale");
        EXPECT_EQ(r->metrics->kernels[0].launch, 1);
        EXPECT_NE(r->metrics->message.find("library calls not profiled"), std::string::npos) << r->metrics->message;
    } else {
        std::cout << "  hardware metrics unavailable: " << r->metrics->message << "\n";
    }
}

// Without cuBLAS the job is a clear Unsupported error naming what was tried; the worker stays.
TEST_F(RunnerGpu, MissingCublasIsUnsupportedAndKeepsTheWorker)
{
    WorkerOptions o = options();
    o.environment = {{"STITCHCUDA_LIBCUBLAS", "/nonexistent/libcublas.so.13"}};
    WorkerClient client(o);
    auto r = client.submit(fixtures::sgemmJob({}), 1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Unsupported) << r.error().toString();
    EXPECT_NE(r.error().message.find("cuBLAS not found (tried /nonexistent/libcublas.so.13"), std::string::npos)
        << r.error().message;
    auto next = client.submit(job("add"), 2);
    ASSERT_TRUE(next.ok()) << next.error().toString();
    EXPECT_EQ(client.workersStarted(), 1);
}
