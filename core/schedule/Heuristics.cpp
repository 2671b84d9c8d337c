// The built-in heuristics: greedy fusion, then per group the decisions a strategy's rules of thumb
// pick (tiles that fill the SMs, the cp.async ring, warpgroup or warp MMAs under tf32, rows per
// block, vector widths), repaired into the legal space that Space.cpp defines.
//   Problem -> defaultSchedule -> Schedule (every decision explicit)
#include "core/schedule/Space.h"

#include <algorithm>
#include <initializer_list>

namespace stitch::schedule {

bool setWidestLegalVector(const GroupAnalysis &analysis, KernelGroup &group, const Problem &problem)
{
    for (int v : {4, 2, 1}) {
        group.set("vector", v);
        if (checkGroup(analysis, group, problem).empty())
            return true;
    }
    return false;
}

namespace {

/// Moves the decisions named by violations to the nearest legal value until the group is legal.
void repair(const GroupAnalysis &a, KernelGroup &g, const Problem &p)
{
    for (int round = 0; round < 32; ++round) {
        auto violations = checkGroup(a, g, p);
        if (violations.empty())
            return;
        bool changed = false;
        for (const std::string &key : violations.front().keys) {
            auto options = legalValues(a, g, key, p);
            const int current = g.value(key);
            const ValueOption *best = nullptr;
            for (const auto &o : options)
                if (o.legal && o.value != current &&
                    (!best || std::abs(o.value - current) < std::abs(best->value - current) ||
                     (std::abs(o.value - current) == std::abs(best->value - current) && o.value < best->value)))
                    best = &o;
            if (best) {
                g.set(key, best->value);
                changed = true;
                break;
            }
        }
        if (!changed) {
            // Fall back to the smallest candidates of every involved key.
            for (const std::string &key : violations.front().keys)
                if (const DecisionDef *d = findDecision(g.strategy, key))
                    g.set(key, d->candidates.front());
        }
    }
}

void setDecisions(KernelGroup &g, std::initializer_list<std::pair<const char *, int>> decisions)
{
    for (const auto &[key, value] : decisions)
        g.set(key, value);
}

/// sm_90 with precision tf32: warpgroup MMAs (math=tf32_wgmma), the H200's fastest TF32 schedule
/// (docs/PERFORMANCE.md, run 8: 0.80x cuBLAS at 4096^3 against 0.36x for math=tf32_mma): the
/// largest tile that still fills the SMs, 32-deep tiles in a 4-stage ring, one block per SM. With
/// B stored [k, j] and M >= 4096, B transposed first (transpose_b=on; run 18: 4096^3 0.4216 against
/// 0.4246 ms, 8192^3 3.29 against 4.03 ms): the pass over B costs 8 K N bytes of DRAM traffic
/// against the GEMM's 2 M N K FLOPs, about 10 % of the time at M = 4096 and 3x at M = 128.
/// False (g unchanged) where no such tile is legal, e.g. no operand with rows along k.
template <class SetFirstFilling>
bool wgmmaHeuristic(const GroupAnalysis &a, KernelGroup &g, const Problem &p, SetFirstFilling &setFirstFilling)
{
    if (p.arch.computeMajor != 9 || p.arch.computeMinor != 0)
        return false;
    const KernelGroup before = g;
    // thread_m is 8 and thread_n the MMA's N / 16 (wgmmaLayout: N is block_m when B's rows run along n).
    const bool swap = schedule::wgmmaLayout(128, 128, 32, a.aRowMajor, !a.bRowMajor).swap;
    setDecisions(g, {{"math", 2}, {"copy", 1}, {"stages", 4}, {"block_k", 32}, {"smem_pad", 0}, {"min_blocks", 1}, {"split_k", 1}});
    if (swap)
        setFirstFilling({{256, 128, 8, 16}, {128, 128, 8, 8}, {128, 64, 8, 8}, {64, 128, 8, 4}, {64, 64, 8, 4}});
    else
        setFirstFilling({{128, 256, 8, 16}, {128, 128, 8, 8}, {64, 128, 8, 8}, {128, 64, 8, 4}, {64, 64, 8, 4}});
    if (swap && a.aRowMajor && sizeValue(a.domain[0], p) >= 4096) {
        g.set("transpose_b", 1);
        if (setWidestLegalVector(a, g, p))
            return true;
        g.set("transpose_b", 0);
    }
    if (setWidestLegalVector(a, g, p))
        return true;
    g = before;
    return false;
}

/// FP32 GEMMs on sm_90 of a billion multiply-adds and more with K >= 512 (the stream-K family of
/// runs 14-15, docs/PERFORMANCE.md): 128 x 128 tiles, stream-K, a 4-stage ring, two blocks per SM and
/// 32-bit stores; a plain GEMM with 16 x 8 results per thread and BK 8, one with an element-wise
/// epilogue (bias, GELU) 8 x 8 and BK 16. Measured on the H200 in run 15's sweeps against the earlier
/// default (128 x 128, 8 x 8, BK 16, 3 stages, no stream-K): 4096^3 2.745 ms against 3.279, 4097^3
/// 3.299 against 4.02, 1000x3000x700 0.115 against 0.156, the fused 4096^3 2.793 against 3.167; at
/// 128x8192x8192 0.357 (the earlier default took 64 x 64 tiles there). Architectures whose entry in
/// resources/arch/gpus.json does not list "large_gemm_stream_k" among its measured defaults keep the
/// earlier default (not measured there). Kept only where legal.
void largeGemmDefault(const GroupAnalysis &a, KernelGroup &g, const Problem &p)
{
    const std::int64_t M = sizeValue(a.domain[0], p), N = sizeValue(a.domain[1], p), K = sizeValue(a.k, p);
    if (!p.arch.measured("large_gemm_stream_k") || K < 512 || double(M) * double(N) * double(K) < double(std::int64_t(1) << 30))
        return;
    const KernelGroup before = g;
    const bool epilogue = a.ops.size() > 1;
    setDecisions(g, {{"block_m", 128}, {"block_n", 128}, {"thread_m", epilogue ? 8 : 16}, {"thread_n", 8},
                     {"block_k", epilogue ? 16 : 8}, {"stream_k", 1}, {"stages", 4}, {"min_blocks", 2}});
    g.set("store", 1); // scalar: legal where a thread's adjacent results can be stored wide at all
    if (checkGroup(a, g, p).empty())
        return;
    g.set("store", before.value("store")); // rows of C that allow no wide store (4097^3: measured so)
    if (!checkGroup(a, g, p).empty())
        g = before;
}

void gemmHeuristic(const GroupAnalysis &a, KernelGroup &g, const Problem &p, TensorCoreDefault tensorCores)
{
    const std::int64_t M = sizeValue(a.domain[0], p), N = sizeValue(a.domain[1], p);
    const GpuSpec *gpu = ArchDatabase::builtin().defaultGpuFor(p.arch.name);
    const std::int64_t sms = gpu ? gpu->multiprocessors : 80;
    struct Tile {
        int bm, bn, tm, tn;
    };
    // Largest tiles first; take the first that gives every SM at least one block (else the last).
    auto setFirstFilling = [&](std::initializer_list<Tile> tiles) {
        Tile pick = *tiles.begin();
        for (const Tile &t : tiles) {
            pick = t;
            if (((M + t.bm - 1) / t.bm) * ((N + t.bn - 1) / t.bn) >= sms)
                break;
        }
        g.set("block_m", pick.bm);
        g.set("block_n", pick.bn);
        g.set("thread_m", pick.tm);
        g.set("thread_n", pick.tn);
    };
    setFirstFilling({{128, 128, 8, 8}, {128, 64, 8, 4}, {64, 128, 4, 8}, {64, 64, 4, 4}, {32, 64, 4, 4}, {32, 32, 2, 4}});
    const bool tf32 = p.precision == Precision::TF32 && p.arch.tensorCoresTf32 && p.arch.asyncCopy;
    if (tf32 && tensorCores == TensorCoreDefault::Fastest && wgmmaHeuristic(a, g, p, setFirstFilling))
        return;
    if (tf32) {
        // TF32 tensor cores: warps of 64x64 results (thread_m=8, thread_n=16) where the tiles still
        // fill the SMs, 32-deep tiles in a 3-stage cp.async ring, two blocks per SM.
        setFirstFilling({{128, 128, 8, 16}, {128, 64, 8, 8}, {64, 64, 4, 8}, {32, 32, 2, 4}});
        setDecisions(g, {{"math", 1}, {"copy", 1}, {"stages", 3}, {"block_k", 32}, {"smem_pad", 4}, {"min_blocks", 2}});
    } else if (p.arch.asyncCopy) {
        // cp.async rings measured faster than register staging at every GEMM shape of the H200
        // runs (docs/PERFORMANCE.md, run 5); 3 stages of BK 16, two blocks per SM.
        setDecisions(g, {{"copy", 1}, {"stages", 3}, {"block_k", 16}, {"min_blocks", 2}});
    }
    setWidestLegalVector(a, g, p);
    if (!tf32 && p.arch.asyncCopy)
        largeGemmDefault(a, g, p);
}

void rowHeuristic(const GroupAnalysis &a, KernelGroup &g, const Problem &p)
{
    const std::int64_t C = sizeValue(a.domain.back(), p);
    int vec = 4;
    while (vec > 1 && C % vec != 0)
        vec /= 2;
    g.set("vector", vec);
    int tpr = 32;
    while (tpr < 1024 && std::int64_t(tpr) * vec * 8 < C)
        tpr *= 2;
    g.set("threads_per_row", tpr);
    g.set("rows_per_block", std::max(1, std::min(8, 256 / tpr)));
    g.set("cache", 1);
    g.set("cluster", 1);
    if (checkGroup(a, g, p).empty())
        return;
    // Softmax and layer norm over rows of 128 Ki elements and more (256 x 262144, run 20): three
    // rows per block of a resident cluster of 16 x 128 threads meeting by pushes, a quarter of the
    // next row by cp.async.bulk and the rest loaded in the output loop, gamma and beta (if any) in
    // shared memory once per block. Layer norm 0.150 ms against 0.18-0.19 for the clusters of 8
    // below; softmax with expf 0.149-0.151 against 0.155-0.161 for the clusters of run 12 (next).
    const bool columns = !rowColumnInputs(a, p.graph).empty();
    if (C >= (std::int64_t(1) << 17) && (columns || hasOnlineSoftmaxPair(a))) {
        const int rpb = g.value("rows_per_block");
        setDecisions(g, {{"threads_per_row", 128}, {"rows_per_block", 3}, {"cluster", 16}, {"grid", 1},
                         {"exchange", 1}, {"column_inputs", columns ? 1 : 0}, {"prefetch", 3}});
        if (checkGroup(a, g, p).empty())
            return;
        setDecisions(g, {{"threads_per_row", tpr}, {"rows_per_block", rpb}, {"cluster", 1}, {"grid", 0},
                         {"exchange", 0}, {"column_inputs", 0}, {"prefetch", 0}});
    }
    // Softmax rows of 128 Ki elements and more where the row groups are not legal (run 12):
    // clusters of 16 blocks of 128 threads, three blocks per SM, the maximum and the sum in one
    // exchange.
    if (C >= (std::int64_t(1) << 17) && hasOnlineSoftmaxPair(a)) {
        setDecisions(g, {{"threads_per_row", 128}, {"rows_per_block", 1}, {"cluster", 16}, {"min_blocks", 3},
                         {"combine", 1}});
        if (checkGroup(a, g, p).empty())
            return;
        setDecisions(g, {{"threads_per_row", tpr}, {"min_blocks", 1}, {"combine", 0}});
    }
    for (int cluster : {2, 4, 8}) {
        g.set("cluster", cluster);
        g.set("rows_per_block", 1);
        if (checkGroup(a, g, p).empty())
            return;
    }
    g.set("cluster", 1);
    g.set("cache", 0);
}

void elementwiseHeuristic(const GroupAnalysis &a, KernelGroup &g, const Problem &p)
{
    std::int64_t total = 1;
    for (const auto &e : a.domain)
        total *= sizeValue(e, p);
    setWidestLegalVector(a, g, p);
    g.set("items", total >= (1 << 22) ? 2 : 1);
}

} // namespace

Status applyHeuristics(const GroupAnalysis &a, KernelGroup &g, const Problem &problem, TensorCoreDefault tensorCores)
{
    g.values.clear();
    switch (g.strategy) {
    case Strategy::Gemm: gemmHeuristic(a, g, problem, tensorCores); break;
    case Strategy::RowReduction: rowHeuristic(a, g, problem); break;
    case Strategy::Elementwise: elementwiseHeuristic(a, g, problem); break;
    case Strategy::Generic: break;
    }
    // GELU's 1 + erf(z) by erfc (docs/SCHEDULE.md): fewer instructions, and accurate where
    // 1 + erff(z) cancels (docs/PERFORMANCE.md, run 13: 3% of GEMM + bias + GELU at K = 128).
    if (g.strategy != Strategy::Generic && computesOnePlusErf(a))
        g.set("erf", 1);
    repair(a, g, problem);
    if (auto v = checkGroup(a, g, problem); !v.empty())
        return makeError(ErrorKind::InvalidArgument, "group " + g.name + ": " + v.front().message);
    // Record every decision explicitly: the schedule file shows the whole picture.
    for (const auto &d : decisionDefs(g.strategy))
        g.set(d.key, g.value(d.key));
    return Ok{};
}

Result<Schedule> defaultSchedule(const Problem &problem, TensorCoreDefault tensorCores)
{
    Schedule s;
    s.arch = problem.arch.name;
    s.precision = problem.precision;
    s.groups = fuseGreedy(problem.graph);
    for (KernelGroup &g : s.groups) {
        auto a = analyzeGroup(problem.graph, g.ops, g.strategy);
        if (!a.ok())
            return a.error();
        if (auto st = applyHeuristics(*a, g, problem, tensorCores); !st)
            return st.error();
    }
    return s;
}

} // namespace stitch::schedule
