// The rubric of the program as written (issue 31): textbook kernels from tests/rubric/data/as_written,
// each scored as its host code launches it (NVRTC for the resources, no GPU), every dimension's score
// against its hand-computed value and the orderings a GPU engineer expects.
//   FILE.cu -> rubric::scoreAsWritten -> per-kernel scores, missing dimensions (located), time
// Hand computations use the rubric's formulas (docs/RUBRIC.md): coalescing 5 x ideal / actual
// sectors over every global request; bank conflicts 5 x ideal / actual wavefronts; divergence 5 x
// the lanes running each memory instruction (request-weighted); occupancy 5 x min(1, occupancy / 50%);
// arithmetic intensity 5 x clamp((log2(I / ridge) + 6) / 6), the H200's ridge 67 TFLOP/s / 4.8 TB/s = 14.0.
// One warp request of 32 lanes reading consecutive floats touches 128 B = 4 sectors (the ideal).
#include "core/rubric/AsWrittenRubric.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace {

using namespace stitch;

std::string dataPath(const std::string &name)
{
    return std::string(STITCHCUDA_SOURCE_DIR) + "/tests/rubric/data/as_written/" + name + ".cu";
}

std::string readText(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Scored once per file (NVRTC included) and kept for every test of this file.
const rubric::AsWrittenReport &scored(const std::string &name, bool compile = true)
{
    static std::map<std::string, rubric::AsWrittenReport> cache;
    const std::string key = name + (compile ? "" : "/no-nvrtc");
    auto it = cache.find(key);
    if (it != cache.end())
        return it->second;
    rubric::AsWrittenOptions options;
    options.compile = compile;
    auto r = rubric::scoreAsWritten(readText(dataPath(name)), dataPath(name), options);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().toString());
    if (!r.ok())
        return cache[key];
    EXPECT_EQ(r->compiled, compile) << r->compileNote;
    return cache[key] = std::move(*r);
}

/// The kernel's score on `dimension` (the test fails when the dimension is not scored).
double score(const rubric::AsWrittenReport &r, const std::string &dimension, std::size_t kernel = 0)
{
    const rubric::RubricScore *s = r.kernelScore(kernel, dimension);
    EXPECT_NE(s, nullptr) << dimension << " is not scored for kernel " << kernel;
    return s ? s->score : -1;
}

/// Theoretical occupancy on sm_90 (64 warps, 65536 registers, 32 blocks per SM; registers allocated
/// per warp in units of 256), no shared memory: the figure the hand computations below start from.
double occupancyByHand(int registers, int threads)
{
    const int warps = (threads + 31) / 32;
    const int perWarp = ((registers * 32 + 255) / 256) * 256;
    const int byRegisters = registers > 0 ? 65536 / (perWarp * warps) : 32;
    const int blocks = std::min({byRegisters, 64 / warps, 32});
    return blocks * warps / 64.0;
}

int registersOf(const rubric::AsWrittenReport &r, std::size_t kernel = 0)
{
    const rubric::RubricScore *s = r.kernelScore(kernel, "hard_limits");
    std::smatch m;
    static const std::regex re("(\\d+) registers");
    if (!s || !std::regex_search(s->evidence, m, re))
        return -1;
    return std::stoi(m[1]);
}

// y[i] = 2 x[i], 4096 blocks of 256: each warp request of x and y is 32 consecutive floats, 4 sectors
// (the ideal) -> coalescing 5.0. One FLOP per 8 bytes (x read, y written once): 0.125 FLOP/B, below
// ridge / 64 = 0.22 -> intensity 0.0. No lane-dependent branch (i < n holds for every lane, 2^20 is
// a multiple of 256) -> divergence 5.0. Few registers, 256 threads: 8 blocks of 8 warps = 64 warps,
// 100% -> occupancy 5.0, hard limits 5.0. Scalar ld/st.global only: instruction mix 5 - 2 (no vector
// access) minus the integer penalty, at most 3.0. No shared memory: bank conflicts do not apply.
TEST(RubricAsWritten, CoalescedScaleScoresEveryDimension)
{
    const auto &r = scored("coalesced");
    ASSERT_EQ(r.kernels.size(), 1u);
    EXPECT_TRUE(r.kernels[0].accessModel);
    EXPECT_EQ(r.kernels[0].launchConfig, "<<<(4096,1,1), (256,1,1)>>>");
    EXPECT_DOUBLE_EQ(score(r, "coalescing"), 5.0);
    EXPECT_DOUBLE_EQ(score(r, "arithmetic_intensity"), 0.0);
    EXPECT_DOUBLE_EQ(score(r, "divergence"), 5.0);
    EXPECT_DOUBLE_EQ(occupancyByHand(registersOf(r), 256), 1.0);
    EXPECT_DOUBLE_EQ(score(r, "occupancy"), 5.0);
    EXPECT_DOUBLE_EQ(score(r, "hard_limits"), 5.0);
    EXPECT_LE(score(r, "instruction_mix"), 3.0);
    EXPECT_GE(score(r, "instruction_mix"), 1.0);
    EXPECT_EQ(r.kernelScore(0, "bank_conflicts"), nullptr);
    EXPECT_TRUE(r.kernels[0].missing.empty());
    // One thread per output: the generic strategy, so the model predicts it.
    ASSERT_TRUE(r.kernels[0].prediction.has_value()) << r.kernels[0].timeNote;
    ASSERT_TRUE(r.predictedMs.has_value());
    EXPECT_GT(*r.predictedMs, 0.0);
    EXPECT_EQ(r.programScore("coalescing")->score, 5.0);
}

// x[(i % 32) * (n / 32) + i / 32]: the 32 lanes of a warp are n / 32 = 32768 floats (128 KiB) apart,
// so each request touches 32 sectors for 4 sectors of data: 5 x 4 / 32 = 0.625 -> 0.6, loads and
// stores alike. The lifter cannot put the index in the graph, but it evaluated the body, so the
// kernel is scored (never "0 kernels") and, one thread per output, predicted: slower than coalesced.
TEST(RubricAsWritten, UncoalescedIndexIsScoredAndSlower)
{
    const auto &r = scored("uncoalesced");
    ASSERT_EQ(r.kernels.size(), 1u);
    EXPECT_DOUBLE_EQ(score(r, "coalescing"), 0.6);
    EXPECT_DOUBLE_EQ(score(r, "divergence"), 5.0);
    EXPECT_DOUBLE_EQ(score(r, "hard_limits"), 5.0);
    ASSERT_TRUE(r.predictedMs.has_value());
    ASSERT_TRUE(scored("coalesced").predictedMs.has_value());
    EXPECT_GT(*r.predictedMs, *scored("coalesced").predictedMs);
    EXPECT_LT(score(r, "coalescing"), score(scored("coalesced"), "coalescing"));
}

// y[i] = x[2i]: the load's 32 lanes span 256 B = 8 sectors for 4 sectors of data, the store 4 of 4,
// one request each per warp: 5 x (4 + 4) / (8 + 4) = 3.33 -> 3.3 (coalesced > strided > uncoalesced).
TEST(RubricAsWritten, StridedReadHalvesTheLoadEfficiency)
{
    const auto &r = scored("strided");
    EXPECT_DOUBLE_EQ(score(r, "coalescing"), 3.3);
    EXPECT_GT(score(scored("coalesced"), "coalescing"), score(r, "coalescing"));
    EXPECT_GT(score(r, "coalescing"), score(scored("uncoalesced"), "coalescing"));
}

// Naive transpose, blocks of 32 x 8: the read in[y * n + x] is 32 consecutive floats (4 sectors), the
// write out[x * n + y] puts each lane in another row (32 sectors for 4): 5 x (4 + 4) / (4 + 32) = 1.11.
TEST(RubricAsWritten, NaiveTransposeWritesColumns)
{
    const auto &r = scored("transpose_naive");
    EXPECT_EQ(r.kernels[0].launchConfig, "<<<(32,128,1), (32,8,1)>>>");
    EXPECT_DOUBLE_EQ(score(r, "coalescing"), 1.1);
    EXPECT_DOUBLE_EQ(score(r, "divergence"), 5.0);
}

// Tiled transpose through tile[32][32], blocks of 32 x 32: both global accesses are coalesced (5.0).
// The tile store tile[ty][tx] puts the lanes in 32 banks (1 wavefront); the read tile[tx][ty] is word
// tx * 32 + ty, bank ty for every lane: a 32-way conflict, 32 wavefronts. 5 x (1 + 1) / (1 + 32) =
// 0.30 -> 0.3. Padded to tile[32][33], the read is word tx * 33 + ty, bank (tx + ty) % 32: all
// distinct, 1 wavefront -> 5.0. The padded tile is not in the lifter's graph (its extent is not the
// block's): its addresses come from the record-only evaluation, and the kernel says so.
TEST(RubricAsWritten, PaddedSharedTileHasNoBankConflicts)
{
    const auto &tiled = scored("transpose_tiled");
    const auto &padded = scored("transpose_padded");
    EXPECT_DOUBLE_EQ(score(tiled, "coalescing"), 5.0);
    EXPECT_DOUBLE_EQ(score(padded, "coalescing"), 5.0);
    EXPECT_DOUBLE_EQ(score(tiled, "bank_conflicts"), 0.3);
    EXPECT_DOUBLE_EQ(score(padded, "bank_conflicts"), 5.0);
    EXPECT_GT(score(padded, "bank_conflicts"), score(tiled, "bank_conflicts"));
    EXPECT_GT(score(tiled, "coalescing"), score(scored("transpose_naive"), "coalescing"));
    EXPECT_NE(padded.kernelScore(0, "divergence")->evidence.find("record-only"), std::string::npos);
    // 1024 threads, 4 KiB of tile: 2 blocks of 32 warps = 100% -> 5.0 (registers permitting).
    EXPECT_DOUBLE_EQ(occupancyByHand(registersOf(tiled), 1024), 1.0);
    EXPECT_DOUBLE_EQ(score(tiled, "occupancy"), 5.0);
    // Shared tiles are not the generic strategy: no guess at the time.
    EXPECT_FALSE(tiled.predictedMs.has_value());
    EXPECT_EQ(tiled.timeNote.rfind("measure on a GPU", 0), 0u);
}

// if (threadIdx.x % 2 == 0) ... else ...: in every warp 16 lanes take each path, so each load and store
// runs with 16 of 32 lanes: divergence 5 x 0.5 = 2.5; each request touches 4 sectors for 2 sectors of
// data (16 floats at a stride of 8 B): coalescing 5 x 2 / 4 = 2.5. Branching on blockIdx.x % 2
// instead, every warp takes one path with all 32 lanes: 5.0 and 5.0.
TEST(RubricAsWritten, DivergentParityBranchHalvesTheLanes)
{
    const auto &divergent = scored("divergent");
    const auto &uniform = scored("uniform");
    EXPECT_DOUBLE_EQ(score(divergent, "divergence"), 2.5);
    EXPECT_DOUBLE_EQ(score(divergent, "coalescing"), 2.5);
    EXPECT_DOUBLE_EQ(score(uniform, "divergence"), 5.0);
    EXPECT_DOUBLE_EQ(score(uniform, "coalescing"), 5.0);
    EXPECT_GT(score(uniform, "divergence"), score(divergent, "divergence"));
    EXPECT_NE(divergent.kernelScore(0, "divergence")->evidence.find("threadIdx.x % 2 == 0"), std::string::npos);
}

// Grid-stride loop, 1024 blocks of 256 over 2^20 elements: in each trip the lanes read and write 32
// consecutive floats (5.0), all lanes run every trip (5.0). A thread computing several outputs in a
// loop is not the generic strategy (one output per thread): the time is "measure on a GPU".
TEST(RubricAsWritten, GridStrideLoopIsCoalescedButNotPredicted)
{
    const auto &r = scored("grid_stride");
    EXPECT_EQ(r.kernels[0].launchConfig, "<<<(1024,1,1), (256,1,1)>>>");
    EXPECT_DOUBLE_EQ(score(r, "coalescing"), 5.0);
    EXPECT_DOUBLE_EQ(score(r, "divergence"), 5.0);
    EXPECT_DOUBLE_EQ(score(r, "arithmetic_intensity"), 0.0);
    EXPECT_FALSE(r.kernels[0].prediction.has_value());
    EXPECT_EQ(r.kernels[0].timeNote.rfind("measure on a GPU", 0), 0u);
    EXPECT_NE(r.kernels[0].mapping.find("several outputs in a loop"), std::string::npos) << r.kernels[0].mapping;
}

// One thread per output with a loop over its reduction is the generic strategy (the generated generic
// kernel of a reduction op is the same shape): both sums are timed, and the coalesced column sums are
// predicted faster than the row sums, whose every trip fetches 8x the sectors it uses.
TEST(RubricAsWritten, ReductionLoopsMapOntoTheGenericStrategyAndAreTimed)
{
    const auto &col = scored("col_sum");
    const auto &row = scored("row_sum");
    ASSERT_TRUE(col.predictedMs.has_value()) << col.timeNote;
    ASSERT_TRUE(row.predictedMs.has_value()) << row.timeNote;
    EXPECT_NE(col.kernels[0].mapping.find("looping over its reduction"), std::string::npos) << col.kernels[0].mapping;
    EXPECT_LT(*col.predictedMs, *row.predictedMs);
}

// Row sums, one thread per row of 1024: in each of the 1024 trips the lanes read 32 rows (32 sectors,
// 4 of data); the store y[r] once, 4 sectors: 5 x (4 x 1024 + 4) / (32 x 1024 + 4) = 0.63 -> 0.6.
// Column sums, one thread per column: every trip reads 32 adjacent columns of one row: 5.0.
TEST(RubricAsWritten, RowSumsAreUncoalescedColumnSumsAreNot)
{
    EXPECT_DOUBLE_EQ(score(scored("row_sum"), "coalescing"), 0.6);
    EXPECT_DOUBLE_EQ(score(scored("col_sum"), "coalescing"), 5.0);
    // Sum of 1024 floats per thread: one add per element read, 4 B each (+ the store): about 0.25 FLOP/B
    // each byte once; the row sums move 8x the bytes through wasted sectors.
    EXPECT_GT(score(scored("col_sum"), "arithmetic_intensity"), score(scored("row_sum"), "arithmetic_intensity"));
}

// The unrolled shared-memory tree, per block of 8 warps (requests in warps, lanes running each):
// x load and buf store 8 + 8 at 32 lanes; tid < 128: 3 accesses x 4 warps, tid < 64: 3 x 2, tid < 32:
// 3 x 1, all 32 lanes; tid < 16, 8, 4, 2: 3 x 1 warp at 16, 8, 4, 2 lanes; tid == 0: 3 x 1 at 1 lane.
// Lanes: (16 + 12 + 6 + 3 + (1.5 + 0.75 + 0.375 + 0.1875) + 0.09375) / 52 = 0.767 -> divergence 3.8.
// Every shared access is buf[tid + c] (consecutive words) or one word: no conflict, 5.0. The global
// load is coalesced and the store y[blockIdx.x] one lane, one sector, its ideal: 5.0.
TEST(RubricAsWritten, UnrolledReductionIdlesLanesAsTheTreeNarrows)
{
    const auto &r = scored("reduce_unrolled");
    EXPECT_DOUBLE_EQ(score(r, "divergence"), 3.8);
    EXPECT_DOUBLE_EQ(score(r, "bank_conflicts"), 5.0);
    EXPECT_DOUBLE_EQ(score(r, "coalescing"), 5.0);
    EXPECT_LT(score(r, "divergence"), score(scored("coalesced"), "divergence"));
}

// Harris' reduction with `for (s = blockDim.x / 2; s > 0; s >>= 1)`: the lifter does not follow a
// halving loop, so the access dimensions are missing, located at the loop; occupancy, hard limits and
// the instruction mix still come from NVRTC: 256 threads, 1 KiB of shared memory, few registers ->
// 8 blocks, 100% -> 5.0.
TEST(RubricAsWritten, SharedReductionLoopIsAPartialRubric)
{
    const auto &r = scored("reduce_shared");
    ASSERT_EQ(r.kernels.size(), 1u);
    EXPECT_FALSE(r.kernels[0].accessModel);
    for (const char *dim : {"coalescing", "divergence", "bank_conflicts", "arithmetic_intensity"}) {
        const rubric::MissingDimension *m = r.missing(0, dim);
        ASSERT_NE(m, nullptr) << dim;
        EXPECT_EQ(m->where.line, 16) << m->why;
        EXPECT_NE(m->why.find("for (int s = blockDim.x / 2"), std::string::npos) << m->why;
    }
    EXPECT_DOUBLE_EQ(score(r, "occupancy"), 5.0);
    EXPECT_DOUBLE_EQ(score(r, "hard_limits"), 5.0);
    EXPECT_NE(r.kernelScore(0, "instruction_mix"), nullptr);
    EXPECT_FALSE(r.predictedMs.has_value());
}

// atomicAdd(&y[0], x[i]): not lifted (atomics); the partial rubric names the call and its line.
TEST(RubricAsWritten, AtomicKernelIsAPartialRubricWithTheLocatedReason)
{
    const auto &r = scored("atomic_sum");
    ASSERT_EQ(r.kernels.size(), 1u);
    const rubric::MissingDimension *m = r.missing(0, "coalescing");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->where.line, 13);
    EXPECT_NE(m->why.find("atomicAdd"), std::string::npos) << m->why;
    EXPECT_DOUBLE_EQ(score(r, "occupancy"), 5.0);
    EXPECT_DOUBLE_EQ(score(r, "hard_limits"), 5.0);
    EXPECT_EQ(r.timeNote.rfind("measure on a GPU", 0), 0u);
}

// 64 loaded values live at once: NVRTC gives it many registers (72 with CUDA 13's NVRTC). Occupancy by
// hand from the reported count: 72 registers x 32 lanes = 2304 per warp, x 8 warps = 18432 per block;
// 65536 / 18432 = 3 blocks = 24 warps = 37.5% -> 5 x 0.375 / 0.5 = 3.75 -> 3.8.
TEST(RubricAsWritten, RegisterHeavyKernelLosesOccupancy)
{
    const auto &r = scored("register_heavy");
    const int registers = registersOf(r);
    ASSERT_GE(registers, 64);
    const double occupancy = occupancyByHand(registers, 256);
    EXPECT_LT(occupancy, 0.5);
    EXPECT_DOUBLE_EQ(score(r, "occupancy"), std::round(5 * occupancy / 0.5 * 10) / 10);
    EXPECT_LT(score(r, "occupancy"), score(scored("coalesced"), "occupancy"));
    EXPECT_DOUBLE_EQ(score(r, "hard_limits"), 5.0);
    EXPECT_NE(r.missing(0, "coalescing"), nullptr); // a thread-local array: not lifted, located
}

// Without NVRTC the access dimensions stand; occupancy, hard limits and the mix are missing, said so.
TEST(RubricAsWritten, WithoutNvrtcTheResourceDimensionsAreMissing)
{
    const auto &r = scored("coalesced", false);
    EXPECT_DOUBLE_EQ(score(r, "coalescing"), 5.0);
    for (const char *dim : {"occupancy", "hard_limits", "instruction_mix"}) {
        const rubric::MissingDimension *m = r.missing(0, dim);
        ASSERT_NE(m, nullptr) << dim;
        EXPECT_NE(m->why.find("not compiled"), std::string::npos) << m->why;
    }
    EXPECT_FALSE(r.predictedMs.has_value()); // registers unknown: no time, not a guess
    EXPECT_EQ(r.timeNote.rfind("measure on a GPU", 0), 0u);
}

// A kernel on its own (no host code): the launch is inferred with sizes that have no value; every
// dimension that needs the launch is missing, located at the kernel, and --size would bind them.
TEST(RubricAsWritten, LoneKernelWithoutSizesSaysWhy)
{
    const std::string path = std::string(STITCHCUDA_SOURCE_DIR) + "/examples/matmul_kernel_only.cu";
    auto r = rubric::scoreAsWritten(readText(path), path, {});
    ASSERT_TRUE(r.ok()) << r.error().toString();
    ASSERT_EQ(r->kernels.size(), 1u);
    const rubric::MissingDimension *m = r->missing(0, "coalescing");
    ASSERT_NE(m, nullptr);
    EXPECT_NE(m->why.find("does not evaluate"), std::string::npos) << m->why;
    EXPECT_GT(m->where.line, 0);
}

// No kernel at all: a located error, never an empty report.
TEST(RubricAsWritten, FileWithoutKernelsIsAnError)
{
    auto r = rubric::scoreAsWritten("int main() { return 0; }\n", "empty.cu", {});
    ASSERT_FALSE(r.ok());
    ASSERT_TRUE(r.error().location.has_value());
    EXPECT_EQ(r.error().location->file, "empty.cu");
}

} // namespace
