// Instruction mix from the PTX of each kernel's .entry (counts: PtxCounts.cpp). Compute-bound
// kernels: the FMA share of the FMA-heaviest loop and its shared loads per FMA, or, where the loop
// issues tensor-core MMAs, the tensor pipe's cycles per issue slot of one loop trip; memory-bound
// kernels: vector (v2/v4) against scalar global memory instructions and integer index math.
// The counts are static (each instruction once); the hot loops are unrolled in the PTX already.
// Where the kernel was compiled to sm_90 machine code the evidence adds the same loop's SASS
// (cuda::scanSass): spills inside it, accumulator moves, bank conflicts, stall cycles.
//   CompileResult::ptx -> analyzeProgram (KernelFacts::ptxMix, ptxLoop) / tensorLoopPtx -> MixFigures -> score
#include "core/rubric/Dimensions.h"

#include <algorithm>

namespace stitch::rubric {

namespace {

/// Warp schedulers (SM sub-partitions) per SM: 4 on every architecture the database holds (sm_75+).
constexpr int kSchedulersPerSm = 4;

} // namespace

MixFigures instructionMixFigures(const KernelFacts &k, const ProgramFacts &p)
{
    MixFigures f;
    const PtxMix &m = k.ptxMix;
    const PtxMix &hot = k.ptxLoop;
    f.hotLoop = hot.total > 0 && hot.fma > 0;
    const PtxMix &core = f.hotLoop ? hot : m; // the FMA-heaviest loop, where the time goes
    const int global = m.globalLoads + m.globalStores;
    f.fmaShare = core.total ? double(core.fma) / core.total : 0;
    f.ldsPerFma = core.fma ? double(core.sharedLoads) / core.fma : 0;
    f.vectorShare = global ? double(m.globalVector) / global : 1;
    f.integerShare = m.total ? double(m.integer) / m.total : 0;
    f.computeBound = k.tiledGemm() ||
                     k.flops / std::max(k.trafficBytes, 1.0) >= ridgePoint(*p.gpu);
    const double rate = tensorFlopsPerCycle(*p.gpu);
    if (f.computeBound && rate > 0) {
        f.tensorLoop = tensorLoopPtx(k.ptxBody);
        const PtxMix &t = f.tensorLoop;
        f.tensor = t.mma > 0 && t.total > 0;
        f.tensorCycles = t.mmaFlops / rate;
        f.issueSlots = t.total;
        f.tensorPerIssue = f.tensor ? f.tensorCycles / f.issueSlots : 0;
    }
    return f;
}

double tensorFlopsPerCycle(const GpuSpec &gpu)
{
    const double cycles = double(gpu.multiprocessors) * kSchedulersPerSm * gpu.boostClockMHz * 1e6;
    return cycles > 0 ? gpu.tf32Tflops * 1e12 / cycles : 0;
}

double tensorMixScore(double tensorCyclesPerIssueSlot)
{
    return 5 * std::min(1.0, tensorCyclesPerIssueSlot / 2);
}

double computeMixScore(double fmaShare, double ldsPerFma)
{
    const double fmaPart = std::min(1.0, fmaShare / 0.5);
    const double ldsPenalty = std::min(2.0, std::max(0.0, ldsPerFma - 0.25) * 4);
    return 5 * fmaPart - ldsPenalty;
}

double memoryMixScore(double vectorShare, double integerShare)
{
    const double vecPenalty = 2 * (1 - vectorShare);
    const double intPenalty = std::min(2.0, std::max(0.0, integerShare - 0.3) * 5);
    return 5 - vecPenalty - intPenalty;
}

namespace {

std::string perMma(int count, const PtxMix &t)
{
    return fmt(double(count) / t.mma, 2);
}

/// The tensor loop's trip: MMAs and their FLOPs, the overhead by kind, per MMA, and the ratio.
std::string tensorEvidence(const MixFigures &f, const GpuSpec &gpu)
{
    const PtxMix &t = f.tensorLoop;
    const int other = t.total - t.mma - t.sharedLoads - t.tf32Conversions - t.syncs;
    return "; tensor loop (one trip, each if/else by its shorter arm): " + std::to_string(t.total) +
           " instructions: " + std::to_string(t.mma) + " " + t.mmaShape + " (" + fmt(t.mmaFlops / t.mma, 0) +
           " FLOP per warp each), " + std::to_string(t.sharedLoads) + " shared loads (" +
           fmt(t.sharedLoadWavefronts, 0) + " wavefronts), " + std::to_string(t.tf32Conversions) + " cvt.rna.tf32, " +
           std::to_string(t.syncs) + " waits, fences and barriers, " + std::to_string(other) +
           " other; per MMA: " + perMma(t.total, t) + " instructions, " + perMma(t.sharedLoads, t) + " shared loads, " +
           perMma(t.tf32Conversions, t) + " cvt.rna; tensor pipe " + fmt(f.tensorCycles, 0) + " cycles per warp (" +
           fmt(tensorFlopsPerCycle(gpu), 0) + " TF32 FLOP per cycle per SM sub-partition) over " +
           fmt(f.issueSlots, 0) + " issue slots = " + fmt(f.tensorPerIssue, 2);
}

std::string tensorSentence(const MixFigures &f, const ArchLimits &arch)
{
    const PtxMix &t = f.tensorLoop;
    const bool warpgroup = t.mmaShape.rfind("wgmma", 0) == 0;
    std::string s = "Per k-tile each warp's " + std::to_string(t.mma) + " " + t.mmaShape + " keep the tensor cores busy " +
                    fmt(f.tensorCycles, 0) + " cycles while the loop issues " + fmt(f.issueSlots, 0) +
                    " instructions (" + perMma(t.sharedLoads, t) + " shared loads and " +
                    perMma(t.tf32Conversions, t) + " cvt.rna per MMA)";
    if (f.tensorPerIssue >= 2)
        return s + ": the tensor work dominates the issue, as a tensor-core kernel wants.";
    const double issuePerTensor = 1 / f.tensorPerIssue;
    s += issuePerTensor > 1 ? ": the issue alone takes " + fmt(issuePerTensor, 1) + "x the tensor time, so the tensor cores wait on it; "
                            : ": issuing them takes " + percent(issuePerTensor) +
                                  " of the tensor time, which leaves little room for stalls; ";
    if (!warpgroup && arch.computeMajor == 9)
        return s + "Hopper's warpgroup MMAs (math=tf32_wgmma) read one operand from shared memory without load "
                   "instructions and do up to 32 times the work per instruction (m64n256k8).";
    if (warpgroup)
        return s + "a wider tile along the MMA's n (m64n128k8, m64n256k8) does more tensor work for the same "
                   "fragment loads and conversions.";
    return s + "larger warp tiles reuse each loaded fragment for more MMAs.";
}

/// The hot loop as ptxas built it (cuda::scanSass): what the PTX cannot show.
std::string sassEvidence(const cuda::SassMix &l)
{
    return "; the same loop in SASS: " + std::to_string(l.instructions) + " instructions, " + std::to_string(l.ffma) +
           " FFMA, " + std::to_string(l.sharedLoads) + " LDS, " + std::to_string(l.localLoads) + " LDL and " +
           std::to_string(l.localStores) + " STL (spills in the loop), " + std::to_string(l.moves) + " MOV, " +
           std::to_string(l.movedAccumulators) + " FFMA moving their accumulator, " + std::to_string(l.bankConflicts) +
           " FFMA reading three registers from one bank, " + std::to_string(l.stallCycles) + " encoded stall cycles";
}

class InstructionMix final : public KernelDimension {
public:
    std::string name() const override { return "instruction_mix"; }

protected:
    bool appliesToKernel(const KernelFacts &k, const RubricInput &) const override { return !k.ptxBody.empty(); }

    RubricScore scoreKernel(const KernelFacts &k, const ProgramFacts &p, const RubricInput &) const override
    {
        RubricScore s;
        const PtxMix &m = k.ptxMix;
        const PtxMix &hot = k.ptxLoop;
        const MixFigures f = instructionMixFigures(k, p);
        const bool loop = f.hotLoop;
        const int global = m.globalLoads + m.globalStores;
        const double fmaShare = f.fmaShare, ldsPerFma = f.ldsPerFma, vectorShare = f.vectorShare,
                     intShare = f.integerShare;
        s.evidence = std::to_string(m.total) + " PTX instructions: " + std::to_string(m.fma) + " FMA (" +
                     percent(m.total ? double(m.fma) / m.total : 0) + "), " + std::to_string(m.floatOther) +
                     " other float, " + std::to_string(m.sharedLoads) + " ld.shared, " +
                     std::to_string(m.sharedStores) + " st.shared, " + std::to_string(global) + " global (" +
                     std::to_string(m.globalVector) + " vector, " + percent(vectorShare) + "), " +
                     std::to_string(m.special) + " special-function, " + std::to_string(m.integer) + " integer (" +
                     percent(intShare) + "), " + std::to_string(m.branches) + " branches" +
                     (loop ? "; hot loop: " + std::to_string(hot.total) + " instructions, " + std::to_string(hot.fma) +
                                 " FMA (" + percent(fmaShare) + "), " + std::to_string(hot.sharedLoads) +
                                 " ld.shared (" + fmt(ldsPerFma, 2) + " per FMA)"
                           : std::string());
        if (k.sassScanned && k.sassLoop.instructions > 0)
            s.evidence += sassEvidence(k.sassLoop);
        if (f.tensor) {
            s.evidence += tensorEvidence(f, *p.gpu);
            s.score = tensorMixScore(f.tensorPerIssue);
            s.sentence = tensorSentence(f, *p.arch);
        } else if (f.computeBound) {
            s.score = computeMixScore(fmaShare, ldsPerFma);
            s.sentence = percent(fmaShare) + " of the " + (loop ? "hot loop's " : "") + "instructions are FMAs with " +
                         fmt(ldsPerFma, 2) + " shared loads per FMA" +
                         (fmaShare >= 0.5 && ldsPerFma <= 0.25
                              ? ": the math dominates, as a compute-bound kernel wants."
                              : ": larger thread tiles (thread_m, thread_n) put more FMAs behind each shared load.");
        } else {
            s.score = memoryMixScore(vectorShare, intShare);
            s.sentence = percent(vectorShare) + " of the global memory instructions are vectorized and " +
                         percent(intShare) + " of all instructions are integer index math" +
                         (vectorShare < 1 ? ": wider vectors (vector=4) move more bytes per instruction." : ".");
        }
        if (m.special > 0)
            s.sentence +=
                " " + std::to_string(m.special) + " special-function instructions (exp, rsqrt, ...) run on the SFUs.";
        return s;
    }
};

} // namespace

std::unique_ptr<RubricDimension> makeInstructionMix()
{
    return std::make_unique<InstructionMix>();
}

} // namespace stitch::rubric
