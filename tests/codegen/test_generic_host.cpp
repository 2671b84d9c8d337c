// The generic kernels run on this machine's CPU: a generic kernel has no shared memory, no barrier
// and no warp primitive, so its source, compiled as C++ with blockIdx/threadIdx as plain variables
// and called once per thread of its launch, computes what the GPU would. Its outputs are checked
// against the interpreter: the block shapes (flat, 2-D tiles of threads_per_row, the grid's y loop
// past 65535 bands), tails on every edge and the element-wise ops fused after a reduction.
#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/frontend/Lift.h"
#include "core/ir/GraphBuilder.h"
#include "core/ir/Interpreter.h"
#include "core/ir/Programs.h"
#include "core/schedule/GroupAnalysis.h"
#include "core/schedule/Space.h"
#include "tests/lift/LiftCorpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

using namespace stitch;
namespace fs = std::filesystem;

namespace {

// What CUDA's front end provides, for a generated generic kernel compiled as C++.
const char *kPrelude = R"(#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <vector>
inline float __int_as_float(int v) { float f; std::memcpy(&f, &v, sizeof f); return f; }
inline double __longlong_as_double(long long v) { double d; std::memcpy(&d, &v, sizeof d); return d; }
struct HostDim3 { unsigned x = 0, y = 0, z = 0; };
static HostDim3 threadIdx, blockIdx, blockDim, gridDim;
using std::max;
using std::min;
#define __CUDACC_RTC__ 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(...)
)";

struct HostRun {
    std::string error;
    ir::TensorValues outputs; ///< by tensor name: every tensor a kernel stored
};

std::string cType(ir::DType t) { return t == ir::DType::F64 ? "double" : t == ir::DType::I32 ? "int" : "float"; }

/// Builds the program's kernels with the host compiler, runs every launch thread by thread on
/// `inputs` and returns what the kernels stored.
HostRun runOnHost(const codegen::GeneratedProgram &program, const ir::Graph &graph, const ir::SizeBindings &sizes,
                  const ir::TensorValues &inputs, const std::string &tag)
{
    HostRun out;
    const fs::path dir = fs::temp_directory_path() / ("stitch_generic_host_" + tag + "_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ostringstream main;
    main << kPrelude << program.source << "\nint main()\n{\n";
    std::vector<const ir::Tensor *> tensors;
    for (const auto &t : graph.tensors()) {
        auto shape = t.shape.evaluate(sizes);
        if (!shape.ok()) {
            out.error = "shape of " + t.name;
            return out;
        }
        std::int64_t n = 1;
        for (auto e : *shape)
            n *= e;
        const std::string id = "buf" + std::to_string(t.id) + "_";
        main << "    std::vector<" << cType(t.dtype) << "> " << id << "(" << n << ");\n";
        if (auto it = inputs.find(t.name); it != inputs.end()) {
            main << "    { FILE *f = std::fopen(\"" << (dir / (id + ".in")).string() << "\", \"rb\"); std::fread(" << id
                 << ".data(), sizeof(" << id << "[0]), " << n << ", f); std::fclose(f); }\n";
            std::vector<float> data(it->second.begin(), it->second.end());
            std::ofstream(dir / (id + ".in"), std::ios::binary)
                .write(reinterpret_cast<const char *>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
        }
        tensors.push_back(&t);
    }
    for (const auto &k : program.kernels) {
        std::array<std::int64_t, 3> grid{};
        for (int d = 0; d < 3; ++d) {
            auto v = ir::evaluateSizeExpr(k.code.grid[static_cast<std::size_t>(d)], sizes);
            if (!v.ok()) {
                out.error = "grid of " + k.code.name;
                return out;
            }
            grid[static_cast<std::size_t>(d)] = *v;
        }
        std::string args;
        for (const auto &p : k.code.params)
            args += (args.empty() ? "" : ", ") +
                    (p.tensor ? "buf" + std::to_string(p.tensorId) + "_.data()" : std::to_string(sizes.at(p.sizeVar)));
        main << "    gridDim = {" << grid[0] << "u, " << grid[1] << "u, " << grid[2] << "u};\n"
             << "    blockDim = {" << k.code.block[0] << "u, " << k.code.block[1] << "u, " << k.code.block[2] << "u};\n"
             << "    for (blockIdx.z = 0; blockIdx.z < gridDim.z; ++blockIdx.z)\n"
             << "    for (blockIdx.y = 0; blockIdx.y < gridDim.y; ++blockIdx.y)\n"
             << "    for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)\n"
             << "    for (threadIdx.z = 0; threadIdx.z < blockDim.z; ++threadIdx.z)\n"
             << "    for (threadIdx.y = 0; threadIdx.y < blockDim.y; ++threadIdx.y)\n"
             << "    for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x)\n"
             << "        " << k.code.name << "(" << args << ");\n";
    }
    for (const auto *t : tensors) {
        if (inputs.contains(t->name))
            continue;
        const std::string id = "buf" + std::to_string(t->id) + "_";
        main << "    { FILE *f = std::fopen(\"" << (dir / (id + ".out")).string() << "\", \"wb\"); for (auto v : " << id
             << ") { double d = v; std::fwrite(&d, sizeof d, 1, f); } std::fclose(f); }\n";
    }
    main << "    return 0;\n}\n";
    std::ofstream(dir / "run.cpp") << main.str();
    const std::string build = std::string(STITCHCUDA_HOST_CXX) + " -std=c++17 -O1 -w -o " + (dir / "run").string() + " " +
                              (dir / "run.cpp").string() + " 2> " + (dir / "build.log").string();
    if (std::system(build.c_str()) != 0) {
        std::ifstream log(dir / "build.log");
        out.error = "the host build failed: " + std::string(std::istreambuf_iterator<char>(log), {});
        return out;
    }
    if (std::system((dir / "run").string().c_str()) != 0) {
        out.error = "the host run failed";
        return out;
    }
    for (const auto *t : tensors) {
        if (inputs.contains(t->name))
            continue;
        std::ifstream f(dir / ("buf" + std::to_string(t->id) + "_.out"), std::ios::binary);
        ir::TensorData values;
        double d = 0;
        while (f.read(reinterpret_cast<char *>(&d), sizeof d))
            values.push_back(d);
        out.outputs[t->name] = std::move(values);
    }
    fs::remove_all(dir);
    return out;
}

ir::TensorValues randomInputs(const ir::Graph &graph, const ir::SizeBindings &sizes)
{
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    ir::TensorValues in;
    for (const auto &t : graph.tensors())
        if (t.role == ir::TensorRole::Input) {
            const auto shape = t.shape.evaluate(sizes);
            std::int64_t n = 1;
            for (auto e : shape.value())
                n *= e;
            ir::TensorData d(static_cast<std::size_t>(n));
            for (auto &x : d)
                x = dist(gen);
            in[t.name] = std::move(d);
        }
    return in;
}

/// The default fusion with every kernel generic at the given block shape, or one generic kernel
/// per op where a fused group is not generic-shaped (a row reduction's ops).
schedule::Schedule genericSchedule(const schedule::Problem &problem, int threads, int tpr)
{
    schedule::Schedule s;
    s.groups = schedule::fuseGreedy(problem.graph);
    for (auto &g : s.groups) {
        g.strategy = schedule::Strategy::Generic;
        g.values = {{"threads", threads}, {"threads_per_row", tpr}};
    }
    if (schedule::validateSchedule(s, problem).ok())
        return s;
    s.groups.clear();
    for (const auto &op : problem.graph.ops())
        s.groups.push_back({op.name, {op.name}, schedule::Strategy::Generic, {{"threads", threads}, {"threads_per_row", tpr}}});
    return s;
}

/// Whether every op's domain takes tiles of this shape (two dimensions or more, as many rows as a
/// block has): Space.cpp's rules.
bool tilesFit(const ir::Graph &graph, const ir::SizeBindings &sizes, int threads, int tpr)
{
    if (tpr == 0)
        return true;
    for (const auto &op : graph.ops()) {
        if (op.domain.size() < 2)
            return false;
        std::int64_t rows = 1;
        for (std::size_t d = 0; d + 1 < op.domain.size(); ++d)
            rows *= *ir::evaluateSizeExpr(op.domain[d].extent, sizes);
        if (threads / tpr > rows)
            return false;
    }
    return true;
}

void expectLikeInterpreter(const ir::Graph &graph, const ir::SizeBindings &sizes, int threads, int tpr,
                           const std::string &tag)
{
    const schedule::Problem problem{graph, sizes, *ArchDatabase::builtin().arch("sm_90")};
    const schedule::Schedule s = genericSchedule(problem, threads, tpr);
    auto program = codegen::generateProgram(problem, s);
    ASSERT_TRUE(program.ok()) << program.error().message;
    const ir::TensorValues inputs = randomInputs(graph, sizes);
    auto expected = ir::interpret(graph, sizes, inputs);
    ASSERT_TRUE(expected.ok()) << expected.error().message;
    const HostRun run = runOnHost(*program, graph, sizes, inputs, tag);
    ASSERT_TRUE(run.error.empty()) << run.error;
    int checked = 0;
    for (const auto &t : graph.tensors()) {
        if (t.role != ir::TensorRole::Output)
            continue;
        const auto &want = expected->at(t.name);
        const auto &got = run.outputs.at(t.name);
        ASSERT_EQ(got.size(), want.size()) << t.name;
        for (std::size_t i = 0; i < want.size(); ++i)
            ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i])))
                << tag << ": " << t.name << "[" << i << "] with threads=" << threads << " threads_per_row=" << tpr;
        ++checked;
    }
    EXPECT_GT(checked, 0);
}

ir::Graph liftCorpus(const std::string &name, ir::SizeBindings &sizes)
{
    auto lifted = frontend::liftFile(stitch::testing::readTextFile(stitch::testing::corpusPath(name)), name + ".cu");
    EXPECT_TRUE(lifted.ok()) << lifted.error().message;
    sizes = lifted->sizes;
    return lifted->graph;
}

} // namespace

TEST(GenericOnTheHost, EveryBlockShapeComputesWhatTheInterpreterDoes)
{
    struct Shape {
        int threads, tpr;
    };
    const std::vector<Shape> shapes = {{256, 0}, {64, 0}, {256, 16}, {64, 64}, {128, 32}, {64, 8}};
    for (const char *name : {"avg_pool", "max_pool", "stencil_2d", "matmul_batched", "conv2d", "column_reduction"}) {
        ir::SizeBindings sizes;
        const ir::Graph graph = liftCorpus(name, sizes);
        int tiled = 0;
        for (const auto &s : shapes) {
            if (!tilesFit(graph, sizes, s.threads, s.tpr))
                continue;
            tiled += s.tpr > 0;
            expectLikeInterpreter(graph, sizes, s.threads, s.tpr,
                                  std::string(name) + "_" + std::to_string(s.threads) + "_" + std::to_string(s.tpr));
        }
        // Only column_reduction's ops run over one dimension (a row of columns).
        EXPECT_EQ(tiled > 0, std::string(name) != "column_reduction") << name;
    }
    // Odd sizes: tails in both dimensions of every tile.
    const ir::Graph matmul = ir::makeMatmul();
    for (const auto &s : shapes)
        expectLikeInterpreter(matmul, {{"M", 37}, {"N", 45}, {"K", 13}}, s.threads, s.tpr,
                              "matmul_" + std::to_string(s.threads) + "_" + std::to_string(s.tpr));
}

// More bands of rows than a grid's y holds (65535): the kernel loops over the rest.
TEST(GenericOnTheHost, RowsPastTheGridsYLimitAreAllComputed)
{
    ir::GraphBuilder b("tall");
    const ir::Expr R = ir::sizeVar("R"), C = ir::sizeVar("C");
    const ir::Tensor x = b.input("x", ir::DType::F32, {R, C});
    const ir::Tensor y = b.output("y", ir::DType::F32, {R, C});
    const ir::Expr i = ir::var("i"), j = ir::var("j");
    b.compute(y, {i, j}, x(i, j) * ir::floatConst(2.0) + ir::floatConst(1.0));
    const ir::Graph graph = b.finish();
    expectLikeInterpreter(graph, {{"R", 70001}, {"C", 3}}, 64, 64, "tall");
}

// The fused element-wise op after a reduction reads its value from a register: avg_pool is one
// kernel whose window sum never reaches memory.
TEST(GenericOnTheHost, AveragePoolingIsOneKernel)
{
    ir::SizeBindings sizes;
    const ir::Graph graph = liftCorpus("avg_pool", sizes);
    const auto groups = schedule::fuseGreedy(graph);
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].strategy, schedule::Strategy::Generic);
    EXPECT_EQ(groups[0].ops.size(), 2u);
    auto analysis = schedule::analyzeGroup(graph, groups[0].ops, schedule::Strategy::Generic);
    ASSERT_TRUE(analysis.ok());
    EXPECT_EQ(analysis->local.size(), 1u);
    EXPECT_EQ(analysis->stored.size(), 1u);
}

// The tiles' rules (Space.cpp), each with its sentence; the model checks every legal shape.
TEST(GenericOnTheHost, TilesNeedRowsAndTheirRulesSayWhy)
{
    const ArchLimits &arch = *ArchDatabase::builtin().arch("sm_90");
    auto violations = [&](const ir::Graph &graph, const ir::SizeBindings &sizes, int threads, int tpr) {
        const schedule::Problem problem{graph, sizes, arch};
        schedule::KernelGroup g{graph.ops().front().name, {graph.ops().front().name}, schedule::Strategy::Generic,
                                {{"threads", threads}, {"threads_per_row", tpr}}};
        auto a = schedule::analyzeGroup(graph, g.ops, schedule::Strategy::Generic);
        EXPECT_TRUE(a.ok());
        std::string text;
        for (const auto &v : schedule::checkGroup(*a, g, problem))
            text += v.message + "\n";
        return text;
    };
    ir::GraphBuilder b("vec");
    const ir::Expr N = ir::sizeVar("N");
    const ir::Tensor x = b.input("x", ir::DType::F32, {N});
    const ir::Tensor y = b.output("y", ir::DType::F32, {N});
    const ir::Expr i = ir::var("i");
    b.compute(y, {i}, x(i) * ir::floatConst(2.0));
    const ir::Graph vec = b.finish();
    EXPECT_EQ(violations(vec, {{"N", 1000}}, 256, 0), "");
    EXPECT_NE(violations(vec, {{"N", 1000}}, 256, 16).find("a one-dimensional domain is one row"), std::string::npos);

    const ir::Graph matmul = ir::makeMatmul();
    EXPECT_EQ(violations(matmul, {{"M", 16}, {"N", 45}, {"K", 13}}, 256, 16), "");
    EXPECT_NE(violations(matmul, {{"M", 8}, {"N", 45}, {"K", 13}}, 256, 16).find("tiles of 16 rows over 8"), std::string::npos);
    // One row of 64 threads per block.
    EXPECT_EQ(violations(matmul, {{"M", 64}, {"N", 45}, {"K", 13}}, 64, 64), "");
}
