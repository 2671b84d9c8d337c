// The corpus of naive CUDA programs: each liftable one matches its reviewed golden graph and, run
// by the CPU interpreter at small sizes, matches a hand-written reference; each refused one names
// the construct that blocks it, where it is.
#include "tests/lift/LiftCorpus.h"
#include "tests/lift/LiftGolden.h"
#include "tests/lift/LiftReferences.h"

#include "core/cuda/SourceCompiler.h"
#include "core/ir/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

using namespace stitch;
using namespace stitch::testing;
using frontend::cudalift::CudaLiftDetail;

namespace {

Result<CudaLiftDetail> liftCorpus(const std::string &name)
{
    return frontend::cudalift::liftCudaProgramDetailed(readTextFile(corpusPath(name)), name + ".cu");
}

/// Compares with tests/lift/expected/NAME.txt. STITCHCUDA_UPDATE_GOLDEN=1 rewrites the file
/// instead, for a human to review the diff before committing it.
void expectGolden(const std::string &name, const std::string &actual)
{
    const std::string path = std::string(STITCHCUDA_SOURCE_DIR) + "/tests/lift/expected/" + name + ".txt";
    if (std::getenv("STITCHCUDA_UPDATE_GOLDEN")) {
        std::ofstream(path, std::ios::binary) << actual;
        GTEST_SKIP() << "golden rewritten: " << path;
    }
    const std::string expected = readTextFile(path);
    ASSERT_FALSE(expected.empty()) << "missing golden " << path;
    EXPECT_EQ(actual, expected) << "lifted graph differs from " << path;
}

std::string programName(const ::testing::TestParamInfo<CorpusProgram> &info)
{
    return info.param.name;
}

class LiftCorpus : public ::testing::TestWithParam<CorpusProgram> {};

TEST_P(LiftCorpus, LiftsCompletelyAndMatchesTheGoldenGraph)
{
    auto lifted = liftCorpus(GetParam().name);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    EXPECT_TRUE(lifted->program.opaque.empty()) << describeLift(*lifted);
    for (const frontend::LiftedLaunch &l : lifted->program.launches)
        EXPECT_FALSE(l.ops.empty()) << l.kernel << " was not lifted";
    EXPECT_TRUE(lifted->program.graph.validate().ok());
    for (const ir::ComputeOp &op : lifted->program.graph.ops()) {
        ASSERT_TRUE(op.source.has_value()) << op.name;
        EXPECT_GT(op.source->begin.line, 0) << op.name;
    }
    expectGolden(GetParam().name, describeLift(*lifted));
}

TEST_P(LiftCorpus, InterpreterMatchesTheHandWrittenReference)
{
    auto lifted = liftCorpus(GetParam().name);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    const ir::Graph &graph = lifted->program.graph;
    const ir::SizeBindings sizes = testBindings(*lifted, GetParam().small);
    for (const std::string &name : graph.sizeVars())
        ASSERT_TRUE(GetParam().small.count(name)) << "the test gives no small value for size " << name;

    std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>{}(GetParam().name)));
    std::uniform_real_distribution<double> magnitude(0.25, 1.25);
    std::bernoulli_distribution negative(0.4);
    ir::TensorValues inputs;
    BufferValues bufferInputs;
    for (const auto &buffer : lifted->buffers) {
        if (buffer.inputTensor.empty())
            continue;
        const ir::Tensor *t = graph.findTensor(buffer.inputTensor);
        ASSERT_NE(t, nullptr);
        auto extents = t->shape.evaluate(sizes);
        ASSERT_TRUE(extents.ok()) << extents.error().toString();
        std::vector<double> data(static_cast<std::size_t>(ir::elementCount(*extents)));
        for (double &x : data)
            x = ir::isFloat(t->dtype) ? (negative(rng) ? -1.0 : 1.0) * magnitude(rng) : std::floor(magnitude(rng) * 40) + 1;
        inputs[t->name] = data;
        bufferInputs[buffer.name] = data;
    }
    auto run = ir::interpret(graph, sizes, inputs);
    ASSERT_TRUE(run.ok()) << run.error().toString();

    const Reference reference = referenceFor(GetParam().name);
    ASSERT_TRUE(reference) << "no hand-written reference for " << GetParam().name;
    const BufferValues expected = reference(sizes, bufferInputs);
    for (const auto &entry : expected) {
        const std::string &bufferName = entry.first;
        const std::vector<double> &values = entry.second;
        auto plan = std::find_if(lifted->buffers.begin(), lifted->buffers.end(),
                                 [&](const auto &b) { return b.name == bufferName; });
        ASSERT_NE(plan, lifted->buffers.end()) << bufferName;
        ASSERT_FALSE(plan->outputTensor.empty()) << bufferName << " is not produced by the graph";
        auto got = run->find(plan->outputTensor);
        ASSERT_NE(got, run->end()) << plan->outputTensor;
        ASSERT_EQ(got->second.size(), values.size()) << bufferName;
        for (std::size_t i = 0; i < values.size(); ++i) {
            ASSERT_NEAR(got->second[i], values[i], 1e-9 * std::max(1.0, std::fabs(values[i])))
                << bufferName << "[" << i << "] (graph tensor " << plan->outputTensor << ")";
        }
    }
}

// What the GPU test runs must at least compile: the program resized to its small test sizes, as
// device code, through NVRTC (which needs no GPU).
TEST_P(LiftCorpus, ResizedProgramCompilesWithNvrtc)
{
    const std::string original = readTextFile(corpusPath(GetParam().name));
    auto lifted = liftCorpus(GetParam().name);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    const std::string resized = resizeProgram(original, lifted->sizes, GetParam().small);
    EXPECT_EQ(std::count(resized.begin(), resized.end(), '\n'), std::count(original.begin(), original.end(), '\n'));
    cuda::CompileOptions options;
    options.arch = "sm_90";
    options.fileName = GetParam().name + ".cu";
    options.defines = hostConstantDefines();
    auto compiled = cuda::compileProgram(resized, options);
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    const auto entries = ptxEntryNames(compiled->ptx);
    for (const auto &launch : lifted->launches)
        EXPECT_TRUE(entries.count(launch.kernel)) << launch.kernel << " is not an entry of the PTX";
    // The resized program lifts to the same graph with the small sizes as its own.
    auto again = frontend::cudalift::liftCudaProgramDetailed(resized, GetParam().name + ".cu");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->program.graph.toString(), lifted->program.graph.toString());
}

INSTANTIATE_TEST_SUITE_P(Corpus, LiftCorpus, ::testing::ValuesIn(liftableCorpus()), programName);

class RefusedCorpus : public ::testing::TestWithParam<RefusedProgram> {};

TEST_P(RefusedCorpus, ReportsTheBlockingConstructWhereItIs)
{
    auto lifted = liftCorpus(GetParam().name);
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    const frontend::LiftedProgram &p = lifted->program;
    for (const ExpectedRefusal &r : GetParam().refusals) {
        auto opaque = std::find_if(p.opaque.begin(), p.opaque.end(), [&](const auto &k) { return k.name == r.kernel; });
        ASSERT_NE(opaque, p.opaque.end()) << r.kernel << " should be opaque\n" << describeLift(*lifted);
        EXPECT_EQ(opaque->why.location.line, r.line) << opaque->why.toString();
        EXPECT_EQ(opaque->why.location.column, r.column) << opaque->why.toString();
        EXPECT_NE(opaque->why.message.find(r.fragment), std::string::npos) << opaque->why.toString();
        EXPECT_EQ(opaque->why.severity, Severity::Warning);
        auto diagnostic = std::find_if(p.diagnostics.begin(), p.diagnostics.end(), [&](const Diagnostic &d) {
            return d.location.line == r.line && d.location.column == r.column && d.message.find(r.fragment) != std::string::npos;
        });
        EXPECT_NE(diagnostic, p.diagnostics.end()) << "the refusal is also a program diagnostic";
    }
    EXPECT_EQ(p.opaque.size(), GetParam().refusals.size()) << describeLift(*lifted);
    for (const std::string &op : GetParam().liftedOps)
        EXPECT_NE(p.graph.findOp(op), nullptr) << op << " should still lift\n" << describeLift(*lifted);
    EXPECT_TRUE(p.graph.validate().ok());
    expectGolden(GetParam().name, describeLift(*lifted));
}

std::string refusedName(const ::testing::TestParamInfo<RefusedProgram> &info)
{
    return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, RefusedCorpus, ::testing::ValuesIn(refusedCorpus()), refusedName);

TEST(LiftCorpusSize, HasTheProgramsTheBriefAsksFor)
{
    EXPECT_GE(liftableCorpus().size(), 20u);
    EXPECT_GE(refusedCorpus().size(), 5u);
}

} // namespace
