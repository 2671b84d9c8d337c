// The corpus optimized: every liftable program of the lifting corpus (tests/lift/corpus) is lifted,
// scheduled by the default heuristics, generated, compiled with NVRTC and, on a GPU, run through
// the worker and checked against the CPU interpreter of the lifted graph (fresh random inputs,
// poisoned outputs). Without a GPU only the generation and the NVRTC compile are checked.
// The input as written (AsWritten.h) runs the same way: checked against the interpreter, then
// used as the GPU reference of the optimized program through the plan-buffer map.
// scripts/device/gpu-check.sh also runs this test under compute-sanitizer memcheck and racecheck.
#include "CodegenFixtures.h"
#include "tests/lift/LiftCorpus.h"

#include "core/codegen/AsWritten.h"
#include "core/codegen/Carry.h"
#include "core/runner/HostData.h"
#include "core/runner/PlanFile.h"

#include "core/runner/Runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

using namespace stitch;
using namespace stitch::testing;

namespace {

class CorpusOptimized : public ::testing::TestWithParam<CorpusProgram> {
protected:
    static void SetUpTestSuite()
    {
        runner::WorkerOptions o;
        o.workerPath = STITCHCUDA_WORKER_PATH;
        s_runner = new runner::Runner(o, nullptr);
        auto info = s_runner->device();
        if (info)
            s_arch = info->device.arch;
        else
            s_noGpu = info.error().message;
    }
    static void TearDownTestSuite()
    {
        delete s_runner;
        s_runner = nullptr;
    }
    static inline runner::Runner *s_runner = nullptr;
    static inline std::string s_arch = "sm_90", s_noGpu;
};

/// The program the default schedule generates for the graph at these sizes, compiled for `arch`.
struct DefaultBuild {
    codegen::GeneratedProgram program;
    cuda::CompileResult compiled;
};
Result<DefaultBuild> buildDefault(const ir::Graph &graph, const ir::SizeBindings &sizes, const std::string &archName)
{
    const ArchLimits *arch = ArchDatabase::builtin().arch(archName);
    if (!arch)
        return makeError(ErrorKind::InvalidArgument, "no architecture " + archName);
    schedule::Problem problem{graph, sizes, *arch, schedule::Precision::FP32};
    auto sched = schedule::defaultSchedule(problem);
    if (!sched)
        return sched.error();
    auto program = codegen::generateProgram(problem, *sched);
    if (!program)
        return program.error();
    auto compiled = codegen_fixtures::compileProgram(*program, archName);
    if (!compiled)
        return makeError(compiled.error().kind, compiled.error().toString() + "\n" + program->source);
    return DefaultBuild{std::move(*program), std::move(*compiled)};
}

} // namespace

TEST_P(CorpusOptimized, GeneratedProgramMatchesTheInterpreter)
{
    const std::string name = GetParam().name;
    const std::string original = readTextFile(corpusPath(name));
    auto lifted = frontend::cudalift::liftCudaProgramDetailed(original, name + ".cu");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    const ir::Graph &graph = lifted->program.graph;
    ir::SizeBindings sizes;
    for (const auto &s : graph.sizeVars())
        sizes[s] = testBindings(*lifted, GetParam().small).at(s);
    auto built = buildDefault(graph, sizes, s_arch);
    ASSERT_TRUE(built.ok()) << built.error().toString();
    const codegen::GeneratedProgram *program = &built->program;
    const cuda::CompileResult *compiled = &built->compiled;
    std::string kernels;
    for (const auto &k : program->kernels)
        kernels += " " + schedule::describe(k.group);
    if (!s_noGpu.empty())
        GTEST_SKIP() << "generated and compiled; no GPU to run it: " << s_noGpu;
    auto plan = codegen::toLaunchPlan(*program, graph, sizes);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    runner::RunRequest request;
    request.job.module = compiled->cubin;
    request.job.plan = *plan;
    request.job.measure.time = false;
    request.cpuReference = runner::CpuReference{graph, sizes, {}};
    auto r = s_runner->run(std::move(request));
    ASSERT_TRUE(r.ok()) << name << ":" << kernels << ": " << r.error().toString();
    ASSERT_TRUE(r->verification.has_value());
    std::string detail;
    for (const auto &o : r->verification->outputs)
        detail += o.buffer + " rel " + codegen_fixtures::errorText(o.relativeError) + " unwritten " + std::to_string(o.unwrittenCount) + "; ";
    EXPECT_TRUE(r->verification->verified) << name << ":" << kernels << ": " << detail;
    std::cout << "  " << name << ": " << program->kernels.size() << " kernel(s), verified:" << kernels << "\n";
}

TEST_P(CorpusOptimized, InputAsWrittenMatchesTheInterpreterAndChecksTheOptimized)
{
    const std::string name = GetParam().name;
    const std::string original = readTextFile(corpusPath(name));
    auto lifted = frontend::cudalift::liftCudaProgramDetailed(original, name + ".cu");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    const ir::Graph &graph = lifted->program.graph;
    const ir::SizeBindings bindings = testBindings(*lifted, GetParam().small);
    auto asWritten = codegen::asWrittenProgram(original, name + ".cu", *lifted, bindings);
    ASSERT_TRUE(asWritten.ok()) << asWritten.error().toString();
    auto reference = codegen::compileAsWritten(*asWritten, s_arch);
    ASSERT_TRUE(reference.ok()) << reference.error().toString();
    if (!s_noGpu.empty())
        GTEST_SKIP() << "as written: planned and compiled; no GPU to run it: " << s_noGpu;
    auto detail = [](const runner::Verification &v) {
        std::string out;
        for (const auto &o : v.outputs)
            out += o.buffer + " rel " + codegen_fixtures::errorText(o.relativeError) + " unwritten " + std::to_string(o.unwrittenCount) + "; ";
        return out;
    };

    // The input as written against the CPU interpreter of its graph.
    runner::RunRequest request;
    request.job.module = reference->module;
    request.job.plan = reference->plan;
    request.job.measure.time = false;
    request.cpuReference = codegen::asWrittenCpuReference(*asWritten, graph);
    auto r = s_runner->run(std::move(request));
    ASSERT_TRUE(r.ok()) << name << " as written: " << r.error().toString();
    ASSERT_TRUE(r->verification.has_value());
    EXPECT_TRUE(r->verification->verified) << name << " as written: " << detail(*r->verification);

    // The optimized program (default schedule) against the input as written, on the GPU.
    ir::SizeBindings sizes;
    for (const auto &s : graph.sizeVars())
        sizes[s] = bindings.at(s);
    auto built = buildDefault(graph, sizes, s_arch);
    ASSERT_TRUE(built.ok()) << built.error().toString();
    const codegen::GeneratedProgram *program = &built->program;
    const cuda::CompileResult *compiled = &built->compiled;
    auto plan = codegen::toLaunchPlan(*program, graph, sizes);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    runner::RunRequest optimized;
    optimized.job.module = compiled->cubin;
    optimized.job.plan = *plan;
    optimized.job.reference = *reference;
    optimized.job.measure.time = false;
    auto o = s_runner->run(std::move(optimized));
    ASSERT_TRUE(o.ok()) << name << " optimized vs as written: " << o.error().toString();
    ASSERT_TRUE(o->verification.has_value());
    EXPECT_EQ(o->verification->reference, "gpu");
    EXPECT_TRUE(o->verification->verified) << name << " optimized vs as written: " << detail(*o->verification);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusOptimized, ::testing::ValuesIn(liftableCorpus()),
                         [](const ::testing::TestParamInfo<CorpusProgram> &info) { return info.param.name; });

// A kernel carried unchanged (codegen/Carry.h) runs on the GPU between the generated ones: the
// outputs that do not depend on it match the interpreter, and what it computed (the sums into h,
// then c = b * h[0]) matches the same sums on the host from the plan's inputs.
TEST(CarriedOnTheGpu, TheCarriedKernelRunsInPlaceBetweenTheGeneratedOnes)
{
    const std::string path = std::string(STITCHCUDA_SOURCE_DIR) + "/tests/codegen/carried/between.cu";
    auto lifted = frontend::cudalift::liftCudaProgramDetailed(readTextFile(path), path);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    const ir::Graph &graph = lifted->program.graph;
    const ir::SizeBindings &sizes = lifted->program.sizes;
    auto carried = codegen::carryOpaqueKernels(*lifted, path, sizes);
    ASSERT_TRUE(carried.ok()) << carried.error().toString();
    runner::WorkerOptions wo;
    wo.workerPath = STITCHCUDA_WORKER_PATH;
    runner::Runner gpu(wo, nullptr);
    auto info = gpu.device();
    const std::string arch = info ? info->device.arch : "sm_90";
    const ArchLimits *limits = ArchDatabase::builtin().arch(arch);
    ASSERT_NE(limits, nullptr);
    schedule::Problem problem{graph, sizes, *limits, schedule::Precision::FP32};
    auto sched = schedule::defaultSchedule(problem);
    ASSERT_TRUE(sched.ok()) << sched.error().toString();
    auto program = codegen::generateProgram(problem, *sched, &*carried);
    ASSERT_TRUE(program.ok()) << program.error().toString();
    auto compiled = codegen_fixtures::compileProgram(*program, arch);
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    auto plan = codegen::toLaunchPlan(*program, graph, sizes);
    ASSERT_TRUE(plan.ok()) << plan.error().toString();
    ASSERT_TRUE(runner::resolveKernelNames(*plan, compiled->kernels).ok());
    if (!info)
        GTEST_SKIP() << "generated with the carried kernel and compiled; no GPU to run it: " << info.error().message;

    runner::RunRequest request;
    request.job.module = compiled->cubin;
    request.job.plan = *plan;
    request.job.measure.time = false;
    request.job.seed = 11;
    request.job.fixedSeed = true;
    runner::CpuReference ref{graph, sizes, {}};
    ref.carriedTensors = carried->carriedTensors;
    ref.uncheckedBuffers = codegen::uncheckedBuffers(*carried, graph);
    request.cpuReference = ref;
    auto r = gpu.run(std::move(request));
    ASSERT_TRUE(r.ok()) << r.error().toString();
    ASSERT_TRUE(r->verification.has_value());
    EXPECT_TRUE(r->verification->verified);
    EXPECT_EQ(r->verification->unchecked, (std::vector<std::string>{"h", "c"}));

    // The sums the carried kernel made, against the host's.
    const std::int64_t n = sizes.at("N");
    const auto a = runner::toDoubles(runner::initialBytes(*plan, *plan->buffer("a"), 11), ir::DType::F32);
    std::vector<double> h(32, 0.0);
    for (std::int64_t i = 0; i < n / 256 * 256; ++i)
        h[static_cast<std::size_t>(i % 32)] += 2.0 * a[static_cast<std::size_t>(i)];
    for (const auto &o : r->outputs) {
        if (o.buffer != "h")
            continue;
        const auto got = runner::toDoubles(o.bytes, ir::DType::F32);
        for (std::size_t k = 0; k < 32; ++k)
            EXPECT_NEAR(got[k], h[k], 1e-3 * (1.0 + std::abs(h[k]))) << "h[" << k << "]";
    }
}
