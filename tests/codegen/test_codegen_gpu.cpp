// Generated programs on the GPU: every sampled legal schedule of every program, at odd and
// aligned sizes, runs in the worker and matches the CPU interpreter (fresh random inputs,
// poisoned outputs). Skips without a GPU.
#include "CodegenFixtures.h"

#include "core/runner/Runner.h"

#include <gtest/gtest.h>

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
        auto p = codegen::generateProgram(problem, s);
        ASSERT_TRUE(p.ok()) << p.error().toString();
        auto compiled = compileProgram(*p, s_arch);
        ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
        auto plan = codegen::toLaunchPlan(*p, c.graph, c.sizes);
        ASSERT_TRUE(plan.ok()) << plan.error().toString();
        runner::RunRequest request;
        request.job.module = compiled->cubin;
        request.job.plan = *plan;
        request.job.measure.time = false;
        request.job.precision = runner::PrecisionPolicy::FP32;
        request.cpuReference = runner::CpuReference{c.graph, c.sizes, {}};
        auto r = s_runner->run(std::move(request));
        ASSERT_TRUE(r.ok()) << c.name << " " << schedule::describe(s.groups.front()) << ": " << r.error().toString();
        ASSERT_TRUE(r->verification.has_value());
        std::string detail;
        for (const auto &o : r->verification->outputs)
            detail += o.buffer + " rel " + std::to_string(o.relativeError) + " unwritten " + std::to_string(o.unwrittenCount) +
                      " mismatches " + std::to_string(o.mismatchCount) + "; ";
        EXPECT_TRUE(r->verification->verified) << c.name << " " << schedule::describe(s.groups.front()) << ": " << detail;
        ++checked;
    }
    std::cout << "  " << c.name << ": " << checked << " schedules verified\n";
}

INSTANTIATE_TEST_SUITE_P(Programs, CodegenGpu, ::testing::Range<std::size_t>(0, 8),
                         [](const ::testing::TestParamInfo<std::size_t> &info) { return cases()[info.param].name; });
