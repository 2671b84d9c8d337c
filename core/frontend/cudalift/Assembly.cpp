#include "core/frontend/cudalift/Assembly.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <map>

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

struct TensorDecl {
    std::string name;
    ir::DType dtype = ir::DType::F32;
    std::vector<Expr> shape;
    bool produced = false;
    bool output = false;
    int buffer = -1;
};

struct BufferState {
    int current = -1;       ///< tensor holding the contents, -1 when none is materialised
    bool external = false;  ///< written by the host or something opaque since the last tensor
    int versions = 0;
    bool warnedUninitialized = false;
};

[[noreturn]] void refuseAt(const ir::SourceSpan &span, std::string construct, std::string why, std::string advice = {})
{
    throw LiftRefusal(Refusal{span.begin, std::move(construct), std::move(why), std::move(advice)});
}

class Assembler {
public:
    Assembler(const HostProgram &host, const ShapeMap &shapes, IndexMath &math, std::set<std::string> reserved)
        : m_host(host), m_shapes(shapes), m_math(math), m_states(host.buffers.size()), m_reserved(std::move(reserved))
    {
    }

    std::vector<TensorDecl> tensors;
    std::vector<ir::ComputeOp> ops;
    std::vector<Diagnostic> diagnostics;

    std::vector<Expr> shapeOf(int buffer) const
    {
        auto it = m_shapes.find(buffer);
        if (it != m_shapes.end())
            return it->second;
        return {m_host.buffers[static_cast<std::size_t>(buffer)].elements};
    }

    std::string uniqueName(const std::string &base)
    {
        std::string name = base;
        for (int n = 2; m_names.count(name); ++n)
            name = base + "_" + std::to_string(n);
        m_names.insert(name);
        return name;
    }

    int addTensor(const std::string &base, ir::DType dtype, std::vector<Expr> shape, bool produced, int buffer)
    {
        tensors.push_back({uniqueName(base), dtype, std::move(shape), produced, false, buffer});
        return static_cast<int>(tensors.size()) - 1;
    }

    ir::TensorRef ref(int t) const { return ir::TensorRef{t, tensors[static_cast<std::size_t>(t)].name, tensors[static_cast<std::size_t>(t)].dtype}; }

    int readTensor(int b, const SourceLocation &where)
    {
        BufferState &s = m_states[static_cast<std::size_t>(b)];
        if (s.current >= 0)
            return s.current;
        const BufferInfo &info = m_host.buffers[static_cast<std::size_t>(b)];
        if (!s.external && !s.warnedUninitialized) {
            diagnostics.push_back({Severity::Warning, where,
                                   "'" + info.name + "' is read before the program writes it (uninitialized device "
                                   "memory); it becomes a graph input"});
            s.warnedUninitialized = true;
        }
        s.current = addTensor(s.versions++ == 0 ? info.name : info.name + "_" + std::to_string(s.versions - 1),
                              info.dtype, shapeOf(b), false, b);
        s.external = false;
        if (auto pending = m_pendingAfter.find(b); pending != m_pendingAfter.end()) {
            opaqueUses[pending->second].after = tensors[static_cast<std::size_t>(s.current)].name;
            m_pendingAfter.erase(pending);
        }
        if (firstInput.size() <= static_cast<std::size_t>(b))
            firstInput.resize(m_host.buffers.size(), -1);
        if (firstInput[static_cast<std::size_t>(b)] < 0)
            firstInput[static_cast<std::size_t>(b)] = s.current;
        return s.current;
    }

    int newVersion(int b)
    {
        m_pendingAfter.erase(b); // overwritten before anything read what an opaque launch wrote
        BufferState &s = m_states[static_cast<std::size_t>(b)];
        const BufferInfo &info = m_host.buffers[static_cast<std::size_t>(b)];
        return addTensor(s.versions++ == 0 ? info.name : info.name + "_" + std::to_string(s.versions - 1), info.dtype,
                         shapeOf(b), true, b);
    }

    bool hasContents(int b) const
    {
        const BufferState &s = m_states[static_cast<std::size_t>(b)];
        return s.current >= 0 || s.external;
    }

    void markOutput(int b)
    {
        const BufferState &s = m_states[static_cast<std::size_t>(b)];
        if (s.current >= 0 && tensors[static_cast<std::size_t>(s.current)].produced)
            tensors[static_cast<std::size_t>(s.current)].output = true;
    }

    void setExternal(int b)
    {
        BufferState &s = m_states[static_cast<std::size_t>(b)];
        s.current = -1;
        s.external = true;
    }

    void commit(int b, int tensor)
    {
        BufferState &s = m_states[static_cast<std::size_t>(b)];
        s.current = tensor;
        s.external = false;
    }

    int current(int b) const { return m_states[static_cast<std::size_t>(b)].current; }

    void fill(int b, const SourceLocation &where)
    {
        const int t = newVersion(b);
        ir::ComputeOp op;
        op.name = uniqueOpName("memset_" + m_host.buffers[static_cast<std::size_t>(b)].name);
        op.output = ref(t);
        const std::vector<Expr> shape = shapeOf(b);
        for (std::size_t d = 0; d < shape.size(); ++d)
            op.domain.emplace_back(shape.size() == 1 ? "i" : "i" + std::to_string(d), shape[d]);
        op.body = ir::isFloat(tensors[static_cast<std::size_t>(t)].dtype)
            ? ir::floatConst(0.0, tensors[static_cast<std::size_t>(t)].dtype)
            : ir::intConst(0, tensors[static_cast<std::size_t>(t)].dtype);
        op.source = ir::SourceSpan{where, where};
        op.stage = stage;
        ops.push_back(std::move(op));
        commit(b, t);
    }

    std::string uniqueOpName(const std::string &base)
    {
        std::string name = base;
        for (int n = 2; m_opNames.count(name); ++n)
            name = base + "_" + std::to_string(n);
        m_opNames.insert(name);
        return name;
    }

    std::vector<std::string> buildLaunch(const LaunchOps &launch);

    std::vector<int> firstInput;
    int stage = 0; ///< opaque launches met so far (ir::ComputeOp::stage)
    std::vector<OpaqueBufferUse> opaqueUses;

    /// An opaque launch passed buffer b: records what b holds now and, if the launch may write it,
    /// waits for the read that names what it wrote.
    void opaqueUse(int launch, int b, bool writes)
    {
        for (const OpaqueBufferUse &u : opaqueUses)
            if (u.launch == launch && u.buffer == b)
                return;
        const int t = current(b);
        opaqueUses.push_back(
            {launch, b, t >= 0 ? tensors[static_cast<std::size_t>(t)].name : std::string(), {}, writes});
        if (writes)
            m_pendingAfter[b] = opaqueUses.size() - 1;
    }

private:
    Expr convertRead(const Expr &r, const std::map<int, int> &intermediates, const ir::SourceSpan &span);

    const HostProgram &m_host;
    const ShapeMap &m_shapes;
    IndexMath &m_math;
    std::vector<BufferState> m_states;
    std::set<std::string> m_names;
    std::set<std::string> m_opNames;
    std::set<std::string> m_reserved; ///< size names: iteration variables must not look like them
    std::map<int, std::size_t> m_pendingAfter; ///< buffer -> opaqueUses entry waiting for its `after`
};

Expr Assembler::convertRead(const Expr &r, const std::map<int, int> &intermediates, const ir::SourceSpan &span)
{
    const int id = r.tensor().id;
    if (isIntermediateTensor(id)) {
        const int t = intermediates.at(intermediateIndex(id));
        return ir::read(ref(t), r.operands());
    }
    if (id < 0)
        refuseAt(span, "value", "an internal value could not be resolved");
    const int t = readTensor(id, span.begin);
    return ir::read(ref(t), flatIndices(r.operand(0), shapeOf(id), m_math));
}

std::vector<std::string> Assembler::buildLaunch(const LaunchOps &launch)
{
    std::vector<std::string> names;
    std::map<int, int> intermediates; // flat op index -> tensor
    std::vector<std::pair<int, int>> writes;
    for (std::size_t k = 0; k < launch.ops.size(); ++k) {
        const FlatOp &op = launch.ops[k];
        declareOpRanges(op, m_math);

        // Display names: the source's names where known, unique within the op.
        std::set<std::string> used = m_reserved;
        auto displayName = [&](const std::string &hint, const char *fallback) {
            std::string base = hint.empty() || hint[0] == '%' ? std::string(fallback) : hint;
            std::string name = base;
            for (int n = 2; used.count(name); ++n)
                name = base + std::to_string(n);
            used.insert(name);
            return name;
        };

        ir::ComputeOp out;
        std::map<std::string, Expr> rename;
        std::vector<std::pair<std::string, std::pair<Expr, Expr>>> displayRanges;
        int tensor = -1;
        std::vector<Expr> intermediateShape;
        Expr coverage = ir::boolConst(true);
        bool partial = false;
        if (op.buffer < 0) {
            std::vector<Expr> shape;
            for (const FlatVar &v : op.spatial) {
                const std::string name = displayName(v.hint, out.domain.empty() ? "i" : "j");
                out.domain.emplace_back(name, m_math.simplify(v.hi - v.lo), v.lo);
                rename[v.name] = ir::var(name);
                displayRanges.push_back({name, {v.lo, v.hi}});
                shape.push_back(v.hi);
            }
            intermediateShape = shape;
        } else {
            const BufferInfo &info = m_host.buffers[static_cast<std::size_t>(op.buffer)];
            const std::vector<Expr> shape = shapeOf(op.buffer);
            std::vector<IntPoly> dims;
            for (const Expr &d : shape)
                dims.push_back(*m_math.toPoly(d));
            auto mapping = writeMapping(op, dims, m_math);
            if (!mapping)
                refuseAt(op.span, info.name + "[...]",
                         "the store's index cannot be written as one thread index per dimension of '" + info.name
                             + "' " + ir::Shape(shape).toString() + ", so different threads may write the same element",
                         "index the output as row * width + column with one thread per element");
            for (std::size_t d = 0; d < shape.size(); ++d) {
                const std::string &v = mapping->vars[d];
                // A constant index (thread 0 writes c[0]) is a dimension of extent one.
                const FlatVar constant{{}, {}, Expr(0), Expr(1)};
                const FlatVar &fv = v.empty() ? constant
                                              : *std::find_if(op.spatial.begin(), op.spatial.end(),
                                                              [&](const FlatVar &x) { return x.name == v; });
                const IntPoly offset = mapping->offsets[d];
                auto lo = *m_math.toPoly(fv.lo) + offset;
                auto hi = *m_math.toPoly(fv.hi) + offset;
                if (!m_math.nonNegative(lo) || !m_math.lessEqual(hi, dims[d]))
                    refuseAt(op.span, info.name + "[...]",
                             "cannot prove that the store stays inside '" + info.name + "' (dimension " + std::to_string(d)
                                 + " covers [" + m_math.toExpr(lo).toString() + ", " + m_math.toExpr(hi).toString()
                                 + ") of " + shape[d].toString() + ")",
                             "guard the store with the buffer's bounds, e.g. if (i < n)");
                const bool full = lo.isZero() && (hi - dims[d]).isZero();
                const std::string name = displayName(fv.hint, shape.size() == 1 ? "i" : d == 0 ? "i" : d == 1 ? "j" : "l");
                const Expr w = ir::var(name);
                if (!v.empty())
                    rename[v] = m_math.simplify(w - m_math.toExpr(offset));
                if (full) {
                    out.domain.emplace_back(name, shape[d]);
                } else {
                    partial = true;
                    out.domain.emplace_back(name, m_math.toExpr(hi - lo), m_math.toExpr(lo));
                    coverage = ir::logicalAnd(coverage, ir::logicalAnd(ir::ge(w, m_math.toExpr(lo)), ir::lt(w, m_math.toExpr(hi))));
                }
                displayRanges.push_back({name, {m_math.toExpr(lo), m_math.toExpr(hi)}});
            }
            const bool guarded = !isBoolConst(op.partialGuard, true);
            if ((partial || guarded) && hasContents(op.buffer)) {
                if (op.reduceKind)
                    refuseAt(op.span, info.name, "the reduction writes only part of '" + info.name
                                                     + "', whose other elements keep earlier values",
                             "write every element, or write to a fresh buffer");
            } else if (guarded) {
                refuseAt(op.span, info.name, "'" + info.name + "' is written only where "
                                                 + op.partialGuard.toString()
                                                 + " holds, which is not a rectangular region, and the other elements "
                                                   "are never initialized",
                         "write every element (use a ternary for the others)");
            } else if (partial) {
                std::string region;
                for (const ir::IterVar &iv : out.domain)
                    region += (region.empty() ? "" : ", ") + iv.toString();
                diagnostics.push_back({Severity::Warning, op.span.begin,
                                       "the kernel writes only part of '" + info.name + "' (" + region
                                           + "); the other elements stay uninitialized"});
                partial = false;
            }
        }
        for (const LoopVar &r : op.reduceVars) {
            const std::string name = displayName(r.hint, "k");
            rename[r.name] = ir::var(name);
        }

        auto convert = [&](const Expr &e) {
            if (!e.defined())
                return e;
            const Expr converted = rewriteReads(e, m_math, [&](const Expr &r) { return convertRead(r, intermediates, op.span); });
            return ir::substitute(converted, rename);
        };
        std::vector<std::string> order;
        for (const ir::IterVar &iv : out.domain)
            order.push_back(iv.name);
        for (const LoopVar &r : op.reduceVars)
            order.push_back(rename.at(r.name).name());
        m_math.setVarOrder(order);
        // Simplify in display names, with their ranges, so offsets fold (w - 1 + 1 -> w).
        for (const auto &[name, range] : displayRanges)
            m_math.setRange(name, ir::substitute(range.first, rename), ir::substitute(range.second, rename));
        Expr body = recognizeIdioms(convert(op.body));
        Expr guard = convert(op.partialGuard);
        Expr init = convert(op.init);
        std::vector<ir::IterVar> reduceVars;
        for (const LoopVar &r : op.reduceVars) {
            const std::string name = rename.at(r.name).name();
            const Expr lo = m_math.simplify(ir::substitute(r.lo, rename));
            const Expr hi = m_math.simplify(ir::substitute(r.hi, rename));
            m_math.setRange(name, lo, hi);
            reduceVars.emplace_back(name, m_math.simplify(hi - lo), lo);
        }
        body = m_math.simplify(body);
        if (init.defined())
            init = m_math.simplify(init);
        if (partial || !isBoolConst(guard, true)) {
            // Elements outside the written region keep the buffer's previous contents.
            const int previous = readTensor(op.buffer, op.span.begin);
            std::vector<Expr> indices;
            for (ir::IterVar &iv : out.domain) {
                indices.push_back(iv.var());
            }
            const std::vector<Expr> shape = shapeOf(op.buffer);
            for (std::size_t d = 0; d < out.domain.size(); ++d) {
                out.domain[d].lowerBound = Expr(0);
                out.domain[d].extent = shape[d];
                // The op now spans the whole buffer: the coverage test must not fold away.
                m_math.setRange(out.domain[d].name, Expr(0), shape[d]);
            }
            body = selectOrFold(m_math.simplify(ir::logicalAnd(coverage, guard)), body, ir::read(ref(previous), indices));
        }
        // Created after the reads, so an in-place update reads d_y and writes d_y_1.
        if (op.buffer >= 0) {
            tensor = newVersion(op.buffer);
            writes.emplace_back(op.buffer, tensor);
        } else {
            tensor = addTensor(op.name, op.dtype, intermediateShape, true, -1);
            intermediates[static_cast<int>(k)] = tensor;
        }
        out.name = uniqueOpName(op.name + (op.buffer >= 0 && launch.ops.size() - intermediates.size() > 1 && !op.parameter.empty()
                                               ? "_" + op.parameter
                                               : std::string()));
        out.output = ref(tensor);
        out.body = body;
        if (op.reduceKind)
            out.reduction = ir::Reduction{*op.reduceKind, reduceVars, init};
        out.source = op.span;
        out.stage = stage;
        names.push_back(out.name);
        ops.push_back(std::move(out));
    }
    for (const auto &[b, t] : writes)
        commit(b, t);
    return names;
}

} // namespace

std::variant<Assembled, LaunchFailure> assemble(const HostProgram &host, const std::vector<std::optional<LaunchOps>> &launches,
                                                const std::vector<std::set<int>> &opaqueWrites, const ShapeMap &shapes,
                                                const std::string &graphName, IndexMath &math,
                                                const std::set<std::string> &reservedNames)
{
    Assembler a(host, shapes, math, reservedNames);
    Assembled result;
    result.launchOps.resize(host.launches.size());
    a.firstInput.assign(host.buffers.size(), -1);
    for (const HostEvent &ev : host.events) {
        switch (ev.kind) {
        case HostEvent::Kind::CopyIn:
        case HostEvent::Kind::HostWrite:
        case HostEvent::Kind::ExternalWrite:
            a.setExternal(ev.buffer);
            break;
        case HostEvent::Kind::Zero:
            a.fill(ev.buffer, ev.location);
            break;
        case HostEvent::Kind::CopyOut:
        case HostEvent::Kind::HostRead:
            a.markOutput(ev.buffer);
            break;
        case HostEvent::Kind::DeviceCopy:
            a.markOutput(ev.source);
            a.setExternal(ev.buffer);
            result.diagnostics.push_back({Severity::Note, ev.location,
                                          "device-to-device copy: the destination becomes a graph input"});
            break;
        case HostEvent::Kind::Launch: {
            const auto l = static_cast<std::size_t>(ev.launch);
            const HostLaunch &hl = host.launches[l];
            if (!launches[l]) {
                for (int b : hl.bufferArguments) {
                    if (b >= 0) {
                        a.markOutput(b);
                        a.opaqueUse(static_cast<int>(l), b, opaqueWrites[l].count(b) > 0);
                    }
                }
                for (int b : opaqueWrites[l])
                    a.setExternal(b);
                ++a.stage;
                break;
            }
            try {
                result.launchOps[l] = a.buildLaunch(*launches[l]);
            } catch (const LiftRefusal &r) {
                return LaunchFailure{l, r.refusal()};
            }
            break;
        }
        }
    }

    // Results: what the host copies back or reads, and anything no op reads. The rest stays an
    // intermediate that later agents may fuse away.
    std::set<int> consumed;
    for (const ir::ComputeOp &op : a.ops) {
        for (const ir::TensorRef &t : op.inputs())
            consumed.insert(t.id);
    }
    ir::Graph graph(graphName);
    for (std::size_t t = 0; t < a.tensors.size(); ++t) {
        const TensorDecl &d = a.tensors[t];
        ir::TensorRole role = ir::TensorRole::Input;
        if (d.produced)
            role = d.output || !consumed.count(static_cast<int>(t)) ? ir::TensorRole::Output : ir::TensorRole::Intermediate;
        graph.addTensor(d.name, d.dtype, ir::Shape(d.shape), role);
    }
    for (ir::ComputeOp &op : a.ops)
        graph.addOp(std::move(op));
    result.graph = std::move(graph);
    for (std::size_t b = 0; b < host.buffers.size(); ++b) {
        BufferPlan plan;
        const BufferInfo &info = host.buffers[b];
        plan.name = info.name;
        plan.dtype = info.dtype;
        plan.elements = info.elements;
        plan.shape = a.shapeOf(static_cast<int>(b));
        if (a.firstInput[b] >= 0)
            plan.inputTensor = a.tensors[static_cast<std::size_t>(a.firstInput[b])].name;
        const int t = a.current(static_cast<int>(b));
        if (t >= 0 && a.tensors[static_cast<std::size_t>(t)].produced)
            plan.outputTensor = a.tensors[static_cast<std::size_t>(t)].name;
        result.buffers.push_back(std::move(plan));
    }
    for (Diagnostic &d : a.diagnostics)
        result.diagnostics.push_back(std::move(d));
    result.opaqueUses = std::move(a.opaqueUses);
    return result;
}

} // namespace stitch::frontend::cudalift
