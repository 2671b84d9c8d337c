#pragma once
// The built-in rubric dimensions and the base they share.
//   RubricInput (+ ProgramFacts) -> KernelDimension::evaluate -> RubricScore per kernel, or the
//   program's score (time-weighted over its kernels) when RubricInput::kernel is -1
// One analyzer per file: Coalescing.cpp, ArithmeticIntensity.cpp, Divergence.cpp,
// OccupancyDimension.cpp, InstructionMix.cpp, BankConflicts.cpp, HardLimits.cpp, FinalPerformance.cpp.

#include "core/rubric/KernelFacts.h"
#include "core/rubric/RubricDimension.h"

#include <memory>
#include <string>
#include <vector>

namespace stitch::rubric {

/// A dimension scored per kernel; the program's score weighs kernels by their predicted time.
class KernelDimension : public RubricDimension {
public:
    bool applies(const RubricInput &input) const override;
    RubricScore evaluate(const RubricInput &input) const override;

protected:
    virtual bool appliesToKernel(const KernelFacts &, const RubricInput &) const { return true; }
    virtual RubricScore scoreKernel(const KernelFacts &kernel, const ProgramFacts &program,
                                    const RubricInput &input) const = 0;
    /// Time-weighted mean; the sentence of the kernel with the most to gain. HardLimits overrides.
    virtual RubricScore aggregate(const std::vector<std::pair<const KernelFacts *, RubricScore>> &scores) const;
};

/// The facts of the input's program: input.facts, or built (and predicted) into `storage`.
const ProgramFacts *factsFor(const RubricInput &input, Result<ProgramFacts> &storage);

/// Instruction counts of one kernel's PTX body (static: each instruction once, loops unrolled by ptxas' input).
struct PtxMix {
    int total = 0;
    int fma = 0;        ///< fma.* and mad.* on floats
    int floatOther = 0; ///< other float arithmetic
    int sharedLoads = 0, sharedStores = 0;
    int globalLoads = 0, globalStores = 0;
    int globalVector = 0; ///< .v2 / .v4 global loads and stores
    int special = 0;      ///< ex2, lg2, rsqrt, sqrt, rcp, sin, cos, tanh
    int integer = 0;      ///< integer and bit arithmetic (index math)
    int branches = 0;     ///< bra
};
PtxMix countPtx(const std::string &entryBody);
/// The mix of the loop (a backward branch to an earlier label) with the most FMAs; empty when none.
PtxMix hotLoopPtx(const std::string &entryBody);

std::unique_ptr<RubricDimension> makeCoalescing();
std::unique_ptr<RubricDimension> makeArithmeticIntensity();
std::unique_ptr<RubricDimension> makeDivergence();
std::unique_ptr<RubricDimension> makeOccupancy();
std::unique_ptr<RubricDimension> makeInstructionMix();
std::unique_ptr<RubricDimension> makeBankConflicts();
std::unique_ptr<RubricDimension> makeHardLimits();
std::unique_ptr<RubricDimension> makeFinalPerformance();

/// "4.5" style rounding used in scores (one decimal).
double roundScore(double score);
std::string fmt(double value, int precision = 2);
std::string percent(double fraction);

} // namespace stitch::rubric
