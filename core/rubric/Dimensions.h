#pragma once
// The built-in rubric dimensions and the base they share.
//   RubricInput (+ ProgramFacts) -> KernelDimension::evaluate -> RubricScore per kernel, or the
//   program's score (time-weighted over its kernels) when RubricInput::kernel is -1
// One analyzer per file: Coalescing.cpp, ArithmeticIntensity.cpp, Divergence.cpp,
// OccupancyDimension.cpp, InstructionMix.cpp, BankConflicts.cpp, HardLimits.cpp, FinalPerformance.cpp.

#include "core/rubric/KernelFacts.h"
#include "core/rubric/PtxCounts.h"
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


// Score formulas and the static quantities they take, one per dimension (defined in the
// dimension's file). The dimensions and their measured counterparts (MeasuredDimensions.h) both call
// them, so a static and a measured score differ only in where the quantities come from.

/// Coalescing: 5 x ideal / actual sectors (5 when nothing is fetched).
double coalescingScore(double idealSectors, double actualSectors);
/// Requests, sectors and ideal sectors of the global streams, loads and stores apart (requests-weighted).
struct SectorTotals {
    double loadRequests = 0, loadSectors = 0, loadIdeal = 0;
    double storeRequests = 0, storeSectors = 0, storeIdeal = 0;
    double requests() const { return loadRequests + storeRequests; }
    double sectors() const { return loadSectors + storeSectors; }
    double ideal() const { return loadIdeal + storeIdeal; }
};
SectorTotals globalSectorTotals(const KernelFacts &k);

/// Bank conflicts: 5 x ideal / actual wavefronts (5 when none).
double bankConflictScore(double idealWavefronts, double actualWavefronts);
/// Requests, wavefronts and ideal wavefronts of the shared streams, loads and stores apart.
struct WavefrontTotals {
    double loadRequests = 0, loadWavefronts = 0, loadIdeal = 0;
    double storeRequests = 0, storeWavefronts = 0, storeIdeal = 0;
    double requests() const { return loadRequests + storeRequests; }
    double wavefronts() const { return loadWavefronts + storeWavefronts; }
    double ideal() const { return loadIdeal + storeIdeal; }
};
WavefrontTotals sharedWavefrontTotals(const KernelFacts &k, int banks);
bool hasSharedStreams(const KernelFacts &k);

/// Divergence: 5 x useful lanes / launched lanes.
double divergenceScore(double usefulLaneFraction);

/// Occupancy: 5 x min(1, occupancy / target); the target is 25 % for register-blocked GEMMs, else 50 %.
double occupancyTarget(const KernelFacts &k);
double occupancyScore(double occupancy, double target);
/// The occupancy the occupancy dimension scores: the performance model's expected achieved
/// occupancy when predicted (KernelFacts::expectedOccupancy), else the calculator's theoretical.
double occupancyFigure(const KernelFacts &k);

/// Arithmetic intensity: ridge = fp32 peak / DRAM bandwidth; score 5 x clamp((log2(I/R) + 6) / 6), 0 for I <= 0.
double ridgePoint(const GpuSpec &gpu);
double intensityScore(double flopsPerByte, double ridge);

/// Instruction mix: the figures the score takes from the PTX, and which formula applies.
struct MixFigures {
    bool computeBound = false; ///< GEMM main kernels and kernels at or above the ridge
    bool hotLoop = false;      ///< fmaShare / ldsPerFma are the FMA-heaviest loop's
    double fmaShare = 0, ldsPerFma = 0, vectorShare = 1, integerShare = 0;
    /// Compute-bound kernels whose loop issues tensor-core MMAs (tensorLoopPtx): the tensor formula.
    /// Per warp and loop trip: the tensor pipe's cycles (MMA FLOPs / tensorFlopsPerCycle), the issue
    /// slots (every instruction of the trip, one cycle each) and their ratio.
    bool tensor = false;
    double tensorCycles = 0, issueSlots = 0, tensorPerIssue = 0;
    PtxMix tensorLoop; ///< that trip's counts (tensorLoopPtx)
};
MixFigures instructionMixFigures(const KernelFacts &k, const ProgramFacts &p);
/// Compute-bound: 5 x min(1, FMA share / 0.5) - min(2, 4 x max(0, ld.shared per FMA - 0.25)).
double computeMixScore(double fmaShare, double ldsPerFma);
/// TF32 tensor-core FLOPs one SM sub-partition (one warp scheduler, of 4 per SM) does per cycle:
/// the GPU's dense peak / (SMs x 4 x boost clock); H200: 495 TFLOP/s -> 474.
double tensorFlopsPerCycle(const GpuSpec &gpu);
/// Tensor-core kernels: 5 x min(1, (tensor-pipe cycles / issue slots of the loop trip) / 2).
double tensorMixScore(double tensorCyclesPerIssueSlot);
/// Memory-bound: 5 - 2 x (1 - vector share) - min(2, 5 x max(0, integer share - 0.3)).
double memoryMixScore(double vectorShare, double integerShare);

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
