// `stitchcuda bench`'s candidates: the curated sweep around a case's default schedule, --where
// and --max-candidates, and the second round of what only timing decides (app/cli/BenchCommand.cpp
// times them).
#include "core/bench/Sweep.h"

#include "core/schedule/Space.h"

#include <algorithm>
#include <functional>
#include <iterator>

namespace stitch::bench {

namespace {

/// The candidates of the sweep: the default schedule plus curated variations of its main group.
std::vector<schedule::Schedule> sweep(const schedule::Problem &problem, const schedule::Schedule &base, bool quick)
{
    std::vector<schedule::Schedule> out = {base};
    if (base.groups.size() != 1)
        return out;
    const auto &g0 = base.groups.front();
    auto analysis = schedule::analyzeGroup(problem.graph, g0.ops, g0.strategy);
    if (!analysis.ok())
        return out;
    auto add = [&](schedule::KernelGroup g) {
        if (!schedule::checkGroup(*analysis, g, problem).empty())
            return;
        for (const auto &s : out)
            if (s.groups.front() == g)
                return;
        schedule::Schedule s = base;
        s.groups.front() = std::move(g);
        out.push_back(std::move(s));
    };
    auto widestVector = [&](schedule::KernelGroup &g) { schedule::setWidestLegalVector(*analysis, g, problem); };
    auto addStreamK = [&](schedule::KernelGroup g) { // the same schedule, its partial last wave shared
        g.set("stream_k", 1);
        add(std::move(g));
    };
    switch (g0.strategy) {
    case schedule::Strategy::Gemm: {
        struct Tile {
            int bm, bn, tm, tn;
        };
        // One tile with its staging; the other decisions stay the default schedule's. tileGroup also
        // takes the widest legal vector width (the TF32 sweep first changes math and smem_pad).
        auto tile = [&](const Tile &t, int bk, int copy, int stages, int minBlocks) {
            schedule::KernelGroup g = g0;
            g.set("block_m", t.bm);
            g.set("block_n", t.bn);
            g.set("thread_m", t.tm);
            g.set("thread_n", t.tn);
            g.set("block_k", bk);
            g.set("min_blocks", minBlocks);
            g.set("copy", copy);
            g.set("stages", stages);
            g.set("smem_pad", 4);
            g.set("transpose_b", 0); // the warpgroup sweep adds the transposed twins itself
            return g;
        };
        auto tileGroup = [&](const Tile &t, int bk, int copy, int stages, int minBlocks) {
            schedule::KernelGroup g = tile(t, bk, copy, stages, minBlocks);
            widestVector(g);
            return g;
        };
        if (g0.value("math") != 0) {
            // TF32 tensor cores (the defaults' choice under precision tf32): each tile with 16- and
            // 32-deep tiles in 2-4 stage cp.async rings, two blocks per SM where they fit, else one;
            // the rasterization groups 1, 4 and 16 (besides 8) for the tiles `moreSwizzles` names.
            auto sweep = [&](int math, int pad, const Tile *tiles, std::size_t count, int quickStages,
                             const std::function<bool(const Tile &, int bk, int stages)> &moreSwizzles) {
                for (std::size_t i = 0; i < count; ++i)
                    for (int bk : {16, 32})
                        for (int stages : {2, 3, 4}) {
                            if (quick && (bk != 32 || stages != quickStages))
                                continue;
                            schedule::KernelGroup g = tile(tiles[i], bk, 1, stages, 1);
                            g.set("math", math);
                            g.set("smem_pad", pad);
                            g.set("split_k", 1);
                            widestVector(g);
                            g.set("min_blocks", 2);
                            if (!schedule::checkGroup(*analysis, g, problem).empty())
                                g.set("min_blocks", 1);
                            add(g);
                            if (math == 2) { // and the same tile copied by a producer warpgroup, and with B transposed first
                                schedule::KernelGroup p = g;
                                p.set("copy", 2);
                                add(p);
                                schedule::KernelGroup t = g;
                                t.set("transpose_b", 1);
                                add(t);
                            }
                            if (!quick && moreSwizzles(tiles[i], bk, stages)) {
                                for (int swizzle : {1, 4, 16}) {
                                    schedule::KernelGroup o = g;
                                    o.set("swizzle", swizzle);
                                    add(o);
                                }
                                addStreamK(g);
                            }
                        }
            };
            // mma.sync (math=tf32_mma): block tiles of 4 or 8 warps, warp tiles of 64x64, 64x32 and
            // 32x64 (8 thread_m x 4 thread_n).
            const Tile mmaTiles[] = {{128, 128, 8, 16}, {128, 256, 8, 16}, {256, 128, 8, 16}, {128, 128, 8, 8},
                                     {128, 128, 4, 16}, {256, 128, 16, 8}, {128, 64, 8, 8},   {64, 128, 8, 16}};
            sweep(1, 4, mmaTiles, std::size(mmaTiles), 3, [](const Tile &t, int, int stages) {
                return t.bm == 128 && t.bn == 128 && t.tn == 16 && stages == 3;
            });
            // Warpgroup MMAs (math=tf32_wgmma, sm_90a): 64 x N MMAs with N = 64 to 256 along whichever
            // of m and n the descriptor operand runs (thread_m 8, thread_n N / 16; `add` drops the tiles
            // that do not fit the operand layout, and all of them off sm_90), each also with
            // copy=producer and with transpose_b=on (where B is stored [k, j]).
            const Tile wgmmaTiles[] = {{256, 128, 8, 16}, {128, 256, 8, 16}, {128, 128, 8, 8}, {256, 64, 8, 16},
                                       {64, 256, 8, 16},  {128, 256, 8, 8},  {256, 128, 8, 8}, {128, 64, 8, 8},
                                       {64, 128, 8, 8},   {64, 128, 8, 4},   {128, 64, 8, 4}};
            sweep(2, 0, wgmmaTiles, std::size(wgmmaTiles), 4, [](const Tile &t, int bk, int stages) {
                return t.bm * t.bn == 256 * 128 && bk == 32 && stages == 4;
            });
            break;
        }
        const std::vector<Tile> tiles = {{128, 128, 8, 8},  {128, 128, 8, 16}, {128, 128, 16, 8}, {128, 256, 8, 16},
                                         {256, 128, 16, 8}, {128, 64, 8, 8},   {64, 128, 8, 8},   {256, 128, 8, 8},
                                         {128, 256, 8, 8},  {64, 64, 8, 8},    {64, 64, 4, 4},    {128, 64, 8, 16},
                                         {64, 128, 8, 16},  {32, 64, 4, 4},    {64, 32, 4, 4},    {32, 32, 4, 4}};
        // Too few tiles to fill the GPU (132 SMs) twice over: split K too.
        const auto M = problem.sizes.at("M"), N = problem.sizes.at("N");
        auto fewTiles = [&](const Tile &t) { return ((M + t.bm - 1) / t.bm) * ((N + t.bn - 1) / t.bn) < 264; };
        auto addSplits = [&](schedule::KernelGroup g, std::initializer_list<int> splits) {
            for (int split : splits) {
                g.set("split_k", split);
                add(g);
            }
        };
        // Register staging, two buffers.
        for (const Tile &t : tiles)
            for (int bk : {8, 16})
                for (int minBlocks : {1, 2}) {
                    if (quick && (bk != 8 || minBlocks != 1))
                        continue;
                    const schedule::KernelGroup g = tileGroup(t, bk, 0, 2, minBlocks);
                    add(g);
                    if (fewTiles(t) && minBlocks == 1)
                        addSplits(g, {2, 4, 8});
                }
        // cp.async rings of 2-4 buffers for the larger tiles (no staging registers); 3-4 resident
        // blocks for the 128-thread tiles (one block's epilogue under the others' math).
        for (std::size_t t = 0; t < 7; ++t)
            for (int bk : {8, 16, 32})
                for (int stages : {2, 3, 4})
                    for (int minBlocks : {1, 2, 3, 4}) {
                        if (quick && (bk != 16 || stages != 3 || minBlocks != 2))
                            continue;
                        if (minBlocks > 2 && (bk == 32 || tiles[t].bm * tiles[t].bn > 128 * 128))
                            continue;
                        const schedule::KernelGroup g = tileGroup(tiles[t], bk, 1, stages, minBlocks);
                        add(g);
                        if (stages >= 3 && !quick)
                            addStreamK(g);
                        // Rasterization groups other than 8 block rows for the largest tiles.
                        if ((t == 0 || t == 2 || t == 3 || t == 4) && bk == 16 && stages >= 3)
                            for (int swizzle : {1, 4, 16}) {
                                schedule::KernelGroup o = g;
                                o.set("swizzle", swizzle);
                                add(o);
                            }
                        if (fewTiles(tiles[t]))
                            addSplits(g, {2, 4});
                    }
        break;
    }
    case schedule::Strategy::RowReduction: {
        const std::int64_t rowLength = schedule::sizeValue(analysis->domain.back(), problem);
        // The sweep's decisions over the decisions' own defaults, not what the default schedule
        // chose for these rows (clusters of 16 with min_blocks=3 and combine=online for long softmax
        // rows): the variants below add those.
        schedule::KernelGroup rowDefaults = g0;
        for (const auto &d : schedule::decisionDefs(g0.strategy))
            rowDefaults.set(d.key, d.defaultValue);
        rowDefaults.set("erf", g0.value("erf")); // (the defaults' erfc for a GELU: no variant adds it)
        for (int tpr : {32, 64, 128, 256, 512, 1024})
            for (int rpb : {1, 2, 4, 8})
                for (int cluster : {1, 2, 4, 8, 16})
                    for (int cache : {1, 0})
                        for (int steps : {1, 2, 4, 8})
                            for (int prefetch : {0, 1, 2}) {
                                // Several rows per block (row_steps) with the register cache, with
                                // or without loading the next row during this one (prefetch, into
                                // registers or, with clusters of 8 and more, shared memory): with
                                // clusters 2, 4 and 8; without, only 2 and not with --quick.
                                if (steps > 1 && (cache == 0 || (cluster == 1 && (quick || steps > 2))))
                                    continue;
                                if (prefetch == 2 && cluster < 8)
                                    continue;
                                schedule::KernelGroup g = rowDefaults;
                                g.set("threads_per_row", tpr);
                                g.set("rows_per_block", rpb);
                                g.set("cluster", cluster);
                                g.set("cache", cache);
                                g.set("row_steps", steps);
                                g.set("prefetch", prefetch);
                                g.set("reduce", 0);
                                widestVector(g);
                                add(g);
                                // Long rows (4096+ elements per block) held in registers by clusters of 8
                                // and 16: several blocks per SM (min_blocks), softmax's one-exchange
                                // combine and the FMA exp (`add` drops what a group does not allow).
                                if (cluster >= 8 && rowLength / cluster >= 4096 && cache == 1 && prefetch == 0 &&
                                    steps <= 2)
                                    for (int minBlocks : {1, 2, 3})
                                        for (int online : {0, 1})
                                            for (int fastExp : {0, 1}) {
                                                schedule::KernelGroup v = g;
                                                v.set("min_blocks", minBlocks);
                                                v.set("combine", online);
                                                v.set("exp", fastExp);
                                                add(v);
                                                // As many clusters as the GPU holds, walking the rows,
                                                // with the outputs by the copy engine or not.
                                                if (steps == 1)
                                                    for (int bulk : {0, 1}) {
                                                        schedule::KernelGroup r = v;
                                                        r.set("grid", 1);
                                                        r.set("bulk_store", bulk);
                                                        add(r);
                                                    }
                                            }
                            }
        // Long rows: several rows per block of a resident cluster of 16, meeting by pushes, with the
        // per-column vectors in shared memory and a quarter of the next row by cp.async.bulk, or not
        // (run 20; `add` drops what the group does not allow).
        if (rowLength / 16 >= 4096)
            for (int tpr : {128, 256})
                for (int rpb : {2, 3})
                    for (int columns : {0, 1})
                        for (int prefetch : {0, 3}) {
                            schedule::KernelGroup g = rowDefaults;
                            for (const auto &[key, value] :
                                 {std::pair<const char *, int>{"threads_per_row", tpr}, {"rows_per_block", rpb},
                                  {"cluster", 16}, {"cache", 1}, {"grid", 1}, {"exchange", 1},
                                  {"column_inputs", columns}, {"prefetch", prefetch}, {"reduce", 0}})
                                g.set(key, value);
                            widestVector(g);
                            add(g);
                        }
        break;
    }
    case schedule::Strategy::Elementwise:
        for (int threads : {128, 256, 512, 1024})
            for (int items : {1, 2, 4}) {
                schedule::KernelGroup g = g0;
                g.set("threads", threads);
                g.set("items", items);
                widestVector(g);
                add(g);
                // Narrower vectors too: they rank the model's latency and issue terms (calibration).
                for (int vec : {2, 1}) {
                    g.set("vector", vec);
                    add(g);
                }
            }
        break;
    case schedule::Strategy::Generic: break;
    }
    return out;
}

/// The second round of a GEMM sweep: the epilogue's `store` (scalar, copy) for the FP32
/// (math=simt) candidates of the first round, which all store `vector`, that ran within `margin`
/// of its fastest (the fastest `cap` of them). How a store takes the accumulators changes ptxas's
/// register allocation of the whole k-loop, by -6% to +7% in run 14 and differently for kernels
/// that differ only in block_k or stages, which no static rule predicts; only a candidate within
/// that reach of the fastest can become the winner, so only those are timed again.
std::vector<schedule::Schedule> storeVariants(const schedule::Problem &problem,
                                              const std::vector<schedule::Schedule> &timed,
                                              const std::vector<double> &ms, double margin, std::size_t cap)
{
    std::vector<std::size_t> order;
    double fastest = 1e30;
    for (std::size_t i = 0; i < timed.size(); ++i)
        if (ms[i] < 1e30 && timed[i].groups.size() == 1 && timed[i].groups.front().strategy == schedule::Strategy::Gemm &&
            timed[i].groups.front().value("math") == 0 && timed[i].groups.front().value("store") == 0) {
            order.push_back(i);
            fastest = std::min(fastest, ms[i]);
        }
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return ms[x] < ms[y]; });
    std::erase_if(order, [&](std::size_t i) { return ms[i] > fastest * (1 + margin); });
    order.resize(std::min(order.size(), cap));
    std::vector<schedule::Schedule> out;
    if (order.empty())
        return out;
    const schedule::KernelGroup &g0 = timed[order.front()].groups.front(); // (every candidate has its ops)
    auto analysis = schedule::analyzeGroup(problem.graph, g0.ops, g0.strategy);
    if (!analysis.ok())
        return out;
    for (std::size_t i : order) {
        for (int store : {1, 2}) {
            schedule::Schedule s = timed[i];
            s.groups.front().set("store", store);
            if (schedule::checkGroup(*analysis, s.groups.front(), problem).empty())
                out.push_back(std::move(s));
        }
    }
    return out;
}

/// A KEY=VALUE of `where` that no candidate has (a decision the sweep leaves at one value, such as
/// `store` or `erf`) is set on every candidate whose main group allows it; the others are dropped
/// (keepWhere would drop them all). Malformed or unknown entries are left to keepWhere.
void setUnsweptValues(const schedule::Problem &problem, std::vector<schedule::Schedule> &candidates,
                      const std::vector<std::string> &where)
{
    if (candidates.empty() || candidates.front().groups.size() != 1)
        return;
    const schedule::KernelGroup &g0 = candidates.front().groups.front();
    auto analysis = schedule::analyzeGroup(problem.graph, g0.ops, g0.strategy);
    if (!analysis.ok())
        return;
    for (const auto &w : where) {
        const std::size_t eq = w.find('=');
        const schedule::DecisionDef *d =
            eq == std::string::npos ? nullptr : schedule::findDecision(g0.strategy, w.substr(0, eq));
        if (!d)
            continue;
        auto v = d->parseValue(w.substr(eq + 1));
        if (!v || std::any_of(candidates.begin(), candidates.end(),
                              [&](const schedule::Schedule &s) { return s.groups.front().value(d->key) == *v; }))
            continue;
        std::vector<schedule::Schedule> set;
        for (schedule::Schedule s : candidates) {
            s.groups.front().set(d->key, *v);
            if (schedule::checkGroup(*analysis, s.groups.front(), problem).empty() &&
                std::none_of(set.begin(), set.end(), [&](const schedule::Schedule &o) { return o.groups == s.groups; }))
                set.push_back(std::move(s));
        }
        candidates = std::move(set);
    }
}

/// Keeps the candidates whose main group has every KEY=VALUE of `where` (values by number or name).
/// An unknown key is an error only when it is no decision of the candidates' strategy at all.
Result<Ok> keepWhere(std::vector<schedule::Schedule> &candidates, const std::vector<std::string> &where)
{
    if (candidates.empty())
        return Ok{};
    const schedule::Strategy strategy = candidates.front().groups.front().strategy;
    std::vector<std::pair<std::string, int>> wanted;
    bool applies = true;
    for (const auto &w : where) {
        const std::size_t eq = w.find('=');
        if (eq == std::string::npos || eq == 0)
            return Error{ErrorKind::InvalidArgument, "'" + w + "' is not KEY=VALUE"};
        const std::string key = w.substr(0, eq);
        const schedule::DecisionDef *d = schedule::findDecision(strategy, key);
        if (!d) {
            bool known = false;
            for (schedule::Strategy st : schedule::kAllStrategies)
                known = known || schedule::findDecision(st, key);
            if (!known)
                return Error{ErrorKind::InvalidArgument, "'" + key + "' is not a decision of any strategy"};
            applies = false;
            continue;
        }
        auto v = d->parseValue(w.substr(eq + 1));
        if (!v)
            return v.error();
        wanted.emplace_back(key, *v);
    }
    std::erase_if(candidates, [&](const schedule::Schedule &s) {
        if (!applies)
            return true;
        return std::any_of(wanted.begin(), wanted.end(),
                           [&](const auto &kv) { return s.groups.front().value(kv.first) != kv.second; });
    });
    return Ok{};
}

} // namespace

Result<std::vector<schedule::Schedule>> caseCandidates(const std::string &id, const schedule::Problem &problem,
                                                       const SweepOptions &options)
{
    auto base = schedule::defaultSchedule(problem);
    if (!base)
        return Error{ErrorKind::Unsupported, id + ": no schedule: " + base.error().message};
    auto candidates = sweep(problem, *base, options.quick);
    if (!options.where.empty()) {
        setUnsweptValues(problem, candidates, options.where);
        auto kept = keepWhere(candidates, options.where);
        if (!kept)
            return Error{ErrorKind::InvalidArgument, id + ": --where: " + kept.error().message};
    }
    if (options.maxCandidates > 0 && candidates.size() > static_cast<std::size_t>(options.maxCandidates))
        candidates.resize(static_cast<std::size_t>(options.maxCandidates));
    return candidates;
}

std::vector<schedule::Schedule> secondRound(const schedule::Problem &problem,
                                             const std::vector<schedule::Schedule> &timed,
                                             const std::vector<double> &ms, const SweepOptions &options)
{
    std::vector<schedule::Schedule> out = storeVariants(problem, timed, ms, 0.05, 48);
    if (!options.where.empty())
        (void)keepWhere(out, options.where); // (the keys were checked on the first round)
    return out;
}

} // namespace stitch::bench
