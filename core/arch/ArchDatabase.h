#pragma once
// GPU architecture database: resources/arch/gpus.json (embedded into core at build time).
//   gpus.json -> ArchDatabase -> occupancy, rubric, performance model, studio's device panel
// Every analysis reads hardware limits from here, never from literals in code.

#include "core/common/Result.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch {

/// Limits of one compute capability (same for every GPU of that architecture).
struct ArchLimits {
    std::string name;                  ///< "sm_90"
    std::string family;                ///< "Hopper"
    int computeMajor = 0;
    int computeMinor = 0;
    int warpSize = 32;
    int maxThreadsPerBlock = 1024;
    int maxThreadsPerSm = 0;
    int maxWarpsPerSm = 0;
    int maxBlocksPerSm = 0;
    int registersPerSm = 0;            ///< 32-bit registers
    int maxRegistersPerThread = 255;
    int registersPerBlock = 0;
    int registerAllocationUnit = 256;  ///< registers, allocated per warp
    int warpAllocationGranularity = 4;
    int sharedMemoryPerSm = 0;         ///< bytes configurable as shared memory
    int sharedMemoryPerBlock = 49152;  ///< without opt-in
    int sharedMemoryPerBlockOptin = 0; ///< with cudaFuncSetAttribute
    int sharedMemoryAllocationUnit = 128;
    int reservedSharedMemoryPerBlock = 0; ///< system use per block (1 KiB from sm_80)
    int sharedMemoryBanks = 32;
    bool tensorCoresTf32 = false;
    bool tensorCoresBf16 = false;
    bool asyncCopy = false;            ///< cp.async (sm_80+)
    bool tma = false;                  ///< cp.async.bulk.tensor (sm_90)
    /// The built-in heuristics' defaults measured on this architecture, by name ("large_gemm_stream_k":
    /// schedule/Heuristics.cpp); a default not listed keeps the general rule here (not measured).
    std::vector<std::string> measuredDefaults;
    bool measured(const std::string &defaultName) const;
};

/// One GPU model; peak figures are the vendor's datasheet unless a measured figure is given.
struct GpuSpec {
    std::string name;                  ///< "NVIDIA H200"
    std::vector<std::string> aliases;  ///< names the driver may report
    std::string arch;                  ///< "sm_90"
    int multiprocessors = 0;
    double memoryBandwidthGBs = 0;     ///< datasheet
    double l2CacheMiB = 0;
    double boostClockMHz = 0;
    double fp32Tflops = 0;             ///< dense, non-tensor
    double tf32Tflops = 0;             ///< dense tensor core, 0 if none
    double bf16Tflops = 0;             ///< dense tensor core, 0 if none
    std::optional<double> measuredCopyGBs;     ///< device-to-device copy, read + write
    std::optional<double> measuredSgemmTflops; ///< cuBLAS FP32 at 4096^3
    std::string measuredNote;          ///< where and how the measured figures came
    /// Graphics processing clusters (datasheet / whitepaper; 0 if unknown). A thread-block cluster
    /// runs inside one GPC, so they bound how many clusters are resident (residentClusters).
    int gpcs = 0;
    /// Clusters of a given size resident at once with one block per SM, measured with
    /// cudaOccupancyMaxActiveClusters (bench/tools/max_active_clusters.cu); sizes not listed use the
    /// GPC rule of residentClusters.
    std::map<int, int> measuredResidentClusters;
    std::string residentClustersNote; ///< where the measured cluster counts came from
};

class ArchDatabase {
public:
    /// The database compiled into core (resources/arch/gpus.json at build time).
    static const ArchDatabase &builtin();
    /// Parses a database from JSON text; errors name the offending key.
    static Result<ArchDatabase> fromJson(const std::string &json, const std::string &fileName);
    static Result<ArchDatabase> loadFile(const std::string &path);

    const ArchLimits *arch(const std::string &name) const;
    const GpuSpec *gpu(const std::string &name) const; ///< matches name or an alias, case-insensitive
    /// The datasheet GPU to assume for an arch when no device is present (first listed for it).
    const GpuSpec *defaultGpuFor(const std::string &arch) const;

    const std::vector<ArchLimits> &architectures() const { return m_archs; }
    const std::vector<GpuSpec> &gpus() const { return m_gpus; }

private:
    std::vector<ArchLimits> m_archs;
    std::vector<GpuSpec> m_gpus;
};

/// Occupancy of a kernel on an architecture, computed like NVIDIA's occupancy calculator.
struct Occupancy {
    int activeBlocksPerSm = 0;
    int activeWarpsPerSm = 0;
    double occupancy = 0;              ///< active warps / max warps
    std::string limiter;               ///< "registers", "shared memory", "warps", "blocks"
    int blocksLimitRegisters = 0;
    int blocksLimitSharedMemory = 0;
    int blocksLimitWarps = 0;
    int blocksLimitBlocks = 0;
};

/// Thread-block clusters of `clusterSize` blocks the GPU keeps resident at once when each SM holds
/// `blocksPerSm` blocks of the kernel (the occupancy calculator's figure): blocksPerSm x the count
/// at one block per SM, which is the measured figure where gpus.json has one, else the GPC rule
/// gpcs x floor(floor(SMs / gpcs) / clusterSize) (every GPC assumed equal; an upper bound where
/// floor-swept GPCs have fewer SMs: it gives 16 and 8 for the H200's measured 15 clusters of 8
/// and 7 of 16), else floor(SMs / clusterSize). Never more than the SMs' block slots allow.
int residentClusters(const GpuSpec &gpu, int clusterSize, int blocksPerSm);

/// Theoretical occupancy; ResourceLimit error when the kernel cannot launch at all.
Result<Occupancy> computeOccupancy(const ArchLimits &arch, int threadsPerBlock, int registersPerThread,
                                   int sharedBytesPerBlock);

} // namespace stitch
