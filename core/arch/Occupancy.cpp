#include "core/arch/ArchDatabase.h"

#include <algorithm>

namespace stitch {

namespace {
int ceilTo(int value, int unit) { return (value + unit - 1) / unit * unit; }
int ceilDiv(int a, int b) { return (a + b - 1) / b; }
} // namespace

// Follows the method of NVIDIA's occupancy calculator (cuda_occupancy.h): registers are
// allocated per warp in units of registerAllocationUnit, and each of the SM's four schedulers
// holds a quarter of the register file, so whole warps must fit a quarter.
Result<Occupancy> computeOccupancy(const ArchLimits &a, int threads, int regs, int smem)
{
    if (threads <= 0 || threads > a.maxThreadsPerBlock)
        return makeError(ErrorKind::ResourceLimit, std::to_string(threads) + " threads per block: " + a.name +
                                                        " allows 1 to " + std::to_string(a.maxThreadsPerBlock));
    if (regs > a.maxRegistersPerThread)
        return makeError(ErrorKind::ResourceLimit, std::to_string(regs) + " registers per thread: " + a.name +
                                                        " allows at most " + std::to_string(a.maxRegistersPerThread));
    if (smem > a.sharedMemoryPerBlockOptin)
        return makeError(ErrorKind::ResourceLimit, std::to_string(smem) + " bytes of shared memory per block: " +
                                                        a.name + " allows at most " +
                                                        std::to_string(a.sharedMemoryPerBlockOptin));
    Occupancy o;
    const int warpsPerBlock = ceilDiv(threads, a.warpSize);
    o.blocksLimitBlocks = a.maxBlocksPerSm;
    o.blocksLimitWarps = std::min(a.maxBlocksPerSm, a.maxWarpsPerSm / warpsPerBlock);

    if (regs <= 0) {
        o.blocksLimitRegisters = a.maxBlocksPerSm;
    } else {
        const int regsPerWarp = ceilTo(regs * a.warpSize, a.registerAllocationUnit);
        constexpr int kSchedulers = 4;
        const int warpsPerScheduler = (a.registersPerSm / kSchedulers) / regsPerWarp;
        const int warpsByRegs = warpsPerScheduler * kSchedulers;
        o.blocksLimitRegisters = warpsByRegs / warpsPerBlock;
        if (regsPerWarp * warpsPerBlock > a.registersPerBlock)
            o.blocksLimitRegisters = 0;
    }

    if (smem <= 0) {
        o.blocksLimitSharedMemory = a.maxBlocksPerSm;
    } else {
        const int perBlock = ceilTo(smem + a.reservedSharedMemoryPerBlock, a.sharedMemoryAllocationUnit);
        o.blocksLimitSharedMemory = a.sharedMemoryPerSm / perBlock;
    }

    o.activeBlocksPerSm = std::min({o.blocksLimitBlocks, o.blocksLimitWarps, o.blocksLimitRegisters,
                                    o.blocksLimitSharedMemory});
    if (o.activeBlocksPerSm == 0)
        return makeError(ErrorKind::ResourceLimit,
                         o.blocksLimitRegisters == 0
                             ? "a block of " + std::to_string(threads) + " threads at " + std::to_string(regs) +
                                   " registers each does not fit the register file of " + a.name
                             : "a block does not fit the shared memory of an " + a.name + " SM");
    if (o.activeBlocksPerSm == o.blocksLimitRegisters && o.blocksLimitRegisters < o.blocksLimitWarps)
        o.limiter = "registers";
    else if (o.activeBlocksPerSm == o.blocksLimitSharedMemory && o.blocksLimitSharedMemory < o.blocksLimitWarps)
        o.limiter = "shared memory";
    else if (o.activeBlocksPerSm == o.blocksLimitWarps && o.blocksLimitWarps < o.blocksLimitBlocks)
        o.limiter = "warps";
    else
        o.limiter = "blocks";
    o.activeWarpsPerSm = o.activeBlocksPerSm * warpsPerBlock;
    o.occupancy = static_cast<double>(o.activeWarpsPerSm) / a.maxWarpsPerSm;
    return o;
}

} // namespace stitch
