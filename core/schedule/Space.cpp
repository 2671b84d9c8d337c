// The schedule space: which decision values a group may take (checkGroup, legalValues), what a
// group costs (groupResources), whole-schedule validation and enumeration. The strategies' own
// rules live in GemmSpace.cpp and RowSpace.cpp (SpaceRules.h).
#include "core/schedule/SpaceRules.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <random>
#include <set>

namespace stitch::schedule {

using namespace detail;

std::int64_t sizeValue(const ir::Expr &e, const Problem &p)
{
    auto v = ir::evaluateSizeExpr(e, p.sizes);
    return v.ok() ? *v : -1;
}

namespace {

/// threads_per_row > 0 (generic): 2-D tiles over [rows, innermost dimension], each row of the tile a
/// full row of threads.
void checkGenericTiles(const GroupAnalysis &a, const KernelGroup &g, const Problem &p, std::vector<Violation> &out)
{
    // threads_per_row's largest candidate (64) is threads' smallest: a block always holds a row.
    const int threads = g.value("threads"), tpr = g.value("threads_per_row");
    if (a.domain.size() < 2) {
        out.push_back({{"threads_per_row"}, "a one-dimensional domain is one row: the tile's other rows would stay idle"});
        return;
    }
    std::int64_t rows = 1;
    for (std::size_t d = 0; d + 1 < a.domain.size(); ++d)
        rows *= sizeValue(a.domain[d], p);
    if (threads / tpr > rows)
        out.push_back({{"threads_per_row", "threads"},
                       "tiles of " + std::to_string(threads / tpr) + " rows over " + std::to_string(rows) +
                           ": more rows per block than the domain has"});
}

} // namespace

std::vector<Violation> checkGroup(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem)
{
    std::vector<Violation> out;
    for (const auto &[key, value] : group.values) {
        const DecisionDef *d = findDecision(group.strategy, key);
        if (!d)
            out.push_back({{key}, "\"" + key + "\" is not a decision of strategy " + strategyName(group.strategy)});
        else if (std::find(d->candidates.begin(), d->candidates.end(), value) == d->candidates.end())
            out.push_back({{key}, kv(key, value) + " is not one of the offered values"});
    }
    for (const ir::Expr &e : analysis.domain)
        if (sizeValue(e, problem) < 0)
            out.push_back({{}, "the size " + e.toString() + " has no value"});
    if (!out.empty())
        return out;
    switch (group.strategy) {
    case Strategy::Gemm: checkGemm(analysis, group, problem, out); break;
    case Strategy::RowReduction: checkRows(analysis, group, problem, out); break;
    // Element-wise: any element count takes any vector width (a last, partial vector takes the
    // scalar path of generateElementwiseKernel; vector accesses stay aligned to each buffer's start).
    case Strategy::Elementwise:
    case Strategy::Generic:
        if (group.value("threads") > problem.arch.maxThreadsPerBlock)
            out.push_back({{"threads"}, "threads per block > the limit"});
        if (group.strategy == Strategy::Generic && group.value("threads_per_row") > 0)
            checkGenericTiles(analysis, group, problem, out);
        break;
    }
    if (group.strategy != Strategy::Generic && group.value("erf") == 1 && !computesOnePlusErf(analysis))
        out.push_back({{"erf"}, "erf=erfc changes 1 + erf(z) and 1 - erf(z) over float32, and this group computes neither"});
    return out;
}

std::vector<ValueOption> legalValues(const GroupAnalysis &analysis, const KernelGroup &group, const std::string &key,
                                     const Problem &problem)
{
    std::vector<ValueOption> out;
    const DecisionDef *d = findDecision(group.strategy, key);
    if (!d)
        return out;
    for (int v : d->candidates) {
        KernelGroup g = group;
        g.set(key, v);
        ValueOption o{v, d->valueText(v), true, {}};
        for (const Violation &violation : checkGroup(analysis, g, problem)) {
            if (std::find(violation.keys.begin(), violation.keys.end(), key) != violation.keys.end()) {
                o.legal = false;
                o.why = violation.message;
                break;
            }
        }
        out.push_back(std::move(o));
    }
    return out;
}

Result<GroupResources> groupResources(const GroupAnalysis &a, const KernelGroup &g, const Problem &p)
{
    GroupResources r;
    switch (g.strategy) {
    case Strategy::Gemm: {
        const GemmShape s = gemmShape(a, g);
        r.threadsPerBlock = s.threads();
        r.sharedBytes = s.shared();
        r.estimatedRegisters = s.registers();
        r.blocks = ceilDiv(sizeValue(a.domain[0], p), s.bm) * ceilDiv(sizeValue(a.domain[1], p), s.bn) * g.value("split_k");
        if (g.value("stream_k") == 1) { // the stream-K blocks, then one block per remaining tile
            const int sk = streamKBlocks(p.arch, g);
            r.blocks = sk + r.blocks - streamKTiles(r.blocks, sk);
        }
        break;
    }
    case Strategy::RowReduction: {
        const int tpr = g.value("threads_per_row"), rpb = g.value("rows_per_block");
        const std::int64_t rows = rowCount(a, p.sizes);
        r.threadsPerBlock = tpr * rpb;
        int rowOps = 0;
        for (const auto *op : a.ops)
            rowOps += op->reduction ? 1 : 0;
        const bool resident = g.value("grid") == 1;
        const int parity = rowStepped(g) ? 2 : 1; // shared slots alternate between row steps
        const int cluster = g.value("cluster");
        // exchange=push: per reduction and row of the block, two buffers of one float per cluster block
        // and their mbarriers; prefetch=bulk: one mbarrier per row of the block.
        const int exchangeBytes = cluster < 2                 ? 0
                                  : g.value("exchange") == 1 ? rowOps * rpb * 2 * (cluster * 4 + 8)
                                                             : parity * rowOps * 8;
        r.sharedBytes = parity * rowOps * rpb * std::max(tpr / 32, 1) * 8 + exchangeBytes +
                        (g.value("prefetch") == 3 ? rpb * 8 : 0) + rowStagingBytes(a, g, p.graph, p.sizes);
        const int data = g.value("cache") ? rowRegisters(a, g, p) : 8;
        r.estimatedRegisters = data + rowOverheadRegisters(data);
        r.blocks = (resident ? std::max(1, rowResidentGroups(p.arch, g, rows))
                             : ceilDiv(rows, std::int64_t(rpb) * g.value("row_steps"))) *
                   g.value("cluster");
        break;
    }
    case Strategy::Elementwise:
    case Strategy::Generic: {
        std::int64_t total = 1;
        for (const auto &e : a.domain)
            total *= sizeValue(e, p);
        const int threads = g.value("threads");
        const int perThread = g.strategy == Strategy::Elementwise ? g.value("vector") * g.value("items") : 1;
        r.threadsPerBlock = threads;
        r.estimatedRegisters = 32;
        r.blocks = g.strategy == Strategy::Generic ? genericBlocks(a, g, p)
                                                   : std::max<std::int64_t>(1, ceilDiv(total, std::int64_t(threads) * perThread));
        break;
    }
    }
    return r;
}

std::int64_t genericBlocks(const GroupAnalysis &a, const KernelGroup &g, const Problem &p)
{
    const int threads = g.value("threads"), tpr = g.value("threads_per_row");
    std::int64_t total = 1;
    for (const auto &e : a.domain)
        total *= std::max<std::int64_t>(sizeValue(e, p), 0);
    if (tpr <= 0 || a.domain.empty())
        return std::max<std::int64_t>(1, ceilDiv(total, std::int64_t(threads)));
    const std::int64_t inner = std::max<std::int64_t>(sizeValue(a.domain.back(), p), 0);
    const std::int64_t outer = inner > 0 ? total / inner : 0;
    return std::max<std::int64_t>(1, ceilDiv(inner, std::int64_t(tpr)) * ceilDiv(outer, std::int64_t(threads / tpr)));
}

Status validateSchedule(const Schedule &schedule, const Problem &problem)
{
    std::vector<Diagnostic> problems;
    auto add = [&](const std::string &message) {
        problems.push_back(Diagnostic{Severity::Error, SourceLocation{}, message});
    };
    if (schedule.arch != problem.arch.name)
        add("the schedule is for " + schedule.arch + ", the target is " + problem.arch.name);
    if (schedule.precision == Precision::TF32 && !problem.arch.tensorCoresTf32)
        add("precision tf32: " + problem.arch.name + " has no TF32 tensor cores");
    std::set<std::string> seenOps, seenNames;
    std::set<ir::TensorId> available;
    int lastStage = 0;
    for (const auto &t : problem.graph.tensors())
        if (!problem.graph.producer(t.id))
            available.insert(t.id);
    for (const KernelGroup &g : schedule.groups) {
        const std::string where = "group " + g.name;
        if (g.name.empty() || !std::all_of(g.name.begin(), g.name.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
            }) || std::isdigit(static_cast<unsigned char>(g.name[0])))
            add(where + ": the name must be a C identifier");
        if (!seenNames.insert(g.name).second)
            add(where + ": two groups have this name");
        for (const auto &op : g.ops)
            if (!seenOps.insert(op).second)
                add(where + ": op '" + op + "' is in more than one group");
        auto a = analyzeGroup(problem.graph, g.ops, g.strategy);
        if (!a.ok()) {
            add(where + " (" + strategyName(g.strategy) + "): " + a.error().message);
            continue;
        }
        // Kernels carried unchanged run between stages (ir::ComputeOp::stage): a group of an earlier
        // stage listed after one of a later stage would run on the wrong side of one.
        const int stage = a->ops.front()->stage;
        if (stage < lastStage)
            add(where + ": its ops run before a kernel carried unchanged that an earlier group runs after");
        lastStage = std::max(lastStage, stage);
        std::set<ir::TensorId> own;
        for (const auto *op : a->ops)
            own.insert(op->output.id);
        for (ir::TensorId t : a->reads)
            if (!available.contains(t) && !own.contains(t))
                add(where + ": reads " + problem.graph.tensor(t)->name + " before the group that computes it");
        for (const auto *op : a->ops)
            available.insert(op->output.id);
        for (const Violation &v : checkGroup(*a, g, problem)) {
            std::string keys;
            for (const auto &k : v.keys)
                keys += (keys.empty() ? "" : ", ") + k;
            add(where + (keys.empty() ? "" : " [" + keys + "]") + ": " + v.message);
        }
    }
    for (const auto &op : problem.graph.ops())
        if (!seenOps.contains(op.name))
            add("op '" + op.name + "' is in no group");
    for (const auto &name : seenOps)
        if (!problem.graph.findOp(name))
            add("op '" + name + "' is not in graph " + problem.graph.name());
    if (problems.empty())
        return Ok{};
    Error e = makeError(ErrorKind::InvalidArgument, "illegal schedule: " + problems.front().message);
    e.diagnostics = std::move(problems);
    return e;
}

std::size_t candidateCombinations(Strategy strategy)
{
    std::size_t n = 1;
    for (const auto &d : decisionDefs(strategy))
        n *= d.candidates.size();
    return n;
}

namespace {

/// Whether a rule broken by `g` names only decisions in `assigned`: then no choice of the others
/// mends it (a rule names every decision it reads in its Violation::keys;
/// SpaceEnumeration.PrunedWalkKeepsEveryLegalSchedule checks the walks against the full product).
bool brokenForGood(const GroupAnalysis &analysis, const KernelGroup &g, const Problem &problem,
                   const std::set<std::string> &assigned)
{
    for (const Violation &v : checkGroup(analysis, g, problem))
        if (!v.keys.empty() &&
            std::all_of(v.keys.begin(), v.keys.end(), [&](const std::string &k) { return assigned.contains(k); }))
            return true;
    return false;
}

/// Where a walk over `defs` stands: the values set so far and each decision's depth.
struct WalkState {
    const GroupAnalysis &analysis;
    const Problem &problem;
    const std::vector<DecisionDef> &defs;
    KernelGroup &g;
    std::set<std::string> &assigned;
    int *budget = nullptr;    ///< values left to try; the walk ends at 0
    bool backjump = false;    ///< skip the values of decisions a dead end does not name (see Walked)

    /// The depths (bits) of the decisions `keys` names, of those above `d`; a key of no depth here
    /// (none today) names them all, so the walk can only step back one decision.
    std::uint64_t depthsOf(const std::vector<std::string> &keys, std::size_t d) const
    {
        const std::uint64_t above = (std::uint64_t{1} << d) - 1;
        std::uint64_t bits = 0;
        for (const auto &k : keys) {
            auto it = std::find_if(defs.begin(), defs.end(), [&](const DecisionDef &def) { return def.key == k; });
            bits |= it == defs.end() ? above : std::uint64_t{1} << (it - defs.begin());
        }
        return bits & above;
    }
};

/// How a subtree of the walk ended: a leaf stopped it, the budget ran out, or it was searched
/// through; then `conflict` holds the depths above it whose values explain why it held no more
/// legal schedules (every depth above, once it held one).
struct Walked {
    bool stop = false;
    bool outOfBudget = false;
    std::uint64_t conflict = 0;
};

/// The pruned depth-first walk enumerateLegal, sampleLegal and completeGroup take: sets decision d
/// to each of `order(d)` in turn, skips a subtree once a broken rule names only set decisions, and
/// hands each complete legal schedule to `leaf`, stopping as soon as `leaf` returns true.
/// With `backjump` (conflict-directed backjumping), a subtree searched through for nothing whose
/// dead ends name none of decision d's own rules ends d's values too: another value of d leaves
/// the same dead ends. The leaves come in the same order as without it, after fewer values tried
/// (a GEMM's completion: hundreds instead of thousands); sampleLegal walks without it so that its
/// draws, which consume the random generator per decision visited, stay what they were.
template <class Order, class Leaf>
Walked prunedWalk(WalkState &w, std::size_t d, Order &&order, Leaf &&leaf)
{
    const std::vector<DecisionDef> &defs = w.defs;
    if (defs.empty()) // no decisions: the group as it is
        return {checkGroup(w.analysis, w.g, w.problem).empty() && leaf(w.g), false, 0};
    const bool wasAssigned = w.assigned.contains(defs[d].key);
    w.assigned.insert(defs[d].key);
    const bool last = d + 1 == defs.size();
    const std::uint64_t above = (std::uint64_t{1} << d) - 1;
    const std::uint64_t self = std::uint64_t{1} << d;
    Walked here;
    for (int v : order(d)) {
        if (w.budget && --*w.budget < 0) {
            here.outOfBudget = true;
            break;
        }
        w.g.set(defs[d].key, v);
        const std::vector<Violation> broken = checkGroup(w.analysis, w.g, w.problem);
        if (last) {
            if (broken.empty()) {
                if ((here.stop = leaf(w.g)))
                    break;
                here.conflict |= above;
            }
            for (const Violation &b : broken)
                here.conflict |= w.depthsOf(b.keys, d);
            continue;
        }
        bool dead = false;
        for (const Violation &b : broken)
            if (!b.keys.empty() && std::all_of(b.keys.begin(), b.keys.end(),
                                               [&](const std::string &k) { return w.assigned.contains(k); })) {
                dead = true;
                here.conflict |= w.depthsOf(b.keys, d);
            }
        if (dead)
            continue;
        const Walked child = prunedWalk(w, d + 1, order, leaf);
        if (child.stop || child.outOfBudget) {
            here.stop = child.stop;
            here.outOfBudget = child.outOfBudget;
            break;
        }
        if (w.backjump && !(child.conflict & self)) { // d's value is not to blame: no other value helps
            here.conflict = child.conflict;
            break;
        }
        here.conflict |= child.conflict & above;
    }
    if (!w.backjump)
        here.conflict = above;
    if (!wasAssigned)
        w.assigned.erase(defs[d].key);
    return here;
}

} // namespace
std::vector<KernelGroup> enumerateLegal(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem,
                                        std::size_t limit)
{
    // The decisions' values in their declared order: the order, and the first `limit`, are the full
    // product's.
    std::vector<KernelGroup> out;
    if (limit == 0)
        return out;
    const auto &defs = decisionDefs(group.strategy);
    KernelGroup g = group;
    std::set<std::string> assigned;
    WalkState w{analysis, problem, defs, g, assigned, nullptr, defs.size() < 64};
    prunedWalk(
        w, 0, [&](std::size_t d) -> const std::vector<int> & { return defs[d].candidates; },
        [&](const KernelGroup &leaf) {
            out.push_back(leaf);
            return out.size() >= limit;
        });
    return out;
}

std::vector<KernelGroup> sampleLegal(const GroupAnalysis &analysis, const KernelGroup &group, const Problem &problem,
                                     std::size_t count, std::uint32_t seed, const std::vector<std::string> &fixed)
{
    const auto &defs = decisionDefs(group.strategy);
    const std::set<std::string> fixedKeys(fixed.begin(), fixed.end());
    std::vector<KernelGroup> out;
    if (brokenForGood(analysis, group, problem, fixedKeys))
        return out; // the fixed values alone break a rule
    // Each decision's values that break no rule by themselves (with the fixed ones): math=tf32_wgmma
    // under fp32, say, is dropped here rather than found at the end of every walk.
    std::vector<std::vector<int>> values(defs.size());
    for (std::size_t d = 0; d < defs.size(); ++d) {
        if (fixedKeys.contains(defs[d].key)) {
            values[d] = {group.value(defs[d].key)};
            continue;
        }
        std::set<std::string> alone = fixedKeys;
        alone.insert(defs[d].key);
        for (int v : defs[d].candidates) {
            KernelGroup one = group;
            one.set(defs[d].key, v);
            if (!brokenForGood(analysis, one, problem, alone))
                values[d].push_back(v);
        }
    }
    std::mt19937 rng(seed);
    // One draw: the first legal leaf of a walk that tries each decision's values in a random order,
    // within a budget of tried values (a draw that wanders into a large illegal region gives up).
    auto shuffled = [&](std::size_t d) {
        std::vector<int> order = values[d];
        for (std::size_t i = order.size(); i > 1; --i) // Fisher-Yates on the generator's own output
            std::swap(order[i - 1], order[rng() % i]);
        return order;
    };
    auto legal = [](const KernelGroup &) { return true; }; // the first legal leaf ends the draw
    constexpr int kDrawBudget = 20000;
    std::set<std::string> seen;
    // Small spaces repeat draws: give up after a few draws in a row bring nothing new.
    for (std::size_t misses = 0; out.size() < count && misses < 4 * count + 8;) {
        KernelGroup g = group;
        std::set<std::string> assigned = fixedKeys;
        int budget = kDrawBudget;
        WalkState w{analysis, problem, defs, g, assigned, &budget, false};
        if (prunedWalk(w, 0, shuffled, legal).stop && seen.insert(describe(g)).second) {
            out.push_back(g);
            misses = 0;
        } else {
            ++misses;
        }
    }
    return out;
}

std::optional<KernelGroup> completeGroup(const GroupAnalysis &analysis, const KernelGroup &group,
                                         const Problem &problem, const std::vector<std::string> &fixed, int budget)
{
    const auto &defs = decisionDefs(group.strategy);
    const std::set<std::string> fixedKeys(fixed.begin(), fixed.end());
    if (checkGroup(analysis, group, problem).empty())
        return group;
    if (brokenForGood(analysis, group, problem, fixedKeys))
        return std::nullopt;
    // The current value first: a completion changes as little as it can.
    std::vector<std::vector<int>> orders(defs.size());
    for (std::size_t d = 0; d < defs.size(); ++d) {
        const int current = group.value(defs[d].key);
        orders[d].push_back(current);
        if (fixedKeys.contains(defs[d].key))
            continue;
        for (int v : defs[d].candidates)
            if (v != current)
                orders[d].push_back(v);
    }
    std::optional<KernelGroup> found;
    KernelGroup g = group;
    std::set<std::string> assigned = fixedKeys;
    WalkState w{analysis, problem, defs, g, assigned, &budget, defs.size() < 64};
    prunedWalk(
        w, 0, [&](std::size_t d) -> const std::vector<int> & { return orders[d]; },
        [&](const KernelGroup &leaf) {
            found = leaf;
            return true;
        });
    return found;
}

} // namespace stitch::schedule
