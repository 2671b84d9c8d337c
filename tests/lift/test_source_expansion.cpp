// Includes, conditionals and -D before lifting (core/frontend/SourceExpansion.h), and the #if
// arithmetic (PreprocessorConditions.h). Headers come from a map, as SourceOptions::readFile allows.
#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/Lift.h"
#include "core/frontend/PreprocessorConditions.h"
#include "core/frontend/SourceExpansion.h"
#include "core/frontend/cudalift/CudaLift.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace {

using namespace stitch;
using namespace stitch::frontend;

SourceOptions withFiles(std::map<std::string, std::string> files, SourceOptions options = {})
{
    options.readFile = [files = std::move(files)](const std::string &path) -> std::optional<std::string> {
        const auto it = files.find(path);
        if (it == files.end())
            return std::nullopt;
        return it->second;
    };
    return options;
}

std::optional<bool> eval(const char *expression, const MacroTable &macros = {})
{
    return evaluateCondition(expression, macros);
}

bool hasDiagnostic(const std::vector<Diagnostic> &ds, const std::string &part)
{
    return std::any_of(ds.begin(), ds.end(), [&](const Diagnostic &d) { return d.message.find(part) != std::string::npos; });
}

const char *kMatvecKernel = R"(__global__ void matvec(const float *A, const float *x, float *y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float dot = 0.0f;
        for (int j = 0; j < cols; j++)
            dot += A[row * cols + j] * x[j];
        y[row] = dot;
    }
}
)";

const char *kMatvecMain = R"(int main()
{
    float *d_A, *d_x, *d_y;
    cudaMalloc(&d_A, ROWS * COLS * sizeof(float));
    cudaMalloc(&d_x, COLS * sizeof(float));
    cudaMalloc(&d_y, ROWS * sizeof(float));
    matvec<<<(ROWS + 127) / 128, 128>>>(d_A, d_x, d_y, ROWS, COLS);
    return 0;
}
)";

TEST(PreprocessorConditions, ArithmeticAndDefinedAsInC)
{
    MacroTable m;
    m.define("N", "1024");
    m.define("TILE", "(N / 64)");
    m.define("EMPTY", "");
    m.defineFunctionLike("MAX");
    EXPECT_EQ(eval("1"), true);
    EXPECT_EQ(eval("0"), false);
    EXPECT_EQ(eval("N > 512 && TILE == 16", m), true);
    EXPECT_EQ(eval("defined(N) && !defined NOT_THERE", m), true);
    EXPECT_EQ(eval("NOT_THERE", m), false) << "an undefined user name is 0";
    EXPECT_EQ(eval("(1 << 4) | 0x10 == 16 ? 2 : 0", m), true);
    EXPECT_EQ(eval("N % 7 - 2 * 3 >= -4", m), true);
    EXPECT_EQ(eval("10 / 0", m), std::nullopt);
    EXPECT_EQ(eval("MAX(1, 2) > 1", m), std::nullopt) << "function-like macros are the compiler's";
    EXPECT_EQ(eval("EMPTY", m), std::nullopt);
    EXPECT_EQ(eval("'a' == 97", m), std::nullopt);
    EXPECT_EQ(eval("1 +", m), std::nullopt);
}

TEST(PreprocessorConditions, NamesOnlyTheCompilerKnowsStayOpenUnlessTheKnownSideDecides)
{
    MacroTable m;
    EXPECT_EQ(m.status("__CUDA_ARCH__"), MacroTable::Status::Unknown);
    EXPECT_EQ(m.status("CUDART_VERSION"), MacroTable::Status::Unknown);
    EXPECT_EQ(m.status("USE_SHARED"), MacroTable::Status::Undefined);
    EXPECT_EQ(eval("__CUDA_ARCH__ >= 800", m), std::nullopt);
    EXPECT_EQ(eval("defined(__CUDA_ARCH__)", m), std::nullopt);
    EXPECT_EQ(eval("0 && __CUDA_ARCH__ >= 800", m), false);
    EXPECT_EQ(eval("__CUDA_ARCH__ >= 800 || 1", m), true);
    EXPECT_EQ(eval("defined(__CUDA_ARCH__) ? 1 : 1", m), true);
    m.setUnknown("BLOCK");
    EXPECT_EQ(eval("BLOCK > 8", m), std::nullopt);
}

TEST(SourceExpansion, AFileWithNothingToExpandComesBackByteForByte)
{
    const std::string text = std::string("#include <stdio.h>\n#define ROWS 64\n") + kMatvecKernel;
    const ExpandedSource e = expandCudaSource(text, "plain.cu");
    EXPECT_FALSE(e.changed);
    EXPECT_EQ(e.text, text);
    EXPECT_TRUE(e.diagnostics.empty());
}

TEST(SourceExpansion, DecidedConditionalsBecomeBlanksOfTheSameLength)
{
    const std::string text = "#ifdef USE_DOUBLE\ntypedef double real;\n#else\ntypedef float real;\n#endif\n"
                             "#if 0\nthis is not C\n#endif\nint after;\n";
    const ExpandedSource e = expandCudaSource(text, "cond.cu");
    ASSERT_EQ(e.text.size(), text.size());
    EXPECT_EQ(std::count(e.text.begin(), e.text.end(), '\n'), std::count(text.begin(), text.end(), '\n'));
    EXPECT_EQ(e.text.find("double"), std::string::npos);
    EXPECT_EQ(e.text.find("not C"), std::string::npos);
    EXPECT_EQ(e.text.find("#"), std::string::npos) << "decided directives are blanked too";
    EXPECT_EQ(e.text.find("typedef float real;"), text.find("typedef float real;")) << "offsets are the file's";

    SourceOptions d;
    d.defines = {{"USE_DOUBLE", "1"}};
    const ExpandedSource e2 = expandCudaSource(text, "cond.cu", d);
    EXPECT_NE(e2.text.find("typedef double real;"), std::string::npos);
    EXPECT_EQ(e2.text.find("typedef float real;"), std::string::npos);
}

TEST(SourceExpansion, ConditionsOnTheCompilersNamesKeepEveryBranchAsWritten)
{
    const std::string text = "#if 0\nint a;\n#elif __CUDA_ARCH__ >= 800\nint b;\n#else\nint c;\n#endif\n"
                             "#ifdef __CUDA_ARCH__\nint d;\n#endif\n";
    const ExpandedSource e = expandCudaSource(text, "arch.cu");
    ASSERT_EQ(e.text.size(), text.size());
    EXPECT_EQ(e.text.find("int a;"), std::string::npos);
    // The #elif that cannot be decided opens the group anew, as an #if of the same length.
    EXPECT_NE(e.text.find("#if   __CUDA_ARCH__ >= 800"), std::string::npos);
    EXPECT_NE(e.text.find("int b;"), std::string::npos);
    EXPECT_NE(e.text.find("#else\nint c;\n#endif"), std::string::npos);
    EXPECT_NE(e.text.find("#ifdef __CUDA_ARCH__\nint d;\n#endif"), std::string::npos);
}

TEST(SourceExpansion, DefineOnTheCommandLineSetsASizeAndTheFilesOwnDefinitionWins)
{
    const std::string program = std::string("#ifndef ROWS\n#define ROWS 4096\n#endif\n#define COLS 1024\n") + kMatvecKernel + kMatvecMain;
    auto base = cudalift::liftCudaProgramDetailed(program, "sized.cu");
    ASSERT_TRUE(base.ok()) << base.error().message;
    EXPECT_EQ(base->program.sizes.at("ROWS"), 4096);

    SourceOptions d;
    d.defines = {{"ROWS", "256"}, {"COLS", "64"}};
    auto sized = cudalift::liftCudaProgramDetailed(program, "sized.cu", {}, d);
    ASSERT_TRUE(sized.ok()) << sized.error().message;
    EXPECT_EQ(sized->program.sizes.at("ROWS"), 256) << "-D decides #ifndef ROWS";
    EXPECT_EQ(sized->program.sizes.at("COLS"), 1024) << "the file's unconditional #define comes after -D, as in nvcc";
    EXPECT_TRUE(hasDiagnostic(sized->program.diagnostics, "'COLS' is defined here and with -D"));
    EXPECT_TRUE(sized->program.opaque.empty());
}

TEST(SourceExpansion, AKernelInAQuotedHeaderLiftsAndIsLocatedInTheHeader)
{
    const std::string header = std::string("#pragma once\n// the kernel, kept apart\n") + kMatvecKernel;
    const std::string program = std::string("#include <cuda_runtime.h>\n#include \"kernels/matvec.cuh\"\n"
                                            "#include \"kernels/matvec.cuh\"\n#define ROWS 4096\n#define COLS 1024\n") +
                                kMatvecMain;
    const SourceOptions options = withFiles({{"src/kernels/matvec.cuh", header}});
    auto lifted = cudalift::liftCudaProgramDetailed(program, "src/app.cu", {}, options);
    ASSERT_TRUE(lifted.ok()) << lifted.error().message;
    EXPECT_TRUE(lifted->program.opaque.empty());
    ASSERT_EQ(lifted->program.launches.size(), 1u);
    EXPECT_FALSE(lifted->program.launches[0].ops.empty());
    EXPECT_EQ(lifted->program.launches[0].location.file, "src/app.cu");
    EXPECT_EQ(lifted->program.launches[0].location.line, 12) << "rows after the header are the file's again";
    ASSERT_EQ(lifted->includedFiles.size(), 1u) << "inlined once";
    EXPECT_EQ(lifted->includedFiles[0], "src/kernels/matvec.cuh");

    // The outline of the lifted text places the kernel in the header, at its own line.
    const SourceIndex index = indexCudaSource(lifted->source, "src/app.cu");
    ASSERT_EQ(index.kernels.size(), 1u);
    EXPECT_EQ(index.kernels[0].nameLocation.file, "src/kernels/matvec.cuh");
    EXPECT_EQ(index.kernels[0].nameLocation.line, 3);
}

TEST(SourceExpansion, IncludeFoldersAreSearchedAfterTheIncludersOwn)
{
    const std::string program = std::string("#include \"matvec.cuh\"\n#define ROWS 64\n#define COLS 64\n") + kMatvecMain;
    SourceOptions options;
    options.includeDirectories = {"third_party/inc"};
    options = withFiles({{"third_party/inc/matvec.cuh", kMatvecKernel}}, options);
    auto lifted = liftCudaProgram(program, "app.cu", options);
    ASSERT_TRUE(lifted.ok()) << lifted.error().message;
    EXPECT_TRUE(lifted->opaque.empty());

    // Without -I the header is not found: a located warning, and the kernel is unknown.
    auto missing = cudalift::liftCudaProgramDetailed(program, "app.cu", {}, withFiles({}));
    ASSERT_FALSE(missing.ok()) << "no __global__ kernel is left in the file";
    const ExpandedSource e = expandCudaSource(program, "app.cu", withFiles({}));
    ASSERT_EQ(e.diagnostics.size(), 1u);
    EXPECT_EQ(e.diagnostics[0].location.toString(), "app.cu:1:1");
    EXPECT_NE(e.diagnostics[0].message.find("cannot find the included file 'matvec.cuh'"), std::string::npos);
    EXPECT_NE(e.diagnostics[0].message.find("-I"), std::string::npos);
}

TEST(SourceExpansion, GrammarLimitsInsideAHeaderAreReportedAtTheHeadersLine)
{
    const std::string header = "#pragma once\n__global__ void broken(float *a) { a[0] = ; }\n";
    const std::string program = std::string("#include \"broken.cuh\"\n#define ROWS 64\n#define COLS 64\n") + kMatvecKernel + kMatvecMain;
    auto lifted = cudalift::liftCudaProgramDetailed(program, "app.cu", {}, withFiles({{"broken.cuh", header}}));
    ASSERT_TRUE(lifted.ok()) << lifted.error().message;
    bool inHeader = false;
    for (const Diagnostic &d : lifted->program.diagnostics)
        inHeader = inHeader || (d.location.file == "broken.cuh" && d.location.line == 2);
    EXPECT_TRUE(inHeader);
}

TEST(SourceExpansion, HeadersKeepTheirOwnConditionalsAndAnUnclosedGroupIsAWarning)
{
    const std::string header = "#ifndef GUARD_H\n#define GUARD_H\n#if TILE > 8\nint big;\n#else\nint small;\n#endif\n";
    SourceOptions options = withFiles({{"guard.h", header}});
    options.defines = {{"TILE", "16"}};
    const ExpandedSource e = expandCudaSource("#include \"guard.h\"\nint main() { return 0; }\n", "main.cu", options);
    EXPECT_NE(e.text.find("int big;"), std::string::npos);
    EXPECT_EQ(e.text.find("int small;"), std::string::npos);
    EXPECT_NE(e.text.find("#line 1 \"guard.h\""), std::string::npos);
    EXPECT_NE(e.text.find("#line 2 \"main.cu\"\nint main()"), std::string::npos);
    EXPECT_NE(e.text.find("#define TILE 16"), std::string::npos) << "-D reaches the lifter's macros";
    EXPECT_TRUE(hasDiagnostic(e.diagnostics, "not closed"));
}

TEST(SourceExpansion, LineMapFollowsLineDirectives)
{
    const LineMap none("int a;\nint b;\n");
    EXPECT_TRUE(none.identity());
    EXPECT_EQ(none.at("f.cu", 1, 4).toString(), "f.cu:2:5");
    const LineMap map("int a;\n#line 10 \"h.cuh\"\nint b;\nint c;\n# line 3\nint d;\n");
    EXPECT_EQ(map.at("f.cu", 0, 0).toString(), "f.cu:1:1");
    EXPECT_EQ(map.at("f.cu", 2, 0).toString(), "h.cuh:10:1");
    EXPECT_EQ(map.at("f.cu", 3, 2).toString(), "h.cuh:11:3");
    EXPECT_EQ(map.at("f.cu", 5, 0).toString(), "h.cuh:3:1") << "a #line without a file keeps the file";
}

TEST(SourceExpansion, DefinesParseLikeTheCompilersOption)
{
    auto a = parseDefine("-DTILE=32");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->first, "TILE");
    EXPECT_EQ(a->second, "32");
    auto b = parseDefine("USE_SHARED");
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->second, "1");
    EXPECT_FALSE(parseDefine("=3").ok());
    EXPECT_FALSE(parseDefine("-D3X=1").ok());
}

} // namespace

namespace {

const char *kScaleTemplate = R"(template <typename T, int F>
__global__ void scale(const T *in, T *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * F;
}
)";

} // namespace

TEST(LiftTemplates, EachDistinctArgumentListIsOneInstanceNamedAfterIt)
{
    const std::string program = std::string(kScaleTemplate) + R"(int main()
{
    float *a, *b, *c;
    cudaMalloc(&a, 1024 * sizeof(float));
    cudaMalloc(&b, 1024 * sizeof(float));
    cudaMalloc(&c, 1024 * sizeof(float));
    scale<float, 2><<<4, 256>>>(a, b, 1024);
    scale<float, 3><<<4, 256>>>(b, c, 1024);
    scale<float, 2><<<4, 256>>>(c, a, 1024);
    return 0;
}
)";
    auto lifted = cudalift::liftCudaProgramDetailed(program, "t.cu");
    ASSERT_TRUE(lifted.ok()) << lifted.error().message;
    EXPECT_TRUE(lifted->program.opaque.empty());
    ASSERT_EQ(lifted->program.launches.size(), 3u);
    EXPECT_EQ(lifted->program.launches[0].kernel, "scale_float_2");
    EXPECT_EQ(lifted->program.launches[1].kernel, "scale_float_3");
    EXPECT_EQ(lifted->program.launches[2].kernel, "scale_float_2");
    const std::string &text = lifted->source;
    EXPECT_EQ(text.find("void scale_float_2"), text.rfind("void scale_float_2")) << "one instance per argument list";
    EXPECT_NE(text.find("out[i] = in[i] * (3);"), std::string::npos);
    // The graph's op is located in the template, at its own line.
    const auto &ops = lifted->program.graph.ops();
    ASSERT_FALSE(ops.empty());
    EXPECT_EQ(ops.back().source->begin.file, "t.cu");
    EXPECT_EQ(ops.back().source->begin.line, 6);
    EXPECT_TRUE(lifted->program.expandedSource.empty()) << "the file needed no preprocessing; instances are not replayed";
}

TEST(LiftTemplates, AnArgumentThatIsNeitherGivenNorDeducibleIsALocatedReason)
{
    const std::string program = std::string(kScaleTemplate) + R"(int main()
{
    float *a, *b;
    cudaMalloc(&a, 1024 * sizeof(float));
    cudaMalloc(&b, 1024 * sizeof(float));
    scale<float><<<4, 256>>>(a, b, 1024);
    return 0;
}
)";
    auto lifted = cudalift::liftCudaProgramDetailed(program, "t.cu");
    ASSERT_TRUE(lifted.ok()) << lifted.error().message;
    ASSERT_EQ(lifted->program.opaque.size(), 1u);
    const Diagnostic &why = lifted->program.opaque[0].why;
    EXPECT_EQ(why.location.toString(), "t.cu:13:5");
    EXPECT_NE(why.message.find("the template argument 'F' of 'scale' is neither given nor deducible"), std::string::npos)
        << why.message;
}

TEST(LiftTemplates, ATemplateInAHeaderIsInstantiatedAndLocatedThere)
{
    const std::string program = R"(#include "scale.cuh"
int main()
{
    float *a, *b;
    cudaMalloc(&a, 1024 * sizeof(float));
    cudaMalloc(&b, 1024 * sizeof(float));
    scale<float, 4><<<4, 256>>>(a, b, 1024);
    return 0;
}
)";
    auto lifted = cudalift::liftCudaProgramDetailed(program, "app.cu", {}, withFiles({{"scale.cuh", kScaleTemplate}}));
    ASSERT_TRUE(lifted.ok()) << lifted.error().message;
    ASSERT_TRUE(lifted->program.opaque.empty());
    const auto &ops = lifted->program.graph.ops();
    ASSERT_FALSE(ops.empty());
    EXPECT_EQ(ops.back().source->begin.file, "scale.cuh");
    EXPECT_EQ(ops.back().source->begin.line, 6);
}
