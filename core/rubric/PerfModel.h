#pragma once
// The static performance model: a time per kernel from its facts, the program's time as the sum.
//   KernelFacts -> PerfModel::predictKernel -> roofline (FLOPs, DRAM, L2, shared memory) x latency
//   hiding x wave quantization + launch -> KernelPrediction -> "final performance", reward, agents
// The code holds the model's structure; its fitted parameters are data, one file per calibrated
// architecture (resources/model/perfmodel-sm_90.json: values and provenance; docs/RUBRIC.md,
// `stitchcuda calibrate`). Another architecture is predicted with the nearest file's parameters and
// the prediction says so (ProgramPrediction::calibration).

#include "core/common/Result.h"
#include "core/rubric/IssueReplay.h"
#include "core/rubric/KernelFacts.h"

#include <optional>
#include <string>
#include <vector>

namespace stitch::rubric {

struct KernelPrediction {
    double ms = 0;
    double computeMs = 0; ///< FLOPs at the FMA peak, over the issue share left to FMAs
    double dramMs = 0;    ///< unique bytes at the DRAM bandwidth
    double l2Ms = 0;      ///< global sectors moved at the L2 bandwidth
    double sharedMs = 0;  ///< shared-memory wavefronts at the SMs' shared bandwidth
    double issueMs = 0;   ///< warp instructions of short-lived blocks at the schedulers' issue rate
    double latencyMs = 0; ///< short-lived blocks (row, element-wise): waves x one block's life (memory round
                          ///< trips, barriers), a limit of its own
    double loopLatencyMs = 0; ///< tiled GEMM: the k-loop's rounds x its latency chain (k-tile barriers, or the
                              ///< cp.async ring's chain), part of computeMs
    double clusterMs = 0; ///< launching and synchronizing thread-block clusters
    double epilogueMs = 0; ///< GEMM: each round's tile stores at the SM's share of the L2 bandwidth (a cp.async ring: one block's; in computeMs)
    double overlapMs = 0;  ///< short-lived blocks: the memory and latency terms that waves started together
                           ///< cannot overlap (one wave: they add; more waves drift apart)
    double launchMs = 0;
    double waves = 0;          ///< blocks / (SMs x active blocks per SM), rounded up
    double waveEfficiency = 1; ///< blocks over the slots of the waves they take
    double smEfficiency = 1;   ///< blocks per SM over the most any SM runs (the tail of throughput-bound kernels)
    double memoryHiding = 1;   ///< share of the bandwidth the bytes in flight can keep busy
    double computeHiding = 1;  ///< share of the FMA pipes the independent work keeps busy
    double achievedOccupancy = 0; ///< warps resident on average over the SM's maximum (<= theoretical)
    double warpSlotUse = 1;       ///< independent warps: the share of a block's life its average warp keeps loads
                                  ///< in flight (the rest waits for the block's slowest warp)
    std::string bound;         ///< "compute", "DRAM", "L2", "shared memory", "issue", "latency", "launch"
};

struct ProgramPrediction {
    double ms = 0;
    std::vector<KernelPrediction> kernels;
    /// Empty when the model's parameters were fitted on the target; else why the figure is rough:
    /// "uncalibrated for sm_80: the model's parameters are sm_90's (NVIDIA H200)".
    std::string calibration;
};

class PerfModel {
public:
    /// The model's fitted parameters: their values and provenance are data,
    /// resources/model/perfmodel-<arch>.json (calibratedModel below); here, what each one does.
    struct Params {
        struct Blank {};
        /// Every parameter 0 (a loader fills them in).
        explicit Params(Blank) {}
        /// The shipped sm_90 values (the only calibrated architecture so far).
        Params();

        double launchUs = 0;            ///< per kernel, back to back in one stream
        double l2BandwidthFactor = 0;   ///< L2 bandwidth / DRAM bandwidth
        /// Share of the L2 (gpus.json l2CacheMiB) that keeps a row kernel's re-read slices between its
        /// passes (an L2 of two partitions, a far line held in both, keeps about half).
        double l2RereadShare = 0;
        double memoryLatencyNs = 0;     ///< DRAM latency the bytes in flight must cover
        double fmaLatencyCycles = 0;
        double schedulersPerSm = 0;
        double sharedBytesPerClock = 0; ///< per SM, effective (the streams' wavefronts at the datasheet's rate run ahead)
        double dramEfficiency = 0;      ///< share of the datasheet bandwidth a streaming kernel reaches
        double issueEfficiency = 0;     ///< share of the schedulers' issue slots short-lived warps use
        double blockLaunchUs = 0;       ///< from a block's launch to its first load
        double barrierUs = 0;           ///< one __syncthreads of a block, all warps arriving together
        double clusterBarrierUs = 0;    ///< one cluster barrier (distributed shared memory exchange)
        double clusterBlockUs = 0;      ///< per block of a cluster launch, on its SM
        /// Blocks a cluster launch keeps resident per SM at most, whatever the calculator allows
        /// (measured, not documented).
        double clusterBlocksPerSm = 0;
        double gemmFullHidingWarps = 0; ///< warps per SM from which a tiled GEMM hides its k-loop stalls
        double gemmIterationUs = 0;     ///< one k-tile of a block: barrier, tile loads landing (divided by the
                                        ///< other resident blocks, which issue meanwhile)
        /// A GEMM round's FMA and shared-memory pipes, combined as (c^p + s^p)^(1/p): a pipe near
        /// saturation delays the other.
        double gemmPipeExponent = 0;
        /// Register-staged tiles (copy=registers): how much slower the k-loop above runs than its FMA
        /// and shared pipes say (the next tile's loads wait in registers, fragments are not
        /// double-buffered); the loop's FFMA share comes from its machine code.
        double registerLoopFactor = 0;
        /// Stream-K: what a shared tile's k steps cost beyond the same steps in a whole tile, as a share
        /// of them (a second ring fill, partial sums stored and re-read, k-slices of A read from L2 again).
        double streamKSharedCost = 0;
        /// Short-lived blocks whose warps run independently hold their slot until the slowest warp is
        /// done: a warp's round trips vary by this share of their mean, so the latest of W warps ends
        /// about this x sqrt(rounds) x sqrt(2 ln W) round trips after the mean.
        double warpLatencySpread = 0;
        double waveDriftExponent = 0;   ///< the overlap loss of short-lived blocks falls as waves^-this

        /// cp.async GEMMs (KernelFacts::copyStages > 0; docs/RUBRIC.md, "cp.async ring"): a block takes
        /// a k-tile at most every asyncTileLatencyUs / (stages - 1).
        double asyncTileLatencyUs = 0;
        double asyncTwoStageFactor = 0; ///< two stages wait for every tile: one tile in flight, its latency x this
        double asyncTileUs = 0;         ///< per k-tile of a block: wait, barrier, ring advance
        double asyncChainExponent = 0;  ///< p-norm of overlapping terms (throughput vs one block's chain)
        double asyncHidingWarps = 0;    ///< warps per SM from which the FMA pipe is fed fully ...
        double asyncTwoStageHidingWarps = 0; ///< ... also with two stages, but ...
        double asyncHidingExponent = 0; ///< ... (warps / asyncHidingWarps)^this below
        double asyncTwoStageHidingExponent = 0; ///< ... and (warps / asyncTwoStageHidingWarps)^this with two stages
        double asyncBlockWarps = 0;     ///< warps one block needs to issue its own FMAs at the SM's rate
        double asyncSpillIssue = 0;     ///< issue slots per spilled 4-byte word, per k-tile (a store, a reload)
        /// A k-loop that spills at all was scheduled by ptxas under a register cap it could not meet:
        /// its FMAs issue 1 + this slower on top of the spill traffic.
        double asyncSpilledLoopCost = 0;
        double asyncLoopOtherIssue = 0; ///< issue weight of the k-loop's other PTX (addresses, cp.async)
        /// One block's FFMA time times u^this, u the hot loop's replayed cycles per issue slot
        /// (KernelFacts::sassReplay, >= 1).
        double asyncReplayExponent = 0;
        /// A tiled GEMM's code outside its k-loop runs once per block; per round each of its machine
        /// instructions costs the largest of onceFetchCycles (each line fetched once), onceIssueCycles x
        /// the warps per scheduler and onceLatencyCycles x (thread tile / 64)^onceTileExponent over the
        /// warps per scheduler. Machine code past instructionCacheKiB is fetched from L2 again each
        /// round, refetchCyclesPerLine per 128-byte line.
        double onceFetchCycles = 0;
        double onceIssueCycles = 0;
        double onceLatencyCycles = 0;
        double onceTileExponent = 0;
        double instructionCacheKiB = 0;
        double refetchCyclesPerLine = 0;
        /// A cp.async ring's exposed tile stores (one block's a round) take this times their sectors at
        /// the SM's share of L2 (the next row's address waits for the previous row's stores).
        double asyncStoreFactor = 0;
        double asyncFillUs = 0;         ///< the first tiles' latency, once per kernel (later blocks overlap it)
        /// Puts the FFMA ring's terms (fitted for ranking) on the measured scale, where register-staged
        /// GEMMs are, so that the two rank together.
        double asyncLevel = 0;

        /// TF32 tensor-core GEMMs (math=tf32_mma): the cp.async ring with one block's FMA time replaced by
        /// its MMAs at the TF32 peak, its fragment loads at sharedBytesPerClock and the issue of its
        /// whole k-loop at mmaIssuePerClock PTX instructions per SM and clock.
        double mmaIssuePerClock = 0;
        double mmaHidingExponent = 0;   ///< (warps / asyncHidingWarps)^this
        double mmaBlockWarps = 0;       ///< warps one block needs to issue its own k-loop at the SM's rate

        /// Hopper warpgroup MMAs (math=tf32_wgmma): the ring runs one tile further behind, and each
        /// k-tile adds this bubble (the kernel waits for all of a tile's MMAs before the next tile's).
        double wgmmaTileBubbleUs = 0;

        /// The names of the parameters above, in declaration order.
        static std::vector<std::string> names();
        /// Sets the parameter `name` (as named in names()) to `value`; an unknown name is an error that
        /// lists the known ones. For model fitting (`stitchcuda calibrate --vary`).
        Status set(const std::string &name, double value);
        /// The parameter `name`'s value; nullopt for an unknown name.
        std::optional<double> get(const std::string &name) const;
    };

    /// The calibrated parameters of each program's target (calibratedModelFor).
    PerfModel() = default;
    /// These parameters for every target (model fitting: `stitchcuda calibrate --vary`).
    explicit PerfModel(Params params) : m_params(params), m_fixed(true) {}

    KernelPrediction predictKernel(const KernelFacts &kernel, const ProgramFacts &program) const;
    /// Predicts every kernel and stores the times in the facts (KernelFacts::predictedMs, ProgramFacts::predictedMs).
    ProgramPrediction predict(ProgramFacts &facts) const;
    /// Predicts a generated program, with the ptxas figures and PTX of `compiled` when given.
    Result<ProgramPrediction> predictProgram(const schedule::Problem &problem, const codegen::GeneratedProgram &program,
                                             const cuda::CompileResult *compiled, ProgramFacts *factsOut = nullptr) const;
    /// Generates the schedule's program (no NVRTC: estimated registers) and predicts its time.
    Result<double> predictSchedule(const schedule::Problem &problem, const schedule::Schedule &schedule) const;

    const Params &params() const { return m_params; }

private:
    /// A tiled GEMM whose tiles are copied by cp.async: fills computeMs, loopLatencyMs, sharedMs,
    /// issueMs and epilogueMs of `p` (see Params::asyncTileLatencyUs and below).
    void predictAsyncGemm(const KernelFacts &k, const ProgramFacts &program, KernelPrediction &p) const;
    /// Cycles per round of one block's code outside its k-loop (Params::onceFetchCycles).
    double onceCycles(const KernelFacts &k, double warpsPerScheduler) const;

    Params m_params;      ///< sm_90's unless given
    bool m_fixed = false; ///< the given parameters for every target
};

/// One calibrated architecture's parameters (resources/model/perfmodel-<arch>.json).
struct CalibratedModel {
    std::string arch; ///< "sm_90"
    std::string gpu;  ///< the GPU they were fitted on
    PerfModel::Params params{PerfModel::Params::Blank{}};
    IssueReplayParams replay{IssueReplayParams::Blank{}};
};
/// Reads a parameter file; every parameter must be there (an error names the missing one).
Result<CalibratedModel> parsePerfModel(const std::string &json);
/// The shipped files, calibrated architectures in order.
const std::vector<CalibratedModel> &calibratedModels();
/// `arch`'s own parameters, or the nearest calibrated architecture's (by compute capability, the
/// newer on a tie) with `note` saying so ("uncalibrated for sm_80: ..."; empty when calibrated).
const CalibratedModel &calibratedModelFor(const ArchLimits &arch, std::string *note = nullptr);

/// The reference schedule the final-performance dimension compares with: one op per kernel,
/// strategy generic, default decisions.
schedule::Schedule genericSchedule(const schedule::Problem &problem);

/// The program's roofline floor: all FLOPs at peak (the TF32 tensor-core peak for precision tf32 on
/// an arch that has them, else FP32) or the graph's inputs and outputs moved once.
double rooflineFloorMs(const schedule::Problem &problem, const GpuSpec &gpu);

} // namespace stitch::rubric
