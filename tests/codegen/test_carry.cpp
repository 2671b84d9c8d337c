// Kernels carried unchanged (core/codegen/Carry.h): an opaque kernel of a lifted .cu runs in the
// generated program in the input's order, with the memory the input gave it; ops on either side of
// it never share a kernel; what the interpreter cannot compute is left unchecked, the rest is
// verified; a kernel that cannot be carried is a located error, never dropped. CPU only: the
// programs compile with NVRTC here and run in test_corpus_gpu.
#include "tests/lift/LiftCorpus.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Carry.h"
#include "core/codegen/Program.h"
#include "core/ir/Interpreter.h"
#include "core/runner/HostData.h"
#include "core/runner/PlanFile.h"
#include "core/runner/Runner.h"
#include "core/schedule/GroupAnalysis.h"
#include "core/schedule/Space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

using namespace stitch;
using namespace stitch::testing;
using frontend::cudalift::CudaLiftDetail;
using frontend::cudalift::liftCudaProgramDetailed;

namespace {

CudaLiftDetail lift(const std::string &source, const std::string &name = "inline.cu")
{
    auto detail = liftCudaProgramDetailed(source, name);
    if (!detail.ok())
        throw std::runtime_error(detail.error().toString());
    return std::move(*detail);
}

struct Generated {
    codegen::GeneratedProgram program;
    runner::LaunchPlan plan;
};

Generated generate(const CudaLiftDetail &detail, const codegen::CarriedKernels &carried)
{
    const ArchLimits &arch = *ArchDatabase::builtin().arch("sm_90");
    const schedule::Problem problem{detail.program.graph, detail.program.sizes, arch, schedule::Precision::FP32};
    auto sched = schedule::defaultSchedule(problem);
    EXPECT_TRUE(sched.ok()) << (sched ? "" : sched.error().toString());
    auto program = codegen::generateProgram(problem, *sched, &carried);
    EXPECT_TRUE(program.ok()) << (program ? "" : program.error().toString());
    auto plan = codegen::toLaunchPlan(*program, detail.program.graph, detail.program.sizes);
    EXPECT_TRUE(plan.ok()) << (plan ? "" : plan.error().toString());
    return {std::move(*program), std::move(*plan)};
}

std::vector<std::string> kernelNames(const runner::LaunchPlan &plan)
{
    std::vector<std::string> names;
    for (const auto &l : plan.launches)
        names.push_back(l.kernel);
    return names;
}

std::string bufferArg(const runner::KernelLaunch &l, std::size_t a)
{
    return std::get<std::string>(l.args.at(a).value);
}

const ir::ComputeOp &opWriting(const ir::Graph &g, const std::string &tensor)
{
    for (const auto &op : g.ops())
        if (op.output.name == tensor)
            return op;
    ADD_FAILURE() << "no op writes " << tensor;
    return g.ops().front();
}

// Zero the bins, count with atomics (opaque), normalize: the textbook corpus' histogram.
TEST(CarriedKernels, HistogramRunsBetweenTheStagesAroundIt)
{
    const CudaLiftDetail detail = lift(readTextFile(corpusPath("refused_histogram")), "refused_histogram.cu");
    const ir::Graph &g = detail.program.graph;
    EXPECT_EQ(opWriting(g, "d_bins").stage, 0);   // the memset, before the histogram
    EXPECT_EQ(opWriting(g, "d_prob").stage, 1);   // the normalisation, after it

    auto carried = codegen::carryOpaqueKernels(detail, "refused_histogram.cu", detail.program.sizes);
    ASSERT_TRUE(carried.ok()) << carried.error().toString();
    ASSERT_EQ(carried->launches.size(), 1u);
    const codegen::CarriedLaunch &c = carried->launches.front();
    EXPECT_EQ(c.kernel, "histogram");
    EXPECT_EQ(c.afterStage, 0);
    EXPECT_EQ(c.launch.kernel, "stitch_input::histogram");
    EXPECT_EQ(c.where.line, 36);
    EXPECT_NE(c.why.find("atomicAdd"), std::string::npos) << c.why;
    EXPECT_EQ((std::array<unsigned, 6>{c.launch.config.gridX, c.launch.config.gridY, c.launch.config.gridZ,
                                       c.launch.config.blockX, c.launch.config.blockY, c.launch.config.blockZ}),
              (std::array<unsigned, 6>{256, 1, 1, 256, 1, 1}));
    // d_data is only the histogram's: a buffer of its own, filled like an input; the bins before
    // and after it are one buffer (it counts in place).
    EXPECT_EQ(bufferArg(c.launch, 0), "d_data");
    EXPECT_EQ(bufferArg(c.launch, 1), "d_bins");
    EXPECT_EQ(std::get<runner::ScalarArg>(c.launch.args.at(2).value).intValue, 65536);
    EXPECT_EQ(carried->planBuffer, (std::map<std::string, std::string>{{"d_bins_1", "d_bins"}}));
    ASSERT_EQ(carried->buffers.size(), 1u);
    EXPECT_EQ(carried->buffers[0].name, "d_data");
    EXPECT_EQ(carried->buffers[0].count, 65536u);
    EXPECT_EQ(carried->buffers[0].role, runner::BufferRole::Input);
    EXPECT_EQ(carried->carriedTensors, (std::set<std::string>{"d_bins_1"}));
    // The counts, and the probabilities computed from them, are the histogram's work.
    EXPECT_EQ(codegen::uncheckedBuffers(*carried, g), (std::set<std::string>{"d_bins", "d_data", "d_prob"}));

    const Generated gen = generate(detail, *carried);
    const auto names = kernelNames(gen.plan);
    ASSERT_EQ(names.size(), 3u);
    EXPECT_EQ(names[1], "stitch_input::histogram");
    EXPECT_EQ(gen.plan.launches[0].args.at(0).value, runner::KernelArg::buffer("d_bins").value); // zeroes the bins
    EXPECT_EQ(bufferArg(gen.plan.launches[2], 0), "d_bins"); // normalizes the counted bins
    EXPECT_EQ(gen.plan.buffer("d_bins_1"), nullptr);
    ASSERT_NE(gen.plan.buffer("d_data"), nullptr);

    // The input's device code, not the lifted kernels, is in the program; NVRTC builds it and the
    // plan's names resolve in the module.
    const std::string &src = gen.program.source;
    EXPECT_NE(src.find("namespace stitch_input {"), std::string::npos);
    EXPECT_NE(src.find("atomicAdd(&bins[b], 1);"), std::string::npos);
    EXPECT_EQ(src.find("__global__ void normalizeBins"), std::string::npos);
    EXPECT_NE(src.find("#undef NUM_BINS"), std::string::npos);
    const auto launcher = src.substr(src.find("_run("));
    EXPECT_NE(launcher.find("int *d_bins, float *d_prob, int *d_data"), std::string::npos) << launcher;
    EXPECT_LT(launcher.find("::memset_d_bins<<<"), launcher.find("::stitch_input::histogram<<<"));
    EXPECT_LT(launcher.find("::stitch_input::histogram<<<"), launcher.find("::normalizeBins<<<"));
    auto compiled = codegen::compileGenerated(src, gen.program.name + ".cu", "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    runner::LaunchPlan resolved = gen.plan;
    EXPECT_TRUE(runner::resolveKernelNames(resolved, compiled->kernels).ok());
}

// a -> X: b = a * 2 -> opaque (atomics) sums b into h -> Y: c = b * h[0]: Y reads X's output, but
// the opaque kernel sits between them; d = a + a does not depend on it.
const std::string kBetween = readTextFile(std::string(STITCHCUDA_SOURCE_DIR) + "/tests/codegen/carried/between.cu");

TEST(CarriedKernels, OpsOnEitherSideNeverShareAKernel)
{
    const CudaLiftDetail detail = lift(kBetween);
    const ir::Graph &g = detail.program.graph;
    const ir::ComputeOp &x = opWriting(g, "b"), &y = opWriting(g, "c");
    EXPECT_EQ(x.stage, 0);
    EXPECT_EQ(y.stage, 1);
    // Y reads X's output, so fusion would offer it; the analysis refuses and says why.
    auto fused = schedule::analyzeGroup(g, {x.name, y.name}, schedule::Strategy::Elementwise);
    ASSERT_FALSE(fused.ok());
    EXPECT_NE(fused.error().message.find("carried unchanged"), std::string::npos) << fused.error().message;
    for (const auto &group : schedule::fuseGreedy(g)) {
        const int stage = g.findOp(group.ops.front())->stage;
        for (const auto &op : group.ops)
            EXPECT_EQ(g.findOp(op)->stage, stage) << group.name;
    }
    // A schedule listing a later stage's group first is illegal.
    const ArchLimits &arch = *ArchDatabase::builtin().arch("sm_90");
    const schedule::Problem problem{g, detail.program.sizes, arch, schedule::Precision::FP32};
    auto sched = schedule::defaultSchedule(problem);
    ASSERT_TRUE(sched.ok()) << sched.error().toString();
    schedule::Schedule swapped = *sched;
    auto later = std::find_if(swapped.groups.begin(), swapped.groups.end(),
                              [&](const schedule::KernelGroup &k) { return g.findOp(k.ops.front())->stage == 1; });
    ASSERT_NE(later, swapped.groups.end());
    std::rotate(swapped.groups.begin(), later, later + 1);
    auto st = schedule::validateSchedule(swapped, problem);
    ASSERT_FALSE(st.ok());
    std::string all;
    for (const auto &d : st.error().diagnostics)
        all += d.message + "\n";
    EXPECT_NE(all.find("its ops run before a kernel carried unchanged"), std::string::npos) << all;
}

TEST(CarriedKernels, WhatDoesNotFollowFromTheCarriedKernelIsVerified)
{
    const CudaLiftDetail detail = lift(kBetween);
    auto carried = codegen::carryOpaqueKernels(detail, "inline.cu", detail.program.sizes);
    ASSERT_TRUE(carried.ok()) << carried.error().toString();
    // count reads b (no copy needed) and counts into h in place: h's versions share one buffer.
    EXPECT_EQ(carried->planBuffer, (std::map<std::string, std::string>{{"h_1", "h"}}));
    const std::set<std::string> unchecked = codegen::uncheckedBuffers(*carried, detail.program.graph);
    EXPECT_EQ(unchecked, (std::set<std::string>{"c", "h"})); // d and b do not depend on the counts
    const Generated gen = generate(detail, *carried);

    // The interpreter's answer for the checked outputs, as a GPU would return it.
    runner::CpuReference ref;
    ref.graph = detail.program.graph;
    ref.sizes = detail.program.sizes;
    ref.carriedTensors = carried->carriedTensors;
    ref.uncheckedBuffers = unchecked;
    ASSERT_TRUE(runner::validateCpuReference(gen.plan, ref).ok());
    const std::uint64_t seed = 7;
    ir::TensorValues inputs;
    inputs["a"] = runner::toDoubles(runner::initialBytes(gen.plan, *gen.plan.buffer("a"), seed), ir::DType::F32);
    inputs["h_1"] = std::vector<double>(32, 0.0);
    auto values = ir::interpret(ref.graph, ref.sizes, inputs);
    ASSERT_TRUE(values.ok()) << values.error().toString();
    std::vector<runner::OutputData> outputs;
    for (const auto &b : gen.plan.buffers) {
        if (b.role != runner::BufferRole::Output && b.role != runner::BufferRole::InOut)
            continue;
        runner::OutputData o;
        o.buffer = b.name;
        o.dtype = b.dtype;
        o.bytes.resize(b.bytes());
        const auto it = values->find(b.name);
        for (std::uint64_t i = 0; i < b.count; ++i) // unchecked buffers get what no reference computes
            runner::storeElement(o.bytes.data(), b.dtype, i, unchecked.count(b.name) || it == values->end() ? 1e30 : it->second[i]);
        outputs.push_back(std::move(o));
    }
    auto v = runner::verifyWithInterpreter(gen.plan, seed, outputs, ref, runner::PrecisionPolicy::FP32);
    ASSERT_TRUE(v.ok()) << v.error().toString();
    EXPECT_TRUE(v->verified);
    std::vector<std::string> checked;
    for (const auto &o : v->outputs)
        checked.push_back(o.buffer);
    EXPECT_NE(std::find(checked.begin(), checked.end(), "d"), checked.end());
    EXPECT_EQ(std::find(checked.begin(), checked.end(), "c"), checked.end());
    EXPECT_EQ(v->unchecked, (std::vector<std::string>{"h", "c"}));
}

TEST(CarriedKernels, AProgramOfOpaqueKernelsAloneIsCarriedWhole)
{
    const CudaLiftDetail detail = lift(readTextFile(corpusPath("refused_gather")), "refused_gather.cu");
    ASSERT_TRUE(detail.program.graph.ops().empty());
    auto carried = codegen::carryOpaqueKernels(detail, "refused_gather.cu", detail.program.sizes);
    ASSERT_TRUE(carried.ok()) << carried.error().toString();
    ASSERT_EQ(carried->launches.size(), 1u);
    EXPECT_EQ(carried->launches[0].launch.kernel, "stitch_input::gatherRows");
    std::vector<std::string> buffers;
    for (const auto &b : carried->buffers)
        buffers.push_back(b.name + ":" + runner::bufferRoleName(b.role));
    EXPECT_EQ(buffers, (std::vector<std::string>{"d_table:input", "d_idx:input", "d_out:output"}));
}

TEST(CarriedKernels, ExternCKernelsKeepTheirPlainName)
{
    const CudaLiftDetail detail = lift(R"(
#define N 1024
extern "C" __global__ void bump(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&x[i % 8], 1.0f);
}
int main() {
    float *x;
    cudaMalloc(&x, N * sizeof(float));
    cudaMemset(x, 0, N * sizeof(float));
    bump<<<N / 128, 128>>>(x, N);
    return 0;
}
)");
    auto carried = codegen::carryOpaqueKernels(detail, "inline.cu", detail.program.sizes);
    ASSERT_TRUE(carried.ok()) << carried.error().toString();
    ASSERT_EQ(carried->launches.size(), 1u);
    EXPECT_EQ(carried->launches[0].launch.kernel, "bump");
    const Generated gen = generate(detail, *carried);
    auto compiled = codegen::compileGenerated(gen.program.source, gen.program.name + ".cu", "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    runner::LaunchPlan resolved = gen.plan;
    EXPECT_TRUE(runner::resolveKernelNames(resolved, compiled->kernels).ok());
}

TEST(CarriedKernels, AKernelThatCannotBeCarriedIsALocatedErrorNeverDropped)
{
    // negate's argument is a RAII wrapper's pointer the lifter cannot follow to a cudaMalloc.
    const std::string path = std::string(STITCHCUDA_SOURCE_DIR) + "/tests/lift/corpus_realworld/raii_device_buffer.cu";
    const CudaLiftDetail detail = lift(readTextFile(path), path);
    auto carried = codegen::carryOpaqueKernels(detail, path, detail.program.sizes);
    ASSERT_FALSE(carried.ok());
    EXPECT_EQ(carried.error().kind, ErrorKind::Unsupported);
    const std::string text = carried.error().toString();
    EXPECT_NE(text.find("kernel 'negate' stays opaque"), std::string::npos) << text;
    EXPECT_NE(text.find("cannot be carried unchanged"), std::string::npos) << text;
    EXPECT_NE(text.find("is a pointer the lifter cannot follow"), std::string::npos) << text;
    ASSERT_TRUE(carried.error().location.has_value());
    EXPECT_EQ(carried.error().location->line, 35);
}

TEST(CarriedKernels, LaunchOrderPutsEachCarriedLaunchBeforeTheNextStage)
{
    codegen::CarriedKernels carried;
    carried.launches.resize(3);
    carried.launches[0].afterStage = 0;
    carried.launches[1].afterStage = 1;
    carried.launches[2].afterStage = 2;
    std::string order;
    for (const auto &s : codegen::launchOrder({0, 0, 2, 3}, carried))
        order += (s.carried ? "c" : "k") + std::to_string(s.index) + " ";
    EXPECT_EQ(order, "k0 k1 c0 c1 k2 c2 k3 ");
}

} // namespace
