// `stitchcuda bench`: the performance benchmark of issue 4 on the local GPU. For each case it
// explores the schedule space (a curated sweep of legal schedules, timed briefly), then verifies
// the fastest against the generic (one thread per output) program run on the GPU with fresh
// random inputs and poisoned outputs, and times it properly (warm-up, CUDA events, median of many,
// L2 flushed before every run). bench/report.py joins the JSON with the PyTorch/cuBLAS baselines.
#include "BenchCases.h"
#include "Commands.h"
#include "Parallel.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/ir/Programs.h"
#include "core/rubric/Calibration.h"
#include "core/rubric/MeasuredDimensions.h"
#include "core/rubric/PerfModel.h"
#include "core/runner/Runner.h"
#include "core/schedule/Space.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>

namespace stitch::cli {

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
                            if (math == 2) { // and the same tile copied by a producer warpgroup
                                schedule::KernelGroup p = g;
                                p.set("copy", 2);
                                add(p);
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
            // copy=producer.
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
                                            }
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
    for (std::size_t i : order) {
        const schedule::KernelGroup &g = timed[i].groups.front();
        auto analysis = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
        if (!analysis.ok())
            continue;
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

struct Built {
    codegen::GeneratedProgram program;
    runner::LaunchPlan plan;
    std::vector<char> cubin;
    cuda::CompileResult compiled; ///< PTX and ptxas figures, for the model's prediction
};

Result<Built> build(const schedule::Problem &problem, const schedule::Schedule &s, const std::string &arch)
{
    auto program = codegen::generateProgram(problem, s);
    if (!program)
        return program.error();
    auto plan = codegen::toLaunchPlan(*program, problem.graph, problem.sizes);
    if (!plan)
        return plan.error();
    auto compiled = codegen::compileGenerated(program->source, program->name + ".cu", arch);
    if (!compiled)
        return compiled.error();
    std::vector<char> cubin = std::move(compiled->cubin);
    return Built{std::move(*program), std::move(*plan), std::move(cubin), std::move(*compiled)};
}

/// Every op in its own generic kernel, float64 sums: the independent reference the bench verifies
/// against (the reference's own rounding stays far below the FP32 bound).
schedule::Schedule referenceSchedule(const schedule::Problem &problem)
{
    schedule::Schedule s = rubric::genericSchedule(problem);
    for (auto &g : s.groups)
        g.set("accumulate", 1);
    return s;
}

std::string scheduleText(const schedule::Schedule &s)
{
    std::string out;
    for (const auto &g : s.groups)
        out += (out.empty() ? "" : "; ") + schedule::describe(g);
    return out;
}

/// One CUPTI metric run of a timed candidate (no timing, no verification, zero inputs like the
/// sweep) and each kernel's rubric dimensions, static beside measured, as rows of `out`. False when
/// the run gave no counters (`why` says why); a failed run is reported and counts as given.
bool profileDimensions(runner::Runner &runner, const Built &b, const rubric::ProgramFacts &facts, const BenchCase &c,
                       int candidate, bool first, std::ostream &out, std::string &why)
{
    runner::RunRequest request;
    request.job.module = b.cubin;
    request.job.plan = b.plan;
    for (auto &buffer : request.job.plan.buffers)
        if (buffer.role == runner::BufferRole::Input)
            buffer.init.kind = runner::BufferInit::Kind::Zero;
    request.job.measure = {false, false, 0, 1, false, false, true};
    request.job.deadlineMs = 120000;
    auto r = runner.run(std::move(request));
    if (!r) {
        std::fprintf(stderr, "  %s:%s candidate %d: metric run failed: %s\n", c.family.c_str(), c.shape.c_str(),
                     candidate, r.error().message.c_str());
        return true;
    }
    if (!r->metrics || !r->metrics->available) {
        why = r->metrics ? r->metrics->message : "no metrics in the result";
        return false;
    }
    const runner::MetricsReport &m = *r->metrics;
    if (first)
        std::fprintf(stderr, "hardware metrics: chip %s, %d passes per kernel%s%s\n", m.chip.c_str(), m.passes,
                     m.message.empty() ? "" : "; ", m.message.c_str());
    for (const auto &km : m.kernels) {
        if (km.launch < 0 || static_cast<std::size_t>(km.launch) >= facts.kernels.size())
            continue;
        const rubric::KernelFacts &k = facts.kernels[static_cast<std::size_t>(km.launch)];
        for (auto &comparison : rubric::compareWithMetrics(k, facts, km.values))
            rubric::writeDimensionRow(out, {c.family, c.shape, candidate, k.name, std::move(comparison)});
    }
    return true;
}

/// Times the candidates of the sweep one by one (briefly, on zero-filled inputs) and, with
/// --calibration, writes each one's prediction and (with --metrics) its CUPTI dimensions.
class SweepTimer {
public:
    SweepTimer(runner::Runner &runner, const BenchOptions &options) : m_runner(runner), m_options(options)
    {
        // Calibration data for the rubric's performance model: every timed candidate with the model's
        // prediction (stitchcuda calibrate computes the rank correlation per case).
        if (!options.calibration.empty()) {
            m_calibration.open(options.calibration);
            rubric::writeCalibrationHeader(m_calibration);
        }
        // Static rubric dimensions beside their CUPTI counterparts, per kernel (docs/RUBRIC.md).
        if (options.metrics) {
            m_dimensions.open(rubric::dimensionsPathFor(options.calibration));
            rubric::writeDimensionHeader(m_dimensions);
        }
    }

    /// The candidate's median time in ms, or 1e30 when it did not build or run (counted in failures()).
    double time(const BenchCase &c, const schedule::Problem &problem, const schedule::Schedule &candidate,
                const Result<Built> &built, std::size_t index)
    {
        const std::string id = c.family + ":" + c.shape;
        if (!built) {
            std::fprintf(stderr, "  %s candidate %zu does not build: %s\n", id.c_str(), index, built.error().message.c_str());
            ++m_failures;
            return 1e30;
        }
        runner::RunRequest request;
        request.job.module = built->cubin;
        request.job.plan = built->plan;
        // The sweep only ranks candidates: zero-filled inputs are set on the device, so a 1 GiB
        // input is not drawn on the host for every candidate. The winner runs on random data.
        for (auto &b : request.job.plan.buffers)
            if (b.role == runner::BufferRole::Input)
                b.init.kind = runner::BufferInit::Kind::Zero;
        request.job.measure = {false, true, 2, m_options.quick ? 3 : 5, true, false, false};
        request.job.deadlineMs = 20000;
        auto r = m_runner.run(std::move(request));
        if (!r || !r->timing) {
            std::fprintf(stderr, "  %s candidate %zu failed: %s\n", id.c_str(), index,
                         r ? "no timing" : r.error().message.c_str());
            ++m_failures;
            return 1e30;
        }
        if (m_options.verbose)
            std::fprintf(stderr, "  %-28s %9.4f ms  %s\n", id.c_str(), r->timing->medianMs, scheduleText(candidate).c_str());
        if (m_calibration.is_open())
            record(c, problem, candidate, *built, static_cast<int>(index), r->timing->medianMs);
        return r->timing->medianMs;
    }

    int failures() const { return m_failures; }

private:
    void record(const BenchCase &c, const schedule::Problem &problem, const schedule::Schedule &candidate,
                const Built &built, int index, double measuredMs)
    {
        rubric::CalibrationRow row{c.family, c.shape, index, measuredMs, -1, scheduleText(candidate), {}};
        rubric::ProgramFacts facts;
        auto predicted = m_model.predictProgram(problem, built.program, &built.compiled, &facts);
        if (predicted) {
            row.predictedMs = predicted->ms;
            row.facts = rubric::calibrationFacts(facts, *predicted);
        }
        rubric::writeCalibrationRow(m_calibration, row);
        if (!m_metricsAvailable || !predicted)
            return;
        // Counters refused on the first candidate, or on 3 in a row: said once, then timing only.
        std::string why;
        if (profileDimensions(m_runner, built, facts, c, index, m_metricsFirst, m_dimensions, why)) {
            m_metricsRefused = 0;
        } else if (m_metricsFirst || ++m_metricsRefused >= 3) {
            std::fprintf(stderr, "hardware metrics are not available (%s); the bench carries on without them\n", why.c_str());
            m_metricsAvailable = false;
        } else {
            std::fprintf(stderr, "  %s:%s candidate %d: no metrics: %s\n", c.family.c_str(), c.shape.c_str(), index,
                         why.c_str());
        }
        m_metricsFirst = false;
    }

    runner::Runner &m_runner;
    const BenchOptions &m_options;
    const rubric::PerfModel m_model;
    std::ofstream m_calibration, m_dimensions;
    bool m_metricsAvailable = m_options.metrics, m_metricsFirst = true;
    int m_metricsRefused = 0;
    int m_failures = 0;
};

} // namespace

/// The case's candidates: the sweep around its default schedule, narrowed by --where and capped by
/// --max-candidates. An InvalidArgument error is the user's (a bad --where).
Result<std::vector<schedule::Schedule>> caseCandidates(const std::string &id, const schedule::Problem &problem,
                                                       const BenchOptions &options)
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

bool selected(const BenchOptions &options, const std::string &id)
{
    return options.only.empty() || std::any_of(options.only.begin(), options.only.end(),
                                               [&](const std::string &o) { return id.find(o) != std::string::npos; });
}

/// --list: the candidates each selected case would time, without a GPU.
int listCandidates(const BenchOptions &options)
{
    const ArchLimits *limits = ArchDatabase::builtin().arch(options.arch);
    if (!limits) {
        std::cerr << "stitchcuda: architecture " << options.arch << " is not in the database\n";
        return 2;
    }
    for (auto &c : allCases()) {
        const std::string id = c.family + ":" + c.shape;
        if (!selected(options, id))
            continue;
        schedule::Problem problem{c.graph, c.sizes, *limits, c.precision};
        auto candidates = caseCandidates(id, problem, options);
        if (!candidates) {
            std::cerr << candidates.error().message << "\n";
            if (candidates.error().kind == ErrorKind::InvalidArgument)
                return 2;
            continue;
        }
        std::cout << id << ": " << candidates->size() << " candidates\n";
        for (const auto &s : *candidates)
            std::cout << "  " << scheduleText(s) << "\n";
        const auto &c0 = candidates->empty() ? nullptr : &candidates->front().groups.front();
        if (c0 && c0->strategy == schedule::Strategy::Gemm &&
            std::any_of(candidates->begin(), candidates->end(), [](const schedule::Schedule &s) {
                return s.groups.front().value("math") == 0 && s.groups.front().value("store") == 0;
            }))
            std::cout << "  then store=scalar and store=copy of the math=simt candidates within 5% of the fastest (at "
                         "most 48), where legal\n";
    }
    return 0;
}

int runBench(const BenchOptions &options)
{
    if (options.list)
        return listCandidates(options);
    if (options.metrics && options.calibration.empty()) {
        std::cerr << "stitchcuda: --metrics needs --calibration FILE (the dimensions go to FILE's .dimensions.csv)\n";
        return 2;
    }
    runner::WorkerOptions worker;
    worker.deviceOrdinal = options.device;
    runner::Runner runner(worker, nullptr);
    auto device = runner.device();
    if (!device) {
        std::cerr << "stitchcuda: no GPU: " << device.error().message << "\n";
        return 1;
    }
    const std::string arch = device->device.arch;
    const ArchLimits *limits = ArchDatabase::builtin().arch(arch);
    if (!limits) {
        std::cerr << "stitchcuda: architecture " << arch << " is not in the database\n";
        return 1;
    }
    std::fprintf(stderr, "bench on %s (%s)\n", device->device.name.c_str(), arch.c_str());
    nlohmann::json cases = nlohmann::json::array();
    int failures = 0;
    SweepTimer timer(runner, options);
    for (auto &c : allCases()) {
        const std::string id = c.family + ":" + c.shape;
        if (!selected(options, id))
            continue;
        schedule::Problem problem{c.graph, c.sizes, *limits, c.precision};
        auto found = caseCandidates(id, problem, options);
        if (!found) {
            std::fprintf(stderr, "%s\n", found.error().message.c_str());
            if (found.error().kind == ErrorKind::InvalidArgument)
                return 2;
            ++failures;
            continue;
        }
        std::vector<schedule::Schedule> candidates = std::move(*found);
        if (candidates.empty()) {
            std::fprintf(stderr, "%s: skipped, no candidate matches --where\n", id.c_str());
            continue;
        }
        // Compile candidates in parallel (NVRTC is thread-safe), then time them one by one.
        std::vector<Result<Built>> built;
        std::vector<double> times;
        auto timeFrom = [&](std::size_t first) {
            auto more = parallelMap(candidates.size() - first,
                                    [&](std::size_t j) { return build(problem, candidates[first + j], arch); });
            for (auto &b : more)
                built.push_back(std::move(b));
            for (std::size_t i = first; i < built.size(); ++i)
                times.push_back(timer.time(c, problem, candidates[i], built[i], i));
        };
        timeFrom(0);
        // Second round: the store variants of the fastest GEMMs (storeVariants), narrowed by --where.
        std::vector<schedule::Schedule> stores = storeVariants(problem, candidates, times, 0.05, 48);
        if (!options.where.empty())
            (void)keepWhere(stores, options.where); // (the keys were checked on the first round)
        if (!stores.empty()) {
            const std::size_t first = candidates.size();
            candidates.insert(candidates.end(), stores.begin(), stores.end());
            timeFrom(first);
        }
        const auto fastest = std::min_element(times.begin(), times.end());
        const int best = fastest == times.end() || *fastest >= 1e30 ? -1 : static_cast<int>(fastest - times.begin());
        if (best < 0)
            continue;
        // The winner: verified against the generic program on the GPU, then timed properly.
        auto reference = build(problem, referenceSchedule(problem), arch);
        if (!reference) {
            std::fprintf(stderr, "%s: reference does not build: %s\n", id.c_str(), reference.error().message.c_str());
            ++failures;
            continue;
        }
        runner::RunRequest request;
        request.job.module = built[static_cast<std::size_t>(best)]->cubin;
        request.job.plan = built[static_cast<std::size_t>(best)]->plan;
        request.job.reference = runner::GpuReference{reference->cubin, reference->plan, {}};
        request.job.measure = {true, true, 3, options.repeats, true, false, false};
        request.job.measure.settleMs = options.settleMs;
        request.job.precision =
            c.precision == schedule::Precision::TF32 ? runner::PrecisionPolicy::TF32 : runner::PrecisionPolicy::FP32;
        request.job.deadlineMs = 120000;
        auto r = runner.run(std::move(request));
        if (!r) {
            std::fprintf(stderr, "%s: final run failed: %s\n", id.c_str(), r.error().message.c_str());
            ++failures;
            continue;
        }
        const bool verified = r->verification && r->verification->verified;
        double relError = 0;
        if (r->verification)
            for (const auto &o : r->verification->outputs)
                relError = std::max(relError, o.relativeError);
        const auto &t = *r->timing;
        nlohmann::json j = {{"case", c.family},
                            {"shape", c.shape},
                            {"schedule", scheduleText(candidates[static_cast<std::size_t>(best)])},
                            {"candidates", candidates.size()},
                            {"median_ms", t.medianMs},
                            {"min_ms", t.minMs},
                            {"max_ms", t.maxMs},
                            {"verified", verified},
                            {"rel_error", relError},
                            {"settle_ms", options.settleMs},
                            {"tflops", c.flops > 0 ? nlohmann::json(c.flops / (t.medianMs * 1e-3) / 1e12) : nlohmann::json()},
                            {"gbps", c.flops > 0 ? nlohmann::json() : nlohmann::json(c.bytes / (t.medianMs * 1e-3) / 1e9)}};
        std::fprintf(stderr, "%-28s %9.4f ms [%.4f, %.4f]  %s  %s  rel %.2g  (%zu candidates)  %s\n", id.c_str(), t.medianMs,
                     t.minMs, t.maxMs,
                     c.flops > 0 ? (std::to_string(c.flops / (t.medianMs * 1e-3) / 1e12).substr(0, 6) + " TFLOP/s").c_str()
                                 : (std::to_string(c.bytes / (t.medianMs * 1e-3) / 1e9).substr(0, 7) + " GB/s").c_str(),
                     verified ? "verified" : "WRONG", relError, candidates.size(),
                     scheduleText(candidates[static_cast<std::size_t>(best)]).c_str());
        failures += verified ? 0 : 1;
        cases.push_back(j);
        if (!options.out.empty()) // after every case, so a time limit loses nothing measured
            std::ofstream(options.out) << nlohmann::json({{"device", device->device.name}, {"arch", arch}, {"cases", cases}}).dump(2)
                                       << "\n";
    }
    nlohmann::json out = {{"device", device->device.name}, {"arch", arch}, {"cases", cases}};
    std::cout << out.dump(2) << "\n";
    return failures + timer.failures() == 0 ? 0 : 1;
}

} // namespace stitch::cli
