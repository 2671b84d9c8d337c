// The facts of one launch of the program as written: the lifter's symbolic thread (every load and
// store as a flat index over %bx.., %tx.., loop variables and sizes, with the path conditions under
// which it runs) replayed on sampled warps at the bound sizes, like AccessStreams.cpp replays a
// generated kernel's formulas.
//   CudaLiftDetail::accesses[launch] + launch plan + sizes -> KernelFacts (streams, lanes, FLOPs, bytes)
// Sampled warps: up to 8 warps, evenly spaced, of the first, the middle and the next block (their
// addresses, the share of warps that issue each access), plus every warp of the last block (the tail).
#include "core/rubric/AsWrittenRubric.h"

#include "core/ir/DType.h"
#include "core/ir/ExprUtil.h"
#include "core/rubric/Dimensions.h"
#include "core/rubric/StreamBuilder.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace stitch::rubric::detail {

namespace fl = frontend::cudalift;

namespace {

struct Shape {
    std::array<std::int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
    std::int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
    int threads() const { return static_cast<int>(block[0] * block[1] * block[2]); }
};

/// Binds the thread and block variables of flat thread `t` of flat block `b`, then every loop
/// variable at its first iteration (a stride loop's: the thread's own start).
class LaneBinder {
public:
    LaneBinder(const Shape &shape, const fl::KernelEffects &fx, const ir::SizeBindings &sizes)
        : m_shape(shape), m_fx(fx), m_sizes(sizes)
    {
    }

    VarMap bind(std::int64_t b, std::int64_t t) const
    {
        VarMap v;
        const auto &g = m_shape.grid;
        const auto &k = m_shape.block;
        v[fl::blockVar(0)] = b % g[0];
        v[fl::blockVar(1)] = (b / g[0]) % g[1];
        v[fl::blockVar(2)] = b / (g[0] * g[1]);
        v[fl::threadVar(0)] = t % k[0];
        v[fl::threadVar(1)] = (t / k[0]) % k[1];
        v[fl::threadVar(2)] = t / (k[0] * k[1]);
        // Loop bounds may use outer loop variables: a few passes bind every one that evaluates.
        for (int pass = 0; pass < 3; ++pass)
            for (const auto &[name, lv] : m_fx.loopVars) {
                if (v.count(name))
                    continue;
                auto st = m_fx.strideLoops.find(name);
                auto lo = evalIndex(st != m_fx.strideLoops.end() ? st->second.start : lv.lo, m_sizes, v);
                if (lo)
                    v[name] = *lo;
            }
        return v;
    }

    /// Iterations of loop variable `name` for the thread bound in `v` (1 when it does not evaluate).
    double trips(const std::string &name, const VarMap &v) const
    {
        auto it = m_fx.loopVars.find(name);
        if (it == m_fx.loopVars.end())
            return 1;
        auto hi = evalIndex(it->second.hi, m_sizes, v);
        auto st = m_fx.strideLoops.find(name);
        if (st != m_fx.strideLoops.end()) {
            auto start = evalIndex(st->second.start, m_sizes, v);
            auto step = evalIndex(st->second.step, m_sizes, v);
            if (!hi || !start || !step || *step <= 0)
                return 1;
            return static_cast<double>(std::max<std::int64_t>(0, ceilDiv(*hi - *start, *step)));
        }
        auto lo = evalIndex(it->second.lo, m_sizes, v);
        return lo && hi ? static_cast<double>(std::max<std::int64_t>(0, *hi - *lo)) : 1;
    }

    double tripsOf(const std::vector<std::string> &vars, const VarMap &v) const
    {
        double n = 1;
        for (const auto &name : vars)
            n *= trips(name, v);
        return n;
    }

private:
    const Shape &m_shape;
    const fl::KernelEffects &m_fx;
    const ir::SizeBindings &m_sizes;
};

bool holds(const std::vector<ir::Expr> &guard, const ir::SizeBindings &sizes, const VarMap &v)
{
    for (const auto &g : guard) {
        auto c = evalIndex(g, sizes, v);
        if (c && *c == 0)
            return false;
    }
    return true;
}

std::string where(const SourceLocation &l)
{
    return l.file + ":" + std::to_string(l.line) + ":" + std::to_string(l.column);
}

/// An index as the source names its variables: blockIdx.x for %bx, a loop's own name for %L...
std::string pretty(std::string text, const fl::KernelEffects &fx)
{
    std::vector<std::pair<std::string, std::string>> names;
    for (const auto &[name, lv] : fx.loopVars)
        names.emplace_back(name, lv.hint.empty() ? name : lv.hint);
    for (int d = 0; d < 3; ++d) {
        names.emplace_back(fl::blockVar(d), std::string("blockIdx.") + "xyz"[d]);
        names.emplace_back(fl::threadVar(d), std::string("threadIdx.") + "xyz"[d]);
    }
    // Longest first, so %L12 does not rewrite the front of %L123.
    std::sort(names.begin(), names.end(), [](const auto &a, const auto &b) { return a.first.size() > b.first.size(); });
    for (const auto &[from, to] : names)
        for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
            text.replace(at, from.size(), to);
    return text;
}

/// The loop variables an access depends on (its trips multiply its requests).
std::vector<std::string> loopVarsOf(const fl::AccessRecord &a, const fl::KernelEffects &fx)
{
    std::set<std::string> names;
    auto scan = [&](const ir::Expr &e) {
        for (const auto &n : ir::collectIterVars(e))
            if (fx.loopVars.count(n))
                names.insert(n);
    };
    scan(a.index);
    for (const auto &g : a.guard)
        scan(g);
    return {names.begin(), names.end()};
}

/// Floating-point work one thread does for `e`: {flops, special-function calls}, counted like
/// countFlops (special functions 4, pow 8) except that a select runs one arm (the larger counted)
/// and integer or boolean arithmetic (indices, conditions) is not floating-point work.
std::pair<double, double> threadFlops(const ir::Expr &e)
{
    if (!e.defined())
        return {0, 0};
    if (e.kind() == ir::ExprKind::Cast)
        return threadFlops(e.operand(0));
    if (e.kind() == ir::ExprKind::Select) {
        auto a = threadFlops(e.operand(1)), b = threadFlops(e.operand(2));
        return a.first >= b.first ? a : b;
    }
    if (e.kind() != ir::ExprKind::Unary && e.kind() != ir::ExprKind::Binary)
        return {0, 0};
    if (!ir::isFloat(e.dtype())) {
        double f = 0, s = 0;
        for (const auto &o : e.operands()) {
            auto [fo, so] = threadFlops(o);
            f += fo;
            s += so;
        }
        return {f, s};
    }
    // The node itself as countFlops counts it (operands excluded), then its operands this way.
    std::pair<double, double> own = countFlops(e);
    for (const auto &o : e.operands()) {
        auto [fo, so] = countFlops(o);
        own.first -= fo;
        own.second -= so;
    }
    for (const auto &o : e.operands()) {
        auto [fo, so] = threadFlops(o);
        own.first += fo;
        own.second += so;
    }
    return own;
}

} // namespace

AsWrittenLaunch describeLaunch(const fl::CudaLiftDetail &lift, std::size_t launch, const ir::SizeBindings &sizes,
                               const ArchLimits &arch)
{
    AsWrittenLaunch out;
    const fl::LaunchPlan &plan = lift.launches.at(launch);
    KernelFacts &k = out.facts;
    k.name = plan.kernel;
    k.strategy = schedule::Strategy::Generic;
    const SourceLocation at = launch < lift.program.launches.size() ? lift.program.launches[launch].location
                                                                    : SourceLocation{lift.program.sourceFile, 1, 1};

    // The launch configuration at the bound sizes.
    Shape shape;
    std::string unbound;
    for (std::size_t d = 0; d < 3; ++d) {
        auto g = ir::evaluateSizeExpr(plan.grid[d], sizes);
        auto b = ir::evaluateSizeExpr(plan.block[d], sizes);
        if (!g.ok() && unbound.empty())
            unbound = "grid " + plan.grid[d].toString() + ": " + g.error().message;
        if (!b.ok() && unbound.empty())
            unbound = "block " + plan.block[d].toString() + ": " + b.error().message;
        if (g.ok())
            shape.grid[d] = *g;
        if (b.ok())
            shape.block[d] = *b;
    }
    if (!unbound.empty()) {
        out.launchConfig = "<<<?>>> (" + unbound + ")";
        out.mapping = "none: the launch configuration does not evaluate";
        for (const char *dim : {"coalescing", "divergence", "bank_conflicts", "arithmetic_intensity", "occupancy",
                                "hard_limits"})
            out.missing.push_back({dim, "the launch configuration does not evaluate at the known sizes: " + unbound +
                                            " (define the size, e.g. #define N 1024, or pass --size)",
                                   at});
        return out;
    }
    out.shapeKnown = true;
    k.blocks = shape.blocks();
    k.threads = shape.threads();
    auto dims = [](const std::array<std::int64_t, 3> &a) {
        return "(" + std::to_string(a[0]) + "," + std::to_string(a[1]) + "," + std::to_string(a[2]) + ")";
    };
    out.launchConfig = "<<<" + dims(shape.grid) + ", " + dims(shape.block) + ">>>";
    (void)arch;

    // No record of the body: every address-derived dimension is missing, located at the refusal.
    const auto &rec = launch < lift.accesses.size() ? lift.accesses[launch] : std::nullopt;
    if (!rec) {
        std::string why = "the lifter could not evaluate the kernel body";
        SourceLocation loc = at;
        for (const auto &o : lift.program.opaque)
            if (o.name == plan.kernel) {
                why = o.why.message;
                loc = o.why.location;
                break;
            }
        for (const char *dim : {"coalescing", "divergence", "bank_conflicts", "arithmetic_intensity"})
            out.missing.push_back({dim, "no access model: " + why, loc});
        out.mapping = "none: the kernel body was not lifted (" + why + " at " + where(loc) + ")";
        return out;
    }
    const fl::KernelEffects &fx = rec->effects;
    std::string recordNote;
    if (rec->recordOnly)
        for (const auto &o : lift.program.opaque)
            if (o.name == plan.kernel) {
                recordNote = "addresses from a record-only evaluation (the graph cannot hold this kernel: " +
                             o.why.message + " at " + where(o.why.location) + ")";
                break;
            }
    const LaneBinder lanes(shape, fx, sizes);

    // Sampled warps, their lanes bound once: up to 8 warps (evenly spaced) of the first, the middle
    // and the next block; the last block's warps apart, for the tail.
    const std::int64_t warpsPerBlock = ceilDiv(k.threads, 32);
    const double warps = static_cast<double>(k.blocks * warpsPerBlock);
    struct Warp {
        std::vector<VarMap> lanes; ///< bound variables per lane (fewer than 32 at a block's end)
    };
    auto bindWarp = [&](std::int64_t block, std::int64_t w) {
        Warp warp;
        for (std::int64_t l = 0; l < 32 && w * 32 + l < k.threads; ++l)
            warp.lanes.push_back(lanes.bind(block, w * 32 + l));
        return warp;
    };
    std::vector<Warp> sampled, lastBlock;
    {
        std::set<std::int64_t> blocks{0, k.blocks / 2, std::min(k.blocks / 2 + 1, k.blocks - 1)};
        const std::int64_t step = std::max<std::int64_t>(1, warpsPerBlock / 8);
        for (std::int64_t b : blocks)
            for (std::int64_t w = 0; w < warpsPerBlock; w += step)
                sampled.push_back(bindWarp(b, w));
        for (std::int64_t w = 0; w < warpsPerBlock; ++w)
            lastBlock.push_back(bindWarp(k.blocks - 1, w));
    }

    // One stream per distinct access (the symbolic thread may meet one twice, e.g. a loop's body).
    std::set<std::string> seen;
    double laneWeighted = 0, laneWeight = 0, tailWeighted = 0;
    std::vector<std::string> unevaluated;
    for (const fl::AccessRecord &a : fx.accesses) {
        std::string key = std::to_string(a.shared) + std::to_string(a.store) + std::to_string(a.target) + "|" +
                          a.index.toString();
        for (const auto &g : a.guard)
            key += "|" + g.toString();
        if (!seen.insert(key).second)
            continue;
        AccessStream st;
        st.shared = a.shared;
        st.store = a.store;
        st.bytesPerLane = a.elementBytes;
        st.what = std::string(a.store ? "store " : "load ") + a.name + "[" + pretty(a.index.toString(), fx) + "]" +
                  (a.shared ? " (shared)" : "") + " at " + std::to_string(a.where.line) + ":" +
                  std::to_string(a.where.column);
        const std::int64_t base = a.shared ? 0 : (static_cast<std::int64_t>(a.target) + 1) << 40;
        bool failed = false;
        int issuing = 0;
        double active = 0;
        const VarMap *first = nullptr;
        for (const Warp &warp : sampled) {
            std::vector<std::int64_t> addrs(32, -1);
            int on = 0;
            for (std::size_t l = 0; l < warp.lanes.size(); ++l) {
                const VarMap &v = warp.lanes[l];
                if (!holds(a.guard, sizes, v))
                    continue;
                auto idx = evalIndex(a.index, sizes, v);
                if (!idx) {
                    failed = true;
                    break;
                }
                if (!first)
                    first = &v;
                addrs[l] = base + *idx * a.elementBytes;
                ++on;
            }
            if (failed)
                break;
            if (on > 0) {
                st.warps.push_back(std::move(addrs));
                ++issuing;
                active += on / 32.0;
            }
        }
        if (failed) {
            unevaluated.push_back(st.what);
            continue;
        }
        if (issuing == 0) // no sampled lane runs it (e.g. a branch only the tail takes)
            continue;
        const double issuingShare = static_cast<double>(issuing) / static_cast<double>(sampled.size());
        st.requests = warps * issuingShare * lanes.tripsOf(loopVarsOf(a, fx), *first);
        // The last block's warps: how many of its lanes run this access (the tail of the grid).
        double tailOn = 0, tailWarps = 0;
        for (const Warp &warp : lastBlock) {
            int on = 0;
            for (const VarMap &v : warp.lanes)
                on += holds(a.guard, sizes, v) ? 1 : 0;
            if (on > 0) {
                tailOn += on / 32.0;
                tailWarps += 1;
            }
        }
        const double interior = active / issuing;
        const double tail = tailWarps > 0 ? tailOn / tailWarps : interior;
        laneWeighted += st.requests * interior;
        tailWeighted += st.requests * tail;
        laneWeight += st.requests;
        k.streams.push_back(std::move(st));
    }
    for (const auto &w : unevaluated)
        k.boundary += (k.boundary.empty() ? "" : "; ") + std::string("not replayed (index does not evaluate): ") + w;

    // Lanes: interior blocks as sampled, the last block as it is.
    const double nb = static_cast<double>(std::max<std::int64_t>(k.blocks, 1));
    const double interior = laneWeight > 0 ? laneWeighted / laneWeight : 1;
    const double last = laneWeight > 0 ? tailWeighted / laneWeight : 1;
    k.usefulLaneFraction = (interior * (nb - 1) + last) / nb;
    k.boundary = std::to_string(k.blocks) + " blocks of " + std::to_string(k.threads) + " threads; lanes running each "
                 "memory instruction: " + rubric::percent(interior) + " in sampled warps, " + rubric::percent(last) + " in the last block" +
                 (k.boundary.empty() ? "" : "; " + k.boundary) + (recordNote.empty() ? "" : "; " + recordNote);
    for (const fl::BranchRecord &b : fx.branches) {
        double idle = 0;
        int counted = 0;
        for (const Warp &warp : sampled) {
            int yes = 0, no = 0;
            for (const VarMap &v : warp.lanes) {
                if (!holds(b.guard, sizes, v))
                    continue;
                auto c = evalIndex(b.condition, sizes, v);
                if (!c)
                    continue;
                (*c ? yes : no) += 1;
            }
            if (yes + no == 0)
                continue;
            ++counted;
            if (yes > 0 && no > 0) // both paths run, one after the other, each with its own lanes
                idle += 1 - std::max(yes, no) / 32.0;
        }
        if (counted > 0 && idle / counted > 1e-9)
            k.branches.push_back({"if (" + b.text + ") at " + std::to_string(b.where.line) + ":" +
                                      std::to_string(b.where.column) + " splits the lanes of a warp",
                                  idle / counted});
    }
    if (k.streams.empty() && !fx.accesses.empty()) {
        for (const char *dim : {"coalescing", "divergence", "bank_conflicts", "arithmetic_intensity"})
            out.missing.push_back({dim, "no access index evaluates at the known sizes", at});
        out.mapping = "none: no access replays";
        return out;
    }

    // FLOPs per thread from the stored values and the folding loops, times the threads that store.
    const VarMap thread0 = lanes.bind(0, 0); // loop trips: the first thread's
    double flopsPerThread = 0, specialPerThread = 0;
    for (const fl::StoreEffect &s : fx.stores) {
        auto [f, sp] = threadFlops(s.value);
        double trips = 1;
        for (const auto &lv : s.mapLoops)
            trips *= lanes.trips(lv.name, thread0);
        flopsPerThread += f * trips;
        specialPerThread += sp * trips;
    }
    for (const fl::PendingReduction &p : fx.pending) {
        auto [f, sp] = threadFlops(p.body);
        double trips = 1;
        for (const auto &lv : p.vars) {
            auto lo = evalIndex(lv.lo, sizes, thread0), hi = evalIndex(lv.hi, sizes, thread0);
            trips *= lo && hi ? static_cast<double>(std::max<std::int64_t>(0, *hi - *lo)) : 1.0;
        }
        flopsPerThread += (f + 1) * trips;
        specialPerThread += sp * trips;
    }
    // The threads that store anything (a guard such as i < n leaves the rest idle), interior and last block.
    auto stores = [&](const VarMap &v) {
        for (const auto &a : fx.accesses)
            if (a.store && !a.shared && holds(a.guard, sizes, v))
                return true;
        return false;
    };
    double interiorOn = 0, interiorAll = 0, lastOn = 0;
    for (const Warp &warp : sampled)
        for (const VarMap &v : warp.lanes) {
            interiorAll += 1;
            interiorOn += stores(v) ? 1 : 0;
        }
    for (const Warp &warp : lastBlock)
        for (const VarMap &v : warp.lanes)
            lastOn += stores(v) ? 1 : 0;
    const double working = (nb - 1) * k.threads * (interiorAll > 0 ? interiorOn / interiorAll : 1) + lastOn;
    k.flops = flopsPerThread * working;
    k.specialOps = specialPerThread * working;

    // Unique bytes: each buffer touched once (its allocation), traffic: the sectors the streams fetch.
    std::set<std::string> touched;
    for (const auto &a : fx.accesses)
        if (!a.shared)
            touched.insert(a.name);
    for (const auto &b : lift.buffers) {
        if (!touched.count(b.name))
            continue;
        auto n = ir::evaluateSizeExpr(b.elements, sizes);
        if (n.ok())
            k.uniqueBytes += static_cast<double>(*n) * ir::dtypeSize(b.dtype);
    }
    for (const auto &s : k.streams) {
        if (s.shared)
            k.sharedTrafficBytes += bankWavefronts(s, arch.sharedMemoryBanks).wavefronts * 128.0 * s.requests;
        else
            k.trafficBytes += sectorsPerRequest(s).sectors * 32.0 * s.requests;
    }
    if (k.uniqueBytes <= 0) // buffers of unknown size: what the streams fetch is all that is known
        k.uniqueBytes = k.trafficBytes;
    k.trafficBytes = std::max(k.trafficBytes, k.uniqueBytes);

    // The generic strategy: one thread per output element, no shared memory; its loops, if any, run
    // over a reduction (the generated generic kernel of a reduction op: one output, a k-loop).
    bool shared = false;
    for (const auto &s : k.streams)
        shared = shared || s.shared;
    std::set<int> storedBuffers;
    for (const auto &s : fx.stores)
        storedBuffers.insert(s.buffer);
    bool mapLoops = false;
    for (const auto &s : fx.stores)
        mapLoops = mapLoops || !s.mapLoops.empty();
    const bool reductionLoops = !fx.loopVars.empty() || !fx.pending.empty();
    if (shared)
        out.mapping = "none: shared-memory tiles (the model's tiled strategies are generated code, not this kernel's)";
    else if (mapLoops || !fx.strideLoops.empty())
        out.mapping = "none: each thread computes several outputs in a loop (the generic strategy is one thread "
                      "per output element)";
    else if (fx.stores.size() != 1)
        out.mapping = "none: each thread stores " + std::to_string(fx.stores.size()) +
                      " elements (the generic strategy stores one)";
    else {
        out.genericMapping = true;
        out.mapping = reductionLoops ? "generic: one thread per output element, looping over its reduction"
                                     : "generic: one thread per output element";
        // As the generated generic kernel's facts (AccessStreams.cpp): one load in flight per thread.
        k.ilp = 1;
        k.bytesInFlightPerThread = 4;
        k.fmaShare = reductionLoops ? 0.2 : 0.1;
        k.memoryRounds = 1;
    }
    return out;
}

} // namespace stitch::rubric::detail
