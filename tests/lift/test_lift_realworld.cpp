// Real-world-style CUDA programs (tests/lift/corpus_realworld, README there): every one compiles
// with nvcc, and none may be refused for syntax. What the CUDA grammar cannot read is a located
// warning ("the CUDA grammar ... cannot read this construct"); kernels whose own syntax is clean
// lift (asserted op by op), the others stay opaque with a located, true reason.
//   corpus_realworld/*.cu -> frontend::liftFile -> ops per launch, opaque reasons, grammar limits
#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/Lift.h"
#include "core/ir/Graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace stitch;
using frontend::LiftedProgram;

namespace {

namespace fs = std::filesystem;

/// One kernel's outcome: lifted into ops (kind and text of each, in order), or opaque with a
/// reason (a fragment of its message) located at a line.
struct KernelOutcome {
    std::string kernel;
    std::vector<std::pair<std::string, std::string>> ops; ///< {"map" | "reduce:sum" ..., op text}
    std::string opaqueReason;                              ///< empty when lifted
    int opaqueLine = 0;
};

struct RealWorldCase {
    std::string file;
    std::vector<KernelOutcome> kernels; ///< every __global__ kernel of the file
    std::set<int> grammarLimitLines;    ///< lines with a grammar-limit warning
};

KernelOutcome lifted(std::string kernel, std::vector<std::pair<std::string, std::string>> ops)
{
    return {std::move(kernel), std::move(ops), {}, 0};
}

KernelOutcome opaque(std::string kernel, std::string reason, int line)
{
    return {std::move(kernel), {}, std::move(reason), line};
}

const std::string kGrammar = "the CUDA grammar (tree-sitter-cuda ";
const std::string kKernelUnreadable = "cannot read this construct, so the kernel stays opaque";
const std::string kHostUnreadable = "cannot read this construct, so every kernel launched after it stays opaque";

const std::vector<RealWorldCase> &cases()
{
    static const std::vector<RealWorldCase> all = {
        {"device_query_vecadd.cu", {lifted("vecAdd", {{"map", "dC[i] = dA[i] + dB[i]"}})}, {}},
        {"thread_guard_lena.cu",
         {lifted("scaleA", {{"map", "scaled[t] = A[t] * 0.5"}}),
          lifted("shiftA", {{"map", "diff[t] = scaled[t] - scaled[t - 1]"}})},
         {}},
        {"member_initializer_timer.cu", {lifted("saxpy", {{"map", "y_1[i] = 2.0 * x[i] + y[i]"}})}, {}},
        {"ifndef_in_parameters.cu",
         // The #ifndef is decided before parsing (SourceExpansion.h): the grammar never sees it.
         {lifted("addBias", {{"map", "out[r, c] = in[r, c] + bias[c]"}}), lifted("relu", {{"map", "act[i] = max(hidden[i], 0.0)"}})},
         {}},
        {"stream_callback.cu",
         {lifted("square", {{"map", "d_sq[i] = d_data[i] * d_data[i]"}}),
          opaque("incKernel", "the kernel runs on stream 'stream' and may overlap other work", 48)},
         {14}},
        {"typeid_report.cu",
         {lifted("halve", {{"map", "out[i] = in[i] * 0.5"}}), opaque("twice", kHostUnreadable, 39)},
         {39}},
        {"streams_overlap.cu",
         {opaque("addConstant", "the kernel runs on stream 'streams[s]' and may overlap other work", 27)},
         {}},
        {"host_templates.cu", {lifted("transpose", {{"map", "out[x, y] = in[y, x]"}})}, {}},
        {"raii_device_buffer.cu",
         {opaque("negate", "the value of argument 'values.get()' is not known (result of 'values.get')", 35)},
         {}},
        {"error_check_macros.cu", {lifted("rowSum", {{"reduce:sum", "sums[r] = sum(c) m[r, c]"}})}, {}},
        {"struct_params_kernel.cu",
         {lifted("axpbyPlain",
                 {{"map", "y_1[i] = select(i < N / 256 * 256, 2.0 * x[i] + 0.5 * y[i], y[i])"}}),
          opaque("axpby", "the value of argument 'p' is not known (type 'AxpbyParams' is not modelled)", 44)},
         {}},
        {"lone_kernels_guards.cu",
         {lifted("dotPartial", {{"map", "c[i] = a[i] * b[i]"}}),
          lifted("oneBlockScale", {{"map", "oneBlockScale_c[i] = 2.0 * oneBlockScale_a[i]"}}),
          lifted("matmulNaive", {{"reduce:sum", "C[row, col] = sum(k) A[row, k] * B[k, col]"}})},
         {}},
        {"shared_reduction_template.cu",
         {lifted("squareAll", {{"map", "sq[i] = in[i] * in[i]"}}),
          // Instantiated at its launch (reduce<256>); the halving loop is what stays opaque.
          opaque("reduce_256", "the loop does not count up by a constant step", 17)},
         {}},
        {"cublas_style_gemv.cu", {lifted("gemv", {{"reduce:sum", "y[r] = sum(c) A[r, c] * x[c]"}})}, {}},
        // Issue 33 item 3: templates instantiated at their calls, headers, macros and conditionals.
        {"template_axpy_deduced.cu",
         {lifted("axpy_float", {{"map", "d_y_1[i] = select(i < N / 256 * 256, 2.0 * d_x[i] + d_y[i], d_y[i])"}}),
          opaque("scaleUnrolled_float_4", "the store's index cannot be written as one thread index per dimension", 24)},
         {}},
        {"template_device_helpers.cu",
         {lifted("squashRows",
                 {{"reduce:sum", "out[r, c] = sum(k) select(in[r, c] < 0.0, 0.0, select(in[r, c] > 1.0, 1.0, in[r, c])) * k"}})},
         {}},
        {"header_kernels.cu",
         {lifted("biasGelu",
                 {{"map", "y[r, c] = 0.5 * (x[r, c] + bias[c]) * (1.0 + tanh(0.7978845608 * (x[r, c] + bias[c] + 0.044715 * "
                          "(x[r, c] + bias[c]) * (x[r, c] + bias[c]) * (x[r, c] + bias[c]))))"}})},
         {}},
        {"macro_variants.cu",
         {lifted("activate", {{"map", "out[i] = select(in[i] > 0.0, in[i], 0.01 * in[i])"}}),
          opaque("copyCached", "this kind of statement (preproc_if) is not supported", 36)},
         {}},
        // Issue 33 items 4 and 5: sizes known at run time; element types.
        {"runtime_sizes.cu",
         {lifted("addOne", {{"map", "b[r, c] = a[r, c] + 1.0"}}), lifted("scaleVec", {{"map", "w[i] = v[i] * 0.5"}})},
         {}},
        {"element_types.cu",
         {lifted("axpyDouble", {{"map", "y_1[i] = select(i < N / 256 * 256, 2.0 * x[i] + y[i], y[i])"}}),
          lifted("histogramFree", {{"map", "shifted[i] = keys[i] * 2 + 1"}}),
          lifted("scaleHalf", {{"map", "hy[i] = hx[i] * 0.5"}}),
          lifted("widenHalf", {{"map", "wide[i] = float32(hx[i]) * 4.0"}}),
          opaque("normalizePixels", "holds 'unsigned char' elements, a type the graph does not express", 69)},
         {}},
        // Ten more (issue 33's corpus): samples-style macros, templates, lone kernels, headers, types.
        {"samples_stencil_timing.cu",
         {lifted("jacobiStep",
                 {{"map", "d_b[y, x] = 0.25 * (select(x > 0, d_a[y, x - 1], 0.0) + select(x < NX - 1, d_a[y, x + 1], 0.0) + "
                          "select(y > 0, d_a[y - 1, x], 0.0) + select(y < NY - 1, d_a[y + 1, x], 0.0))"}})},
         {}},
        {"transpose_tiled_template.cu",
         {lifted("copyBaseline", {{"map", "d_copy[y, x] = d_in[y, x]"}}),
          opaque("transposeTiled_32_8", "'tile' is written inside a loop", 26)},
         {}},
        {"softmax_batched_alone.cu",
         {lifted("rowSoftmax",
                 {{"reduce:max", "rowSoftmax_m[r] = max(c, init=-1e+30) x[r, c]"},
                  {"reduce:sum", "rowSoftmax_s[r] = sum(c) exp(x[r, c] - rowSoftmax_m[r])"},
                  {"map", "y[r, c] = exp(x[r, c] - rowSoftmax_m[r]) / rowSoftmax_s[r]"}}),
          lifted("batchedMatmul", {{"reduce:sum", "C[b, row, col] = sum(k) A[b, row, k] * B[b, k, col]"}})},
         {}},
        {"ops_header.cu",
         {lifted("affineLeaky",
                 {{"map", "y[f, i] = select(x[f, i] * w[f] + b[f] > 0.0, x[f, i] * w[f] + b[f], 0.2 * (x[f, i] * w[f] + b[f]))"}}),
          lifted("leakyOnly", {{"map", "z[i, j] = select(y[i, j] > 0.0, y[i, j], 0.2 * y[i, j])"}})},
         {}},
        {"pipeline_double.cu",
         {lifted("normalize", {{"map", "a[i] = (raw[i] - 0.5) * 2.0"}}),
          lifted("scale", {{"map", "b[i] = 3.0 * a[i] + -1.0"}}),
          lifted("clampRange", {{"map", "result[i] = min(max(b[i], -1.0), 1.0)"}})},
         {}},
        {"argv_grid_2d.cu",
         {lifted("rgbToLuma", {{"map", "luma[y, x] = 0.299 * r[y, x] + 0.587 * g[y, x] + 0.114 * b[y, x]"}}),
          lifted("applyGain", {{"map", "luma_1[y, x] = luma[y, x] * 1.5"}})},
         {}},
        {"grid_stride_fixed.cu",
         {lifted("saxpyStride", {{"map", "y_1[i] = 2.0 * x[i] + y[i]"}}),
          lifted("squareDiff", {{"map", "d2[i] = (x[i] - y_1[i]) * (x[i] - y_1[i])"}})},
         {}},
        {"half_mixed.cu",
         {lifted("residualAdd", {{"map", "hsum[i, j] = x[i, j] + res[i, j]"}}),
          lifted("rowMeanSquare",
                 {{"reduce:sum", "rowMeanSquare_acc[r] = sum(c) float32(hsum[r, c]) * float32(hsum[r, c])"},
                  {"map", "ms[r] = rowMeanSquare_acc[r] / HIDDEN"}})},
         {}},
        {"raii_wrapper_plain.cu",
         {lifted("sigmoid", {{"map", "d_out[i] = sigmoid(d_in[i])"}}),
          opaque("fillRamp", "the value of argument 'scratch.data()' is not known (result of 'scratch.data')", 64)},
         {}},
        {"real_t_extern_c.cu",
         {lifted("axpbyReal", {{"map", "y_1[i] = 2.0 * x[i] + 0.5 * y[i]"}}),
          lifted("reciprocal", {{"map", "r[i] = 1.0 / (y_1[i] + 1.0)"}})},
         {}},
    };
    return all;
}

fs::path corpusDir()
{
    return fs::path(STITCHCUDA_SOURCE_DIR) / "tests/lift/corpus_realworld";
}

std::string readText(const fs::path &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string opKind(const ir::ComputeOp &op)
{
    return op.reduction ? "reduce:" + std::string(ir::reduceKindName(op.reduction->kind)) : "map";
}

std::string everything(const LiftedProgram &p)
{
    std::string text;
    for (const Diagnostic &d : p.diagnostics)
        text += d.toString() + "\n";
    return text;
}

class RealWorld : public testing::TestWithParam<RealWorldCase> {};

} // namespace

TEST(RealWorldCorpus, EveryFileIsInTheTable)
{
    std::set<std::string> files, listed;
    for (const fs::directory_entry &e : fs::directory_iterator(corpusDir())) {
        if (e.path().extension() == ".cu")
            files.insert(e.path().filename().string());
    }
    for (const RealWorldCase &c : cases())
        listed.insert(c.file);
    EXPECT_EQ(files, listed);
    EXPECT_GE(files.size(), 12u);
}

TEST_P(RealWorld, IsNeverRefusedForSyntaxAndEachKernelHasItsOutcome)
{
    const RealWorldCase &c = GetParam();
    const std::string source = readText(corpusDir() / c.file);
    ASSERT_FALSE(source.empty()) << c.file;
    frontend::SourceOptions options;
    options.includeDirectories = {corpusDir().string()}; // the headers beside the programs
    auto result = frontend::liftFile(source, c.file, options);
    ASSERT_TRUE(result.ok()) << result.error().toString();
    const LiftedProgram &p = *result;
    const std::string all = everything(p);
    EXPECT_EQ(all.find("syntax error"), std::string::npos) << all;

    // Grammar limits: located warnings that name the grammar and the authority, on these lines.
    std::set<int> limitLines;
    for (const Diagnostic &d : p.diagnostics) {
        if (!d.message.starts_with(kGrammar))
            continue;
        EXPECT_EQ(d.severity, Severity::Warning) << d.toString();
        EXPECT_EQ(d.location.file, c.file);
        EXPECT_NE(d.message.find("nvcc/NVRTC is the authority"), std::string::npos) << d.toString();
        limitLines.insert(d.location.line);
    }
    EXPECT_EQ(limitLines, c.grammarLimitLines) << all;

    std::set<std::string> expectedKernels, seenKernels;
    for (const KernelOutcome &k : c.kernels) {
        expectedKernels.insert(k.kernel);
        SCOPED_TRACE(c.file + ": " + k.kernel);
        const auto launch = std::find_if(p.launches.begin(), p.launches.end(),
                                         [&](const frontend::LiftedLaunch &l) { return l.kernel == k.kernel; });
        const auto op = std::find_if(p.opaque.begin(), p.opaque.end(),
                                     [&](const frontend::OpaqueKernel &o) { return o.name == k.kernel; });
        if (k.opaqueReason.empty()) {
            ASSERT_NE(launch, p.launches.end()) << all;
            EXPECT_EQ(op, p.opaque.end()) << op->why.toString();
            std::vector<std::pair<std::string, std::string>> ops;
            for (const std::string &name : launch->ops) {
                const auto it = std::find_if(p.graph.ops().begin(), p.graph.ops().end(),
                                             [&](const ir::ComputeOp &o) { return o.name == name; });
                ASSERT_NE(it, p.graph.ops().end()) << name;
                ops.emplace_back(opKind(*it), it->toString());
            }
            EXPECT_EQ(ops, k.ops);
        } else {
            ASSERT_NE(op, p.opaque.end()) << all;
            EXPECT_NE(op->why.message.find(k.opaqueReason), std::string::npos) << op->why.toString();
            EXPECT_EQ(op->why.location.file, c.file);
            EXPECT_EQ(op->why.location.line, k.opaqueLine) << op->why.toString();
            if (launch != p.launches.end()) {
                EXPECT_TRUE(launch->ops.empty());
            }
        }
    }
    for (const frontend::LiftedLaunch &l : p.launches)
        seenKernels.insert(l.kernel);
    for (const frontend::OpaqueKernel &o : p.opaque)
        seenKernels.insert(o.name);
    EXPECT_EQ(seenKernels, expectedKernels);

    // The outline finds every kernel too, and reports what the grammar cannot read as warnings.
    // It reads the text lifted (headers inlined); a template is outlined once, by its own name
    // (reduce), where the lifter names its instances (reduce_256).
    const frontend::SourceIndex index = frontend::indexCudaSource(p.expandedSource.empty() ? source : p.expandedSource, c.file);
    std::set<std::string> outlined;
    for (const frontend::KernelInfo &k : index.kernels) {
        if (k.qualifier == "__global__")
            outlined.insert(k.name);
    }
    auto instanceOf = [](const std::string &lifted, const std::string &outline) {
        return lifted == outline || lifted.starts_with(outline + "_");
    };
    for (const std::string &o : outlined) {
        EXPECT_TRUE(std::any_of(expectedKernels.begin(), expectedKernels.end(), [&](const std::string &e) { return instanceOf(e, o); }))
            << o;
    }
    for (const std::string &e : expectedKernels) {
        EXPECT_TRUE(std::any_of(outlined.begin(), outlined.end(), [&](const std::string &o) { return instanceOf(e, o); })) << e;
    }
    for (const Diagnostic &d : index.syntaxErrors) {
        EXPECT_EQ(d.severity, Severity::Warning) << d.toString();
    }
}

INSTANTIATE_TEST_SUITE_P(LiftCuda, RealWorld, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<RealWorldCase> &info) {
                             std::string name = info.param.file.substr(0, info.param.file.find('.'));
                             name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
                             return name;
                         });

TEST(RealWorldCorpus, RunTimeSizesAreSymbolsToBindNamedAfterWhatComputesThem)
{
    auto p = frontend::liftFile(readText(corpusDir() / "runtime_sizes.cu"), "runtime_sizes.cu");
    ASSERT_TRUE(p.ok()) << p.error().toString();
    const auto vars = p->graph.sizeVars();
    for (const char *name : {"opt_rows", "opt_cols", "n"}) {
        EXPECT_NE(std::find(vars.begin(), vars.end(), name), vars.end()) << name;
        EXPECT_FALSE(p->sizes.count(name)) << name << " has no value in the source: the user binds it";
    }
    bool noted = false;
    for (const Diagnostic &d : p->diagnostics)
        noted = noted || (d.message == "size 'opt_rows' is computed at run time (opt.rows); bind it when running the graph"
                          && d.location.line == 49);
    EXPECT_TRUE(noted) << everything(*p);
}

TEST(RealWorldCorpus, ElementTypesAreTheGraphsOrALocatedReasonNamingTheType)
{
    auto p = frontend::liftFile(readText(corpusDir() / "element_types.cu"), "element_types.cu");
    ASSERT_TRUE(p.ok()) << p.error().toString();
    std::map<std::string, ir::DType> types;
    for (const ir::Tensor &t : p->graph.tensors())
        types[t.name] = t.dtype;
    EXPECT_EQ(types.at("x"), ir::DType::F64);
    EXPECT_EQ(types.at("keys"), ir::DType::I32);
    EXPECT_EQ(types.at("hx"), ir::DType::F16);
    EXPECT_EQ(types.at("wide"), ir::DType::F32);
    EXPECT_FALSE(types.count("pixels")) << "8-bit pixels are not a tensor of the graph";
    bool noted = false;
    for (const Diagnostic &d : p->diagnostics)
        noted = noted || d.message.find("sizeof(unsigned char): not an element type the graph expresses") != std::string::npos;
    EXPECT_TRUE(noted) << everything(*p);
}
