#pragma once
// What the rubric knows about each generated kernel, derived once and shared by every dimension.
//   Problem + GeneratedProgram (+ CompileResult) -> analyzeProgram -> ProgramFacts -> dimensions, PerfModel
// The memory streams replay the strategy's thread -> element mapping (the same formulas the code
// generators emit) on a few representative warps at the problem's concrete sizes, so coalescing,
// bank conflicts and traffic come from addresses rather than from rules of thumb.

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/common/Result.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/cuda/SassScan.h"
#include "core/rubric/IssueReplay.h"
#include "core/rubric/PtxCounts.h"
#include "core/schedule/Space.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stitch::rubric {

/// Global memory: 32-byte sectors one warp request touches, and the fewest that could hold its bytes.
struct SectorStats {
    double sectors = 0; ///< average over the sampled warps
    double ideal = 0;
    double activeLanes = 0;
    double efficiency() const { return sectors > 0 ? ideal / sectors : 1.0; }
};

/// Shared memory: wavefronts (bank passes) per request against one per phase. A phase is the
/// group of lanes served together: 32 for 4-byte, 16 for 8-byte, 8 for 16-byte accesses.
struct BankStats {
    double wavefronts = 0; ///< average over the sampled warps
    double ideal = 0;
    int maxWays = 1; ///< the worst bank's distinct words in one phase
};

/// One memory instruction of a kernel as the lanes of a warp execute it.
struct AccessStream {
    std::string what;    ///< "load A[i, k]: 4 floats per lane along k"
    bool shared = false; ///< shared memory (banks) rather than global memory (sectors)
    bool store = false;
    int bytesPerLane = 4;
    /// Byte addresses per lane (-1: the lane is idle), one list of 32 per sampled warp.
    std::vector<std::vector<std::int64_t>> warps;
    double requests = 0; ///< warp instructions of this stream over the whole launch
    /// sectorsPerRequest's and bankWavefronts' answers, kept: every dimension and the model ask
    /// again (set once the warps are final; a copy keeps them).
    mutable std::optional<SectorStats> sectorStats;
    mutable std::optional<std::pair<int, BankStats>> bankStats; ///< banks, stats
};
SectorStats sectorsPerRequest(const AccessStream &stream);
BankStats bankWavefronts(const AccessStream &stream, int banks);

/// A branch whose direction depends on the lane, with the share of lanes idle while it runs.
struct Branch {
    std::string what;
    double idleFraction = 0;
};

struct KernelFacts {
    std::string name;
    schedule::Strategy strategy = schedule::Strategy::Generic;
    const codegen::GeneratedKernel *kernel = nullptr;
    codegen::KernelRole role = codegen::KernelRole::Main; ///< the code generator's (Kernels.h)
    bool splitSum() const { return role == codegen::KernelRole::SplitKSum; }     ///< split K's second kernel
    bool transposeB() const { return role == codegen::KernelRole::TransposeB; } ///< transpose_b=on's pass: a memory kernel
    /// The tiled GEMM kernel itself (not a split-K sum nor the transposing pass): its k-loop terms apply.
    bool tiledGemm() const { return strategy == schedule::Strategy::Gemm && role == codegen::KernelRole::Main; }

    /// A tiled GEMM's FLOPs as its blocks issue them: every tile runs whole (an edge tile computes
    /// its rows and columns past M and N on zeros and does not store them), so `flops` times
    /// ceil(M / block_m) block_m x ceil(N / block_n) block_n / (M N). 0: not a tiled GEMM.
    double tileFlops = 0;

    /// Blocks launched; for a stream-K GEMM (streamK) the whole tiles of work instead, which its
    /// streamKBlocks + remaining-tile blocks share evenly.
    std::int64_t blocks = 0;
    bool streamK = false;
    /// stream_k=on: the blocks that share k steps (schedule::streamKBlocks) and the tiles they share
    /// (schedule::streamKTiles); the other blocks - blocks - streamKTiles - run one whole tile each.
    int streamKBlocks = 0;
    std::int64_t streamKTiles = 0;
    /// The blocks the launch runs: a stream-K GEMM's shared blocks and one per remaining whole tile,
    /// else `blocks`.
    std::int64_t launchedBlocks() const
    {
        return streamK && streamKBlocks > 0 ? streamKBlocks + (blocks - streamKTiles) : blocks;
    }
    int threads = 0;
    int dynamicSharedBytes = 0;
    int clusterSize = 1;

    bool compiled = false; ///< registers and spills come from NVRTC (else estimates)
    int registers = 0;
    int staticSharedBytes = 0;
    int spillBytes = 0; ///< -1 when unknown (resources read from the CUBIN)
    int localBytes = 0;
    std::string ptxBody; ///< the .entry's body, empty when not compiled

    double flops = 0;              ///< arithmetic of the fused ops (special functions count 4)
    double specialOps = 0;         ///< exp, tanh, rsqrt, ... evaluations
    double uniqueBytes = 0;        ///< every tensor the kernel touches, once
    double trafficBytes = 0;       ///< global sectors moved (tile re-reads, uncoalesced waste included)
    double sharedTrafficBytes = 0; ///< shared-memory bytes moved (wavefronts x 128 B)
    std::vector<AccessStream> streams;

    double usefulLaneFraction = 1; ///< lanes doing useful work over lanes launched (boundary tiles, tails)
    std::string boundary;          ///< how the sizes meet the tiles, for the learner
    std::vector<Branch> branches;

    double ilp = 1;                    ///< independent FMAs or loads per thread in the hot loop
    double bytesInFlightPerThread = 4; ///< global bytes a thread has outstanding at once
    double fmaShare = 0;               ///< estimated FMA share of issued instructions in the hot loop

    /// Per thread, one after the other: global-load round trips (a pass over registers needs one,
    /// each re-read of the input one more), block barriers and cluster barriers. With the
    /// instructions below they make the latency and issue terms of short-lived blocks.
    int memoryRounds = 1;
    double loopIterations = 0; ///< hot-loop trips per block, each ending at a barrier (a GEMM's k-tiles)
    int blockBarriers = 0;
    int clusterBarriers = 0;
    double instructionsPerWarp = 0; ///< issued per warp over its life (estimate; the PTX count when compiled)
    /// The whole entry's PTX counted (countPtx; all 0 when not compiled): ptxMix.total is its
    /// static instruction count.
    PtxMix ptxMix;
    /// The compiled FMA-heaviest loop's (hotLoopPtx; a GEMM's k-loop; all 0 when not compiled or
    /// no loop). The model takes the issue share from its FMAs (fma) and shared-memory loads
    /// (sharedLoads) rather than from the tile formula, so a different staging (register or cp.async
    /// copies) is read, not assumed; total is every instruction of that loop (the rest of the entry
    /// runs once: prologue, epilogue).
    PtxMix ptxLoop;
    /// The machine code (sm_90 CUBIN, cuda::scanSass): the hot loop as ptxas built it, and the whole
    /// kernel. Where the PTX cannot tell: spill loads and stores inside the loop or outside it,
    /// accumulators moved, register bank conflicts, the static schedule's stall cycles. Zeros when
    /// not compiled to sm_90 (`sassScanned` false).
    bool sassScanned = false;
    cuda::SassMix sassLoop;
    cuda::SassMix sassKernel;
    /// The hot loop's SASS replayed on one scheduler (IssueReplay) with the warps the kernel puts
    /// there: the blocks resident on an SM (the launched grid's share, a stream-K GEMM's shared and
    /// whole-tile blocks; at most the occupancy) times the block's warps, over the SM's four
    /// schedulers. Zeros without SASS or occupancy.
    int sassReplayWarps = 0;
    IssueReplayResult sassReplay;
    /// A GEMM that copies tiles with cp.async: the ring's depth (`stages`, stages - 1 tiles in
    /// flight); 0 for register staging and every other kernel.
    int copyStages = 0;
    /// A GEMM whose products run on TF32 tensor cores (math=tf32_mma: mma.sync m16n8k8, fragments
    /// loaded from the shared tiles and rounded with cvt.rna); its FLOPs go to the tensor-core terms.
    bool tensorCores = false;
    /// math=tf32_mma: shared-memory wavefronts of one block's fragment loads over its k-loop (the
    /// tensor-core kernel's shared-memory traffic, besides the cp.async tile stores).
    double fragmentWavefronts = 0;
    /// math=tf32_wgmma (Hopper warpgroup MMAs, wgmma.mma_async m64nNk8, one operand from registers, one
    /// read from a swizzled shared tile by descriptor): its own terms in the model. tensorCores is set as
    /// well; fragmentWavefronts then counts the register operand's loads (4 per warp per 8-deep step).
    bool warpgroupMma = false;
    /// math=tf32_wgmma: bytes one block's warpgroups read by descriptor over its k-loop (each warpgroup
    /// reads the operand's N x 8 slice per 8-deep step) and bytes its cp.async fills store.
    double descriptorBytes = 0;
    double tileFillBytes = 0;
    /// math=tf32_wgmma: the operand the tensor cores read by descriptor ("A" or "B"; its reads are
    /// no instructions, so no stream), its tile's swizzle (128, 64 or 32-byte rows) and the bytes each
    /// warpgroup reads of it per k-tile; the register operand ("B" or "A"), whose fragment loads are
    /// the kernel's only shared loads (a stream).
    std::string descriptorOperand, registerOperand;
    /// transpose_b=on: both operands by descriptor (registerOperand empty), no fragment loads between
    /// tiles, and one MMA group left running across each tile's barrier.
    bool bothDescriptors = false;
    int descriptorSwizzleBytes = 0;
    double descriptorBytesPerTile = 0;
    int warpgroups = 0;
    /// A GEMM kernel's element-wise ops applied to its results before the stores (bias, GELU, ...;
    /// 0 with split K, whose sum kernel applies them).
    int epilogueOps = 0;
    int rowSteps = 1; ///< rows a row-reduction block walks one after the other (row_steps)
    /// Row kernels without a register cache: the row inputs' bytes read again by the passes after the
    /// first (per-column vectors like gamma, the same for every row, are not in it).
    double rowRereadBytes = 0;

    std::optional<Occupancy> occupancy; ///< computeOccupancy on registers + static + dynamic shared memory
    std::string occupancyError;         ///< why it cannot launch
    double predictedMs = 0;             ///< filled by the performance model
    double expectedOccupancy = -1;      ///< achieved occupancy the model expects (-1: not predicted)

    int sharedBytesTotal() const { return staticSharedBytes + dynamicSharedBytes; }
};

struct ProgramFacts {
    const ArchLimits *arch = nullptr;
    const GpuSpec *gpu = nullptr;
    std::vector<KernelFacts> kernels; ///< in launch order, like GeneratedProgram::kernels
    double predictedMs = 0;           ///< the model's total
};

/// Derives the facts of every kernel. `compiled` may be null (resources are then estimated);
/// `gpu` null means the arch's default GPU. The program must outlive the facts.
Result<ProgramFacts> analyzeProgram(const schedule::Problem &problem, const codegen::GeneratedProgram &program,
                                    const cuda::CompileResult *compiled, const GpuSpec *gpu = nullptr);

/// The body of `.entry NAME(...) { ... }` in PTX text, empty when absent.
std::string ptxEntryBody(const std::string &ptx, const std::string &kernel);

namespace detail {
/// Integer value of an index expression with iteration variables bound (nullopt: not integer arithmetic).
std::optional<std::int64_t> evalIndex(const ir::Expr &e, const ir::SizeBindings &sizes,
                                      const std::map<std::string, std::int64_t> &vars);
/// Arithmetic of an expression outside index computations: {flops, special-function calls}.
std::pair<double, double> countFlops(const ir::Expr &e);
/// Fills streams, lane usage, branches and ILP for the kernel's strategy (AccessStreams.cpp).
void describeAccesses(KernelFacts &facts, const schedule::Problem &problem, const schedule::GroupAnalysis &analysis);
} // namespace detail

} // namespace stitch::rubric
