// The memory streams, lane usage and branches of the row_reduction, elementwise and generic
// kernels, replayed from the same thread -> element formulas the code generators emit
// (core/codegen/RowKernel.cpp, Kernels.cpp); gemm: GemmStreams.cpp.
//   GroupAnalysis + decisions + sizes -> describeAccesses -> KernelFacts::streams, branches
// Each stream is sampled on two warps (the first block's first warp and a middle block's middle
// warp) at concrete sizes; every tensor gets its own 256-byte-aligned base address, as cudaMalloc gives.
#include "core/rubric/StreamBuilder.h"

#include <set>

namespace stitch::rubric::detail {

void StreamBuilder::row()
{
    const auto &g = facts.kernel->group;
    const int tpr = g.value("threads_per_row"), rpb = g.value("rows_per_block"), vec = g.value("vector"),
              cluster = g.value("cluster");
    const bool cache = g.value("cache") == 1, sharedReduce = g.value("reduce") == 1;
    const bool resident = g.value("grid") == 1, bulk = g.value("bulk_store") == 1;
    std::vector<std::int64_t> rowExt;
    std::int64_t rows = 1;
    for (int d = 0; d < a.rowRank; ++d) {
        rowExt.push_back(evalSize(a.domain[static_cast<std::size_t>(d)], sizes()));
        rows *= rowExt.back();
    }
    // grid=resident: `groups` blocks (clusters) walk the rows with their count as the stride, so a
    // block's rows are b, b + groups, ... and the busiest walks `steps` of them (RowKernel.cpp).
    const std::int64_t groups = resident ? std::max(1, schedule::rowResidentGroups(problem.arch, g, rows)) : 0;
    const int steps =
        resident ? static_cast<int>(std::max<std::int64_t>(1, ceilDiv(rows, groups * rpb))) : g.value("row_steps");
    const std::int64_t cols = evalSize(a.domain.back(), sizes());
    const std::int64_t items = std::max<std::int64_t>(1, ceilDiv(cols, std::int64_t(tpr) * vec * cluster));
    const std::int64_t span = cluster > 1 ? cols / cluster : cols;
    std::vector<const ir::ComputeOp *> rowOps;
    for (const auto *op : a.ops)
        if (op->reduction)
            rowOps.push_back(op);
    const std::vector<const ir::ComputeOp *> storedEw = schedule::rowStoredOps(a);
    const int passes = cache ? 1 : static_cast<int>(rowOps.size() + (storedEw.empty() ? 0 : 1));
    const double rowWarps = static_cast<double>(rows) * std::max(tpr / 32, 1) * cluster;
    const double perRowIter = rowWarps * static_cast<double>(items);

    struct Lane {
        bool active;
        std::int64_t row, c0;
        std::vector<std::int64_t> rowIdx;
    };
    auto laneOf = [&](std::int64_t block, int t) {
        Lane l;
        const int lane = t % tpr, sub = t / tpr;
        l.row = (block / cluster) * rpb * (resident ? 1 : steps) + sub; // the block's first step
        const std::int64_t begin = (block % cluster) * span;
        l.c0 = begin + static_cast<std::int64_t>(lane) * vec;
        l.active = l.row < rows && l.c0 < begin + span;
        l.rowIdx = unflatten(l.row, rowExt);
        return l;
    };
    auto rowVars = [&](const ir::ComputeOp &op, const Lane &l, std::int64_t c) {
        VarMap v;
        for (int d = 0; d < a.rowRank && d < static_cast<int>(op.domain.size()); ++d)
            v[op.domain[static_cast<std::size_t>(d)].name] = l.rowIdx[static_cast<std::size_t>(d)];
        v[op.reduction ? op.reduction->vars[0].name : op.domain.back().name] = c;
        return v;
    };
    for (ir::TensorId id : a.rowInputs) {
        const ir::Tensor &t = tensor(id);
        const TensorLayout l = layoutOf(t, sizes());
        const bool vector = vec > 1 && t.dtype == ir::DType::F32;
        const int bytes = vector ? vec * 4 : l.elementBytes;
        add("load " + t.name + " along the row: " + std::to_string(bytes) + " B per lane" +
                (cache ? ", once (kept in registers)" : ", once per pass (" + std::to_string(passes) + ")"),
            false, false, bytes, perRowIter * passes * (vector ? 1 : vec),
            [&, l](std::int64_t block, int th) -> std::int64_t {
                const Lane ln = laneOf(block, th);
                return ln.active ? l.base + (ln.row * cols + ln.c0) * l.elementBytes : -1;
            });
    }
    // prefetch=shared (value 2): the next row's inputs go global -> shared by cp.async, then shared ->
    // registers when the block reaches that row (core/codegen/RowKernel.cpp). Every row is counted
    // (a block's first row is loaded directly: a small over-count).
    const bool staged = g.value("prefetch") == 2;
    if (staged)
        for (ir::TensorId id : a.rowInputs) {
            const ir::Tensor &t = tensor(id);
            const int bytes = vec > 1 && t.dtype == ir::DType::F32 ? vec * 4 : ir::dtypeSize(t.dtype);
            const double requests = perRowIter * (bytes == vec * 4 ? 1 : vec);
            auto at = [=](std::int64_t, int th) -> std::int64_t { return static_cast<std::int64_t>(th) * bytes; };
            add("cp.async " + t.name + " (next row) to shared memory: " + std::to_string(bytes) + " B per lane", true,
                true, bytes, requests, at);
            add("read " + t.name + " from shared memory (the staged row)", true, false, bytes, requests, at);
        }
    // prefetch=bulk (value 3): the last quarter of each thread's items of the next row come from
    // shared memory, copied there by cp.async.bulk (counted with the loads above, at the same addresses).
    if (g.value("prefetch") == 3)
        for (ir::TensorId id : a.rowInputs)
            add("read " + tensor(id).name + " from shared memory (prefetch=bulk: the last quarter of the items)", true,
                false, vec * 4, perRowIter / 4,
                [=](std::int64_t, int th) -> std::int64_t { return static_cast<std::int64_t>(th % tpr) * vec * 4; });
    // column_inputs=shared: each block copies its span of the per-column vectors once, and the rows
    // read them from shared memory (RowKernel.cpp, sharedSetup and columnRead).
    const std::vector<ir::TensorId> sharedColumns =
        g.value("column_inputs") == 1 ? schedule::rowColumnInputs(a, problem.graph) : std::vector<ir::TensorId>{};
    std::set<ir::TensorId> columnVectors;
    for (const auto *op : a.ops) {
        for (const auto &r : globalReads(*op, true, true)) {
            const auto id = r.tensor().id;
            if (std::find(a.rowInputs.begin(), a.rowInputs.end(), id) != a.rowInputs.end())
                continue;
            // A per-column vector (gamma[j]) read at the column: the generator loads `vector`
            // columns at once, once per pass that uses it (RowKernel.cpp, columnRead).
            const ir::Tensor &t = tensor(id);
            if (vec > 1 && schedule::readsColumnVector(a, problem.graph, *op, r)) {
                if (!columnVectors.insert(id).second)
                    continue;
                const TensorLayout l = layoutOf(t, sizes());
                if (std::find(sharedColumns.begin(), sharedColumns.end(), id) != sharedColumns.end()) {
                    const int threads = tpr * rpb;
                    add("copy " + t.name + "'s span to shared memory, once per block", false, false, vec * 4,
                        static_cast<double>(facts.blocks) * static_cast<double>(ceilDiv(span, std::int64_t(threads) * vec)) *
                            std::max(threads / 32, 1),
                        [&, l, threads](std::int64_t block, int th) -> std::int64_t {
                            return th < threads ? l.base + ((block % cluster) * span + std::int64_t(th) * vec) * 4 : -1;
                        });
                    add("read " + t.name + " from shared memory per column (column_inputs=shared)", true, false, vec * 4,
                        perRowIter, [=](std::int64_t, int th) -> std::int64_t {
                            return static_cast<std::int64_t>(th % tpr) * vec * 4;
                        });
                    continue;
                }
                add("load " + t.name + " per column: " + std::to_string(vec * 4) + " B per lane", false, false,
                    vec * 4, perRowIter, [&, l](std::int64_t block, int th) -> std::int64_t {
                        const Lane ln = laneOf(block, th);
                        return ln.active ? l.base + ln.c0 * l.elementBytes : -1;
                    });
                continue;
            }
            add("read " + r.toString(), false, false, ir::dtypeSize(r.tensor().dtype), perRowIter * vec,
                [&, op, r](std::int64_t block, int th) -> std::int64_t {
                    const Lane ln = laneOf(block, th);
                    return ln.active ? readAddress(r, rowVars(*op, ln, ln.c0)) : -1;
                });
        }
    }
    for (const auto *op : storedEw) {
        const ir::Tensor &t = tensor(op->output.id);
        const TensorLayout l = layoutOf(t, sizes());
        const bool vector = vec > 1 && t.dtype == ir::DType::F32 && t.shape.rank() == a.rowRank + 1;
        const int bytes = vector ? vec * 4 : l.elementBytes;
        if (bulk) // bulk_store=on: the threads write the stage; the copy engine writes the same bytes out
            add("write " + t.name + " to shared memory (bulk_store: this block's part of the row), " +
                    std::to_string(bytes) + " B per lane",
                true, true, bytes, perRowIter,
                [=](std::int64_t, int th) -> std::int64_t { return static_cast<std::int64_t>(th % tpr) * bytes; });
        add("store " + t.name + " along the row" + (bulk ? " by cp.async.bulk from shared memory" : "") + ": " +
                std::to_string(bytes) + " B per lane",
            false, true, bytes,
            perRowIter * (vector ? 1 : vec), [&, l](std::int64_t block, int th) -> std::int64_t {
                const Lane ln = laneOf(block, th);
                return ln.active ? l.base + (ln.row * cols + ln.c0) * l.elementBytes : -1;
            });
    }
    for (const auto *op : rowOps) {
        if (!a.isStored(op->output.id))
            continue;
        const TensorLayout l = layoutOf(tensor(op->output.id), sizes());
        add("store " + tensor(op->output.id).name + " (one lane per row)", false, true, l.elementBytes,
            static_cast<double>(rows), [&, l](std::int64_t block, int th) -> std::int64_t {
                const Lane ln = laneOf(block, th);
                return ln.active && th % tpr == 0 && block % cluster == 0 ? l.base + ln.row * l.elementBytes : -1;
            });
    }
    // red_[ops][rows_per_block][slots]: the cross-warp (or tree) reduction through shared memory.
    const int warpsPerRow = std::max(tpr / 32, 1);
    const int slots = sharedReduce ? tpr : warpsPerRow;
    const int blockWarps = std::max(facts.threads / 32, 1);
    const double blockCount = static_cast<double>(facts.blocks) * steps; // each step reduces again
    const int accBytes = rowOps.empty() ? 4 : ir::dtypeSize(rowOps.front()->output.dtype);
    int treeSteps = 0;
    for (int s = tpr / 2; s > 0; s >>= 1)
        ++treeSteps;
    if (!rowOps.empty() && (sharedReduce || warpsPerRow > 1)) {
        const double ops = static_cast<double>(rowOps.size());
        auto slot = [=](int sub, int i) { return (static_cast<std::int64_t>(sub) * slots + i) * accBytes; };
        if (sharedReduce) {
            add("red_ write: one slot per lane", true, true, accBytes, blockCount * blockWarps * ops,
                [=](std::int64_t, int t) -> std::int64_t { return slot(t / tpr, t % tpr); });
            add("red_ tree read at lane_ + s_", true, false, accBytes, blockCount * blockWarps * ops * treeSteps,
                [=](std::int64_t, int t) -> std::int64_t {
                    const int lane = t % tpr, s = tpr / 2;
                    return lane < s ? slot(t / tpr, lane + s) : -1;
                });
        } else {
            add("red_ write: lane 0 of each warp", true, true, accBytes, blockCount * blockWarps * ops,
                [=](std::int64_t, int t) -> std::int64_t { return t % 32 == 0 ? slot(t / tpr, (t % tpr) >> 5) : -1; });
            add("red_ read: every lane reads each warp's partial (broadcast)", true, false, accBytes,
                blockCount * blockWarps * ops * warpsPerRow,
                [=](std::int64_t, int t) -> std::int64_t { return slot(t / tpr, 0); });
        }
    }

    const double slotsPerRow = static_cast<double>(tpr) * vec * items * cluster;
    // grid=resident: a block past the last row skips the step whole (steps_ is per block).
    const double rowSlots =
        resident ? static_cast<double>(rows) : static_cast<double>(ceilDiv(rows, std::int64_t(rpb) * steps)) * rpb * steps;
    // Lanes idle inside a warp that has elements cost issue slots (divergence). A warp with no
    // element in a pass skips it whole, and rows past the end are whole warps too: those cost a
    // slot, not divergence (the H200's active-lanes counter agrees, docs/RUBRIC.md).
    const std::int64_t lanesWithWork = ceilDiv(span, std::int64_t(vec));
    double activeLanes = 0, executedLanes = 0, idleWarps = 0;
    for (std::int64_t i = 0; i < items; ++i) {
        const std::int64_t lanes = std::clamp<std::int64_t>(lanesWithWork - i * tpr, 0, tpr);
        activeLanes += static_cast<double>(lanes);
        executedLanes += 32.0 * static_cast<double>(ceilDiv(lanes, std::int64_t(32)));
        idleWarps += warpsPerRow - static_cast<double>(ceilDiv(lanes, std::int64_t(32)));
    }
    const double mainUseful = executedLanes > 0 ? activeLanes / executedLanes : 1.0;
    const double idleWarpShare = idleWarps / (static_cast<double>(items) * warpsPerRow);
    double treeUseful = 1;
    if (sharedReduce && treeSteps > 0) {
        double sum = 0;
        for (int s = tpr / 2; s > 0; s >>= 1)
            sum += std::min(1.0, static_cast<double>(s) / std::min(tpr, 32));
        treeUseful = sum / treeSteps;
    }
    // Useful lanes weighted by the instructions that run them (the same estimate as the issue term
    // below): the element work at mainUseful, a shared tree at treeUseful, and the warp shuffles,
    // cluster exchange and row set-up with every lane of the warp (the H200's active-lanes counter
    // weighs them the same way, docs/RUBRIC.md).
    const int reductions = static_cast<int>(rowOps.size());
    const double perElement = static_cast<double>(a.ops.size()) * 3 + 2;
    const double elementInstructions = static_cast<double>(items) * vec * perElement * (cache ? 1 : passes);
    const double treeInstructions = sharedReduce ? reductions * 6.0 * treeSteps : 0.0;
    const double fullLaneInstructions =
        40.0 / steps +
        reductions * (5 * 4 + (warpsPerRow > 1 ? 12 + 2 * warpsPerRow : 0) + (cluster > 1 ? 10 + 4 * cluster : 0));
    facts.usefulLaneFraction = (mainUseful * elementInstructions + treeUseful * treeInstructions + fullLaneInstructions) /
                               (elementInstructions + treeInstructions + fullLaneInstructions);
    facts.boundary = std::to_string(rows) + " rows of " + std::to_string(cols) + " on " + std::to_string(tpr) +
                     " threads x " + std::to_string(vec) + " x " + std::to_string(items) + " items per row" +
                     (cluster > 1 ? " x " + std::to_string(cluster) + " blocks" : "");
    if (mainUseful < 1 - 1e-9)
        facts.branches.push_back({"c0_ < end_: the row's last pass leaves lanes of a warp idle (" + std::to_string(cols) +
                                      " of " + std::to_string(static_cast<long long>(slotsPerRow)) + " slots)",
                                  1 - mainUseful});
    if (idleWarpShare > 1e-9)
        facts.boundary += "; " + std::to_string(static_cast<int>(idleWarpShare * 100 + 0.5)) +
                          " % of the warp passes have no element (whole warps skip them: no divergence, a wasted slot)";
    if (rowSlots > static_cast<double>(rows))
        facts.branches.push_back(
            {"row_ < rows: the last block has rows past the end", 1 - static_cast<double>(rows) / rowSlots});
    if (sharedReduce && treeSteps > 0)
        facts.branches.push_back(
            {"if (lane_ < s_): shared-memory tree, half the lanes idle each step", 1 - treeUseful});
    if (!rowOps.empty())
        facts.branches.push_back({"if (lane_ == 0): one lane stores the row's result", 31.0 / 32.0 * 0.01});
    facts.ilp = static_cast<double>(cache ? items * vec : vec);
    facts.bytesInFlightPerThread = std::max<double>(4, a.rowInputs.size() * vec * 4.0 * (cache ? items : 1));
    facts.fmaShare = 0.25;
    // One pass after the other: each pass's loads, then each reduction's barriers (a shared tree
    // syncs once per step, warp partials twice, a cluster once more per reduction and at the end).
    // With row_steps a block walks `steps` rows and prefetches the next while reducing this one:
    // the round trips overlap, the barriers and instructions repeat per row.
    facts.memoryRounds = passes;
    for (ir::TensorId id : a.rowInputs)
        facts.rowRereadBytes += static_cast<double>(passes - 1) * static_cast<double>(rows) * static_cast<double>(cols) *
                                ir::dtypeSize(tensor(id).dtype);
    facts.rowSteps = std::max(steps, 1);
    // bulk_store=on: one barrier per piece of the stage, and one per row before writing it again.
    const std::int64_t bulkPieces = bulk ? items / schedule::rowBulkItemsPerPiece(static_cast<int>(items)) : 0;
    facts.blockBarriers = steps * reductions * (sharedReduce ? treeSteps + 1 : warpsPerRow > 1 ? 2 : 0) +
                          (staged ? steps : 0) + // the staged row is complete (wait_group, __syncthreads)
                          static_cast<int>(steps * (bulkPieces + (bulk && schedule::rowStepped(g) ? 1 : 0)));
    // exchange=push: the blocks meet by pushes to mbarriers, with a cluster barrier only at the start
    // and the end of the kernel.
    facts.clusterBarriers = cluster <= 1 ? 0 : g.value("exchange") == 1 ? 2 : steps * (reductions + 1);
    facts.instructionsPerWarp = steps * (elementInstructions + treeInstructions + fullLaneInstructions);
}

void StreamBuilder::elementwise()
{
    const auto &g = facts.kernel->group;
    const int threads = g.value("threads"), vec = g.value("vector"), items = g.value("items");
    std::vector<std::int64_t> ext;
    std::int64_t total = 1;
    for (const auto &e : a.domain) {
        ext.push_back(evalSize(e, sizes()));
        total *= ext.back();
    }
    auto contiguous = [&](const ir::Tensor &t) {
        if (t.shape.rank() != static_cast<int>(a.domain.size()))
            return false;
        for (std::size_t d = 0; d < a.domain.size(); ++d)
            if (!t.shape[d].equals(a.domain[d]))
                return false;
        return true;
    };
    auto atPoint = [](const ir::Expr &r, const ir::ComputeOp &op) {
        bool at = r.operands().size() == op.domain.size();
        for (std::size_t d = 0; at && d < op.domain.size(); ++d)
            at = r.operands()[d].kind() == ir::ExprKind::IterVar && r.operands()[d].name() == op.domain[d].name;
        return at;
    };
    const double warpIters = static_cast<double>(facts.blocks) * std::max(threads / 32, 1) * items;
    auto first = [&](std::int64_t block, int t) { return (block * items * threads + t) * std::int64_t(vec); };
    std::set<ir::TensorId> vectorDone, loaded;
    for (const auto *op : a.ops) {
        for (const auto &r : globalReads(*op, true, false)) {
            const ir::Tensor &t = tensor(r.tensor().id);
            loaded.insert(t.id);
            const bool vector = vec > 1 && t.dtype == ir::DType::F32 && contiguous(t) && atPoint(r, *op);
            if (vector) {
                if (!vectorDone.insert(t.id).second)
                    continue;
                const TensorLayout l = layoutOf(t, sizes());
                add("load " + t.name + ": " + std::to_string(vec * 4) + " B per lane, consecutive", false, false,
                    vec * 4, warpIters, [&, l](std::int64_t block, int th) -> std::int64_t {
                        const std::int64_t e = first(block, th);
                        return e < total ? l.base + e * 4 : -1;
                    });
                continue;
            }
            add("read " + r.toString(), false, false, ir::dtypeSize(t.dtype), warpIters * vec,
                [&, op, r](std::int64_t block, int th) -> std::int64_t {
                    const std::int64_t e = first(block, th);
                    if (e >= total)
                        return -1;
                    const auto idx = unflatten(e, ext);
                    VarMap v;
                    for (std::size_t d = 0; d < op->domain.size() && d < idx.size(); ++d)
                        v[op->domain[d].name] = idx[d];
                    return readAddress(r, v);
                });
        }
    }
    for (ir::TensorId id : a.stored) {
        const ir::Tensor &t = tensor(id);
        const bool vector = vec > 1 && t.dtype == ir::DType::F32 && contiguous(t);
        const TensorLayout l = layoutOf(t, sizes());
        const int bytes = vector ? vec * 4 : l.elementBytes;
        add("store " + t.name + ": " + std::to_string(bytes) + " B per lane", false, true, bytes,
            warpIters * (vector ? 1 : vec), [&, l](std::int64_t block, int th) -> std::int64_t {
                const std::int64_t e = first(block, th);
                return e < total ? l.at(unflatten(e, ext)) : -1;
            });
    }
    const double launched = static_cast<double>(facts.blocks) * threads * items * vec;
    facts.usefulLaneFraction = std::min(1.0, static_cast<double>(total) / std::max(1.0, launched));
    facts.boundary = std::to_string(total) + " elements on " + std::to_string(facts.blocks) + " blocks x " +
                     std::to_string(threads) + " threads x " + std::to_string(items) + " x " + std::to_string(vec);
    if (facts.usefulLaneFraction < 1 - 1e-9)
        facts.branches.push_back({"if (e_ >= total_) return: the last block's tail", 1 - facts.usefulLaneFraction});
    facts.ilp = items * vec;
    // The items loop returns early past the end, so the compiler keeps each item's loads behind the
    // previous item's guard: one item's loads are in flight at a time (every tensor read, vector or
    // not), and the items are round trips one after the other (the H200's times: items 2 and 4 ran
    // no faster than 1 at the same vector width).
    facts.bytesInFlightPerThread = std::max<double>(4, static_cast<double>(loaded.size()) * vec * 4.0);
    facts.memoryRounds = items;
    facts.fmaShare = 0.25;
    facts.instructionsPerWarp = 20 + static_cast<double>(items) * vec * (static_cast<double>(a.ops.size()) * 3 + 2);
}

namespace {

/// The select conditions on the way from `e` to each occurrence of `read` (by its text): one path
/// per occurrence, each a list of (condition, the branch taken is "then"). A C ternary evaluates one
/// branch, so a read under it runs only on the lanes whose conditions choose its side.
void guardPaths(const ir::Expr &e, const std::string &read, std::vector<std::pair<ir::Expr, bool>> &path,
                std::vector<std::vector<std::pair<ir::Expr, bool>>> &out)
{
    if (!e.defined())
        return;
    if (e.kind() == ir::ExprKind::Read && e.toString() == read) {
        out.push_back(path);
        return;
    }
    if (e.kind() == ir::ExprKind::Select) {
        guardPaths(e.operand(0), read, path, out);
        for (int side = 1; side <= 2; ++side) {
            path.emplace_back(e.operand(0), side == 1);
            guardPaths(e.operand(static_cast<std::size_t>(side)), read, path, out);
            path.pop_back();
        }
        return;
    }
    for (const auto &o : e.operands())
        guardPaths(o, read, path, out);
}

} // namespace

void StreamBuilder::generic()
{
    const ir::ComputeOp &op = *a.ops.front();
    const auto &g = facts.kernel->group;
    const int tpr = op.domain.empty() ? 0 : g.value("threads_per_row");
    std::vector<std::int64_t> ext;
    std::int64_t total = 1;
    for (const auto &v : op.domain) {
        ext.push_back(evalSize(v.extent, sizes()));
        total *= ext.back();
    }
    // threads_per_row > 0: a block is a tile of tpr columns of the innermost dimension by
    // threads / tpr rows of the others flattened, tiles x fastest (Kernels.cpp, generateGenericKernel).
    const std::int64_t cols = ext.empty() ? 1 : ext.back();
    const std::int64_t rows = cols > 0 ? total / cols : 0;
    const int rpb = tpr > 0 ? facts.threads / tpr : 0;
    const std::int64_t tilesX = tpr > 0 ? ceilDiv(cols, std::int64_t(tpr)) : 0;
    std::vector<std::int64_t> rowExt(ext.begin(), ext.empty() ? ext.end() : ext.end() - 1);
    auto point = [&](std::int64_t block, int t, VarMap &vars) {
        std::vector<std::int64_t> idx;
        if (tpr > 0) {
            const std::int64_t col = (block % tilesX) * tpr + t % tpr, row = (block / tilesX) * rpb + t / tpr;
            if (col >= cols || row >= rows)
                return false;
            idx = unflatten(row, rowExt);
            idx.push_back(col);
        } else {
            const std::int64_t flat = block * facts.threads + t;
            if (flat >= total)
                return false;
            idx = unflatten(flat, ext);
        }
        for (std::size_t d = 0; d < op.domain.size(); ++d) {
            auto lb = evalIndex(op.domain[d].lowerBound, sizes(), {});
            vars[op.domain[d].name] = idx[d] + (lb ? *lb : 0);
        }
        // The element-wise ops after the first index the same element by their own names.
        for (std::size_t n = 1; n < a.ops.size(); ++n)
            for (std::size_t d = 0; d < a.ops[n]->domain.size() && d < op.domain.size(); ++d)
                vars[a.ops[n]->domain[d].name] = vars[op.domain[d].name];
        if (op.reduction)
            for (const auto &r : op.reduction->vars) {
                auto lb = evalIndex(r.lowerBound, sizes(), vars);
                vars[r.name] = lb ? *lb : 0;
            }
        return true;
    };
    // Warps with a lane at work: flat, one per 32 elements; tiled, the warps of each row band that
    // reach a column (a column tail's idle lanes still issue their warp).
    double warps = static_cast<double>(ceilDiv(total, 32));
    if (tpr > 0) {
        const std::int64_t warpsPerRowCols =
            tpr >= 32 ? (cols / tpr) * (tpr / 32) + ceilDiv(cols % tpr, std::int64_t(32)) : tilesX;
        warps = tpr >= 32 ? static_cast<double>(rows * warpsPerRowCols)
                          : static_cast<double>(warpsPerRowCols * ceilDiv(rows, std::int64_t(32 / tpr)));
    }
    // Reduction trip counts per lane: uniform unless the range uses the lane's own indices.
    double reduce = 1, tripIdle = 0;
    if (op.reduction) {
        for (const auto &r : op.reduction->vars) {
            std::vector<double> trips;
            for (auto [block, t0] : sampleWarps(facts.blocks, facts.threads))
                for (int l = 0; l < 32; ++l) {
                    VarMap v;
                    if (!point(block, t0 + l, v))
                        continue;
                    auto e = evalIndex(r.extent, sizes(), v);
                    trips.push_back(e ? static_cast<double>(std::max<std::int64_t>(*e, 0)) : 1.0);
                }
            if (trips.empty())
                continue;
            const double mx = *std::max_element(trips.begin(), trips.end());
            double mean = 0;
            for (double x : trips)
                mean += x;
            mean /= static_cast<double>(trips.size());
            reduce *= mean;
            if (mx > 0)
                tripIdle = std::max(tripIdle, 1 - mean / mx);
        }
    }
    // A read under a select runs on the lanes whose conditions choose its side (at the first step of
    // a reduction), and its requests are the warps with such a lane, over up to 256 warps of the grid.
    auto runs = [](const std::vector<std::vector<std::pair<ir::Expr, bool>>> &paths, const ir::SizeBindings &sz,
                   const VarMap &v) {
        for (const auto &path : paths) {
            bool all = true;
            for (const auto &[cond, then] : path) {
                const auto c = evalIndex(cond, sz, v);
                all = all && (!c || (*c != 0) == then);
            }
            if (all)
                return true;
        }
        return false;
    };
    const std::int64_t launchedWarps = facts.blocks * std::max(facts.threads / 32, 1);
    auto warpShare = [&](const std::function<bool(std::int64_t, int)> &active) {
        const std::int64_t samples = std::min<std::int64_t>(256, launchedWarps);
        int busy = 0, seen = 0;
        for (std::int64_t s = 0; s < samples; ++s) {
            const std::int64_t w = s * launchedWarps / samples;
            const std::int64_t block = w / std::max(facts.threads / 32, 1);
            const int first = static_cast<int>(w % std::max(facts.threads / 32, 1)) * 32;
            bool any = false, anyPoint = false;
            for (int l = 0; l < 32 && first + l < facts.threads; ++l) {
                VarMap v;
                if (!point(block, first + l, v))
                    continue;
                anyPoint = true;
                any = any || active(block, first + l);
            }
            seen += anyPoint;
            busy += any;
        }
        return seen > 0 ? static_cast<double>(busy) / seen : 1.0;
    };
    for (const auto &r : globalReads(op, true, false)) {
        std::vector<std::vector<std::pair<ir::Expr, bool>>> paths;
        std::vector<std::pair<ir::Expr, bool>> path;
        guardPaths(op.body, r.toString(), path, paths);
        const bool guarded = !paths.empty() && std::none_of(paths.begin(), paths.end(), [](const auto &p) { return p.empty(); });
        auto lane = [&, r, paths, guarded](std::int64_t block, int t) -> std::int64_t {
            VarMap v;
            if (!point(block, t, v) || (guarded && !runs(paths, sizes(), v)))
                return -1;
            return readAddress(r, v);
        };
        const double share = guarded ? warpShare([&](std::int64_t b, int t) { return lane(b, t) >= 0; }) : 1.0;
        add("read " + r.toString() + (op.reduction ? " in the reduction loop" : "") +
                (guarded ? " (where its select takes that side)" : ""),
            false, false, ir::dtypeSize(r.tensor().dtype), warps * reduce * share, lane);
    }
    for (const auto &r : globalReads(op, false, true))
        add("read " + r.toString() + " (init)", false, false, ir::dtypeSize(r.tensor().dtype), warps,
            [&, r](std::int64_t block, int t) -> std::int64_t {
                VarMap v;
                return point(block, t, v) ? readAddress(r, v) : -1;
            });
    for (std::size_t n = 1; n < a.ops.size(); ++n)
        for (const auto &r : globalReads(*a.ops[n], true, false))
            add("read " + r.toString() + " (" + a.ops[n]->name + ", after the first op)", false, false,
                ir::dtypeSize(r.tensor().dtype), warps, [&, r](std::int64_t block, int t) -> std::int64_t {
                    VarMap v;
                    return point(block, t, v) ? readAddress(r, v) : -1;
                });
    for (const auto *o : a.ops) {
        if (!a.isStored(o->output.id))
            continue;
        const TensorLayout out = layoutOf(tensor(o->output.id), sizes());
        add("store " + o->output.name + ": one element per lane", false, true, out.elementBytes, warps,
            [&, out](std::int64_t block, int t) -> std::int64_t {
                VarMap v;
                if (!point(block, t, v))
                    return -1;
                std::vector<std::int64_t> idx;
                for (const auto &d : op.domain)
                    idx.push_back(v[d.name]);
                return out.at(idx);
            });
    }
    const double launched = static_cast<double>(facts.blocks) * facts.threads;
    const double tail = std::min(1.0, static_cast<double>(total) / std::max(1.0, launched));
    facts.usefulLaneFraction = tail * (1 - tripIdle);
    facts.boundary = std::to_string(total) + " outputs on " + std::to_string(facts.blocks) + " blocks of " +
                     (tpr > 0 ? std::to_string(tpr) + " x " + std::to_string(rpb) : std::to_string(facts.threads)) +
                     " threads";
    if (tail < 1 - 1e-9)
        facts.branches.push_back({tpr > 0 ? "col_ >= cols_ || t_ >= rows_: the tiles past the edges"
                                          : "t_ < total_: the last block's tail",
                                  1 - tail});
    if (tripIdle > 1e-9)
        facts.branches.push_back({"the reduction's length depends on the lane's indices", tripIdle});
    facts.ilp = 1;
    facts.bytesInFlightPerThread = 4;
    facts.fmaShare = op.reduction ? 0.2 : 0.1;
}

void describeAccesses(KernelFacts &facts, const schedule::Problem &problem, const schedule::GroupAnalysis &analysis)
{
    StreamBuilder b{facts, problem, analysis};
    switch (facts.strategy) {
    case schedule::Strategy::Gemm:
        b.gemm();
        break;
    case schedule::Strategy::RowReduction:
        b.row();
        break;
    case schedule::Strategy::Elementwise:
        b.elementwise();
        break;
    case schedule::Strategy::Generic:
        b.generic();
        break;
    }
}

} // namespace stitch::rubric::detail
