// How long the agents take (Google Benchmark, CPU only): their greedy decisions for each bundled
// example and held-out problem (no NVRTC: the environment's compile-free estimates), and a whole
// `optimize` of each example (the decisions, Stitch's NVRTC build of the chosen program and of the
// input, the report's data).
// Issue 30 asks for under 20 ms of decisions and under 3 s of optimize per program on the
// development machine; benchmarks, not timed tests (docs/AGENTS.md, "Speed").
//   example -> lift -> Optimizer (shipped checkpoint) -> start + steps (decide) | run (optimize)
// Exits 1 when an example fails to lift or optimize, so the CTest smoke run (bench.agents) catches it.
#include "core/agents/Checkpoints.h"
#include "core/agents/Optimizer.h"
#include "core/agents/Problems.h"
#include "core/frontend/Lift.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace stitch;

struct Example {
    std::string name;
    frontend::LiftedProgram lifted;
};

int g_failures = 0;

/// The agents' greedy decisions for `problem`, cold (a fresh evaluator: nothing estimated yet), as
/// many times as the benchmark asks.
void decideAll(benchmark::State &state, const schedule::Problem &problem, const rubric::Rubric &rubric,
               const agents::PolicySource &policy)
{
    for (auto _ : state) {
        agents::Evaluator evaluator(rubric);
        agents::Optimizer opt(problem, evaluator, policy);
        if (!opt.start().ok()) {
            ++g_failures;
            break;
        }
        while (opt.deciding())
            if (!opt.step().ok()) {
                ++g_failures;
                break;
            }
    }
}

} // namespace

int main(int argc, char **argv)
{
    benchmark::Initialize(&argc, argv);
    const ArchLimits &arch = *ArchDatabase::builtin().arch("sm_90");
    auto agents = agents::loadAgents("", "sm_90");
    if (!agents.ok()) {
        std::fprintf(stderr, "%s\n", agents.error().message.c_str());
        return 1;
    }
    const agents::NetworkPolicy policy(*agents->networks, "agents");
    std::vector<std::unique_ptr<Example>> examples;
    for (const char *file : {"matmul_naive.cu", "matmul.te", "gemm_bias_gelu.te", "softmax.te", "layernorm.te",
                             "elementwise_chain.te", "avgpool.te", "conv2d.te"}) {
        std::ifstream in(std::string(STITCHCUDA_SOURCE_DIR) + "/examples/" + file);
        std::stringstream text;
        text << in.rdbuf();
        auto lifted = frontend::liftFile(text.str(), file);
        if (!lifted.ok() || lifted->graph.ops().empty()) {
            std::fprintf(stderr, "%s: does not lift\n", file);
            ++g_failures;
            continue;
        }
        examples.push_back(std::make_unique<Example>(Example{file, std::move(*lifted)}));
    }
    rubric::Rubric rubric;
    for (const auto &e : examples) {
        const Example *ex = e.get();
        benchmark::RegisterBenchmark(("decide/" + ex->name).c_str(), [ex, &arch, &rubric, &policy](benchmark::State &state) {
            const schedule::Problem problem{ex->lifted.graph, ex->lifted.sizes, arch, schedule::Precision::FP32};
            decideAll(state, problem, rubric, policy);
        })->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("optimize/" + ex->name).c_str(), [ex, &arch, &rubric, &policy](benchmark::State &state) {
            const schedule::Problem problem{ex->lifted.graph, ex->lifted.sizes, arch, schedule::Precision::FP32};
            for (auto _ : state) {
                rubric::CompileCache cache; // cold: every NVRTC build counted
                agents::Evaluator evaluator(rubric, &cache);
                agents::Optimizer opt(problem, evaluator, policy);
                if (!opt.run().ok())
                    ++g_failures;
            }
        })->Unit(benchmark::kMillisecond);
    }
    // The held-out problems' programs (resources/agents/heldout.txt), decisions only.
    std::vector<std::unique_ptr<agents::TrainingProblem>> heldOut;
    for (const auto &spec : agents::heldOutSpecs()) {
        auto made = agents::makeProblem(spec, arch);
        if (!made.ok()) {
            std::fprintf(stderr, "%s: %s\n", spec.text().c_str(), made.error().message.c_str());
            ++g_failures;
            continue;
        }
        heldOut.push_back(std::move(*made));
        const agents::TrainingProblem *p = heldOut.back().get();
        benchmark::RegisterBenchmark(("decide/" + spec.text()).c_str(), [p, &rubric, &policy](benchmark::State &state) {
            const schedule::Problem problem = p->problem();
            decideAll(state, problem, rubric, policy);
        })->Unit(benchmark::kMillisecond);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return g_failures == 0 ? 0 : 1;
}
