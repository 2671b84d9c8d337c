#pragma once
// Programs, sizes and schedule samples shared by the codegen tests (CPU and GPU).

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/ir/Programs.h"
#include "core/schedule/Space.h"

#include <algorithm>
#include <string>
#include <vector>

namespace codegen_fixtures {

using namespace stitch;

struct Case {
    std::string name;
    ir::Graph graph;
    ir::SizeBindings sizes;
};

/// Odd sizes (no tile, warp or vector divides them) and friendly ones.
inline std::vector<Case> cases()
{
    return {
        {"matmul_odd", ir::makeMatmul(), {{"M", 67}, {"N", 45}, {"K", 33}}},
        {"matmul_aligned", ir::makeMatmul(), {{"M", 128}, {"N", 96}, {"K", 64}}},
        {"softmax_odd", ir::makeSoftmaxRows(), {{"M", 37}, {"N", 301}}},
        {"softmax_long", ir::makeSoftmaxRows(), {{"M", 6}, {"N", 4096}}},
        {"layernorm_odd", ir::makeLayerNormRows(), {{"M", 19}, {"N", 130}}},
        {"chain_odd", ir::makeElementwiseChain(), {{"M", 33}, {"N", 47}}},
        {"chain_aligned", ir::makeElementwiseChain(), {{"M", 64}, {"N", 128}}},
        {"gemm_bias_gelu_odd", ir::makeGemmBiasGelu(), {{"M", 70}, {"N", 52}, {"K", 30}}},
    };
}

inline const ArchLimits &sm90() { return *ArchDatabase::builtin().arch("sm_90"); }

/// Up to `count` legal schedules spread evenly over the main group's whole legal space, plus the default.
inline std::vector<schedule::Schedule> sampleSchedules(const schedule::Problem &problem, std::size_t count)
{
    std::vector<schedule::Schedule> out;
    auto base = schedule::defaultSchedule(problem);
    if (!base.ok())
        return out;
    out.push_back(*base);
    for (std::size_t gi = 0; gi < base->groups.size(); ++gi) {
        const auto &g = base->groups[gi];
        auto analysis = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
        if (!analysis.ok())
            continue;
        auto legal = schedule::enumerateLegal(*analysis, g, problem);
        const std::size_t step = std::max<std::size_t>(1, legal.size() / std::max<std::size_t>(count, 1));
        std::vector<schedule::KernelGroup> picked;
        for (std::size_t i = 0; i < legal.size() && out.size() < count + 1; i += step) {
            schedule::Schedule s = *base;
            s.groups[gi] = legal[i];
            picked.push_back(legal[i]);
            out.push_back(std::move(s));
        }
        // Every legal value of every decision at least once (the even spread can step over the
        // values of a decision that varies fastest, e.g. row_steps): the first legal schedule with
        // the value and the last (the other decisions at their largest legal values).
        for (const auto &d : schedule::decisionDefs(g.strategy))
            for (int v : d.candidates) {
                auto has = [&](const schedule::KernelGroup &k) { return k.value(d.key) == v; };
                if (std::any_of(picked.begin(), picked.end(), has))
                    continue;
                auto first = std::find_if(legal.begin(), legal.end(), has);
                if (first == legal.end())
                    continue;
                auto last = std::find_if(legal.rbegin(), legal.rend(), has);
                for (const schedule::KernelGroup *k : {&*first, &*last}) {
                    if (k != &*first && *k == *first)
                        continue;
                    schedule::Schedule s = *base;
                    s.groups[gi] = *k;
                    picked.push_back(*k);
                    out.push_back(std::move(s));
                }
            }
    }
    return out;
}

inline Result<cuda::CompileResult> compileProgram(const codegen::GeneratedProgram &p, const std::string &arch)
{
    return codegen::compileGenerated(p.source, p.name + ".cu", arch);
}

} // namespace codegen_fixtures
