// Helpers of the performance model's term tests (test_rubric_model.cpp, test_rubric_model_gemm.cpp):
// predictions of a schedule's program and kernel facts with one fact changed.
#pragma once

#include "RubricTestSupport.h"

#include "core/rubric/PerfModel.h"

#include <map>
#include <string>

namespace model_test {

using namespace rubric_test;

inline const ir::SizeBindings kGemmH200{{"M", 1000}, {"N", 3000}, {"K", 700}};

struct Predicted {
    rubric::ProgramFacts facts;
    rubric::KernelPrediction main; ///< the first kernel's prediction
    double ms = 0;                 ///< the program's
};

inline Predicted predictDecisions(const schedule::Problem &problem, const std::map<std::string, int> &decisions,
                           const rubric::PerfModel &model = rubric::PerfModel())
{
    Predicted out;
    const auto program = generate(problem, scheduleWith(problem, decisions));
    auto facts = rubric::analyzeProgram(problem, program, nullptr);
    EXPECT_TRUE(facts.ok()) << facts.error().toString();
    if (!facts.ok())
        return out;
    out.facts = std::move(*facts);
    const auto prediction = model.predict(out.facts);
    EXPECT_FALSE(prediction.kernels.empty());
    if (prediction.kernels.empty())
        return out;
    out.main = prediction.kernels.front();
    out.ms = prediction.ms;
    return out;
}

/// The kernel's facts with other registers per thread, and the occupancy they allow.
inline rubric::KernelFacts withRegisters(const rubric::KernelFacts &k, int registers)
{
    rubric::KernelFacts out = k;
    out.registers = registers;
    auto occ = computeOccupancy(sm90(), out.threads, registers, out.sharedBytesTotal());
    EXPECT_TRUE(occ.ok());
    if (occ.ok())
        out.occupancy = *occ;
    return out;
}

// Register-staged, as the stored H200 runs measured it (the sm_90 default is now cp.async).
inline const std::map<std::string, int> kTile128x128{{"block_m", 128}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8},
                                              {"block_k", 16},  {"split_k", 1},   {"vector", 4},
                                              {"copy", 0},      {"stages", 2},    {"min_blocks", 1}};



inline const std::map<std::string, int> kAsync128x128{{"block_m", 128}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8},
                                               {"block_k", 16},  {"split_k", 1},   {"vector", 4},
                                               {"copy", 1},      {"stages", 3},    {"min_blocks", 1}};

/// `d` with one decision changed.
inline std::map<std::string, int> withDecision(std::map<std::string, int> d, const std::string &key, int value)
{
    d[key] = value;
    return d;
}

/// The 4096^3 kernel of kAsync128x128 with the k-loop ptxas compiles for 8x8 threads and block_k 16
/// (1024 FMAs, 64 shared loads, 1360 instructions) and no spills.
inline rubric::KernelFacts asyncLoopKernel(const rubric::ProgramFacts &facts, int entryInstructions)
{
    rubric::KernelFacts k = facts.kernels.front();
    k.ptxLoop.fma = 16 * 8 * 8;
    k.ptxLoop.sharedLoads = 64;
    k.ptxLoop.total = 1360;
    k.ptxMix.total = entryInstructions;
    k.spillBytes = 0;
    return k;
}

inline rubric::KernelFacts withStages(const rubric::KernelFacts &k, int stages)
{
    rubric::KernelFacts out = k;
    out.copyStages = stages;
    return out;
}

inline rubric::KernelFacts withResidentBlocks(const rubric::KernelFacts &k, int blocks)
{
    rubric::KernelFacts out = k;
    out.occupancy->activeBlocksPerSm = blocks;
    return out;
}

} // namespace model_test
