#pragma once
// The static performance model: a time per kernel from its facts, the program's time as the sum.
//   KernelFacts -> PerfModel::predictKernel -> roofline (FLOPs, DRAM, L2, shared memory) x latency
//   hiding x wave quantization + launch -> KernelPrediction -> "final performance", reward, agents
// Calibrated against H200 measurements (docs/RUBRIC.md, `stitchcuda calibrate`).

#include "core/common/Result.h"
#include "core/rubric/KernelFacts.h"

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
};

class PerfModel {
public:
    /// The model's constants (not in gpus.json because they are fitted, not datasheet figures).
    struct Params {
        double launchUs = 2.5;          ///< per kernel, back to back in one stream
        double l2BandwidthFactor = 2.5; ///< L2 bandwidth / DRAM bandwidth
        /// Share of the L2 (gpus.json l2CacheMiB) that keeps a row kernel's re-read slices between its
        /// passes. Fitted: 0.5, on the even-numbered long-row candidates of run 7 call 1 and the
        /// stored long-rows run (0.4-1.0 tried). Read as: the H200's L2 is two partitions, each
        /// caching for the SMs on its side, and a line homed on the far side is held in both.
        double l2RereadShare = 0.5;
        double memoryLatencyNs = 600;   ///< DRAM latency the bytes in flight must cover
        double fmaLatencyCycles = 4;
        int schedulersPerSm = 4;
        double sharedBytesPerClock = 256; ///< per SM, effective: fitted (the datasheet's 128 B/clock with the
                                          ///< streams' wavefront count made GEMM shared-bound twice too often)
        double dramEfficiency = 0.9;      ///< share of the datasheet bandwidth a streaming kernel reaches
        double issueEfficiency = 0.5;     ///< share of the schedulers' issue slots short-lived warps use
        double blockLaunchUs = 0.5;       ///< from a block's launch to its first load
        double barrierUs = 0.05;          ///< one __syncthreads of a block, all warps arriving together
        double clusterBarrierUs = 1.0;    ///< one cluster barrier (distributed shared memory exchange)
        double clusterBlockUs = 0.3;      ///< per block of a cluster launch, on its SM
        /// Blocks a cluster launch keeps resident per SM at most, whatever the calculator allows:
        /// measured, not documented (H200 CUPTI: 7.1-7.8 resident blocks in every cluster kernel of
        /// 2-16 blocks with room for 8-32, against 28-30 of 32 for the same blocks without clusters).
        double clusterBlocksPerSm = 8;
        double gemmFullHidingWarps = 8;   ///< warps per SM from which a tiled GEMM hides its k-loop stalls
        double gemmIterationUs = 0.25;    ///< one k-tile of a block: barrier, tile loads landing (other
                                          ///< resident blocks issue meanwhile: divided by them)
        /// A GEMM round's FMA and shared-memory pipes, combined as (c^p + s^p)^(1/p): a pipe near
        /// saturation delays the other (fitted on the even-numbered H200 GEMM candidates: 3).
        double gemmPipeExponent = 3;
        /// Register-staged tiles (copy=registers): the k-loop above (FMA and shared pipes, k-tile
        /// barriers) runs this many times slower on the H200. Its warps issue the next tile's global
        /// loads into registers and store them to shared memory after the math, the stores waiting for
        /// the loads, and use fragments without double-buffering; the formula above leaves all of that
        /// out. Fitted to the level, not the ranking: the median of measured / predicted over the
        /// even-numbered register-staged candidates of run 14 call 2 (4096^3) and run 9's
        /// 1000x3000x700 is 1 (before: 1.41 and 1.47, the same at 8-12 rounds and at one, so it is the
        /// loop's rate, not the tail; docs/RUBRIC.md, "Issue 5, run 14 round"). Since session 20 the
        /// loop's FFMA share comes from its machine code (every instruction it issues, global loads
        /// and guards included, not the PTX's FMAs against shared loads): refitted the same way, on
        /// the even-numbered register-staged candidates of run 15 call 1 (all five FP32 problems,
        /// 200): 1.45 x 0.906.
        double registerLoopFactor = 1.31;
        /// Stream-K: what a shared tile's k steps cost beyond the same steps in a whole tile, as a
        /// share of them. The shared blocks run a second tile segment each (another ring fill), store
        /// and re-read their partial sums, and start at scattered k offsets, so the blocks on the same
        /// rows of A no longer read each k-slice from L2 once (run 11 call 5). Fitted to the level of
        /// run 14 call 2 (4096^3, 85 pairs on / off, 0.996 measured; each shared block runs 0.88 of
        /// a tile there); its held-out check is 128x8192x8192 (run 14 call 4), 64 tiles shared by 132
        /// or 264 blocks, 2-4x faster than off (docs/RUBRIC.md, "Issue 5, session 13 round").
        double streamKSharedCost = 0.14;
        /// Short-lived blocks whose warps run independently (no block barrier: element-wise kernels,
        /// rows of one warp) hold their slot until their slowest warp is done, and the warps already done
        /// keep no loads in flight meanwhile. A warp's round trips vary by this share of their mean (one
        /// standard deviation), so the latest of a block's W warps, each `memoryRounds` round trips long,
        /// ends about this x sqrt(rounds) x sqrt(2 ln W) round trips after the mean (the expected maximum
        /// of W normal draws); the bytes in flight scale by rounds / (rounds + that). Fitted on the
        /// even-numbered 5-op chain candidates (0.29-0.40 rank them alike, the middle kept; docs/RUBRIC.md,
        /// "run 9").
        double warpLatencySpread = 0.35;
        /// The overlap loss of short-lived blocks falls as waves^-x (fitted on the even-numbered
        /// long-row candidates: 0.5; start times drift apart as the waves go on).
        double waveDriftExponent = 0.5;

        /// cp.async GEMMs (KernelFacts::copyStages > 0), a model of their own (docs/RUBRIC.md, "cp.async
        /// ring"). Fitted on the even-numbered candidates of H200 run 5 (963 cp.async GEMMs, 5 problems).
        /// A block takes a k-tile at most every asyncTileLatencyUs / (stages - 1): the ring keeps
        /// stages - 1 tiles in flight, each landing one latency after it was issued.
        double asyncTileLatencyUs = 1.0;
        /// Two stages wait for every tile (wait_group 0) and issue the next copy only after the
        /// barrier: one tile in flight, its latency times this (run 9: 1.5; 2 made two stages 1.4-1.5x
        /// slower than three at block_k 8 where the H200 measured 1.05-1.13x).
        double asyncTwoStageFactor = 1.5;
        double asyncTileUs = 0.01;          ///< per k-tile of a block: wait, barrier, ring advance
        double asyncChainExponent = 5;      ///< p-norm of overlapping terms (throughput vs one block's chain)
        double asyncHidingWarps = 12;       ///< warps per SM from which the FMA pipe is fed fully ...
        double asyncTwoStageHidingWarps = 12; ///< ... also with two stages, but ...
        double asyncHidingExponent = 0.5;   ///< ... (warps / asyncHidingWarps)^this below
        /// ... and (warps / asyncTwoStageHidingWarps)^this with two stages: every warp waits for each tile
        /// (wait_group 0, then the barrier) and no fragments are double-buffered, so the FMA pipe is fed in
        /// proportion to the warps left issuing (Little's law) rather than as the square root. Run 9,
        /// fitted on the even run-5 candidates with asyncTwoStageFactor (before: 16 warps, exponent 0.5).
        double asyncTwoStageHidingExponent = 1;
        double asyncBlockWarps = 8;         ///< warps one block needs to issue its own FMAs at the SM's rate
        double asyncSpillIssue = 2;         ///< issue slots per spilled 4-byte word, per k-tile (a store, a reload)
        /// A k-loop that spills at all was scheduled by ptxas under a register cap it could not meet: its
        /// FMAs issue 1 + this slower on top of the spill traffic (the extra resident warps the cap bought
        /// do not make up for it: H200 run 5, 128x128 tiles capped at 128 registers by min_blocks=2 and
        /// spilling 16 bytes ran 3.28 ms at 4096^3 against 3.07 ms uncapped at one block per SM).
        /// Fitted on the even-numbered run-5 candidates with asyncSpillIssue (docs/RUBRIC.md, "run 9").
        double asyncSpilledLoopCost = 0.25;
        double asyncLoopOtherIssue = 0.6;   ///< issue weight of the k-loop's other PTX (addresses, cp.async)
        /// One block's FFMA time times u^this, u the hot loop's replayed cycles per issue slot
        /// (KernelFacts::sassReplay, >= 1). The replay leaves out what the hardware adds at every
        /// warp count (ncu: 15-25 % more cycles per instruction, dispatch stalls) and the other
        /// schedulers, so u is taken in part (the cycles waiting for instructions are taken whole,
        /// replayedIssue in PerfModel.cpp). Chosen on the even-numbered candidates of runs 15 and 16
        /// (0.1-1 tried): the largest value that keeps every other FP32 GEMM problem at rho >= 0.85;
        /// run 22, timed after, moves within 0.006 by it (docs/RUBRIC.md, session 20).
        double asyncReplayExponent = 0.25;
        /// A tiled GEMM's code outside its k-loop (prologue, epilogue: C's stores, bias, GELU) runs once
        /// per block; per round it costs each of its machine instructions the largest of three cycle
        /// counts: onceFetchCycles (straight-line code, each line fetched once into the warps'
        /// instruction cache), onceIssueCycles times the warps per scheduler (each warp issues it;
        /// below 1 because about half the epilogue is the edge tiles' path, not run inside the matrix)
        /// and onceLatencyCycles x (thread tile / 64)^onceTileExponent over the warps per scheduler
        /// (one warp's dependent chains, the larger the tile the fewer registers left to interleave them).
        /// Where the whole kernel's machine code exceeds the SM's instruction cache
        /// (instructionCacheKiB: the cache that keeps a kernel's code between rounds, not the
        /// scheduler's 30 KB one a replayed loop misses, IssueReplayParams::instructionCacheBytes),
        /// each round fetches the excess from L2 again, refetchCyclesPerLine per
        /// 128-byte line (H200 run 23 call 1, ncu: a 210 KB GEMM + bias + GELU kernel waits for
        /// instructions in 50 % of its warp samples, 71 % of its epilogue's, where the same kernel with
        /// a 125 KB loop-and-epilogue waits in 8 %).
        /// Fitted to the per-round intercepts (2 t(K=64) - t(K=128)) of 238 GEMM + bias + GELU schedules
        /// at 8192x8192 timed at both K (H200 run 22 call 4): log sd 0.18, not to the ranking
        /// (docs/RUBRIC.md, session 21).
        double onceFetchCycles = 2;
        double onceIssueCycles = 0.75;
        double onceLatencyCycles = 3.5;
        double onceTileExponent = 0.5;
        double instructionCacheKiB = 144;
        double refetchCyclesPerLine = 112;
        /// A cp.async ring's exposed tile stores (one block's a round) take this times their sectors at
        /// the SM's share of L2. Measured under ncu (run 24 call 1, GEMM 8192x8192x128, one block per
        /// SM of 256x128 or 128x256 tiles): the code after the k-loop takes 2.7 and 6.6 us a round,
        /// waiting on its stores (long scoreboard: the address register reloaded for the next row
        /// waits until the previous row's STG.128 has read it, then the drain), where the model had
        /// 1.1 and 2.2 us of stores and under 1 us of once-per-block code (onceCycles).
        double asyncStoreFactor = 2;
        double asyncFillUs = 1.0;           ///< the first tiles' latency, once per kernel (later blocks overlap it)
        /// The FFMA ring's terms above were fitted for ranking (Spearman ignores a common factor), and
        /// predicted 1.4x the measured times; this puts them on the measured scale, where register-staged
        /// GEMMs (registerLoopFactor) are too, so that the two rank together. Measured / predicted over the
        /// even-numbered FP32 cp.async candidates with K >= 700: median 0.717 (run 14 call 2 0.708, run 5
        /// 4096^3 0.704, 1000x3000x700 0.770, GEMM+bias+GELU 4096^3 0.692); 0.7 kept (0.72 ranks run 14 at
        /// 0.850, 0.66 at 0.863). Short K (0.24-0.33) is off for another reason. TF32 rings unchanged.
        double asyncLevel = 0.7;

        /// TF32 tensor-core GEMMs (math=tf32_mma, KernelFacts::tensorCores): the cp.async ring above, with
        /// one block's FMA time replaced by its MMAs at the datasheet TF32 peak (gpus.json tf32Tflops),
        /// its fragment loads at sharedBytesPerClock and the issue of its whole k-loop at
        /// mmaIssuePerClock PTX instructions per SM and clock; the tile latency, hiding warps, chain
        /// exponent and epilogue are the FFMA ring's. Fitted by a coordinate search on the
        /// even-numbered TF32 candidates of H200 run 7 (4096^3 and 8192^3): call 3 as `calibrate`
        /// re-derives it, call 2 from its stored facts (half its kernels were generated differently
        /// then); docs/RUBRIC.md, "TF32 tensor cores".
        /// mma.sync, cvt.rna and the fragment loads each hold an issue slot for more than a clock: 1.
        double mmaIssuePerClock = 1;
        double mmaHidingExponent = 0.25; ///< (warps / asyncHidingWarps)^this: 8 warps lose 10 %, not 18 %
        double mmaBlockWarps = 2;        ///< warps one block needs to issue its own k-loop at the SM's rate

        /// Hopper warpgroup MMAs (math=tf32_wgmma, KernelFacts::warpgroupMma): the cp.async ring above, with
        /// one block's k-loop time = its MMAs at the TF32 peak combined (gemmPipeExponent) with its shared
        /// traffic at sharedBytesPerClock: the descriptor operand read by each warpgroup per 8-deep step,
        /// the register operand's fragment loads and the cp.async fills. The ring runs one tile further
        /// behind (stages - 2 tiles in flight while a tile's MMAs run), and each k-tile adds a bubble: the
        /// kernel waits for all of a tile's MMAs (wgmma.wait_group 0) before the next tile's fragments
        /// load and its MMAs issue. Fitted on the even-numbered candidates of H200 run 8 call 2 (4096^3
        /// and 8192^3): 0.18-0.5 us rank them alike (0.1-0.16 and 0 worse), the smallest of that range
        /// kept (docs/RUBRIC.md, "Issue 5, run 8").
        double wgmmaTileBubbleUs = 0.2;

        /// The names of the fitted constants above (the `double` ones), in declaration order.
        static std::vector<std::string> names();
        /// Sets the constant `name` (as named in names()) to `value`; an unknown name is an error that
        /// lists the known ones. For model fitting (`stitchcuda calibrate --vary`).
        Status set(const std::string &name, double value);
    };

    PerfModel() = default;
    explicit PerfModel(Params params) : m_params(params) {}

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

    Params m_params;
};

/// The reference schedule the final-performance dimension compares with: one op per kernel,
/// strategy generic, default decisions.
schedule::Schedule genericSchedule(const schedule::Problem &problem);

/// The program's roofline floor: all FLOPs at peak (the TF32 tensor-core peak for precision tf32 on
/// an arch that has them, else FP32) or the graph's inputs and outputs moved once.
double rooflineFloorMs(const schedule::Problem &problem, const GpuSpec &gpu);

} // namespace stitch::rubric
