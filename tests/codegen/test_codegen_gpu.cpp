// Generated programs on the GPU: every sampled legal schedule of every program, at odd and
// aligned sizes, runs in the worker and matches the CPU interpreter (fresh random inputs,
// poisoned outputs). Skips without a GPU.
#include "CodegenFixtures.h"

#include "core/codegen/CudaExpr.h"
#include "core/runner/Runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>

using namespace stitch;
using namespace codegen_fixtures;

namespace {

class CodegenGpu : public ::testing::TestWithParam<std::size_t> {
protected:
    static void SetUpTestSuite()
    {
        runner::WorkerOptions o;
        o.workerPath = STITCHCUDA_WORKER_PATH;
        s_runner = new runner::Runner(o, nullptr);
        auto info = s_runner->device();
        if (!info)
            s_skip = info.error().message;
        else
            s_arch = info->device.arch;
    }
    static void TearDownTestSuite()
    {
        delete s_runner;
        s_runner = nullptr;
    }
    void SetUp() override
    {
        if (!s_skip.empty())
            GTEST_SKIP() << "no GPU: " << s_skip;
    }
    /// Whether one schedule's program, generated, compiled for this GPU and run in the worker
    /// on fresh random inputs with poisoned outputs, matches the CPU interpreter; `detail` gives
    /// each output's relative error, unwritten and mismatching elements (the first ones too).
    struct Check {
        bool verified = false;
        std::string detail;
    };
    static Result<Check> matchesInterpreter(const schedule::Problem &problem, const schedule::Schedule &s,
                                            runner::PrecisionPolicy precision, int deadlineMs = 10000)
    {
        auto p = codegen::generateProgram(problem, s);
        if (!p)
            return p.error();
        auto compiled = compileProgram(*p, s_arch);
        if (!compiled)
            return compiled.error();
        auto plan = codegen::toLaunchPlan(*p, problem.graph, problem.sizes);
        if (!plan)
            return plan.error();
        runner::RunRequest request;
        request.job.module = compiled->cubin;
        request.job.plan = *plan;
        request.job.measure.time = false;
        request.job.precision = precision;
        request.job.deadlineMs = deadlineMs;
        request.cpuReference = runner::CpuReference{problem.graph, problem.sizes, {}};
        auto r = s_runner->run(std::move(request));
        if (!r)
            return r.error();
        if (!r->verification)
            return makeError(ErrorKind::WrongAnswer, "the run has no verification");
        Check check{r->verification->verified, {}};
        for (const auto &o : r->verification->outputs) {
            check.detail += o.buffer + " rel " + errorText(o.relativeError) + " unwritten " +
                            std::to_string(o.unwrittenCount) + " mismatches " + std::to_string(o.mismatchCount);
            for (const auto &m : o.firstMismatches)
                check.detail +=
                    " [" + std::to_string(m.index) + "] " + std::to_string(m.got) + " vs " + std::to_string(m.expected);
            check.detail += "; ";
        }
        return check;
    }
    /// One schedule matches the interpreter within the precision's bound (its errors printed).
    static void expectVerified(const std::string &what, const schedule::Problem &problem, const schedule::Schedule &s,
                               runner::PrecisionPolicy precision, int deadlineMs = 10000)
    {
        auto check = matchesInterpreter(problem, s, precision, deadlineMs);
        ASSERT_TRUE(check.ok()) << what << ": " << check.error().toString();
        EXPECT_TRUE(check->verified) << what << ": " << check->detail;
        std::cout << "  " << what << ": " << check->detail << "\n";
    }
    /// The default schedule of `graph` over rows x cols with the long-row decisions `d` (and
    /// reduce=shuffle): legal, and its answers against the interpreter's with the FP32 bound.
    static void expectRowScheduleVerified(const ir::Graph &graph, const ArchLimits &arch, int rows, int cols,
                                          const LongRowDecisions &d)
    {
        const ir::SizeBindings sizes{{"M", rows}, {"N", cols}};
        schedule::Problem problem{graph, sizes, arch, schedule::Precision::FP32};
        auto s = schedule::defaultSchedule(problem);
        ASSERT_TRUE(s.ok()) << s.error().toString();
        auto &g = s->groups.front();
        setLongRowDecisions(g, d);
        g.set("reduce", 0);
        const std::string what =
            graph.name() + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " + schedule::describe(g);
        auto valid = schedule::validateSchedule(*s, problem);
        ASSERT_TRUE(valid.ok()) << what << ": " << valid.error().toString();
        expectVerified(what, problem, *s, runner::PrecisionPolicy::FP32);
    }
    /// Every schedule matches the interpreter within the TF32 bound.
    static void expectTf32Verified(const std::string &name, const schedule::Problem &problem,
                                   const std::vector<schedule::Schedule> &schedules)
    {
        for (const auto &s : schedules)
            expectVerified(name + " " + schedule::describe(s.groups.front()), problem, s, runner::PrecisionPolicy::TF32,
                           120000);
    }
    static inline runner::Runner *s_runner = nullptr;
    static inline std::string s_skip, s_arch;
};

} // namespace

TEST_P(CodegenGpu, SampledSchedulesMatchTheInterpreter)
{
    const Case c = cases()[GetParam()];
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    schedule::Problem problem{c.graph, c.sizes, *arch, schedule::Precision::FP32};
    const auto schedules = sampleSchedules(problem, 24);
    ASSERT_GE(schedules.size(), 2u);
    int checked = 0;
    for (const auto &s : schedules) {
        const std::string what = c.name + " " + schedule::describe(s.groups.front());
        auto check = matchesInterpreter(problem, s, runner::PrecisionPolicy::FP32);
        ASSERT_TRUE(check.ok()) << what << ": " << check.error().toString();
        EXPECT_TRUE(check->verified) << what << ": " << check->detail;
        ++checked;
    }
    std::cout << "  " << c.name << ": " << checked << " schedules verified\n";
}

INSTANTIATE_TEST_SUITE_P(Programs, CodegenGpu, ::testing::Range<std::size_t>(0, 8),
                         [](const ::testing::TestParamInfo<std::size_t> &info) { return cases()[info.param].name; });

namespace {

/// The TF32 tensor-core GEMMs (math=tf32_mma): precision tf32, verified with the TF32 bound.
class CodegenGpuTf32 : public CodegenGpu {};

} // namespace

TEST_P(CodegenGpuTf32, TensorCoreGemmsMatchTheInterpreter)
{
    const Case c = tf32Cases()[GetParam()];
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    if (!arch->tensorCoresTf32)
        GTEST_SKIP() << s_arch << " has no TF32 tensor cores";
    schedule::Problem problem{c.graph, c.sizes, *arch, schedule::Precision::TF32};
    auto base = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
    ASSERT_TRUE(base.ok()) << base.error().toString();
    ASSERT_EQ(base->groups.front().value("math"), 1) << "the mma.sync default under tf32";
    std::vector<schedule::Schedule> schedules = {*base};
    for (auto &s : tf32Variants(problem, *base))
        schedules.push_back(std::move(s));
    // The CPU interpreter's reference costs seconds per GFLOP: the large shapes run the default and
    // one variant (split K where it is legal), the small ones every variant.
    const double macs = double(c.sizes.at("M")) * double(c.sizes.at("N")) * double(c.sizes.at("K"));
    if (macs > 2e8 && schedules.size() > 2)
        schedules.resize(2);
    expectTf32Verified(c.name, problem, schedules);
}

INSTANTIATE_TEST_SUITE_P(Tf32, CodegenGpuTf32, ::testing::Range<std::size_t>(0, 8),
                         [](const ::testing::TestParamInfo<std::size_t> &info) { return tf32Cases()[info.param].name; });

namespace {

/// The warpgroup tensor-core GEMMs (math=tf32_wgmma, sm_90a): precision tf32, verified with the TF32
/// bound, every legal variant of wgmmaVariants on the small shapes and two on the large ones.
class CodegenGpuWgmma : public CodegenGpu {};

} // namespace

TEST_P(CodegenGpuWgmma, WarpgroupMmaGemmsMatchTheInterpreter)
{
    const Case c = tf32Cases()[GetParam()];
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    if (arch->computeMajor != 9 || arch->computeMinor != 0)
        GTEST_SKIP() << s_arch << " has no wgmma (sm_90a)";
    schedule::Problem problem{c.graph, c.sizes, *arch, schedule::Precision::TF32};
    auto base = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
    ASSERT_TRUE(base.ok()) << base.error().toString();
    auto schedules = wgmmaVariants(problem, *base);
    ASSERT_GE(schedules.size(), 2u) << c.name;
    const double macs = double(c.sizes.at("M")) * double(c.sizes.at("N")) * double(c.sizes.at("K"));
    if (macs > 2e8)
        schedules.resize(2);
    // The default under tf32 on sm_90 (warpgroup MMAs where an operand's rows run along k).
    auto fastest = schedule::defaultSchedule(problem);
    ASSERT_TRUE(fastest.ok()) << fastest.error().toString();
    if (fastest->groups.front().value("math") == 2)
        schedules.insert(schedules.begin(), *fastest);
    expectTf32Verified(c.name, problem, schedules);
}

INSTANTIATE_TEST_SUITE_P(Wgmma, CodegenGpuWgmma, ::testing::Range<std::size_t>(0, 8),
                         [](const ::testing::TestParamInfo<std::size_t> &info) { return tf32Cases()[info.param].name; });

namespace {

/// Row kernels that prefetch the next row into shared memory by cp.async (prefetch=shared):
/// clusters and single blocks, rows that do not fill the last cluster's steps, and rows whose
/// length leaves the last elements of a block's span unused.
class CodegenGpuRowPrefetch : public CodegenGpu {};

struct RowPrefetchConfig {
    int rows, cols, threadsPerRow, cluster, steps;
};

} // namespace

TEST_P(CodegenGpuRowPrefetch, SharedMemoryPrefetchMatchesTheInterpreter)
{
    const bool layerNorm = GetParam() == 1;
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    if (arch->computeMajor < 8)
        GTEST_SKIP() << s_arch << " has no cp.async";
    std::vector<RowPrefetchConfig> configs = {{37, 8192, 1024, 1, 2}, {5, 16384, 256, 1, 4}};
    if (arch->computeMajor >= 9)
        configs.insert(configs.end(), {{37, 65552, 512, 4, 8}, {19, 262144, 512, 8, 16}, {20, 262144, 1024, 8, 4}});
    const ir::Graph graph = layerNorm ? ir::makeLayerNormRows() : ir::makeSoftmaxRows();
    for (const RowPrefetchConfig &cfg : configs) {
        const ir::SizeBindings sizes{{"M", cfg.rows}, {"N", cfg.cols}};
        schedule::Problem problem{graph, sizes, *arch, schedule::Precision::FP32};
        auto s = schedule::defaultSchedule(problem);
        ASSERT_TRUE(s.ok()) << s.error().toString();
        auto &g = s->groups.front();
        setLongRowDecisions(g, {.threadsPerRow = cfg.threadsPerRow, .cluster = cfg.cluster, .rowSteps = cfg.steps,
                                .prefetch = 2});
        g.set("reduce", 0);
        const std::string what = graph.name() + " " + std::to_string(cfg.rows) + "x" + std::to_string(cfg.cols) + " " +
                                 schedule::describe(g);
        ASSERT_TRUE(schedule::validateSchedule(*s, problem).ok()) << what;
        expectVerified(what, problem, *s, runner::PrecisionPolicy::FP32);
    }
}

INSTANTIATE_TEST_SUITE_P(Rows, CodegenGpuRowPrefetch, ::testing::Range<std::size_t>(0, 2),
                         [](const ::testing::TestParamInfo<std::size_t> &info) {
                             return std::string(info.param == 1 ? "layernorm" : "softmax");
                         });

namespace {

/// Row kernels with softmax's one-exchange combine (combine=online), the FMA exp (exp=fast) and
/// several blocks per SM (min_blocks): clusters of 16 and 4 over long rows, rows split over warps,
/// several rows per block and row steps, odd row lengths (scalar loads, idle lanes); layer norm
/// with min_blocks. Random inputs against the interpreter with the FP32 bound.
class CodegenGpuRowCombine : public CodegenGpu {};

struct RowCombineConfig {
    bool softmax;
    int rows, cols, threadsPerRow, rowsPerBlock, cluster, steps, vector, online, fastExp, minBlocks;
};

} // namespace

TEST_F(CodegenGpuRowCombine, OnlineAndFastExpMatchTheInterpreter)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    std::vector<RowCombineConfig> configs = {
        {true, 37, 301, 32, 4, 1, 1, 1, 1, 1, 1},     {true, 37, 301, 256, 1, 1, 1, 1, 1, 0, 2},
        {true, 5, 16384, 512, 1, 1, 2, 4, 1, 1, 1},   {true, 64, 8192, 256, 1, 1, 1, 4, 0, 1, 3},
        {false, 19, 130, 64, 2, 1, 1, 2, 0, 0, 4},
    };
    if (arch->computeMajor >= 9)
        configs.insert(configs.end(), {{true, 19, 262144, 128, 1, 16, 1, 4, 1, 1, 3},
                                       {true, 20, 262144, 128, 1, 16, 1, 4, 0, 1, 3},
                                       {true, 37, 65552, 256, 1, 4, 2, 4, 1, 0, 2},
                                       {false, 19, 262144, 128, 1, 16, 1, 4, 0, 0, 3}});
    for (const RowCombineConfig &cfg : configs) {
        const ir::Graph graph = cfg.softmax ? ir::makeSoftmaxRows() : ir::makeLayerNormRows();
        const ir::SizeBindings sizes{{"M", cfg.rows}, {"N", cfg.cols}};
        schedule::Problem problem{graph, sizes, *arch, schedule::Precision::FP32};
        auto s = schedule::defaultSchedule(problem);
        ASSERT_TRUE(s.ok()) << s.error().toString();
        auto &g = s->groups.front();
        const DecisionChanges changes = {{"threads_per_row", cfg.threadsPerRow}, {"rows_per_block", cfg.rowsPerBlock},
                                         {"cluster", cfg.cluster},               {"row_steps", cfg.steps},
                                         {"vector", cfg.vector},                 {"cache", 1},
                                         {"prefetch", 0},                        {"reduce", 0},
                                         {"combine", cfg.online},                {"exp", cfg.fastExp},
                                         {"min_blocks", cfg.minBlocks},          {"grid", 0},
                                         {"bulk_store", 0},                      {"exchange", 0},
                                         {"column_inputs", 0}};
        for (const auto &[key, value] : changes)
            g.set(key, value);
        const std::string what = graph.name() + " " + std::to_string(cfg.rows) + "x" + std::to_string(cfg.cols) + " " +
                                 schedule::describe(g);
        ASSERT_TRUE(schedule::validateSchedule(*s, problem).ok()) << what;
        expectVerified(what, problem, *s, runner::PrecisionPolicy::FP32);
    }
}

namespace {

/// Row kernels on a resident grid (grid=resident: the clusters or blocks the GPU holds, each walking
/// every n-th row, the last round partial) and with the outputs written by the copy engine
/// (bulk_store=on: 16-byte stores into shared memory, cp.async.bulk pieces to global memory, the
/// stage reused row after row): clusters of 16 and 4, no cluster, several rows per block, the next
/// row prefetched into registers. Random inputs against the interpreter with the FP32 bound.
class CodegenGpuRowBulk : public CodegenGpu {};

struct RowBulkConfig {
    int rows, cols, threadsPerRow, rowsPerBlock, cluster, bulk, minBlocks, prefetch;
};

} // namespace

TEST_P(CodegenGpuRowBulk, ResidentGridAndBulkStoresMatchTheInterpreter)
{
    const bool layerNorm = GetParam() == 1;
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    if (arch->computeMajor < 9)
        GTEST_SKIP() << s_arch << " has no cp.async.bulk or clusters";
    const std::vector<RowBulkConfig> configs = {
        {19, 262144, 128, 1, 16, 1, 3, 0},  {50, 262144, 128, 1, 16, 1, 3, 0}, {50, 262144, 128, 1, 16, 0, 3, 0},
        {300, 16384, 256, 1, 4, 1, 2, 0},   {1000, 4096, 256, 1, 1, 1, 2, 0},  {37, 304, 32, 4, 1, 0, 1, 0},
        {300, 16384, 256, 1, 4, 0, 1, 1},
    };
    const ir::Graph graph = layerNorm ? ir::makeLayerNormRows() : ir::makeSoftmaxRows();
    for (const RowBulkConfig &cfg : configs)
        expectRowScheduleVerified(graph, *arch, cfg.rows, cfg.cols,
                                  {.threadsPerRow = cfg.threadsPerRow,
                                   .cluster = cfg.cluster,
                                   .prefetch = cfg.prefetch,
                                   .minBlocks = cfg.minBlocks,
                                   .combine = layerNorm ? 0 : 1,
                                   .grid = 1,
                                   .bulkStore = cfg.bulk,
                                   .rowsPerBlock = cfg.rowsPerBlock});
}

INSTANTIATE_TEST_SUITE_P(Rows, CodegenGpuRowBulk, ::testing::Range<std::size_t>(0, 2),
                         [](const ::testing::TestParamInfo<std::size_t> &info) {
                             return std::string(info.param == 1 ? "layernorm" : "softmax");
                         });

namespace {

/// Several rows per block of a cluster's rows (rows_per_block > 1), the blocks meeting by st.async
/// pushes to mbarriers (exchange=push), gamma and beta copied once per block into shared memory
/// (column_inputs=shared), a quarter of the next row by cp.async.bulk and the rest loaded in the
/// output loop (prefetch=bulk): clusters of 16, 4 and 2, one warp or several per row, partial last
/// rounds. Random inputs against the interpreter with the FP32 bound.
class CodegenGpuRowGroups : public CodegenGpu {};

struct RowGroupConfig {
    int rows, cols, threadsPerRow, rowsPerBlock, cluster, prefetch, columns;
};

} // namespace

TEST_P(CodegenGpuRowGroups, PushesSharedColumnsAndBulkPrefetchMatchTheInterpreter)
{
    const bool layerNorm = GetParam() == 1;
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    if (arch->computeMajor < 9)
        GTEST_SKIP() << s_arch << " has no clusters or cp.async.bulk";
    const std::vector<RowGroupConfig> configs = {
        {50, 262144, 128, 3, 16, 3, 1}, {19, 262144, 128, 1, 16, 3, 1}, {301, 16384, 128, 2, 4, 3, 1},
        {301, 16384, 256, 3, 4, 0, 1},  {37, 8192, 64, 4, 2, 0, 0},      {300, 4096, 32, 8, 2, 3, 1},
    };
    const ir::Graph graph = layerNorm ? ir::makeLayerNormRows() : ir::makeSoftmaxRows();
    for (const RowGroupConfig &cfg : configs)
        expectRowScheduleVerified(graph, *arch, cfg.rows, cfg.cols,
                                  {.threadsPerRow = cfg.threadsPerRow,
                                   .cluster = cfg.cluster,
                                   .prefetch = cfg.prefetch,
                                   .grid = 1,
                                   .rowsPerBlock = cfg.rowsPerBlock,
                                   .exchange = 1,
                                   .columnInputs = layerNorm ? cfg.columns : 0});
}

INSTANTIATE_TEST_SUITE_P(Rows, CodegenGpuRowGroups, ::testing::Range<std::size_t>(0, 2),
                         [](const ::testing::TestParamInfo<std::size_t> &info) {
                             return std::string(info.param == 1 ? "layernorm" : "softmax");
                         });

namespace {

/// Stream-K GEMMs (stream_k=on): fewer tiles than SMs (every tile split over several blocks, a tile's
/// first block waiting for up to dozens of partial sums), more tiles than a wave (the last partial wave
/// shared, alone or with one whole wave), K of one or a few steps, odd sizes and leading dimensions, the fused bias + GELU,
/// both operand layouts; FP32 FMAs, mma.sync and warpgroup MMAs.
class CodegenGpuStreamK : public CodegenGpu {};

/// tf32Cases and a GEMM of 1024 x 1000 in 32x32 tiles (1024 tiles, 264 shared blocks: the last 232
/// split, 792 whole) with a short K, cheap for the CPU interpreter.
std::vector<Case> streamKCases()
{
    std::vector<Case> out = tf32Cases();
    out.push_back({"matmul_1024x1000x70", ir::makeMatmul(), {{"M", 1024}, {"N", 1000}, {"K", 70}}});
    return out;
}

} // namespace

TEST_P(CodegenGpuStreamK, SharedTilesMatchTheInterpreter)
{
    const Case c = streamKCases()[GetParam()];
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    struct Variant {
        schedule::Precision precision;
        DecisionChanges changes;
    };
    std::vector<Variant> variants = {
        {schedule::Precision::FP32,
         {{"block_m", 256}, {"block_n", 128}, {"thread_m", 16}, {"thread_n", 8}, {"block_k", 16}, {"copy", 1},
          {"stages", 4}, {"min_blocks", 1}, {"smem_pad", 4}}},
        {schedule::Precision::FP32,
         {{"block_m", 64}, {"block_n", 64}, {"thread_m", 4}, {"thread_n", 4}, {"block_k", 8}, {"copy", 1},
          {"stages", 3}, {"min_blocks", 3}, {"smem_pad", 4}, {"swizzle", 1}}},
        {schedule::Precision::FP32,
         {{"block_m", 32}, {"block_n", 32}, {"thread_m", 4}, {"thread_n", 4}, {"block_k", 8}, {"copy", 0},
          {"stages", 2}, {"min_blocks", 2}, {"vector", 1}}},
    };
    if (arch->tensorCoresTf32)
        variants.push_back({schedule::Precision::TF32,
                            {{"math", 1}, {"block_m", 128}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 16},
                             {"block_k", 16}, {"copy", 1}, {"stages", 3}, {"min_blocks", 1}, {"smem_pad", 4}}});
    if (arch->computeMajor == 9 && arch->computeMinor == 0)
        variants.push_back({schedule::Precision::TF32,
                            {{"math", 2}, {"copy", 1}, {"smem_pad", 0}, {"block_m", 256}, {"block_n", 128},
                             {"thread_m", 8}, {"thread_n", 16}, {"block_k", 32}, {"stages", 4}, {"min_blocks", 1}}});
    // The CPU interpreter's reference costs seconds per GFLOP (about 45 s at 1000x3000x700): the
    // large shapes run the first variant and the last (the tensor cores' where the GPU has them).
    const double macs = double(c.sizes.at("M")) * double(c.sizes.at("N")) * double(c.sizes.at("K"));
    if (macs > 2e8)
        variants.erase(variants.begin() + 1, variants.end() - 1);
    int checked = 0;
    for (const auto &v : variants) {
        schedule::Problem problem{c.graph, c.sizes, *arch, v.precision};
        auto base = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
        ASSERT_TRUE(base.ok()) << base.error().toString();
        schedule::Schedule s = *base;
        auto &g = s.groups.front();
        g.set("split_k", 1);
        for (const auto &[key, value] : v.changes)
            g.set(key, value);
        g.set("stream_k", 1);
        auto analysis = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
        ASSERT_TRUE(analysis.ok());
        schedule::setWidestLegalVector(*analysis, g, problem);
        const std::string what = c.name + " " + schedule::describe(g);
        if (!schedule::checkGroup(*analysis, g, problem).empty()) {
            std::cout << "  " << what << ": not legal here, skipped\n"; // e.g. a wgmma tile the layout refuses
            continue;
        }
        const auto precision =
            v.precision == schedule::Precision::TF32 ? runner::PrecisionPolicy::TF32 : runner::PrecisionPolicy::FP32;
        expectVerified(what, problem, s, precision, 120000);
        ++checked;
    }
    EXPECT_GE(checked, std::min<int>(2, static_cast<int>(variants.size()))) << c.name;
}

INSTANTIATE_TEST_SUITE_P(StreamK, CodegenGpuStreamK, ::testing::Range<std::size_t>(0, 9),
                         [](const ::testing::TestParamInfo<std::size_t> &info) { return streamKCases()[info.param].name; });

namespace {

/// erf=erfc (docs/SCHEDULE.md): the device function against erfc in double precision over z in
/// [-6, 6], beside 1 + erff(z) computed by the same kernel; and GEMM + bias + GELU both ways.
class CodegenGpuErf : public CodegenGpu {};

} // namespace

TEST_F(CodegenGpuErf, Erf1pIsAccurateWhereOnePlusErffCancels)
{
    const unsigned n = 1u << 20;
    const std::string source = codegen::erf1pHelper() +
                               "extern \"C\" __global__ void erf1p_sweep(float *z, float *ours, float *library, int n)\n"
                               "{\n"
                               "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "    if (i >= n)\n"
                               "        return;\n"
                               "    const float x = -6.0f + 12.0f * (float)i / (float)(n - 1);\n"
                               "    z[i] = x;\n"
                               "    ours[i] = stitch_erf1p_(x);\n"
                               "    library[i] = 1.0f + erff(x);\n"
                               "}\n";
    auto compiled = codegen::compileGenerated(source, "erf1p_sweep.cu", s_arch);
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    runner::RunRequest request;
    request.job.module = compiled->cubin;
    for (const char *name : {"z", "ours", "library"})
        request.job.plan.buffers.push_back({name, ir::DType::F32, n, {}, runner::BufferRole::Output, {}});
    runner::KernelLaunch launch{"erf1p_sweep", {}, {}};
    launch.config.gridX = n / 256;
    launch.config.blockX = 256;
    for (const char *name : {"z", "ours", "library"})
        launch.args.push_back(runner::KernelArg::buffer(name));
    launch.args.push_back(runner::KernelArg::scalar(ir::DType::I32, std::int64_t(n)));
    request.job.plan.launches.push_back(launch);
    request.job.measure.verify = false;
    request.job.measure.time = false;
    request.job.measure.returnOutputs = true;
    auto r = s_runner->run(std::move(request));
    ASSERT_TRUE(r.ok()) << r.error().toString();
    ASSERT_EQ(r->outputs.size(), 3u);
    auto floats = [&](const std::string &name) {
        std::vector<float> v(n);
        for (const auto &o : r->outputs)
            if (o.buffer == name && o.bytes.size() == n * sizeof(float))
                std::memcpy(v.data(), o.bytes.data(), o.bytes.size());
        return v;
    };
    const auto z = floats("z"), ours = floats("ours"), library = floats("library");
    // Largest relative errors of 1 + erf(z) over z >= lo.
    struct Worst {
        double lo, ours = 0, library = 0;
    };
    std::vector<Worst> worst = {{-1.0}, {-2.0}, {-4.0}, {-6.0}};
    for (unsigned i = 0; i < n; ++i) {
        const double exact = std::erfc(-double(z[i]));
        const double eo = std::abs(ours[i] - exact) / exact, el = std::abs(library[i] - exact) / exact;
        for (Worst &w : worst)
            if (z[i] >= w.lo) {
                w.ours = std::max(w.ours, eo);
                w.library = std::max(w.library, el);
            }
    }
    for (const Worst &w : worst)
        std::cout << "  z >= " << w.lo << ": erfc " << w.ours << ", 1 + erff " << w.library << "\n";
    EXPECT_LT(worst[0].ours, 6e-7);
    EXPECT_LT(worst[1].ours, 1e-6);
    EXPECT_LT(worst[2].ours, 3e-6);
    EXPECT_LT(worst[3].ours, 1e-5);
    EXPECT_LT(worst[1].ours, worst[1].library) << "1 + erff(z) cancels as erf(z) nears -1";
    EXPECT_LT(worst[3].ours, worst[3].library);
}

TEST_F(CodegenGpuErf, GeluEpilogueBothWaysMatchesTheInterpreter)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    const ir::Graph graph = ir::makeGemmBiasGelu();
    for (const ir::SizeBindings &sizes : {ir::SizeBindings{{"M", 70}, {"N", 52}, {"K", 30}},
                                          ir::SizeBindings{{"M", 257}, {"N", 515}, {"K", 128}}})
        for (int erfc : {0, 1})
            for (int split : {1, 2}) {
                schedule::Problem problem{graph, sizes, *arch, schedule::Precision::FP32};
                auto s = schedule::defaultSchedule(problem);
                ASSERT_TRUE(s.ok()) << s.error().toString();
                auto &g = s->groups.front();
                g.set("erf", erfc);
                g.set("split_k", split);
                const std::string what = std::to_string(sizes.at("M")) + "x" + std::to_string(sizes.at("N")) + "x" +
                                         std::to_string(sizes.at("K")) + " " + schedule::describe(g);
                ASSERT_TRUE(schedule::validateSchedule(*s, problem).ok()) << what;
                expectVerified(what, problem, *s, runner::PrecisionPolicy::FP32);
            }
    // The element-wise and row kernels (GELU alone, layer norm then GELU), rows of odd length.
    for (bool rows : {false, true})
        for (int erfc : {0, 1}) {
            const ir::Graph g = geluGraph(rows);
            schedule::Problem problem{g, {{"M", 37}, {"N", 1001}}, *arch, schedule::Precision::FP32};
            auto s = schedule::defaultSchedule(problem);
            ASSERT_TRUE(s.ok()) << s.error().toString();
            s->groups.front().set("erf", erfc);
            const std::string what = g.name() + " 37x1001 " + schedule::describe(s->groups.front());
            ASSERT_TRUE(schedule::validateSchedule(*s, problem).ok()) << what;
            expectVerified(what, problem, *s, runner::PrecisionPolicy::FP32);
        }
}

namespace {

/// store=scalar and store=copy (docs/SCHEDULE.md): the epilogue's stores of the accumulators, plain
/// and stream-K tiles, split K's partial sums, and GELU's results stored one by one; odd M and K.
class CodegenGpuStore : public CodegenGpu {};

} // namespace

TEST_F(CodegenGpuStore, EveryStoreMatchesTheInterpreter)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(s_arch);
    ASSERT_NE(arch, nullptr) << s_arch;
    const ir::SizeBindings sizes{{"M", 257}, {"N", 516}, {"K", 129}};
    const DecisionChanges tiles[] = {
        {{"block_m", 128}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8}, {"min_blocks", 1}},
        {{"block_m", 64}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8}, {"copy", 1}, {"stages", 3},
         {"block_k", 16}, {"min_blocks", 3}, {"stream_k", 1}},
        {{"block_m", 64}, {"block_n", 64}, {"thread_m", 4}, {"thread_n", 8}, {"split_k", 2}},
    };
    int checked = 0;
    for (const ir::Graph &graph : {ir::makeMatmul(), ir::makeGemmBiasGelu()})
        for (const DecisionChanges &tile : tiles)
            for (int store : {0, 1, 2}) {
                schedule::Problem problem{graph, sizes, *arch, schedule::Precision::FP32};
                auto s = schedule::defaultSchedule(problem);
                ASSERT_TRUE(s.ok()) << s.error().toString();
                DecisionChanges changes = tile;
                changes.push_back({"store", store});
                auto variants = legalVariants(problem, *s, {changes});
                const std::string what = graph.name() + " " + schedule::describe(s->groups.front());
                if (variants.empty()) { // store=copy over GELU without split K
                    EXPECT_TRUE(store == 2 && graph.name() != "matmul") << what;
                    continue;
                }
                expectVerified(graph.name() + " 257x516x129 " + schedule::describe(variants.front().groups.front()), problem,
                               variants.front(), runner::PrecisionPolicy::FP32, 60000);
                ++checked;
            }
    EXPECT_EQ(checked, 16);
}
