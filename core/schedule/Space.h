#pragma once
// The decision space: which values of each decision are legal for a program on an architecture,
// and why the others are not.
//   Graph + sizes + arch -> defaultSchedule (Heuristics.cpp) / legalValues / candidates -> agents, studio, bench
//   Schedule -> validateSchedule -> codegen (nothing is generated for an illegal schedule)
// Illegal combinations are excluded by construction, each with the reason, the decision, the
// value and the limit it breaks.

#include "core/arch/ArchDatabase.h"
#include "core/common/Result.h"
#include "core/ir/Graph.h"
#include "core/ir/Shape.h"
#include "core/schedule/GroupAnalysis.h"
#include "core/schedule/Schedule.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stitch::schedule {

/// What legality depends on: the program, its sizes and the target.
struct Problem {
    const ir::Graph &graph;
    ir::SizeBindings sizes;  ///< concrete sizes of every size variable
    const ArchLimits &arch;
    Precision precision = Precision::FP32;
};

/// A broken rule: the decisions involved and the sentence that explains it.
struct Violation {
    std::vector<std::string> keys;
    std::string message;     ///< "block_m=256, block_n=256, block_k=32: 133120 B of shared memory > 232448 B"
};

/// Every rule the group's decisions break for this problem (empty: legal).
std::vector<Violation> checkGroup(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem);

/// One candidate value of one decision, given the group's other decisions.
struct ValueOption {
    int value = 0;
    std::string text;
    bool legal = true;
    std::string why; ///< the first rule it breaks
};
std::vector<ValueOption> legalValues(const GroupAnalysis &analysis, const KernelGroup &group, const std::string &key,
                                     const Problem &problem);

/// Sets `vector` to the widest width (4, 2, 1) with which the group is legal; false (width 1) when
/// none is. The heuristics and the bench sweep pick vector widths through it.
bool setWidestLegalVector(const GroupAnalysis &analysis, KernelGroup &group, const Problem &problem);

/// Resources a group's kernel will need, from its decisions (before compiling).
struct GroupResources {
    int threadsPerBlock = 0;
    int sharedBytes = 0;       ///< dynamic shared memory per block
    int estimatedRegisters = 0;
    std::int64_t blocks = 0;
};
Result<GroupResources> groupResources(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem);

/// A size expression's value under the problem's sizes; -1 where a size is missing (the legality
/// rules and the heuristics read sizes through it).
std::int64_t sizeValue(const ir::Expr &e, const Problem &p);

/// Dynamic shared memory of a gemm group's kernel: `stages` buffers of the A and B tiles in the
/// layout that math and smem_pad give. The one figure the limits above and codegen's kernel use.
int gemmSharedBytes(const GroupAnalysis &analysis, const KernelGroup &group);
/// Registers per computing thread a gemm group's kernel needs, estimated from its decisions (the
/// limits above and copy=producer's register split use it).
int gemmRegisterEstimate(const GroupAnalysis &analysis, const KernelGroup &group);
/// A GEMM epilogue's store width: a thread's results come in groups of `groupWidth` adjacent columns
/// (SIMT: thread_n / 2), stored min(groupWidth, 4) at a time when the rows of C (`n` columns) are a
/// multiple of that, else one by one (1). The code generator's wide stores, the rubric's store
/// streams and the legality of store=scalar|copy all take it from here.
int epilogueStoreWidth(int groupWidth, std::int64_t n);
/// stream_k=on: the blocks that share the stream-K tiles' k steps, one per block slot of the target's
/// default GPU (multiprocessors x min_blocks; 0 where the target has no known GPU). The kernel is
/// correct on any GPU (no block waits for another: a shared tile's last block to arrive sums it);
/// this figure balances it.
int streamKBlocks(const ArchLimits &arch, const KernelGroup &group);
/// stream_k=on: of `tiles` output tiles, those whose k steps the streamKBlocks share (the rest run
/// one per block): all of them when they fill less than one wave; else the tiles of the last partial
/// wave when they are at least half a wave (each shared block runs half a tile's steps or more),
/// or those and one whole wave (1 to 1.5 tiles each), so that no tile is split many ways.
/// The one rule: streamKTiles evaluates it for the model and the limits, and the kernel computes it
/// at run time from its own tile count (codegen/GemmStreamK.cpp).
std::int64_t streamKTiles(std::int64_t tiles, int blocks);
ir::Expr streamKTilesExpr(const ir::Expr &tiles, int blocks);
/// The stream-K grid: `blocks` shared blocks and one per tile they do not share, i.e.
/// blocks + tiles - streamKTilesExpr(tiles), in a shorter closed form for the launcher (a test
/// holds the two equal).
ir::Expr streamKGridExpr(const ir::Expr &tiles, int blocks);
/// The per-column vectors of a row_reduction group: float32 tensors of one dimension, the row's
/// length, read at the column somewhere in the group (layer norm's gamma[j] and beta[j]), in the
/// order of their first read. column_inputs=shared copies the block's span of each into shared
/// memory once.
std::vector<ir::TensorId> rowColumnInputs(const GroupAnalysis &analysis, const ir::Graph &graph);
/// Whether `read` (a read in `op`'s body) is such a per-column vector read at op's column: a float32
/// tensor of one dimension, the row's length, indexed by the column variable alone. The row inputs
/// are not (the caller's to exclude where it reads them otherwise).
bool readsColumnVector(const GroupAnalysis &analysis, const ir::Graph &graph, const ir::ComputeOp &op,
                       const ir::Expr &read);
/// prefetch=bulk: the items per thread of the next row that come through shared memory by
/// cp.async.bulk (the last quarter); the rest load into the registers in the output loop.
inline int rowBulkPrefetchItems(int items) { return items / 4; }
/// A row_reduction group's dynamic shared memory, in bytes, in this order: the staged next row
/// (prefetch=shared: each thread's elements of every row input, copied there by cp.async; the slots
/// a thread copies are the ones it reads back) or the outputs (bulk_store=on: the block's part of the
/// row of every stored output, rowStoredOps); then the block's span of each column input
/// (column_inputs=shared, rowColumnInputs order); then the prefetched quarter of the next row of
/// each row input for each row of the block (prefetch=bulk). Limits and codegen use it alike.
struct RowSharedLayout {
    std::int64_t columns = 0;  ///< offset of the column inputs' spans
    std::int64_t prefetch = 0; ///< offset of prefetch=bulk's slots
    std::int64_t total = 0;    ///< all of it
};
RowSharedLayout rowSharedLayout(const GroupAnalysis &analysis, const KernelGroup &group, const ir::Graph &graph,
                                const ir::SizeBindings &sizes);
/// rowSharedLayout's total, at most 1 GiB.
int rowStagingBytes(const GroupAnalysis &analysis, const KernelGroup &group, const ir::Graph &graph,
                    const ir::SizeBindings &sizes);
/// The element-wise ops of a row_reduction group whose results leave the kernel, in program order
/// (the outputs the kernel stores; bulk_store=on stages each in shared memory, in this order).
std::vector<const ir::ComputeOp *> rowStoredOps(const GroupAnalysis &analysis);
/// Whether a tensor is laid out like the group's rows (its shape is the group's domain: one
/// contiguous row per row): what the row kernel's vector stores and bulk_store=on need.
bool laidOutLikeRows(const GroupAnalysis &analysis, const ir::Tensor &tensor);
/// bulk_store=on: the items per thread of each piece the copy engine writes (two, or one for an odd
/// count). The code generator's pieces and the rubric's barriers.
inline int rowBulkItemsPerPiece(int items) { return items % 2 == 0 ? 2 : 1; }
/// The rows of a row_reduction group: the product of its row dimensions (-1 where a size is
/// missing, as sizeValue).
std::int64_t rowCount(const GroupAnalysis &analysis, const ir::SizeBindings &sizes);
/// Whether a row_reduction group's blocks walk several rows (row_steps > 1 or grid=resident): the
/// row-step loop, its alternating shared slots and the waits between rows.
inline bool rowStepped(const KernelGroup &group) { return group.value("row_steps") > 1 || group.value("grid") == 1; }
/// The generic kernel's blocks: flat (threads_per_row 0), ceil(total / threads); tiled, the tiles of
/// threads_per_row x (threads / threads_per_row) over [outer dimensions flattened, innermost]
/// (core/codegen/Kernels.cpp, generateGenericKernel, launches one block per tile).
std::int64_t genericBlocks(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem);

/// grid=resident (row_reduction): the clusters (blocks, where cluster=1) the target's default GPU
/// holds at once with min_blocks blocks per SM (residentClusters), at most one per rows_per_block
/// rows; 0 where the target has no known GPU. The kernel walks the rows with the stride of the grid
/// it runs on, so it is correct on any GPU; this figure sizes the grid for the target's.
int rowResidentGroups(const ArchLimits &arch, const KernelGroup &group, std::int64_t rows);

/// combine=online's pattern: the group's two reductions are m[rows] = max(j) E and
/// s[rows] = sum(j) exp(E - m[rows]) with the same float32 E and no init (softmax's maximum and sum
/// of shifted exponentials), so that both can be computed in one pass and one exchange.
bool hasOnlineSoftmaxPair(const GroupAnalysis &analysis);

/// Whether any op of the group computes a float32 exp (what exp=fast changes).
bool computesFloatExp(const GroupAnalysis &analysis);

/// Whether any op of the group computes 1 + erf(z) or 1 - erf(z) over float32 (ir::matchOnePlusErf:
/// what erf=erfc changes).
bool computesOnePlusErf(const GroupAnalysis &analysis);

/// The TF32 tensor-core path the defaults take under precision tf32: the fastest the target has
/// (warpgroup MMAs on sm_90: 0.80x cuBLAS at 4096^3 in run 8, against 0.36x for mma.sync), or
/// warp-level mma.sync (math=tf32_mma) wherever the target has TF32 tensor cores.
enum class TensorCoreDefault { Fastest, WarpMma };

/// Greedy fusion and, for each group, the best legal decisions by the built-in heuristics.
Result<Schedule> defaultSchedule(const Problem &problem, TensorCoreDefault tensorCores = TensorCoreDefault::Fastest);

/// Sets every decision of `group` (its strategy and ops as given) by the built-in heuristics, as
/// defaultSchedule does for each group of the greedy fusion. The heuristics' values are legal.
Status applyHeuristics(const GroupAnalysis &analysis, KernelGroup &group, const Problem &problem,
                       TensorCoreDefault tensorCores = TensorCoreDefault::Fastest);

/// A legal schedule of the group that keeps the values of the decisions in `fixed`: a pruned
/// depth-first walk (as enumerateLegal's) that tries each other decision's current value first,
/// then its other candidates in their order, so a group that is already legal comes back as it is
/// and one that is not changes as few later decisions as it can. nullopt when no completion exists
/// or none was found within `budget` values tried (the agents mask such a value: "no legal
/// completion").
std::optional<KernelGroup> completeGroup(const GroupAnalysis &analysis, const KernelGroup &group,
                                         const Problem &problem, const std::vector<std::string> &fixed,
                                         int budget = 20000);

/// Checks that the groups cover every op once, in an order that respects the dataflow, that each
/// group fits its strategy and that every decision is legal. InvalidArgument naming the group,
/// the decision, its value and the rule (every problem listed in diagnostics).
Status validateSchedule(const Schedule &schedule, const Problem &problem);

/// Floats per row of a k-contiguous shared tile of the TF32 tensor-core GEMM (math=tf32_mma, an
/// operand whose rows run along k): block_k, padded with smem_pad > 0 to 8 more than a multiple of 16
/// floats, so the 8-byte fragment loads of a half warp hit 16 different bank pairs.
int mmaKContiguousStride(int blockK, int pad);

/// How math=tf32_wgmma arranges a block (core/codegen/WgmmaGemm.h), the one source for the legality
/// rules, the kernel and the rubric. wgmma reads its shared-memory operand only k-major, so that one
/// (the descriptor operand) is whichever of A and B has rows along k, B when both do; the other goes
/// through registers. With transpose_b=on (B stored [k, j], A [i, k]) a kernel first writes B
/// transposed, so its tile is read by descriptor too: the same arrangement (MMA rows along n), no
/// register operand (`shared`).
struct WgmmaLayout {
    bool swap = false;  ///< MMA rows along n (B in registers, A by descriptor): B's rows run along n
    int nw = 0;         ///< the MMA's N: block_m (swap) or block_n
    int warpgroups = 0; ///< 64 MMA rows each, along n (swap) or m
    bool shared = false; ///< transpose_b=on: the "register" operand (B) is a second descriptor tile, [block_n][block_k] swizzled
    bool regKContiguous = false; ///< the register operand's tile: [other][block_k + 4] or [block_k][other + 8]
    int regRows = 0, regStride = 0; ///< its rows and floats per row (fragment loads hit 32 banks)
    int descRows = 0, descStride = 0; ///< the descriptor tile: nw rows of block_k floats, swizzled
    int regStageFloats() const { return regRows * regStride; }
    int descStageFloats() const { return descRows * descStride; }
};
WgmmaLayout wgmmaLayout(int blockM, int blockN, int blockK, bool aKContiguous, bool bKContiguous,
                        bool transposedB = false);
/// The descriptor tile's swizzle (rows of `rowBytes` = 4 block_k bytes: 128, 64 or 32): the 16-byte
/// chunk `chunk` of row `row` lies at chunk `chunk ^ f(row)` of that row, f = row % 8 (128-byte rows),
/// (row / 2) % 4 (64), (row / 4) % 2 (32). The tile's base is aligned to 8 rows, so this is the
/// hardware's XOR of address bits [4, 7) with bits [7, 10). The kernel (codegen) and the rubric's
/// shared-memory streams both read it.
int wgmmaSwizzledChunk(int row, int chunk, int rowBytes);

/// copy=producer (math=tf32_wgmma): registers per thread before and after setmaxnreg. The block
/// starts with what __launch_bounds__ gives each of its threads (168 of sm_90's 65536 registers per SM
/// for 384; the legality rule and the kernel both pass the target's figure). Where the MMA
/// warpgroups need more (`mmaNeed`, rounded up to 8, as setmaxnreg counts), the producer warpgroup
/// gives up what they take (256 * 216 + 128 * 72 = 384 * 168); `adjust` is false where nothing moves.
/// The producer's copy loops need at least kMinProducerRegisters (ptxas spills them at 40).
struct ProducerRegisters {
    int launch = 0, producer = 0, mma = 0;
    bool adjust = false;
};
inline constexpr int kMinProducerRegisters = 56;
ProducerRegisters producerRegisters(int computeThreads, int mmaNeed, int registersPerSm);

/// Combinations of a strategy's decisions before legality: the product of the candidates' counts.
std::size_t candidateCombinations(Strategy strategy);

/// Legal combinations of the group's decisions (cartesian product of the candidates, filtered),
/// at most `limit`, in a stable order: the search space the bench and the agents explore.
std::vector<KernelGroup> enumerateLegal(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem,
                                        std::size_t limit = 100000);

/// Up to `count` distinct legal combinations drawn from the whole legal space, where enumerateLegal's
/// first `limit` may all share their first decisions (a GEMM's first 100000 never reach
/// block_m=64). Each draw walks the decisions in order, tries each one's candidates in a random
/// order, skips broken subtrees as enumerateLegal does, and keeps the first legal leaf. Not uniform
/// over the legal schedules (a value with fewer legal completions is drawn as often as one with
/// many), but every legal value can be drawn. Deterministic for a seed on every platform
/// (std::mt19937's output, no library distribution). Decisions named in `fixed` keep the group's
/// value.
std::vector<KernelGroup> sampleLegal(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem,
                                     std::size_t count, std::uint32_t seed, const std::vector<std::string> &fixed = {});

} // namespace stitch::schedule
