#include "BenchAgents.h"

#include "core/agents/Checkpoints.h"
#include "core/agents/GpuTimes.h"
#include "core/agents/Optimizer.h"

#include <filesystem>

namespace stitch::cli {

std::string familyExample(const std::string &family)
{
    if (family == "gemm" || family == "gemm_tf32")
        return "matmul.te";
    if (family == "gemm_bias_gelu")
        return "gemm_bias_gelu.te";
    if (family == "softmax")
        return "softmax.te";
    if (family == "layernorm")
        return "layernorm.te";
    if (family == "chain5")
        return "elementwise_chain.te";
    return {};
}

Result<AgentsChoice> agentsChoice(const bench::BenchCase &c, const BenchOptions &options, const std::string &arch,
                                  runner::Runner &runner)
{
    const std::string name = familyExample(c.family);
    if (name.empty())
        return Error{ErrorKind::InvalidArgument, "no example source for bench family " + c.family};
    const std::string file = (std::filesystem::path(options.examples) / name).string();
    std::vector<std::string> sizes;
    for (const auto &[n, v] : c.sizes)
        sizes.push_back(n + "=" + std::to_string(v));
    int exitCode = 0;
    auto input = loadProblem(file, sizes, arch, "", c.precision == schedule::Precision::TF32, exitCode);
    if (!input)
        return Error{ErrorKind::InvalidArgument, file + " could not be lifted (above)"};
    auto loaded = agents::loadAgents("", arch);
    if (!loaded.ok())
        return loaded.error();
    AgentsChoice choice;
    choice.input = std::make_unique<ProblemInput>(std::move(*input));
    const schedule::Problem problem = choice.input->problem();
    rubric::Rubric rubric;
    rubric::CompileCache cache(std::nullopt, {}, 256);
    agents::GpuTimes times(runner, arch, &cache);
    agents::Evaluator evaluator(rubric, &cache, options.agents > 0 ? &times : nullptr);
    const agents::NetworkPolicy policy(*loaded->networks, "agents");
    agents::OptimizeOptions oo;
    oo.budget = options.agents;
    agents::Optimizer optimizer(problem, evaluator, policy, oo);
    auto trace = optimizer.run();
    if (!trace.ok())
        return trace.error();
    choice.schedule = trace->schedule;
    choice.summary = trace->integrate.summary;
    choice.decideMs = trace->decideMs;
    return choice;
}

} // namespace stitch::cli
