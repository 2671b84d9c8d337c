#include "tests/lift/LiftCorpus.h"

#include "core/codegen/AsWritten.h"
#include "core/cuda/NvrtcCompiler.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace stitch::testing {

const std::vector<CorpusProgram> &liftableCorpus()
{
    static const std::vector<CorpusProgram> corpus = {
        {"vector_add", {{"numElements", 37}}},
        {"saxpy", {{"N", 45}}},
        {"activation_chain", {{"M", 5}, {"N", 7}}},
        {"matvec", {{"ROWS", 11}, {"COLS", 6}}},
        {"matmul", {{"M", 9}, {"K", 5}, {"N", 7}}},
        {"matmul_transposed", {{"M", 6}, {"N", 5}, {"K", 4}}},
        {"matmul_batched", {{"BATCH", 3}, {"Mdim", 5}, {"Ndim", 4}, {"Kdim", 3}}},
        {"transpose", {{"width", 7}, {"height", 5}}},
        {"row_reduction", {{"ROWS", 13}, {"COLS", 6}}},
        {"column_reduction", {{"n", 7}, {"m", 9}}},
        {"softmax_single", {{"rows", 5}, {"cols", 8}}},
        {"softmax_three", {{"M", 6}, {"N", 9}}},
        {"layernorm", {{"rows", 4}, {"hidden", 10}}},
        {"stencil_1d", {{"N", 19}}},
        {"stencil_2d", {{"NX", 7}, {"NY", 6}}},
        {"conv2d",
         {{"BATCH", 2}, {"C_IN", 2}, {"C_OUT", 3}, {"H", 7}, {"W", 6}, {"KH", 3}, {"KW", 3}, {"PAD", 1}, {"STRIDE", 2}}},
        {"avg_pool", {{"C", 3}, {"H", 7}, {"W", 6}, {"K", 2}, {"S", 2}}},
        {"max_pool", {{"channels", 2}, {"height", 7}, {"width", 8}, {"PAD", 1}, {"POOL", 3}, {"STRIDE", 2}}},
        {"mlp_layer", {{"BATCH", 5}, {"IN_FEATURES", 6}, {"OUT_FEATURES", 7}}},
        {"grid_stride_relu", {{"N", 9000}}},
        {"tiled_matmul", {{"m", 17}, {"k", 19}, {"n", 21}}},
    };
    return corpus;
}

const std::vector<RefusedProgram> &refusedCorpus()
{
    static const std::vector<RefusedProgram> corpus = {
        {"refused_histogram", {{"histogram", 13, 9, "'atomicAdd' is an atomic update"}}, {"normalizeBins"}},
        {"refused_gather", {{"gatherRows", 13, 28, "the index depends on data read from memory"}}, {}},
        {"refused_warp_shuffle", {{"reduceWarp", 17, 9, "'__shfl_down_sync' is a warp-level intrinsic"}}, {}},
        {"refused_dynamic_parallelism",
         {{"parentLaunch", 16, 9, "a kernel launched from device code (dynamic parallelism)"},
          {"childScale", 5, 17, "never launched from host code"}},
         {"memset_d_data"}},
        {"refused_recursion", {{"binomials", 8, 12, "'binomial' calls itself (recursion)"}}, {}},
        {"refused_inplace_race", {{"smoothInPlace", 10, 9, "while threads of the same launch read 'd_a[i - 1]'"}}, {}},
        {"refused_alias", {{"shiftAdd", 10, 9, "threads write 'd_buf[i + 1]' while threads of the same launch read 'd_buf[i]'"}},
         {"memset_d_buf"}},
    };
    return corpus;
}

std::string corpusPath(const std::string &name)
{
    return std::string(STITCHCUDA_SOURCE_DIR) + "/tests/lift/corpus/" + name + ".cu";
}

std::string readTextFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string resizeProgram(const std::string &source, const std::vector<frontend::cudalift::SizeDefinition> &sizes,
                          const ir::SizeBindings &values)
{
    std::vector<const frontend::cudalift::SizeDefinition *> edits;
    for (const auto &d : sizes) {
        if (d.fileScope && values.count(d.name) && d.literal.endByte > d.literal.beginByte)
            edits.push_back(&d);
    }
    // From the end, so earlier offsets stay valid.
    std::sort(edits.begin(), edits.end(), [](auto *a, auto *b) { return a->literal.beginByte > b->literal.beginByte; });
    std::string out = source;
    for (const auto *d : edits)
        out.replace(d->literal.beginByte, d->literal.endByte - d->literal.beginByte, std::to_string(values.at(d->name)));
    return out;
}

std::vector<std::string> hostConstantDefines()
{
    return codegen::hostConstantDefines();
}

std::map<std::string, std::string> ptxEntryNames(const std::string &ptx)
{
    std::map<std::string, std::string> names;
    std::size_t at = 0;
    while ((at = ptx.find(".entry ", at)) != std::string::npos) {
        at += 7;
        const std::size_t end = ptx.find_first_of("( \n", at);
        const std::string mangled = ptx.substr(at, end - at);
        names[cuda::shortKernelName(mangled)] = mangled;
    }
    return names;
}

ir::SizeBindings testBindings(const frontend::cudalift::CudaLiftDetail &detail, const ir::SizeBindings &small)
{
    ir::SizeBindings b = detail.program.sizes;
    for (const auto &[name, value] : small)
        b[name] = value;
    return b;
}

} // namespace stitch::testing
