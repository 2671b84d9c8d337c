// The row_reduction strategy's part of the schedule space (SpaceRules.h): what a cached row costs
// in registers and shared memory, the patterns some decisions need (softmax's pair, float32 exp),
// and the strategy's legality rules.
#include "core/schedule/SpaceRules.h"
#include "core/arch/ArchDatabase.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>

namespace stitch::schedule {

using namespace detail;

namespace {

int cachedArrays(const GroupAnalysis &a)
{
    // Row inputs plus element-wise intermediates the row passes read back.
    int n = static_cast<int>(a.rowInputs.size());
    for (const ir::ComputeOp *op : a.ops)
        if (!op->reduction && a.isLocal(op->output.id))
            ++n;
    return std::max(n, 1);
}

int rowItems(const GroupAnalysis &a, const KernelGroup &g, const ir::SizeBindings &sizes)
{
    const auto C = ir::evaluateSizeExpr(a.domain.back(), sizes);
    const std::int64_t perPass = std::int64_t(g.value("threads_per_row")) * g.value("vector") * g.value("cluster");
    return static_cast<int>(std::max<std::int64_t>(1, ceilDiv(std::max<std::int64_t>(C.ok() ? *C : 1, 1), perPass)));
}

} // namespace

namespace detail {

int rowOverheadRegisters(int data) { return data > 64 ? 40 : 24; }

int rowRegisters(const GroupAnalysis &a, const KernelGroup &g, const Problem &p)
{
    return rowItems(a, g, p.sizes) * g.value("vector") * cachedArrays(a) * (g.value("prefetch") == 1 ? 2 : 1);
}

} // namespace detail

bool readsColumnVector(const GroupAnalysis &a, const ir::Graph &graph, const ir::ComputeOp &op, const ir::Expr &r)
{
    const ir::Tensor *t = graph.tensor(r.tensor().id);
    const std::string column = op.reduction ? op.reduction->vars[0].name : op.domain.back().name;
    return t && t->dtype == ir::DType::F32 && t->shape.rank() == 1 && t->shape[0].equals(a.domain.back()) &&
           r.operands().size() == 1 && r.operands()[0].kind() == ir::ExprKind::IterVar &&
           r.operands()[0].name() == column;
}

std::vector<ir::TensorId> rowColumnInputs(const GroupAnalysis &a, const ir::Graph &graph)
{
    std::vector<ir::TensorId> out;
    for (const ir::ComputeOp *op : a.ops)
        for (const ir::Expr &r : ir::collectReads(op->body)) {
            const ir::TensorId id = r.tensor().id;
            if (readsColumnVector(a, graph, *op, r) && !a.isLocal(id) &&
                std::find(a.rowInputs.begin(), a.rowInputs.end(), id) == a.rowInputs.end() &&
                std::find(out.begin(), out.end(), id) == out.end())
                out.push_back(id);
        }
    return out;
}

RowSharedLayout rowSharedLayout(const GroupAnalysis &a, const KernelGroup &g, const ir::Graph &graph,
                                const ir::SizeBindings &sizes)
{
    const std::int64_t items = rowItems(a, g, sizes), perThread = items * g.value("vector");
    const std::int64_t tpr = g.value("threads_per_row"), rpb = g.value("rows_per_block");
    std::int64_t arrays = 0;
    if (g.value("prefetch") == 2)
        arrays += static_cast<std::int64_t>(a.rowInputs.size());
    if (g.value("bulk_store") == 1)
        arrays += static_cast<std::int64_t>(rowStoredOps(a).size());
    RowSharedLayout l;
    l.columns = arrays * rpb * tpr * perThread * 4;
    l.prefetch = l.columns;
    if (g.value("column_inputs") == 1)
        l.prefetch += static_cast<std::int64_t>(rowColumnInputs(a, graph).size()) * tpr * perThread * 4;
    l.total = l.prefetch;
    if (g.value("prefetch") == 3)
        l.total += static_cast<std::int64_t>(a.rowInputs.size()) * rpb * tpr * rowBulkPrefetchItems(static_cast<int>(items)) *
                   g.value("vector") * 4;
    return l;
}

int rowStagingBytes(const GroupAnalysis &a, const KernelGroup &g, const ir::Graph &graph, const ir::SizeBindings &sizes)
{
    return static_cast<int>(std::min<std::int64_t>(rowSharedLayout(a, g, graph, sizes).total, std::int64_t(1) << 30));
}

std::vector<const ir::ComputeOp *> rowStoredOps(const GroupAnalysis &a)
{
    std::vector<const ir::ComputeOp *> out;
    for (const ir::ComputeOp *op : a.ops)
        if (!op->reduction && a.isStored(op->output.id))
            out.push_back(op);
    return out;
}

bool laidOutLikeRows(const GroupAnalysis &a, const ir::Tensor &t)
{
    if (t.shape.rank() != a.rowRank + 1)
        return false;
    for (int d = 0; d <= a.rowRank; ++d)
        if (!t.shape[static_cast<std::size_t>(d)].equals(a.domain[static_cast<std::size_t>(d)]))
            return false;
    return true;
}

std::int64_t rowCount(const GroupAnalysis &a, const ir::SizeBindings &sizes)
{
    std::int64_t rows = 1;
    for (int d = 0; d < a.rowRank; ++d) {
        const auto e = ir::evaluateSizeExpr(a.domain[static_cast<std::size_t>(d)], sizes);
        rows *= e.ok() ? *e : -1;
    }
    return rows;
}

int rowResidentGroups(const ArchLimits &arch, const KernelGroup &g, std::int64_t rows)
{
    const GpuSpec *gpu = ArchDatabase::builtin().defaultGpuFor(arch.name);
    if (!gpu)
        return 0;
    const int cluster = g.value("cluster"), perSm = std::max(1, g.value("min_blocks"));
    const std::int64_t held = cluster > 1 ? residentClusters(*gpu, cluster, perSm)
                                          : std::int64_t(gpu->multiprocessors) * perSm;
    const std::int64_t groups = ceilDiv(std::max<std::int64_t>(rows, 1), g.value("rows_per_block"));
    return static_cast<int>(std::max<std::int64_t>(0, std::min(held, groups)));
}

bool hasOnlineSoftmaxPair(const GroupAnalysis &a)
{
    std::vector<const ir::ComputeOp *> reductions;
    for (const ir::ComputeOp *op : a.ops)
        if (op->reduction)
            reductions.push_back(op);
    if (reductions.size() != 2)
        return false;
    const ir::ComputeOp &m = *reductions[0], &s = *reductions[1];
    if (m.reduction->kind != ir::ReduceKind::Max || s.reduction->kind != ir::ReduceKind::Sum ||
        m.reduction->init.defined() || s.reduction->init.defined() || m.output.dtype != ir::DType::F32 ||
        s.output.dtype != ir::DType::F32 || m.reduction->vars.size() != 1 || s.reduction->vars.size() != 1 ||
        m.domain.size() != s.domain.size())
        return false;
    // s's body: exp(E' - m[rows]) with E' = m's body in s's variables.
    const ir::Expr &body = s.body;
    if (body.kind() != ir::ExprKind::Unary || body.unaryOp() != ir::UnaryOp::Exp)
        return false;
    const ir::Expr &diff = body.operand(0);
    if (diff.kind() != ir::ExprKind::Binary || diff.binaryOp() != ir::BinaryOp::Sub || diff.dtype() != ir::DType::F32)
        return false;
    const ir::Expr &shift = diff.operand(1);
    if (shift.kind() != ir::ExprKind::Read || shift.tensor().id != m.output.id ||
        shift.operands().size() != s.domain.size())
        return false;
    std::map<std::string, ir::Expr> rename{{m.reduction->vars[0].name, s.reduction->vars[0].var()}};
    for (std::size_t d = 0; d < s.domain.size(); ++d) {
        const ir::Expr &index = shift.operands()[d];
        if (index.kind() != ir::ExprKind::IterVar || index.name() != s.domain[d].name)
            return false;
        rename[m.domain[d].name] = s.domain[d].var();
    }
    return ir::substitute(m.body, rename).equals(diff.operand(0));
}

bool computesFloatExp(const GroupAnalysis &a)
{
    bool found = false;
    for (const ir::ComputeOp *op : a.ops)
        ir::visitExpr(op->body, [&](const ir::Expr &e) {
            found = found || (e.kind() == ir::ExprKind::Unary && e.unaryOp() == ir::UnaryOp::Exp &&
                              e.operand(0).dtype() == ir::DType::F32);
        });
    return found;
}

bool computesOnePlusErf(const GroupAnalysis &a)
{
    bool found = false;
    for (const ir::ComputeOp *op : a.ops)
        ir::visitExpr(op->body, [&](const ir::Expr &e) { found = found || ir::matchOnePlusErf(e).has_value(); });
    return found;
}

namespace detail {

void checkRows(const GroupAnalysis &a, const KernelGroup &g, const Problem &p, std::vector<Violation> &out)
{
    const int tpr = g.value("threads_per_row"), rpb = g.value("rows_per_block"), vec = g.value("vector"),
              cluster = g.value("cluster");
    const std::int64_t C = sizeValue(a.domain.back(), p);
    if (tpr * rpb > p.arch.maxThreadsPerBlock)
        out.push_back({{"threads_per_row", "rows_per_block"},
                       std::to_string(tpr) + " x " + std::to_string(rpb) + " threads per block > the limit of " +
                           std::to_string(p.arch.maxThreadsPerBlock)});
    if (vec > 1 && C % vec != 0)
        out.push_back({{"vector"}, kv("vector", vec) + ": rows have " + std::to_string(C) +
                                       " elements, not a multiple of " + std::to_string(vec) +
                                       ", so vector loads would be misaligned"});
    if (cluster > 1) {
        if (p.arch.computeMajor < 9)
            out.push_back({{"cluster"}, kv("cluster", cluster) + ": thread block clusters need sm_90 or newer, not " +
                                            p.arch.name});
        if (rpb != 1 && g.value("exchange") != 1)
            out.push_back({{"cluster", "rows_per_block", "exchange"},
                           "with exchange=barrier a cluster's blocks meet at one cluster barrier per reduction, which "
                           "would hold every row of a block to the slowest: rows_per_block > 1 with a cluster needs "
                           "exchange=push"});
        if (cluster > 8 && tpr * rpb > 512)
            out.push_back({{"cluster", "threads_per_row", "rows_per_block"},
                           kv("cluster", cluster) + " (non-portable) with " + std::to_string(tpr * rpb) +
                               " threads per block does not fit one GPC's SMs"});
        if (C % (std::int64_t(cluster) * vec) != 0)
            out.push_back({{"cluster", "vector"}, kv("cluster", cluster) + ": " + std::to_string(C) +
                                                      " elements do not split evenly into " + std::to_string(cluster) +
                                                      " parts of whole vectors"});
    }
    const int steps = g.value("row_steps"), prefetch = g.value("prefetch");
    const std::string prefetchText = prefetch == 3 ? "prefetch=bulk" : prefetch == 2 ? "prefetch=shared" : "prefetch=next_row";
    // The dynamic shared memory of the staged row, the outputs' stage, the column spans and the
    // prefetch slots together, against what the block may have (each rule below names its part).
    const int stagingBytes = rowStagingBytes(a, g, p.graph, p.sizes);
    const int stagingLimit = sharedLimit(p.arch) - p.arch.reservedSharedMemoryPerBlock - 1024;
    if (prefetch != 0 && steps == 1 && g.value("grid") != 1)
        out.push_back({{"prefetch", "row_steps", "grid"}, prefetchText + " needs row_steps > 1 or grid=resident: with "
                                                                        "one row per block there is no next row"});
    if (prefetch != 0 && g.value("cache") != 1)
        out.push_back({{"prefetch", "cache"}, prefetchText + " loads the next row for the register cache: it "
                                                             "needs cache=registers"});
    if (prefetch == 2) {
        if (p.arch.computeMajor < 8)
            out.push_back({{"prefetch"}, "prefetch=shared copies with cp.async, which needs sm_80 or newer, not " +
                                             p.arch.name});
        if (a.rowInputs.empty())
            out.push_back({{"prefetch"}, "prefetch=shared: the group reads no row input to prefetch"});
        for (ir::TensorId id : a.rowInputs)
            if (ir::dtypeSize(p.graph.tensor(id)->dtype) != 4)
                out.push_back({{"prefetch"}, "prefetch=shared copies 4-byte elements; " + p.graph.tensor(id)->name +
                                                 " is " + ir::dtypeName(p.graph.tensor(id)->dtype)});
        if (stagingBytes > stagingLimit)
            out.push_back({{"prefetch", "threads_per_row", "rows_per_block", "vector", "cluster", "bulk_store"},
                           "prefetch=shared stages " + std::to_string(stagingBytes) + " B of the next row per block > the " +
                               std::to_string(stagingLimit) + " B of shared memory " + p.arch.name +
                               " leaves for it: use a larger cluster or prefetch=off"});
    }
    const bool exactSplit = C > 0 && C % (std::int64_t(tpr) * vec * cluster) == 0;
    if (prefetch == 3) {
        const int items = rowItems(a, g, p.sizes);
        if (!p.arch.tma)
            out.push_back({{"prefetch"}, "prefetch=bulk copies with cp.async.bulk, which needs sm_90 or newer, not " +
                                             p.arch.name});
        if (a.rowInputs.empty())
            out.push_back({{"prefetch"}, "prefetch=bulk: the group reads no row input to prefetch"});
        for (ir::TensorId id : a.rowInputs)
            if (p.graph.tensor(id)->dtype != ir::DType::F32)
                out.push_back({{"prefetch"}, "prefetch=bulk moves float32 rows into float4 registers; " +
                                                 p.graph.tensor(id)->name + " is " +
                                                 ir::dtypeName(p.graph.tensor(id)->dtype)});
        if (vec != 4)
            out.push_back({{"prefetch", "vector"}, "prefetch=bulk reads its slots as float4: it needs vector=4"});
        if (!exactSplit || items % 4 != 0)
            out.push_back({{"prefetch", "threads_per_row", "vector", "cluster"},
                           "prefetch=bulk copies the last quarter of every thread's items as one contiguous block: the "
                           "row (" + std::to_string(C) + " elements) must split into whole items of " +
                               std::to_string(std::int64_t(tpr) * vec * cluster) +
                               " elements, a multiple of 4 per thread (here " + std::to_string(items) + ")"});
        bool reduces = false;
        for (const ir::ComputeOp *op : a.ops)
            reduces = reduces || static_cast<bool>(op->reduction);
        if (!reduces || g.value("reduce") != 0 || g.value("combine") != 0)
            out.push_back({{"prefetch", "reduce", "combine"},
                           "prefetch=bulk issues the next row's copy after the first reduction's warp exchange "
                           "(every thread has read its slots by then): it needs a reduction, reduce=shuffle and "
                           "combine=rounds"});
        if (rowStoredOps(a).empty())
            out.push_back({{"prefetch"}, "prefetch=bulk loads the next row into the registers as the output loop "
                                         "frees them: the group stores no element-wise result"});
        if (g.value("bulk_store") == 1)
            out.push_back({{"prefetch", "bulk_store"}, "prefetch=bulk loads the next row in the output loop, which "
                                                       "bulk_store=on splits into pieces: use one of them"});
    }
    if (g.value("column_inputs") == 1) {
        if (rowColumnInputs(a, p.graph).empty())
            out.push_back({{"column_inputs"}, "column_inputs=shared: the group reads no per-column vector (a float32 "
                                              "tensor of the row's length read at the column)"});
        if (g.value("grid") != 1)
            out.push_back({{"column_inputs", "grid"}, "column_inputs=shared pays one copy per block, which only "
                                                      "resident blocks reuse for every row they walk: it needs "
                                                      "grid=resident"});
        if (vec != 4 || !exactSplit)
            out.push_back({{"column_inputs", "vector", "threads_per_row", "cluster"},
                           "column_inputs=shared copies and reads the block's span as float4: it needs vector=4 and a "
                           "row that splits exactly over the block's threads (" + std::to_string(C) + " elements over " +
                               std::to_string(std::int64_t(tpr) * vec * cluster) + ")"});
    }
    if (g.value("exchange") == 1) {
        if (cluster < 2)
            out.push_back({{"exchange", "cluster"}, "exchange=push sends partial results between the blocks of a "
                                                    "cluster: it needs cluster > 1"});
        if (g.value("reduce") != 0 || g.value("combine") != 0)
            out.push_back({{"exchange", "reduce", "combine"}, "exchange=push sends one float per reduction after the "
                                                              "warp shuffles: it needs reduce=shuffle and "
                                                              "combine=rounds"});
        for (const ir::ComputeOp *op : a.ops)
            if (op->reduction && op->output.dtype != ir::DType::F32)
                out.push_back({{"exchange"}, "exchange=push sends float32 partial results (st.async .f32); " +
                                                 op->output.name + " is " + ir::dtypeName(op->output.dtype)});
    }
    if ((prefetch == 3 || g.value("column_inputs") == 1) && stagingBytes > stagingLimit)
        out.push_back({{"prefetch", "column_inputs", "threads_per_row", "rows_per_block", "vector", "cluster"},
                       "column_inputs=shared and prefetch=bulk keep " + std::to_string(stagingBytes) +
                           " B per block in shared memory > the " + std::to_string(stagingLimit) + " B " + p.arch.name +
                           " leaves for them: use a larger cluster, fewer rows per block, or turn one off"});
    const std::int64_t allRows = rowCount(a, p.sizes);
    if (g.value("grid") == 1) {
        if (steps != 1)
            out.push_back({{"grid", "row_steps"}, "grid=resident walks the rows with the grid's stride; row_steps counts "
                                                  "the rows of a block under grid=rows: leave it at 1"});
        if (rowResidentGroups(p.arch, g, allRows) < 1)
            out.push_back({{"grid"}, "grid=resident sizes the grid for the target's GPU, and " + p.arch.name +
                                         " has none in the arch database"});
    }
    if (g.value("bulk_store") == 1) {
        const std::string what = "bulk_store=on";
        if (!p.arch.tma)
            out.push_back({{"bulk_store"}, what + " writes with cp.async.bulk, which needs sm_90 or newer, not " +
                                               p.arch.name});
        if (g.value("cache") != 1)
            out.push_back({{"bulk_store", "cache"}, what + " stages the outputs computed from the register cache: it "
                                                          "needs cache=registers"});
        if (vec != 4)
            out.push_back({{"bulk_store", "vector"}, what + " writes the stage with float4 stores: it needs vector=4"});
        if (rpb != 1)
            out.push_back({{"bulk_store", "rows_per_block"},
                           what + " copies one contiguous part of one row per block: it needs rows_per_block=1"});
        if (prefetch == 2)
            out.push_back({{"bulk_store", "prefetch"},
                           what + " and prefetch=shared would share the dynamic shared memory: use one of them"});
        if (C > 0 && C % (std::int64_t(tpr) * vec * cluster) != 0)
            out.push_back({{"bulk_store", "threads_per_row", "vector", "cluster"},
                           what + " copies whole pieces of " + std::to_string(tpr * vec) + " x items elements: " +
                               std::to_string(C) + " elements per row do not split evenly over " +
                               std::to_string(std::int64_t(tpr) * vec * cluster) + " threads' vectors"});
        const auto stored = rowStoredOps(a);
        if (stored.empty())
            out.push_back({{"bulk_store"}, what + ": the group stores no element-wise result"});
        for (const ir::ComputeOp *op : stored)
            if (p.graph.tensor(op->output.id)->dtype != ir::DType::F32 || !laidOutLikeRows(a, *p.graph.tensor(op->output.id)))
                out.push_back({{"bulk_store"}, what + " copies float32 rows laid out like the group's rows; " +
                                                   op->output.name + " is not one"});
        if (stagingBytes > stagingLimit)
            out.push_back({{"bulk_store", "threads_per_row", "rows_per_block", "vector", "cluster", "prefetch"},
                           what + " stages " + std::to_string(stagingBytes) + " B of outputs per block > the " +
                               std::to_string(stagingLimit) + " B of shared memory " + p.arch.name +
                               " leaves for it: use a larger cluster or bulk_store=off"});
    }
    if (steps > 1) {
        if (allRows < std::int64_t(rpb) * steps)
            out.push_back({{"row_steps", "rows_per_block"},
                           kv("row_steps", steps) + ": " + std::to_string(allRows) + " rows are fewer than rows_per_block x row_steps = " +
                               std::to_string(rpb * steps) + " rows per block"});
    }
    const int minBlocks = g.value("min_blocks");
    if (std::int64_t(tpr) * rpb * minBlocks > p.arch.maxThreadsPerSm)
        out.push_back({{"min_blocks", "threads_per_row", "rows_per_block"},
                       kv("min_blocks", minBlocks) + " blocks of " + std::to_string(tpr * rpb) + " threads > the " +
                           std::to_string(p.arch.maxThreadsPerSm) + " threads an SM of " + p.arch.name + " holds"});
    if (g.value("combine") == 1 && !hasOnlineSoftmaxPair(a))
        out.push_back({{"combine"}, "combine=online needs the softmax pattern, m = max(j) E then sum(j) exp(E - m) over "
                                    "float32 with no other reduction; this group's reductions differ"});
    if (g.value("combine") == 1 && g.value("reduce") == 1)
        out.push_back({{"combine", "reduce"}, "combine=online exchanges (maximum, sum) pairs by warp shuffles: it needs "
                                              "reduce=shuffle"});
    if (g.value("exp") == 1 && !computesFloatExp(a))
        out.push_back({{"exp"}, "exp=fast changes float32 exp, and this group computes none"});
    if (g.value("cache") == 1) {
        // What is left for data once min_blocks blocks share the SM's registers, 128 at most.
        const int perThread = p.arch.registersPerSm / std::max(tpr * rpb * minBlocks, 1);
        const int regs = rowRegisters(a, g, p);
        const int budget = std::min(128, perThread - rowOverheadRegisters(regs));
        if (regs > budget)
            out.push_back({{"cache", "threads_per_row", "rows_per_block", "vector", "cluster", "prefetch", "min_blocks"},
                           "keeping the row in registers needs " + std::to_string(regs) + " registers per thread for data" +
                               (prefetch == 1 ? " (this row and the next, prefetch=next_row)" : "") + "; " +
                               std::to_string(minBlocks) + " x " + std::to_string(tpr * rpb) +
                               " threads per SM leave " + std::to_string(budget) +
                               ": use more threads, a cluster, fewer min_blocks or cache=none"});
    }
}

} // namespace detail

} // namespace stitch::schedule
