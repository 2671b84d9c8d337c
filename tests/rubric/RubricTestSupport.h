#pragma once
// Helpers shared by the rubric tests (test_rubric.cpp, test_rubric_calibration.cpp).
#include "CodegenFixtures.h"

#include "core/rubric/Rubric.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace rubric_test {

using namespace stitch;
using namespace codegen_fixtures;

struct Scored {
    ir::Graph graph;
    ir::SizeBindings sizes;
    codegen::GeneratedProgram program;
    rubric::ProgramFacts facts;
};

inline schedule::Problem problemOf(const ir::Graph &g, const ir::SizeBindings &sizes)
{
    return {g, sizes, sm90(), schedule::Precision::FP32};
}

/// The default schedule (under tf32: the mma.sync one, whose decisions the tests override) with the
/// first group's decisions overridden. Where the heuristics chose the large-GEMM stream-K family
/// (FP32, 2^30 multiply-adds and more), the tests start from the cp.async default before it (128 x
/// 128, 8 x 8, BK 16, 3 stages, no stream-K, vector stores), the fixed point their overrides vary.
inline schedule::Schedule scheduleWith(const schedule::Problem &problem, const std::map<std::string, int> &decisions)
{
    auto s = schedule::defaultSchedule(problem, schedule::TensorCoreDefault::WarpMma);
    EXPECT_TRUE(s.ok()) << s.error().toString();
    auto &g = s->groups.front();
    if (g.strategy == schedule::Strategy::Gemm && g.value("stream_k") == 1)
        for (const auto &[k, v] : std::map<std::string, int>{{"block_m", 128}, {"block_n", 128}, {"thread_m", 8},
                                                             {"thread_n", 8}, {"block_k", 16}, {"stream_k", 0},
                                                             {"stages", 3}, {"min_blocks", 2}, {"store", 0}})
            g.set(k, v);
    for (const auto &[k, v] : decisions)
        g.set(k, v);
    return *s;
}

inline codegen::GeneratedProgram generate(const schedule::Problem &problem, const schedule::Schedule &s)
{
    auto p = codegen::generateProgram(problem, s);
    EXPECT_TRUE(p.ok()) << p.error().toString();
    return p.ok() ? *p : codegen::GeneratedProgram{};
}

inline const rubric::AccessStream *stream(const rubric::KernelFacts &k, const std::string &prefix)
{
    for (const auto &s : k.streams)
        if (s.what.rfind(prefix, 0) == 0)
            return &s;
    return nullptr;
}

inline rubric::KernelFacts factsOf(const schedule::Problem &problem, const codegen::GeneratedProgram &p,
                            const cuda::CompileResult *compiled = nullptr)
{
    // The GEMM itself where transpose_b=on puts its transposing pass first.
    auto f = rubric::analyzeProgram(problem, p, compiled);
    EXPECT_TRUE(f.ok()) << f.error().toString();
    if (!f.ok() || f->kernels.empty())
        return rubric::KernelFacts{};
    for (const auto &k : f->kernels)
        if (!k.transposeB())
            return k;
    return f->kernels.front();
}

inline const ir::SizeBindings kGemm1024{{"M", 1024}, {"N", 1024}, {"K", 1024}};
/// A register-staged 128x128 tile (the default on sm_80+ is cp.async; these tests read the
/// register path's transposed A stores).
inline const std::map<std::string, int> kTile128{{"block_m", 128}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8},
                                          {"block_k", 8},   {"split_k", 1},   {"copy", 0},
                                          {"stages", 2},    {"min_blocks", 1}};

} // namespace rubric_test
