// Roofline with latency hiding and wave quantization, per kernel; the program is the sum.
//   KernelFacts -> predictKernel -> KernelPrediction -> ProgramPrediction
#include "core/rubric/PerfModel.h"

#include "core/ir/DType.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace stitch::rubric {

namespace {

/// A tiled GEMM's blocks per SM on the busiest SM: `rounds` rounds of `resident` blocks together,
/// each round one whole tile's work per block.
struct GemmRounds {
    double resident = 1;
    double rounds = 1;
};

/// The FLOPs a kernel's blocks issue: a tiled GEMM's whole tiles (KernelFacts::tileFlops), else its
/// own.
double issuedFlops(const KernelFacts &k)
{
    return k.tileFlops > 0 ? k.tileFlops : k.flops;
}

/// Whether the kernel's hot loop was replayed (KernelFacts::sassReplay).
bool replayed(const KernelFacts &k)
{
    return k.sassReplay.cyclesPerTrip > 0 && k.sassReplayWarps > 0;
}

/// The FFMA k-loop's machine code replayed on one scheduler (KernelFacts::sassReplay): its cycles
/// per issue slot, 1 where the warps there keep the port busy, more where the static schedule's
/// stalls, scoreboard waits and bank conflicts leave it idle (taken to the power `exponent`) or
/// where the loop waits for its instructions (taken whole: the fetches are the hardware's, ncu's
/// "no instruction" stalls). 1 without a replay.
double replayedIssue(const KernelFacts &k, double exponent)
{
    if (!replayed(k))
        return 1;
    const double slots = k.sassReplayWarps * static_cast<double>(k.sassReplay.instructionsPerTrip);
    const double fetch = k.sassReplay.fetchIdleCyclesPerTrip / slots;
    return std::pow(std::max(1.0, k.sassReplay.cyclesPerTrip / slots - fetch), exponent) + fetch;
}

/// Data-parallel: whole rounds of whole tiles. Stream-K: its shared blocks each run an even share of
/// the shared tiles' k steps, at 1 + `sharedCost` (Params::streamKSharedCost), and the other blocks
/// one whole tile each, as many resident per SM as the launched blocks and the occupancy allow. The
/// busiest SM's blocks are placed in launch order (the shared ones first), each in the slot that
/// frees first: a whole tile cannot be split, so with three slots, one shared block of 0.59 tiles
/// and 15 whole tiles the SM needs 5.59 rounds, not the even 5.2 (4096^3 in 64x128 tiles).
GemmRounds gemmRounds(const KernelFacts &k, double sms, double activeBlocks, double sharedCost)
{
    const double perSm = static_cast<double>(k.blocks) / sms;
    if (!k.streamK || k.streamKBlocks <= 0) {
        const double resident = std::max(1.0, std::min(std::ceil(perSm), activeBlocks));
        return {resident, std::ceil(std::ceil(perSm) / resident)};
    }
    const double whole = static_cast<double>(k.blocks - k.streamKTiles);
    const double launched = static_cast<double>(k.launchedBlocks());
    const double resident = std::max(1.0, std::min(std::ceil(launched / sms), activeBlocks));
    const int shared = static_cast<int>(std::ceil(k.streamKBlocks / sms));
    const int tiles = static_cast<int>(std::ceil(whole / sms));
    const double sharedRun = static_cast<double>(k.streamKTiles) * (1 + sharedCost) / k.streamKBlocks;
    std::vector<double> slots(static_cast<std::size_t>(resident), 0.0);
    auto place = [&](double run) { *std::min_element(slots.begin(), slots.end()) += run; };
    auto spread = [&] {
        auto [lo, hi] = std::minmax_element(slots.begin(), slots.end());
        return *hi - *lo;
    };
    for (int b = 0; b < shared; ++b)
        place(sharedRun);
    int left = tiles;
    for (; left > 0 && spread() > 1; --left)
        place(1.0);
    // Once the slots are within one tile of each other, each `resident` tiles add one to every slot.
    const int rounds = left / static_cast<int>(slots.size());
    for (double &slot : slots)
        slot += rounds;
    for (left -= rounds * static_cast<int>(slots.size()); left > 0; --left)
        place(1.0);
    return {resident, *std::max_element(slots.begin(), slots.end())};
}

/// The share of a tiled GEMM's k-loop issue slots that go to FMAs. Register-staged tiles with the
/// loop's machine code (sassLoop) take its FFMA share of every instruction the loop issues: their
/// global loads, guards and shared stores are in the loop, and at unaligned shapes (scalar loads,
/// each guarded) they are a third of it. Else a compiled k-loop's PTX: FMAs against shared-memory
/// loads (its address arithmetic folds into the loads' offsets in SASS, so it is left out). Else
/// the kernel's FMA share of its FLOPs.
double gemmIssueShare(const KernelFacts &k)
{
    if (k.copyStages == 0 && !k.tensorCores && !k.warpgroupMma && k.sassLoop.ffma > 0)
        return double(k.sassLoop.ffma) / k.sassLoop.instructions;
    if (k.ptxLoop.fma > 0)
        return double(k.ptxLoop.fma) / (k.ptxLoop.fma + k.ptxLoop.sharedLoads);
    return std::clamp(k.fmaShare, 0.05, 1.0);
}

/// The bytes of the sectors a kernel's global stores write (C's tile, split-K or stream-K partial sums).
double storedSectorBytes(const KernelFacts &k)
{
    double bytes = 0;
    for (const auto &st : k.streams)
        if (!st.shared && st.store)
            bytes += sectorsPerRequest(st).sectors * 32.0 * st.requests;
    return bytes;
}

/// The kernel's instructions outside its k-loop, run once per block (prologue, epilogue): the machine
/// code's where it was scanned, else the PTX's; 0 without either.
double onceInstructions(const KernelFacts &k)
{
    if (k.sassScanned && k.sassLoop.instructions > 0)
        return std::max(0, k.sassKernel.instructions - k.sassLoop.instructions);
    return k.ptxLoop.total > 0 ? std::max(0, k.ptxMix.total - k.ptxLoop.total) : 0.0;
}

} // namespace

KernelPrediction PerfModel::predictKernel(const KernelFacts &k, const ProgramFacts &program) const
{
    const GpuSpec &gpu = *program.gpu;
    const ArchLimits &arch = *program.arch;
    KernelPrediction p;
    p.launchMs = m_params.launchUs * 1e-3;
    if (!k.occupancy || k.occupancy->activeBlocksPerSm <= 0 || k.blocks <= 0) {
        p.ms = p.launchMs;
        p.bound = "launch";
        return p;
    }
    const double sms = gpu.multiprocessors;
    const double clockHz = gpu.boostClockMHz * 1e6;
    // Cluster launches keep fewer blocks resident than the calculator allows (clusterBlocksPerSm).
    const double activeBlocks = k.clusterSize > 1 ? std::min(double(k.occupancy->activeBlocksPerSm),
                                                              m_params.clusterBlocksPerSm)
                                                  : double(k.occupancy->activeBlocksPerSm);
    double slots = sms * activeBlocks;
    // A cluster runs inside one GPC: only so many clusters fit at once (residentClusters, measured on
    // the H200: 15 of 8 and 7 of 16 at one block per SM), and the SMs left over stay idle.
    double usedSms = sms;
    if (k.clusterSize > 1) {
        const int clusters = residentClusters(gpu, k.clusterSize, static_cast<int>(activeBlocks));
        if (clusters > 0 && clusters * k.clusterSize < slots) {
            slots = double(clusters) * k.clusterSize;
            usedSms = std::max(1.0, std::ceil(slots / activeBlocks));
        }
    }
    const double blocks = static_cast<double>(k.blocks);
    // Stream-K spreads its tiles' k steps evenly: no partial last wave.
    p.waves = k.streamK ? std::max(1.0, blocks / slots) : std::ceil(blocks / slots);
    const double perWave = std::min(blocks, slots);
    // Wave quantization: every wave lasts as long as a full one (the shared DRAM and L2 see it).
    const double quant = p.waves * perWave / blocks;
    p.waveEfficiency = 1 / quant;
    const double perSm = blocks / usedSms;

    const double warpsPerBlock = std::ceil(k.threads / static_cast<double>(arch.warpSize));
    const double warpsPerSm = perWave * warpsPerBlock / sms;

    // Little's law: the bytes in flight per SM must cover bandwidth x latency.
    const double bw = gpu.memoryBandwidthGBs * 1e9 * m_params.dramEfficiency;
    const double neededPerSm = bw * m_params.memoryLatencyNs * 1e-9 / sms;
    double inFlight = warpsPerSm * arch.warpSize * k.bytesInFlightPerThread;
    // Warps that need no barrier finish one by one, and a finished warp's slot stays taken (and
    // empty of loads) until the block's slowest warp is done: the expected latest of W warps.
    const bool independentWarps =
        (k.strategy == schedule::Strategy::Elementwise || k.strategy == schedule::Strategy::RowReduction) &&
        k.blockBarriers == 0 && k.clusterSize <= 1 && warpsPerBlock > 1;
    if (independentWarps) {
        const double rounds = std::max(1, k.memoryRounds);
        const double late = m_params.warpLatencySpread * std::sqrt(rounds) * std::sqrt(2 * std::log(warpsPerBlock));
        p.warpSlotUse = rounds / (rounds + late);
        inFlight *= p.warpSlotUse;
    }
    p.memoryHiding = std::clamp(inFlight / neededPerSm, 0.02, 1.0);
    const double neededFma = m_params.schedulersPerSm * m_params.fmaLatencyCycles;
    p.computeHiding = std::clamp(warpsPerSm * k.ilp / neededFma, 0.02, 1.0);
    // An SM's own pipes (FMA, issue, shared memory) see the tail per SM: the busiest SM runs
    // ceil(blocks / SMs) blocks while the average runs blocks / SMs (fewer blocks than SMs: the rest idle).
    double smQuant = std::ceil(perSm) / perSm;
    const bool tiledGemm = k.tiledGemm();
    const double peak = gpu.fp32Tflops * 1e12;
    const double issueShare = tiledGemm ? gemmIssueShare(k) : 1.0;
    p.dramMs = quant * k.uniqueBytes / (bw * p.memoryHiding) * 1e3;
    p.l2Ms = quant * k.trafficBytes / (bw * m_params.l2BandwidthFactor * p.memoryHiding) * 1e3;
    if (tiledGemm && k.copyStages > 0) {
        predictAsyncGemm(k, program, p);
        const GemmRounds r = gemmRounds(k, sms, k.occupancy->activeBlocksPerSm, m_params.streamKSharedCost);
        smQuant = r.rounds * r.resident / perSm;
    } else if (tiledGemm) {
        // A tiled GEMM's blocks run in rounds of `resident` per SM on the busiest SM; a round
        // with free slots runs no faster (each block is bound by its own k-loop), and the warps
        // resident together hide shared-memory loads, fully from gemmFullHidingWarps on.
        const auto [resident, rounds] = gemmRounds(k, sms, k.occupancy->activeBlocksPerSm, m_params.streamKSharedCost);
        smQuant = rounds * resident / perSm;
        const double warps = resident * warpsPerBlock;
        p.computeHiding = std::pow(std::min(1.0, warps / m_params.gemmFullHidingWarps), 1.5);
        // One round on one SM: the FMA pipe and the shared-memory pipe, each near saturation
        // delaying the other; each k-tile's barrier and tile landing, which the other resident
        // blocks fill; the tile's stores (C or split-K partials) at the SM's share of L2.
        const double fma = resident * issuedFlops(k) / blocks / (peak / sms * issueShare * p.computeHiding);
        const double shared = resident * k.sharedTrafficBytes / blocks / (m_params.sharedBytesPerClock * clockHz);
        const double e = m_params.gemmPipeExponent;
        const double pipes = std::pow(std::pow(fma, e) + std::pow(shared, e), 1 / e);
        const double barrier = k.loopIterations * m_params.gemmIterationUs * 1e-6 / resident;
        const double epilogue = resident * storedSectorBytes(k) / blocks / (bw * m_params.l2BandwidthFactor / sms);
        // Each block also runs its prologue and epilogue once, per round as in the cp.async ring
        // (onceCycles): at short K per block (split K, K = 64-128) a larger share.
        const double once = onceCycles(k, resident * warpsPerBlock / m_params.schedulersPerSm) / clockHz;
        const double loop = m_params.registerLoopFactor;
        p.loopLatencyMs = rounds * loop * barrier * 1e3;
        p.epilogueMs = rounds * epilogue * 1e3;
        p.sharedMs = rounds * shared * 1e3;
        p.issueMs = rounds * once * 1e3; // as in the ring: the code outside the loop
        p.computeMs = rounds * (loop * (pipes + barrier) + epilogue + once) * 1e3;
    } else {
        p.computeMs = smQuant * issuedFlops(k) / (peak * usedSms / sms * issueShare * p.computeHiding) * 1e3;
        p.sharedMs = smQuant * k.sharedTrafficBytes / (usedSms * m_params.sharedBytesPerClock * clockHz) * 1e3;
    }
    p.smEfficiency = 1 / smQuant;
    // Re-read passes (row kernels without a register cache) hit L2 only while the slices the resident
    // blocks hold fit in its share for them (l2RereadShare); the rest come from DRAM again. Only the
    // row inputs count: a per-column vector (gamma) is the same for every row and stays cached.
    const double reread = k.rowRereadBytes;
    if (!tiledGemm && reread > 0 && k.memoryRounds > 1 && k.strategy == schedule::Strategy::RowReduction) {
        const double slice = reread / (k.memoryRounds - 1) / blocks / std::max(1, k.rowSteps);
        const double workingSet = std::min(blocks, slots) * slice;
        const double l2Bytes = gpu.l2CacheMiB * 1024.0 * 1024.0 * m_params.l2RereadShare;
        const double miss = workingSet > l2Bytes ? 1 - l2Bytes / workingSet : 0.0;
        p.dramMs = quant * (k.uniqueBytes + miss * reread) / (bw * p.memoryHiding) * 1e3;
    }
    // Short-lived blocks (row and element-wise kernels): every warp issues its whole program, and
    // a block lives through its load round trips and barriers one after the other.
    double lifeUs = 0; // a short-lived block's own life, alone on its SM
    if (k.instructionsPerWarp > 0) {
        const double issueRate = m_params.schedulersPerSm * clockHz * m_params.issueEfficiency;
        const double busiestWarps = std::ceil(perSm) * warpsPerBlock;
        p.issueMs = busiestWarps * k.instructionsPerWarp / issueRate * 1e3;
        lifeUs = m_params.blockLaunchUs + k.memoryRounds * m_params.memoryLatencyNs * 1e-3 +
                 k.blockBarriers * m_params.barrierUs + k.clusterBarriers * m_params.clusterBarrierUs;
        p.latencyMs = p.waves * lifeUs * 1e-3;
        lifeUs += warpsPerBlock * k.instructionsPerWarp / issueRate * 1e6;
    }
    if (k.clusterSize > 1)
        p.clusterMs = std::ceil(perSm) * m_params.clusterBlockUs * 1e-3;
    const double work = std::max({p.computeMs, p.dramMs, p.l2Ms, p.sharedMs, p.issueMs, p.latencyMs});
    if (lifeUs > 0 && p.latencyMs > 0) {
        // Blocks of one wave start together: their load phases and their barriers, reductions and
        // launches line up instead of overlapping (one wave: the two add); later waves drift apart.
        // Clusters of one block per SM do not drift: every block of a cluster waits at each cluster
        // barrier, row after row, and no other block on its SM fills the wait.
        const bool lockstep = k.clusterSize > 1 && activeBlocks <= 1;
        const double drift = lockstep ? 1.0 : std::pow(p.waves, m_params.waveDriftExponent);
        p.overlapMs = std::min(std::max(p.dramMs, p.l2Ms), p.latencyMs) / drift;
    }
    p.bound = work == p.computeMs ? "compute"
              : work == p.dramMs  ? "DRAM"
              : work == p.l2Ms    ? "L2"
              : work == p.sharedMs ? "shared memory"
              : work == p.issueMs  ? "issue"
                                   : "latency";
    p.ms = work + p.overlapMs + p.clusterMs + p.launchMs;
    if (p.launchMs > work)
        p.bound = "launch";
    // Achieved occupancy. A grid smaller than one wave fills only its blocks. Where a throughput
    // (DRAM, L2, FMA, issue) bounds the kernel, blocks wait on it and keep their slots full; where
    // block latency, launches or clusters bound it, blocks arrive on an SM at blocks / (SMs x
    // kernel time) and stay only their own life (Little's law), leaving slots the calculator
    // counts as resident empty.
    const double theoretical = k.occupancy->occupancy;
    // (CUPTI averages over the SMs that are active, so a small grid counts per busy SM; a stream-K
    // grid launches its shared blocks besides the whole tiles: those are the blocks that fill SMs.)
    const double launched = static_cast<double>(k.launchedBlocks());
    const double perActiveSm = launched / std::min(launched, sms);
    double resident = std::min(activeBlocks, perActiveSm);
    const bool arrivalBound = p.bound == "latency" || p.bound == "launch" || p.clusterMs > work;
    if (arrivalBound && lifeUs > 0 && p.ms > 0)
        resident = std::min(resident, std::max(1.0, perActiveSm * lifeUs / (p.ms * 1e3)));
    p.achievedOccupancy = theoretical * resident / k.occupancy->activeBlocksPerSm;
    return p;
}

double PerfModel::onceCycles(const KernelFacts &k, double warpsPerScheduler) const
{
    const Params &c = m_params;
    const double w = std::max(1.0, warpsPerScheduler);
    const double latency = c.onceLatencyCycles * std::pow(std::max(1.0, k.ilp) / 64.0, c.onceTileExponent) / w;
    double refetch = 0; // the machine code beyond the instruction cache, fetched again every round
    if (k.sassScanned && k.sassLoop.instructions > 0) { // as onceInstructions: the machine code's counts
        const double bytes = double(k.sassKernel.instructions) * cuda::kSassInstructionBytes;
        refetch = std::max(0.0, bytes - c.instructionCacheKiB * 1024) / 128 * c.refetchCyclesPerLine;
    }
    return onceInstructions(k) * std::max({c.onceFetchCycles, c.onceIssueCycles * w, latency}) + refetch;
}

void PerfModel::predictAsyncGemm(const KernelFacts &k, const ProgramFacts &program, KernelPrediction &p) const
{
    // Per SM, blocks run in rounds of `resident`. A round lasts as long as the larger of two, combined
    // as a p-norm because each hides part of the other: the SM's issue (the FMA pipe at the
    // k-loop's issue share, the shared-memory pipe) and one block's own chain (k-tiles no faster
    // than the ring delivers them); then one block's tile stores, and the code outside the k-loop
    // (prologue, epilogue: onceCycles, measured per round). Register-staged tiles keep the barrier
    // model above: a cp.async ring keeps stages - 1 tiles in flight across the barrier, so more
    // resident blocks do not hide the tile latency the way they hide a register round trip.
    const GpuSpec &gpu = *program.gpu;
    const ArchLimits &arch = *program.arch;
    const Params &c = m_params;
    const double sms = gpu.multiprocessors;
    const double clockHz = gpu.boostClockMHz * 1e6;
    const double peak = gpu.fp32Tflops * 1e12;
    const double bw = gpu.memoryBandwidthGBs * 1e9 * c.dramEfficiency;
    const double blocks = static_cast<double>(k.blocks);
    const auto [resident, rounds] = gemmRounds(k, sms, k.occupancy->activeBlocksPerSm, c.streamKSharedCost);
    const double warpsPerBlock = std::ceil(k.threads / static_cast<double>(arch.warpSize));
    const double warps = resident * warpsPerBlock;
    auto pnorm = [q = c.asyncChainExponent](double a, double b) { return std::pow(std::pow(a, q) + std::pow(b, q), 1 / q); };

    // The k-loop's issue share: FMAs against shared loads, spill traffic and the rest of its PTX.
    // The spill traffic in the loop: where the machine code was scanned, its local loads and stores
    // in the loop, one issue slot each (spills in the prologue or epilogue cost the loop nothing);
    // else asyncSpillIssue slots per spilled word.
    double issueShare = std::clamp(k.fmaShare, 0.05, 1.0);
    if (k.ptxLoop.fma > 0) {
        const double other = std::max(0, k.ptxLoop.total - k.ptxLoop.fma - k.ptxLoop.sharedLoads);
        double spillSlots = c.asyncSpillIssue * std::max(0, k.spillBytes) / 4.0;
        bool loopSpills = k.spillBytes > 0;
        if (k.sassScanned && k.sassLoop.instructions > 0) {
            spillSlots = k.sassLoop.localLoads + k.sassLoop.localStores;
            loopSpills = spillSlots > 0;
        }
        issueShare = k.ptxLoop.fma / (k.ptxLoop.fma + k.ptxLoop.sharedLoads + spillSlots + c.asyncLoopOtherIssue * other);
        if (loopSpills)
            issueShare /= 1 + c.asyncSpilledLoopCost; // scheduled under a cap it could not meet
    }
    const double hidingWarps = k.copyStages == 2 ? c.asyncTwoStageHidingWarps : c.asyncHidingWarps;
    p.computeHiding = std::pow(std::min(1.0, warps / hidingWarps),
                               k.copyStages == 2 ? c.asyncTwoStageHidingExponent : c.asyncHidingExponent);
    double fmaBlock = issuedFlops(k) / blocks / (peak / sms * issueShare); // one block alone, pipe fed
    double shared = resident * k.sharedTrafficBytes / blocks / (c.sharedBytesPerClock * clockHz);
    const double tiles = std::max(1.0, k.loopIterations);
    double bubble = 0; // per k-tile, one block's serialization between its MMAs and the next fragments
    if (k.warpgroupMma) {
        // Hopper warpgroup MMAs: the tensor pipe and the shared-memory pipe (the descriptor operand
        // read by every warpgroup, the register operand's fragment loads, the cp.async fills), each
        // near saturation delaying the other; the fragments are loaded and converted once the previous
        // tile's MMAs are done (a bubble per k-tile, in the chain below).
        const double tensorPeak = (gpu.tf32Tflops > 0 ? gpu.tf32Tflops : gpu.fp32Tflops) * 1e12;
        const double tensor = issuedFlops(k) / blocks / (tensorPeak / sms);
        const double bytes = k.descriptorBytes + k.fragmentWavefronts * 128.0 + k.tileFillBytes;
        const double sharedTime = bytes / (c.sharedBytesPerClock * clockHz);
        const double e = c.gemmPipeExponent;
        p.computeHiding = 1; // the MMAs are asynchronous: a warpgroup issues them without waiting
        fmaBlock = std::pow(std::pow(tensor, e) + std::pow(sharedTime, e), 1 / e);
        shared = 0; // in fmaBlock
        // transpose_b=on: no fragments to load, the MMAs stay in flight across the tile's barrier.
        bubble = k.bothDescriptors ? 0 : c.wgmmaTileBubbleUs * 1e-6;
    } else if (k.tensorCores) {
        // TF32 tensor cores: one block's k-loop is its MMAs at the tensor peak, its fragment loads
        // (conflict free: a wavefront per 4-byte load or half an 8-byte one) and the issue of the
        // whole k-loop (fragment loads, cvt.rna, mma.sync, cp.async, addresses), one after the other:
        // each 8-deep step loads and converts its fragments before its MMAs (no double-buffering).
        const double tensorPeak = (gpu.tf32Tflops > 0 ? gpu.tf32Tflops : gpu.fp32Tflops) * 1e12;
        const double tensor = issuedFlops(k) / blocks / (tensorPeak / sms);
        const double fragments = k.fragmentWavefronts * 128.0 / (c.sharedBytesPerClock * clockHz);
        // Without PTX: an m16n8k8 MMA per 2048 FLOPs, a load and a conversion per fragment wavefront.
        const double loopIssued = k.ptxLoop.total > 0 ? tiles * k.ptxLoop.total * warpsPerBlock
                                                         : issuedFlops(k) / blocks / 2048 + 2 * k.fragmentWavefronts;
        p.computeHiding = std::pow(std::min(1.0, warps / c.asyncHidingWarps), c.mmaHidingExponent);
        fmaBlock = tensor + fragments + loopIssued / (c.mmaIssuePerClock * clockHz);
        shared = 0; // the fragment loads are in fmaBlock; the cp.async stores overlap them
    }
    if (!k.tensorCores && !k.warpgroupMma)
        fmaBlock *= replayedIssue(k, c.asyncReplayExponent);
    // A lone warp per scheduler whose k-loop was replayed: the replay's cycles per issue slot are
    // that warp's own latency, the shortfall computeHiding estimates from the warp count, so it is
    // not charged again (both took the lone warps 1.5-2.2x slow: docs/RUBRIC.md, session 21).
    const bool loneReplayed = !k.tensorCores && !k.warpgroupMma && replayed(k) && k.sassReplayWarps == 1;
    const double fma = resident * fmaBlock / (loneReplayed ? 1.0 : p.computeHiding);
    const double throughput = fma + shared;

    const double blockWarps = k.tensorCores ? c.mmaBlockWarps : c.asyncBlockWarps;
    const double ownTile = fmaBlock / tiles / (k.warpgroupMma ? 1.0 : std::min(1.0, warpsPerBlock / blockWarps));
    // (wgmma: the ring waits for tile kt + 1 while tile kt's MMAs run, so stages - 2 tiles are in flight.)
    const double inFlight = k.warpgroupMma ? std::max(1, k.copyStages - 2) : k.copyStages - 1;
    const double ringTile = c.asyncTileLatencyUs * 1e-6 *
                            (k.copyStages > 2 ? 1.0 / inFlight : c.asyncTwoStageFactor);
    const double tile = pnorm(ownTile, ringTile) + bubble + c.asyncTileUs * 1e-6;
    const double chain = tiles * tile;
    // The prologue and epilogue, once per block: measured per round on the H200 (onceCycles), so
    // added after the ring's terms are put on the measured scale.
    const double once = onceCycles(k, warps / c.schedulersPerSm) / clockHz;

    // Per round, one block's stores at the SM's share of L2: the other resident blocks' stores go out
    // while the rest run their k-loops (the ring keeps no barrier across blocks), so with `resident`
    // blocks only one store phase in a round is left exposed, and a lone block's is exposed whole.
    // (All `resident` blocks' stores, one after the other, took GEMMs of four small blocks per SM and
    // scalar stores 5-10 % slow at short K: docs/RUBRIC.md, session 22.)
    const double stores = c.asyncStoreFactor * storedSectorBytes(k) / blocks / (bw * c.l2BandwidthFactor / sms);
    p.sharedMs = rounds * shared * 1e3;
    p.loopLatencyMs = rounds * chain * 1e3;
    p.epilogueMs = rounds * stores * 1e3;
    p.computeMs = (rounds * (pnorm(throughput, chain) + stores) + c.asyncFillUs * 1e-6) * 1e3;
    if (!k.tensorCores && !k.warpgroupMma) {
        // The FFMA ring on the measured scale (Params::asyncLevel): every part alike.
        for (double *ms : {&p.computeMs, &p.sharedMs, &p.loopLatencyMs, &p.epilogueMs})
            *ms *= c.asyncLevel;
    }
    p.issueMs = rounds * once * 1e3;
    p.computeMs += p.issueMs;
}

ProgramPrediction PerfModel::predict(ProgramFacts &facts) const
{
    ProgramPrediction out;
    if (!m_fixed && facts.arch) {
        // The target's own parameters (the nearest calibrated architecture's, said so).
        const CalibratedModel &model = calibratedModelFor(*facts.arch, &out.calibration);
        if (model.arch != calibratedModels().front().arch) {
            ProgramPrediction other = PerfModel(model.params).predict(facts);
            other.calibration = out.calibration;
            return other;
        }
    }
    for (auto &k : facts.kernels) {
        out.kernels.push_back(predictKernel(k, facts));
        k.predictedMs = out.kernels.back().ms;
        k.expectedOccupancy = out.kernels.back().achievedOccupancy;
        out.ms += k.predictedMs;
    }
    facts.predictedMs = out.ms;
    return out;
}

Result<ProgramPrediction> PerfModel::predictProgram(const schedule::Problem &problem,
                                                    const codegen::GeneratedProgram &program,
                                                    const cuda::CompileResult *compiled, ProgramFacts *factsOut) const
{
    auto facts = analyzeProgram(problem, program, compiled);
    if (!facts.ok())
        return facts.error();
    auto prediction = predict(*facts);
    if (factsOut)
        *factsOut = std::move(*facts);
    return prediction;
}

Result<double> PerfModel::predictSchedule(const schedule::Problem &problem, const schedule::Schedule &schedule) const
{
    auto program = codegen::generateProgram(problem, schedule);
    if (!program.ok())
        return program.error();
    auto facts = analyzeProgram(problem, *program, nullptr);
    if (!facts.ok())
        return facts.error();
    return predict(*facts).ms;
}

schedule::Schedule genericSchedule(const schedule::Problem &problem)
{
    schedule::Schedule s;
    s.arch = problem.arch.name;
    s.precision = problem.precision;
    for (const auto &op : problem.graph.ops())
        s.groups.push_back({op.name, {op.name}, schedule::Strategy::Generic, {}});
    return s;
}

double rooflineFloorMs(const schedule::Problem &problem, const GpuSpec &gpu)
{
    double flops = 0, bytes = 0;
    for (const auto &op : problem.graph.ops()) {
        double points = 1;
        std::map<std::string, std::int64_t> mid;
        for (const auto &v : op.domain) {
            auto e = ir::evaluateSizeExpr(v.extent, problem.sizes);
            points *= e.ok() ? static_cast<double>(*e) : 1.0;
            mid[v.name] = e.ok() ? *e / 2 : 0;
        }
        auto [f, s] = detail::countFlops(op.body);
        (void)s;
        double reduce = 1;
        if (op.reduction)
            for (const auto &v : op.reduction->vars) {
                auto e = detail::evalIndex(v.extent, problem.sizes, mid);
                reduce *= e ? static_cast<double>(std::max<std::int64_t>(*e, 0)) : 1.0;
            }
        flops += points * reduce * (f + (op.reduction ? 1 : 0));
    }
    for (const auto &t : problem.graph.tensors()) {
        if (t.role == ir::TensorRole::Intermediate)
            continue;
        auto ext = t.shape.evaluate(problem.sizes);
        if (ext.ok())
            bytes += static_cast<double>(ir::elementCount(*ext)) * ir::dtypeSize(t.dtype);
    }
    // Precision tf32 may run its products on the tensor cores (math=tf32_mma): their peak bounds it.
    const bool tensor = problem.precision == schedule::Precision::TF32 && problem.arch.tensorCoresTf32 &&
                        gpu.tf32Tflops > gpu.fp32Tflops;
    const double computeMs = flops / ((tensor ? gpu.tf32Tflops : gpu.fp32Tflops) * 1e12) * 1e3;
    const double memoryMs = bytes / (gpu.memoryBandwidthGBs * 1e9) * 1e3;
    return std::max(computeMs, memoryMs);
}

} // namespace stitch::rubric
