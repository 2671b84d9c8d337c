#include "core/schedule/GroupAnalysis.h"

#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <set>

namespace stitch::schedule {

using ir::ComputeOp;
using ir::Expr;
using ir::ExprKind;
using ir::TensorId;

bool GroupAnalysis::isLocal(TensorId id) const { return std::find(local.begin(), local.end(), id) != local.end(); }
bool GroupAnalysis::isStored(TensorId id) const { return std::find(stored.begin(), stored.end(), id) != stored.end(); }

namespace {

Error refuse(const ComputeOp &op, const std::string &why)
{
    return makeError(ErrorKind::InvalidArgument, "op '" + op.name + "': " + why);
}

bool sameExtents(const std::vector<Expr> &a, const std::vector<Expr> &b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!a[i].equals(b[i]))
            return false;
    return true;
}

std::vector<Expr> extentsOf(const std::vector<ir::IterVar> &vars)
{
    std::vector<Expr> out;
    for (const auto &v : vars)
        out.push_back(v.extent);
    return out;
}

bool zeroLowerBounds(const std::vector<ir::IterVar> &vars)
{
    return std::all_of(vars.begin(), vars.end(), [](const ir::IterVar &v) { return v.lowerBound.isIntConst(0); });
}

/// A read whose indices are exactly `vars` (by name), in order.
bool readsAt(const Expr &read, const std::vector<std::string> &vars)
{
    const auto &idx = read.operands();
    if (idx.size() != vars.size())
        return false;
    for (std::size_t i = 0; i < idx.size(); ++i)
        if (idx[i].kind() != ExprKind::IterVar || idx[i].name() != vars[i])
            return false;
    return true;
}

std::vector<std::string> names(const std::vector<ir::IterVar> &vars, std::size_t count)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < count && i < vars.size(); ++i)
        out.push_back(vars[i].name);
    return out;
}

/// Every read in the op's body, init and reduction bounds.
std::vector<Expr> allReads(const ComputeOp &op)
{
    std::vector<Expr> reads = ir::collectReads(op.body);
    if (op.reduction && op.reduction->init.defined()) {
        auto more = ir::collectReads(op.reduction->init);
        reads.insert(reads.end(), more.begin(), more.end());
    }
    if (op.reduction)
        for (const auto &v : op.reduction->vars)
            for (const Expr &e : {v.extent, v.lowerBound}) {
                auto more = ir::collectReads(e);
                reads.insert(reads.end(), more.begin(), more.end());
            }
    return reads;
}

bool supportedType(ir::DType t) { return t == ir::DType::F32 || t == ir::DType::F64 || t == ir::DType::I32; }

/// Tensor classification shared by every strategy: reads from outside, stored and local results.
Status classify(const ir::Graph &graph, GroupAnalysis &g)
{
    std::set<TensorId> written;
    for (const ComputeOp *op : g.ops) {
        if (!supportedType(op->output.dtype))
            return refuse(*op, std::string("writes ") + ir::dtypeName(op->output.dtype) +
                                   "; the code generators handle float32, float64 and int32");
        for (const Expr &r : allReads(*op)) {
            const TensorId id = r.tensor().id;
            if (!supportedType(r.tensor().dtype))
                return refuse(*op, "reads " + r.tensor().name + " of type " + ir::dtypeName(r.tensor().dtype) +
                                       "; the code generators handle float32, float64 and int32");
            if (!written.contains(id) && std::find(g.reads.begin(), g.reads.end(), id) == g.reads.end())
                g.reads.push_back(id);
        }
        written.insert(op->output.id);
    }
    std::set<const ComputeOp *> inGroup(g.ops.begin(), g.ops.end());
    for (const ComputeOp *op : g.ops) {
        const ir::Tensor *t = graph.tensor(op->output.id);
        bool needed = t->role == ir::TensorRole::Output;
        for (const ComputeOp *consumer : graph.consumers(t->id))
            needed = needed || !inGroup.contains(consumer);
        (needed ? g.stored : g.local).push_back(t->id);
    }
    return Ok{};
}

/// Reads of tensors computed earlier in the group must be at the reading op's own point.
Status localReadsAtPoint(const ComputeOp &op, const std::set<TensorId> &groupTensors,
                         const std::vector<std::string> &point, const std::string &what)
{
    for (const Expr &r : allReads(op)) {
        if (groupTensors.contains(r.tensor().id) && !readsAt(r, point))
            return refuse(op, "reads " + r.toString() + ", not " + what +
                                  ": fusing it would need values another thread computes");
    }
    return Ok{};
}

Result<GroupAnalysis> analyzeElementwise(const ir::Graph &graph, GroupAnalysis g)
{
    const ComputeOp &first = *g.ops.front();
    g.domain = extentsOf(first.domain);
    std::set<TensorId> groupTensors;
    for (const ComputeOp *op : g.ops) {
        if (op->reduction)
            return refuse(*op, "is a reduction, not element-wise");
        if (!zeroLowerBounds(op->domain))
            return refuse(*op, "has a domain that does not start at 0");
        if (!sameExtents(extentsOf(op->domain), g.domain))
            return refuse(*op, "runs over " + op->domainString() + ", not the group's domain");
        if (auto st = localReadsAtPoint(*op, groupTensors, names(op->domain, op->domain.size()), "at its own point");
            !st)
            return st.error();
        groupTensors.insert(op->output.id);
    }
    if (auto st = classify(graph, g); !st)
        return st.error();
    return g;
}

/// One op (any: its reduction is a loop), then element-wise ops over the same domain that read the
/// group's results at their own point: the thread that computed an element finishes it (avg_pool's
/// division after its window sum).
Result<GroupAnalysis> analyzeGeneric(const ir::Graph &graph, GroupAnalysis g)
{
    const ComputeOp &head = *g.ops.front();
    g.domain = extentsOf(head.domain);
    std::set<TensorId> groupTensors = {head.output.id};
    for (std::size_t n = 1; n < g.ops.size(); ++n) {
        const ComputeOp &op = *g.ops[n];
        if (op.reduction)
            return refuse(op, "is a reduction: the generic strategy runs one op per kernel, then element-wise ops "
                              "over its outputs");
        if (!sameExtents(extentsOf(op.domain), g.domain))
            return refuse(op, "runs over " + op.domainString() + ", not " + head.name + "'s domain");
        for (std::size_t d = 0; d < op.domain.size(); ++d)
            if (!op.domain[d].lowerBound.equals(head.domain[d].lowerBound))
                return refuse(op, "starts its domain elsewhere than " + head.name + "'s");
        if (auto st = localReadsAtPoint(op, groupTensors, names(op.domain, op.domain.size()), "at its own point"); !st)
            return st.error();
        groupTensors.insert(op.output.id);
    }
    if (auto st = classify(graph, g); !st)
        return st.error();
    return g;
}

/// body is A[..] * B[..] (either order), possibly through casts to the output type.
bool splitProduct(const Expr &body, Expr &lhs, Expr &rhs)
{
    if (body.kind() != ExprKind::Binary || body.binaryOp() != ir::BinaryOp::Mul)
        return false;
    auto strip = [](Expr e) {
        while (e.kind() == ExprKind::Cast)
            e = e.operand(0);
        return e;
    };
    lhs = strip(body.operand(0));
    rhs = strip(body.operand(1));
    return lhs.kind() == ExprKind::Read && rhs.kind() == ExprKind::Read;
}

Result<GroupAnalysis> analyzeGemm(const ir::Graph &graph, GroupAnalysis g)
{
    const ComputeOp &head = *g.ops.front();
    if (!head.reduction || head.reduction->kind != ir::ReduceKind::Sum || head.reduction->vars.size() != 1)
        return refuse(head, "is not a sum over one variable: not a contraction");
    if (head.domain.size() != 2)
        return refuse(head, "has " + std::to_string(head.domain.size()) +
                                " output dimensions; the gemm strategy takes C[i, j] (batched products use generic)");
    if (!zeroLowerBounds(head.domain) || !zeroLowerBounds(head.reduction->vars))
        return refuse(head, "has ranges that do not start at 0");
    const std::string i = head.domain[0].name, j = head.domain[1].name, k = head.reduction->vars[0].name;
    if (!ir::collectIterVars(head.reduction->vars[0].extent).empty())
        return refuse(head, "sums over a range that depends on the output point (e.g. a causal mask)");
    Expr x, y;
    if (!splitProduct(head.body, x, y))
        return refuse(head, "body " + head.body.toString() + " is not a product of two tensor reads");
    auto classifyA = [&](const Expr &r, bool &rowMajor) {
        if (readsAt(r, {i, k}))
            return (rowMajor = true);
        if (readsAt(r, {k, i})) {
            rowMajor = false;
            return true;
        }
        return false;
    };
    auto classifyB = [&](const Expr &r, bool &rowMajor) {
        if (readsAt(r, {k, j}))
            return (rowMajor = true);
        if (readsAt(r, {j, k})) {
            rowMajor = false;
            return true;
        }
        return false;
    };
    if (classifyA(x, g.aRowMajor) && classifyB(y, g.bRowMajor)) {
        g.a = x.tensor().id;
        g.b = y.tensor().id;
    } else if (classifyA(y, g.aRowMajor) && classifyB(x, g.bRowMajor)) {
        g.a = y.tensor().id;
        g.b = x.tensor().id;
    } else {
        return refuse(head, "reads " + x.toString() + " and " + y.toString() + ", not A[" + i + ", " + k + "] and B[" +
                                k + ", " + j + "] (or their transposes)");
    }
    for (TensorId t : {g.a, g.b})
        if (graph.tensor(t)->dtype != ir::DType::F32)
            return refuse(head, "multiplies " + graph.tensor(t)->name + " of type " +
                                    ir::dtypeName(graph.tensor(t)->dtype) + "; the gemm strategy handles float32");
    if (head.output.dtype != ir::DType::F32)
        return refuse(head, "writes a non-float32 result; the gemm strategy handles float32");
    g.domain = extentsOf(head.domain);
    g.k = head.reduction->vars[0].extent;
    std::set<TensorId> groupTensors = {head.output.id};
    for (std::size_t n = 1; n < g.ops.size(); ++n) {
        const ComputeOp &op = *g.ops[n];
        if (op.reduction)
            return refuse(op, "is a reduction; a gemm epilogue is element-wise");
        if (!zeroLowerBounds(op.domain) || !sameExtents(extentsOf(op.domain), g.domain))
            return refuse(op, "runs over " + op.domainString() + ", not the product's [M, N]");
        if (auto st = localReadsAtPoint(op, groupTensors, names(op.domain, 2), "at its own point"); !st)
            return st.error();
        groupTensors.insert(op.output.id);
    }
    if (auto st = classify(graph, g); !st)
        return st.error();
    return g;
}

Result<GroupAnalysis> analyzeRows(const ir::Graph &graph, GroupAnalysis g)
{
    // Row length: the extent of the first reduction, or the last domain extent of an element-wise op.
    int rowRank = -1;
    Expr rowLength;
    std::vector<Expr> rows;
    for (const ComputeOp *op : g.ops) {
        if (op->reduction) {
            if (op->reduction->vars.size() != 1)
                return refuse(*op, "reduces over several variables; row_reduction takes one");
            rowRank = static_cast<int>(op->domain.size());
            rows = extentsOf(op->domain);
            rowLength = op->reduction->vars[0].extent;
            break;
        }
    }
    if (rowRank < 0)
        return refuse(*g.ops.front(), "no op of the group reduces: not a row reduction");
    if (!ir::collectIterVars(rowLength).empty())
        return refuse(*g.ops.front(), "the row length depends on the row");
    g.rowRank = rowRank;
    g.domain = rows;
    g.domain.push_back(rowLength);
    std::set<TensorId> rowTensors, elementTensors;
    for (const ComputeOp *op : g.ops) {
        if (!zeroLowerBounds(op->domain) || (op->reduction && !zeroLowerBounds(op->reduction->vars)))
            return refuse(*op, "has ranges that do not start at 0");
        std::vector<std::string> rowVars = names(op->domain, static_cast<std::size_t>(rowRank));
        std::string c;
        if (op->reduction) {
            if (op->reduction->vars.size() != 1 || !sameExtents(extentsOf(op->domain), rows) ||
                !op->reduction->vars[0].extent.equals(rowLength))
                return refuse(*op, "reduces " + op->domainString() + ", not the group's rows");
            c = op->reduction->vars[0].name;
            if (op->reduction->init.defined() && !ir::collectReads(op->reduction->init).empty())
                return refuse(*op, "starts its reduction from a tensor read");
        } else {
            std::vector<Expr> want = rows;
            want.push_back(rowLength);
            if (!sameExtents(extentsOf(op->domain), want))
                return refuse(*op, "runs over " + op->domainString() + ", not [rows..., row length]");
            c = op->domain.back().name;
        }
        std::vector<std::string> point = rowVars;
        point.push_back(c);
        for (const Expr &r : allReads(*op)) {
            const TensorId id = r.tensor().id;
            if (rowTensors.contains(id) && !readsAt(r, rowVars))
                return refuse(*op, "reads the row result " + r.toString() + " of another row");
            if (elementTensors.contains(id) && !readsAt(r, point))
                return refuse(*op, "reads " + r.toString() + ", not the element it computes");
            if (!rowTensors.contains(id) && !elementTensors.contains(id) && readsAt(r, point) &&
                std::find(g.rowInputs.begin(), g.rowInputs.end(), id) == g.rowInputs.end())
                g.rowInputs.push_back(id);
        }
        (op->reduction ? rowTensors : elementTensors).insert(op->output.id);
    }
    // Row inputs must be read only at the element (a tensor also read elsewhere is not cached).
    for (const ComputeOp *op : g.ops) {
        std::vector<std::string> point = names(op->domain, static_cast<std::size_t>(rowRank));
        point.push_back(op->reduction ? op->reduction->vars[0].name : op->domain.back().name);
        for (const Expr &r : allReads(*op))
            if (!readsAt(r, point))
                std::erase(g.rowInputs, r.tensor().id);
    }
    // A cached row is the tensor's own row: shape [rows..., C].
    std::erase_if(g.rowInputs, [&](TensorId id) {
        const ir::Tensor *t = graph.tensor(id);
        if (t->shape.rank() != rowRank + 1)
            return true;
        for (int d = 0; d <= rowRank; ++d)
            if (!t->shape[static_cast<std::size_t>(d)].equals(g.domain[static_cast<std::size_t>(d)]))
                return true;
        return false;
    });
    if (auto st = classify(graph, g); !st)
        return st.error();
    return g;
}

} // namespace

Result<GroupAnalysis> analyzeGroup(const ir::Graph &graph, const std::vector<std::string> &opNames, Strategy strategy)
{
    if (opNames.empty())
        return makeError(ErrorKind::InvalidArgument, "a kernel group needs at least one op");
    GroupAnalysis g;
    g.strategy = strategy;
    for (const auto &name : opNames) {
        const ComputeOp *op = graph.findOp(name);
        if (!op)
            return makeError(ErrorKind::InvalidArgument, "no op named '" + name + "' in graph " + graph.name());
        g.ops.push_back(op);
    }
    // Program order inside the group.
    std::vector<const ComputeOp *> ordered;
    for (const auto &op : graph.ops())
        if (std::find(g.ops.begin(), g.ops.end(), &op) != g.ops.end())
            ordered.push_back(&op);
    if (ordered != g.ops)
        return makeError(ErrorKind::InvalidArgument, "ops of a group must be listed in program order");
    for (const ComputeOp *op : g.ops)
        if (op->stage != g.ops.front()->stage)
            return refuse(*op, "runs after a kernel carried unchanged that '" + g.ops.front()->name +
                                   "' runs before: one kernel cannot hold both");
    switch (strategy) {
    case Strategy::Generic: return analyzeGeneric(graph, std::move(g));
    case Strategy::Elementwise: return analyzeElementwise(graph, std::move(g));
    case Strategy::Gemm: return analyzeGemm(graph, std::move(g));
    case Strategy::RowReduction: return analyzeRows(graph, std::move(g));
    }
    return g;
}

std::vector<KernelGroup> fuseGreedy(const ir::Graph &graph)
{
    return fuseGroups(graph, [](const FusionCandidate &) { return true; });
}

std::vector<KernelGroup> fuseGroups(const ir::Graph &graph, const FusionDecider &decide)
{
    std::vector<KernelGroup> groups;
    std::set<std::string> assigned;
    std::set<TensorId> available; // computed by emitted groups, or inputs
    for (const auto &t : graph.tensors())
        if (!graph.producer(t.id))
            available.insert(t.id);
    const auto &ops = graph.ops();
    for (std::size_t n = 0; n < ops.size(); ++n) {
        if (assigned.contains(ops[n].name))
            continue;
        KernelGroup g;
        g.ops = {ops[n].name};
        for (Strategy s : {Strategy::Gemm, Strategy::RowReduction, Strategy::Elementwise, Strategy::Generic}) {
            if (analyzeGroup(graph, g.ops, s).ok()) {
                g.strategy = s;
                break;
            }
        }
        std::set<TensorId> inGroup = {ops[n].output.id};
        {
            for (std::size_t m = n + 1; m < ops.size(); ++m) {
                const ComputeOp &next = ops[m];
                if (assigned.contains(next.name))
                    continue;
                bool readsGroup = false, ready = true;
                for (const TensorId id : [&] {
                         std::vector<TensorId> ids;
                         for (const auto &t : next.inputs())
                             ids.push_back(t.id);
                         return ids;
                     }()) {
                    readsGroup = readsGroup || inGroup.contains(id);
                    ready = ready && (inGroup.contains(id) || available.contains(id));
                }
                if (!readsGroup || !ready)
                    continue;
                std::vector<std::string> candidate = g.ops;
                candidate.push_back(next.name);
                // Keep program order.
                std::vector<std::string> orderedNames;
                for (const auto &op : ops)
                    if (std::find(candidate.begin(), candidate.end(), op.name) != candidate.end())
                        orderedNames.push_back(op.name);
                Strategy s = g.strategy;
                auto analysis = analyzeGroup(graph, orderedNames, s);
                bool fits = analysis.ok();
                if (!fits && s == Strategy::Elementwise && analyzeGroup(graph, orderedNames, Strategy::RowReduction).ok()) {
                    s = Strategy::RowReduction;
                    fits = true;
                }
                const FusionCandidate offer{g.ops, g.strategy, next.name, fits, s,
                                            fits ? std::string() : analysis.error().message};
                if (decide(offer) && fits) {
                    g.ops = orderedNames;
                    g.strategy = s;
                    inGroup.insert(next.output.id);
                }
            }
        }
        for (const auto &name : g.ops) {
            assigned.insert(name);
            available.insert(graph.findOp(name)->output.id);
        }
        g.name = g.ops.size() == 1 ? g.ops.front() : g.ops.front() + "_" + g.ops.back();
        groups.push_back(std::move(g));
    }
    // Unique, identifier-safe kernel names.
    std::set<std::string> used;
    for (auto &g : groups) {
        std::string base;
        for (char c : g.name)
            base += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0])))
            base = "k_" + base;
        std::string name = base;
        for (int i = 2; used.contains(name); ++i)
            name = base + "_" + std::to_string(i);
        used.insert(name);
        g.name = name;
    }
    return groups;
}

} // namespace stitch::schedule
