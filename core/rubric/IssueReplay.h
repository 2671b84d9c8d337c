#pragma once
// One scheduler's issue of a loop's machine code, replayed cycle by cycle: how many cycles a trip
// through the loop takes when `warps` warps share the scheduler.
//   SassKernel::hotLoop -> loop body -> replayLoop(body, warps) -> cycles per trip
//
// The static schedule ptxas wrote into each instruction is followed as the hardware follows it:
// a warp issues its next instruction `stall` cycles after the last, once every scoreboard in the
// instruction's wait mask is released; the scoreboard an instruction sets is released when its
// result lands (variable-latency loads) or its sources have been read (stores, cp.async). The
// scheduler issues one instruction per cycle, from the ready warp after the one it issued last
// (round robin); an FFMA reading three registers from one bank holds it a cycle more (the warp's
// previous instruction sets the reuse cache); shared-memory and local accesses queue on the
// scheduler's share of the SM's shared-memory pipe; a block barrier waits for the block's warps on
// this scheduler; a lone warp in a loop larger than the instruction cache waits for the lines that
// miss. Branches inside the body are not followed (every instruction runs once per trip), and
// cp.async waits (DEPBAR) are taken as satisfied: the ring's latency is the performance model's.
#include "core/cuda/SassScan.h"

#include <vector>

namespace stitch::rubric {

/// The replay's fitted latencies and rates: values and provenance are data, the "issue_replay"
/// part of resources/model/perfmodel-<arch>.json (PerfModel.h, calibratedModelFor).
struct IssueReplayParams {
    struct Blank {};
    explicit IssueReplayParams(Blank) {} ///< every parameter 0 (a loader fills them in)
    IssueReplayParams();                 ///< the shipped sm_90 values

    double sharedLatencyCycles = 0;  ///< an LDS's result after it leaves the shared-memory pipe
    double localLatencyCycles = 0;   ///< an LDL's (spill reload, an L1 hit)
    double globalLatencyCycles = 0;  ///< an LDG's
    double sourceReadCycles = 0;     ///< a store's or cp.async's sources read (its read scoreboard)
    double sharedBytesPerCycle = 0;  ///< one scheduler's share of the SM's shared-memory bandwidth
    double mioQueueCycles = 0;       ///< work the shared-memory pipe queues before a new access waits
    double barrierCycles = 0;        ///< from the last warp's arrival to the release
    /// Issue cycles an FFMA that reads three registers from one bank adds (cuda::sassBankConflict:
    /// the third read waits a cycle; fractions add up).
    double bankConflictCycles = 0;
    /// The instruction cache a loop's code is fetched into, and the cycles a line of it that
    /// missed takes to arrive: a loop larger than the cache misses the part that does not fit on
    /// every trip, and a lone warp on the scheduler waits for it (Fetch in IssueReplay.cpp).
    double instructionCacheBytes = 0;
    double instructionMissCycles = 0;
};

struct IssueReplayResult {
    double cyclesPerTrip = 0;        ///< one trip of every warp, in steady state
    int instructionsPerTrip = 0;     ///< per warp (never-run padding left out)
    double warpCyclesPerIssue = 0;   ///< cyclesPerTrip / instructionsPerTrip (ncu's "warp cycles per issued instruction")
    double fetchIdleCyclesPerTrip = 0; ///< of cyclesPerTrip: nothing issued while a warp waited for its instructions
};

/// Replays `body` (a loop's instructions in address order) on one scheduler holding `warps` warps,
/// `warpsPerBlock` of them from each block (block barriers join those). Empty body or no warps:
/// all zero.
IssueReplayResult replayLoop(const std::vector<cuda::SassInstruction> &body, int warps, int warpsPerBlock,
                             const IssueReplayParams &params = {});

/// The instructions of `loop` in `kernel`'s code, padding left out.
std::vector<cuda::SassInstruction> loopBody(const cuda::SassKernel &kernel, const cuda::SassLoop &loop);

} // namespace stitch::rubric
