// The lifter never crashes or hangs: truncated and mutated corpus programs, pathological nesting
// and huge constants all come back as a Result (lifted, partly opaque, or a located error).
#include "tests/TimeScale.h"
#include "tests/lift/LiftCorpus.h"

#include "core/frontend/CudaParser.h"
#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/Lift.h"
#include "core/frontend/cudalift/CudaLift.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

using namespace stitch;
using namespace stitch::testing;

namespace {

void expectAnswers(const std::string &source, const std::string &what)
{
    const auto start = std::chrono::steady_clock::now();
    auto lifted = frontend::liftCudaProgram(source, "fuzz.cu");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 5.0 * kTimeScale) << what;
    if (lifted.ok())
        EXPECT_TRUE(lifted->graph.validate().ok()) << what << "\n" << lifted->graph.toString();
    else
        EXPECT_FALSE(lifted.error().message.empty()) << what;
}

TEST(LiftRobustness, TruncatedProgramsNeverCrash)
{
    std::mt19937 rng(7);
    for (const CorpusProgram &p : liftableCorpus()) {
        const std::string source = readTextFile(corpusPath(p.name));
        std::uniform_int_distribution<std::size_t> cut(0, source.size());
        for (int k = 0; k < 6; ++k) {
            const std::size_t at = cut(rng);
            expectAnswers(source.substr(0, at), p.name + " cut at " + std::to_string(at));
        }
    }
}

TEST(LiftRobustness, MutatedProgramsNeverCrash)
{
    std::mt19937 rng(11);
    const std::string alphabet = "+-*/%<>=!&|()[]{};,.0123456789xyzijkn";
    for (const CorpusProgram &p : liftableCorpus()) {
        const std::string source = readTextFile(corpusPath(p.name));
        std::uniform_int_distribution<std::size_t> pos(0, source.size() - 1);
        std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
        for (int k = 0; k < 6; ++k) {
            std::string mutated = source;
            for (int m = 0; m < 3; ++m)
                mutated[pos(rng)] = alphabet[pick(rng)];
            expectAnswers(mutated, p.name + " mutation " + std::to_string(k));
        }
    }
}

TEST(LiftRobustness, DeepNestingAndHugeConstantsAreRefusedNotFatal)
{
    std::string deep = "(i";
    for (int d = 0; d < 2000; ++d)
        deep = "(" + deep + " + 1)";
    deep += ")";
    const std::string src = "__global__ void k(const float *a, float *c, int n) {\n int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            " if (i < n) c[i] = a[" + deep + "];\n}\n"
                            "int main() {\n const int n = 4611686018427387904;\n float *d_a, *d_c;\n"
                            " cudaMalloc(&d_a, n * n * sizeof(float));\n cudaMalloc(&d_c, n * sizeof(float));\n"
                            " k<<<(n + 127) / 128, 128>>>(d_a, d_c, n);\n}\n";
    expectAnswers(src, "deep nesting");
}

/// A kernel and the main launching it, with shape nested depth times in the kernel's body (in
/// main's for the host shapes).
std::string nestedProgram(const std::string &shape, int depth)
{
    const auto repeat = [](const std::string &s, int n) {
        std::string out;
        for (int i = 0; i < n; ++i)
            out += s;
        return out;
    };
    std::string kernel = "c[i] = a[i];", host;
    if (shape == "parentheses")
        kernel = "c[i] = a[" + repeat("(", depth) + "i" + repeat(" + 1)", depth) + "];";
    else if (shape == "calls")
        kernel = "c[i] = a[" + repeat("f(", depth) + "i" + repeat(")", depth) + "];";
    else if (shape == "subscripts")
        kernel = "c[i] = " + repeat("a[", depth) + "i" + repeat("]", depth) + ";";
    else if (shape == "sum")
        kernel = "c[i] = a[i]" + repeat(" + 1.0f", depth) + ";";
    else if (shape == "blocks")
        kernel = repeat("{", depth) + "c[i] = a[i];" + repeat("}", depth);
    else if (shape == "ifs")
        kernel = repeat("if (i < n) ", depth) + "c[i] = a[i];";
    else if (shape == "loops")
        kernel = repeat("for (int j = 0; j < 2; ++j) ", depth) + "c[i] += a[i];";
    else if (shape == "host ifs")
        host = repeat("if (n > 0) ", depth) + "n;\n";
    else if (shape == "host sum")
        host = " int m = n" + repeat(" + 1", depth) + ";\n";
    return "__device__ int f(int x) { return x; }\n"
           "__global__ void k(const float *a, float *c, int n) {\n int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           " if (i < n) { " + kernel + " }\n}\n"
           "int main() {\n const int n = 1024;\n float *d_a, *d_c;\n"
           " cudaMalloc(&d_a, n * sizeof(float));\n cudaMalloc(&d_c, n * sizeof(float));\n" + host +
           " k<<<(n + 127) / 128, 128>>>(d_a, d_c, n);\n}\n";
}

TEST(LiftRobustness, EveryKindOfDeepNestingIsWalkedOrRefusedNotFatal)
{
    // Each walk over the syntax tree recurses per level. Nested just under what the parser reads
    // (frontend::kMaxCudaSyntaxDepth), every shape is walked without exhausting the stack (under
    // ASan at -O1 too, where a frame takes up to 22 KB); deeper, the file is refused where it gets
    // too deep. Before the bound, 8,000 nested ifs crashed the release build, 2,000 parentheses
    // and 400 nested calls the ASan one.
    for (const std::string shape :
         {"parentheses", "calls", "subscripts", "sum", "blocks", "ifs", "loops", "host ifs", "host sum"}) {
        // Each level of parentheses, calls and subscripts is two of the tree's.
        const bool twoLevels = shape == "parentheses" || shape == "calls" || shape == "subscripts";
        const int under = (static_cast<int>(frontend::kMaxCudaSyntaxDepth) - 40) / (twoLevels ? 2 : 1);
        expectAnswers(nestedProgram(shape, under), shape + " nested " + std::to_string(under) + " times");
        const std::string deep = nestedProgram(shape, 5000);
        auto lifted = frontend::liftCudaProgram(deep, "deep.cu");
        ASSERT_FALSE(lifted.ok()) << shape;
        EXPECT_EQ(lifted.error().kind, ErrorKind::Unsupported) << shape;
        EXPECT_NE(lifted.error().message.find("nested more than 1000 levels deep"), std::string::npos)
            << lifted.error().toString();
        ASSERT_TRUE(lifted.error().location.has_value()) << shape;
        EXPECT_EQ(lifted.error().location->line, shape.starts_with("host") ? 11 : 4) << lifted.error().toString();
        const frontend::SourceIndex index = frontend::indexCudaSource(deep, "deep.cu");
        EXPECT_TRUE(index.kernels.empty()) << shape;
        ASSERT_EQ(index.syntaxErrors.size(), 1u) << shape;
        EXPECT_EQ(index.syntaxErrors[0].location, *lifted.error().location) << shape;
    }
}

TEST(LiftRobustness, RecursiveMacrosTerminate)
{
    const std::string src = "#define A (B + 1)\n#define B (A + 1)\n"
                            "__global__ void k(float *c) { c[threadIdx.x] = A; }\n"
                            "int main() { float *d_c; cudaMalloc(&d_c, 32 * sizeof(float)); k<<<1, 32>>>(d_c); }\n";
    auto lifted = frontend::liftCudaProgram(src, "macro.cu");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    ASSERT_EQ(lifted->opaque.size(), 1u);
    EXPECT_NE(lifted->opaque[0].why.message.find("macro"), std::string::npos) << lifted->opaque[0].why.toString();
}

/// Text tree-sitter recovers from slowly (~25 us per byte): the fuzzer's reproducer, repeated.
std::string slowGarbage(std::size_t bytes)
{
    const std::string seed = readTextFile(std::string(STITCHCUDA_SOURCE_DIR) + "/tests/fuzz/corpus/slow-treesitter-error-recovery");
    std::string text;
    while (text.size() < bytes)
        text += seed;
    return text;
}

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(LiftRobustness, OversizedOrUnparsableInputIsALocatedErrorNotAHang)
{
    auto big = frontend::liftCudaProgram(std::string(9 << 20, ' '), "big.cu");
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.error().kind, ErrorKind::Parse);
    EXPECT_EQ(big.error().toString(), "big.cu:1:1: parse: big.cu is 9.0 MiB; CUDA files over 8.0 MiB are not parsed "
                                      "(the file is probably not CUDA source)");

    frontend::CudaParseLimits limits;
    limits.minBudget = std::chrono::milliseconds(50);
    limits.budgetPerByte = std::chrono::nanoseconds(0);
    const auto start = std::chrono::steady_clock::now();
    auto noise = frontend::cudalift::liftCudaProgramDetailed(slowGarbage(256 * 1024), "noise.cu", limits);
    EXPECT_LT(secondsSince(start), 1.0 * kTimeScale);
    ASSERT_FALSE(noise.ok());
    EXPECT_EQ(noise.error().kind, ErrorKind::Timeout);
    ASSERT_TRUE(noise.error().location.has_value());
    EXPECT_EQ(noise.error().location->toString(), "noise.cu:1:1");
    EXPECT_NE(noise.error().message.find("took longer than 50 ms"), std::string::npos) << noise.error().message;
    EXPECT_NE(noise.error().message.find("probably not CUDA"), std::string::npos) << noise.error().message;
}

TEST(LiftRobustness, MacroBodiesShareTheFileParseBudget)
{
    // The file's parse sees macro bodies as opaque text (fast), and each body is parsed again as
    // an expression (~20 ms for these): 100 bodies must not get 100 budgets of their own.
    std::string line;
    while (line.size() < 2048)
        line += "a<b<c<d ";
    std::string src = "__global__ void k(float *c) { c[threadIdx.x] = 1.0f; }\n";
    for (int m = 0; m < 100; ++m)
        src += "#define NOISE" + std::to_string(m) + " " + line + "\n";
    frontend::CudaParseLimits limits;
    limits.minBudget = std::chrono::milliseconds(150);
    limits.budgetPerByte = std::chrono::nanoseconds(0);
    const auto start = std::chrono::steady_clock::now();
    auto lifted = frontend::cudalift::liftCudaProgramDetailed(src, "macros.cu", limits);
    EXPECT_LT(secondsSince(start), 0.6 * kTimeScale);
    ASSERT_FALSE(lifted.ok());
    EXPECT_EQ(lifted.error().kind, ErrorKind::Timeout) << lifted.error().toString();
    ASSERT_TRUE(lifted.error().location.has_value());
    EXPECT_GE(lifted.error().location->line, 2); // the #define where the budget ran out
    EXPECT_NE(lifted.error().message.find("macro bodies of macros.cu"), std::string::npos) << lifted.error().message;
}

} // namespace

// One dispatch by extension for every caller (the optimizer, the CLI's loader): CUDA in any case
// comes with its host-side plan, a .te without, anything else is a located refusal.
TEST(LiftFileDetailed, PicksTheFrontendByExtensionAndKeepsTheHostPlanForCuda)
{
    const std::string cuda = "__global__ void add(const float *a, float *c, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) c[i] = a[i] + 1.0f;\n"
                             "}\n";
    for (const std::string name : {"add.cu", "ADD.CU", "add.cuh"}) {
        auto lifted = frontend::cudalift::liftFileDetailed(cuda, name);
        ASSERT_TRUE(lifted.ok()) << name << ": " << lifted.error().toString();
        ASSERT_TRUE(lifted->detail.has_value()) << name;
        EXPECT_FALSE(lifted->program.graph.ops().empty()) << name;
        EXPECT_EQ(lifted->program.graph.ops().size(), lifted->detail->program.graph.ops().size());
        EXPECT_TRUE(frontend::isCudaFileName(name));
    }
    auto te = frontend::cudalift::liftFileDetailed("graph g\ninput A: f32[4]\noutput B: f32[4]\nB[i] = A[i] * 2\n",
                                                   "g.te");
    ASSERT_TRUE(te.ok()) << te.error().toString();
    EXPECT_FALSE(te->detail.has_value());
    EXPECT_FALSE(frontend::isCudaFileName("g.te"));
    EXPECT_FALSE(frontend::isCudaFileName("notes.cu.txt"));
    auto other = frontend::cudalift::liftFileDetailed("x", "kernel.py");
    ASSERT_FALSE(other.ok());
    EXPECT_EQ(other.error().kind, ErrorKind::Unsupported);
    ASSERT_TRUE(other.error().location.has_value());
    EXPECT_EQ(other.error().location->file, "kernel.py");
}
