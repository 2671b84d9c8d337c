#include "views/GraphDrawing.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace stitch::views {

namespace {

std::string typeAndShape(const ir::Tensor &t)
{
    return std::string(ir::dtypeName(t.dtype)) + t.shape.toString();
}

bool contains(const DrawnNode &n, int line, int column)
{
    if (n.begin.line <= 0)
        return false;
    if (n.end.line <= 0) // only a start is known: its line
        return line == n.begin.line;
    const auto at = std::tie(line, column);
    return std::tie(n.begin.line, n.begin.column) <= at && at <= std::tie(n.end.line, n.end.column);
}

} // namespace

int GraphDrawing::opCount() const
{
    return static_cast<int>(
        std::count_if(nodes.begin(), nodes.end(), [](const DrawnNode &n) { return n.kind == DrawnNode::Kind::Op; }));
}

int GraphDrawing::findNode(const std::string &name, DrawnNode::Kind kind) const
{
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].kind == kind && nodes[i].name == name)
            return static_cast<int>(i);
    return -1;
}

int GraphDrawing::nodeAt(int line, int column) const
{
    int best = -1;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const DrawnNode &n = nodes[i];
        if ((n.kind != DrawnNode::Kind::Op && n.kind != DrawnNode::Kind::Opaque) || !contains(n, line, column))
            continue;
        if (best >= 0) {
            const DrawnNode &b = nodes[static_cast<std::size_t>(best)];
            // A later start inside the other range is the inner one.
            if (std::tie(n.begin.line, n.begin.column) <= std::tie(b.begin.line, b.begin.column))
                continue;
        }
        best = static_cast<int>(i);
    }
    return best;
}

GraphDrawing drawingOf(const frontend::LiftedProgram &program, const std::vector<schedule::KernelGroup> &groups)
{
    const ir::Graph &g = program.graph;
    GraphDrawing d;

    std::map<std::string, int, std::less<>> kernelOfOp;
    for (const schedule::KernelGroup &group : groups) {
        int index = -1;
        for (const std::string &op : group.ops) {
            if (!g.findOp(op))
                continue;
            if (index < 0) {
                index = static_cast<int>(d.kernels.size());
                d.kernels.push_back({group.name, schedule::strategyName(group.strategy)});
            }
            kernelOfOp.emplace(op, index);
        }
    }

    auto addNode = [&d](DrawnNode n) {
        d.nodes.push_back(std::move(n));
        return static_cast<int>(d.nodes.size()) - 1;
    };
    auto addEdge = [&d](int from, int to, std::string tensor, std::string label) {
        d.edges.push_back({from, to, std::move(tensor), std::move(label)});
    };

    std::map<ir::TensorId, int> tensorNode; // inputs and outputs
    for (const ir::Tensor &t : g.tensors()) {
        if (t.role == ir::TensorRole::Intermediate)
            continue;
        DrawnNode n;
        n.kind = t.role == ir::TensorRole::Input ? DrawnNode::Kind::Input : DrawnNode::Kind::Output;
        n.name = t.name;
        n.detail = ir::tensorRoleName(t.role);
        n.toolTip = std::string(ir::tensorRoleName(t.role)) + " tensor " + t.toString();
        tensorNode[t.id] = addNode(std::move(n));
    }

    std::map<std::string, int, std::less<>> opNode;
    for (const ir::ComputeOp &op : g.ops()) {
        DrawnNode n;
        n.kind = DrawnNode::Kind::Op;
        n.name = op.name;
        n.detail = op.toString();
        n.toolTip = op.toString() + "\nwhere " + op.domainString();
        // Only what is in the lifted file itself links to the editor; an op lifted from an included
        // header says where it came from in its tooltip.
        if (op.source && (op.source->begin.file.empty() || op.source->begin.file == program.sourceFile)) {
            n.begin = op.source->begin;
            n.end = op.source->end;
        } else if (op.source) {
            n.toolTip += "\nfrom " + op.source->begin.toString();
        }
        if (auto it = kernelOfOp.find(op.name); it != kernelOfOp.end()) {
            n.kernel = it->second;
            n.toolTip += "\nkernel " + d.kernels[static_cast<std::size_t>(it->second)].name + " (" +
                         d.kernels[static_cast<std::size_t>(it->second)].strategy + ")";
        }
        opNode[op.name] = addNode(std::move(n));
    }

    std::vector<int> opaqueNode;
    for (const frontend::OpaqueKernel &k : program.opaque) {
        DrawnNode n;
        n.kind = DrawnNode::Kind::Opaque;
        n.name = k.name;
        n.detail = "opaque: kept as written";
        n.toolTip = k.why.toString();
        if (k.range.begin.file.empty() || k.range.begin.file == program.sourceFile) {
            n.begin = k.range.begin;
            n.end = k.range.end;
        }
        opaqueNode.push_back(addNode(std::move(n)));
    }

    // Buffers that opaque kernels write and no op or input provides.
    std::map<std::string, int, std::less<>> bufferNode;
    auto buffer = [&](const std::string &name) {
        if (auto it = bufferNode.find(name); it != bufferNode.end())
            return it->second;
        DrawnNode n;
        n.kind = DrawnNode::Kind::Buffer;
        n.name = name;
        n.detail = "buffer";
        const ir::Tensor *t = g.findTensor(name);
        n.toolTip = t ? "tensor " + t->toString() + ", written by an opaque kernel"
                      : "buffer " + name + ": read or written only by opaque kernels";
        return bufferNode[name] = addNode(std::move(n));
    };
    // An edge leaving the tensor's own node needs only its type; one leaving an op or kernel names it.
    auto isTensorNode = [&](int node, const std::string &name) {
        const DrawnNode &n = d.nodes[static_cast<std::size_t>(node)];
        return n.name == name && n.kind != DrawnNode::Kind::Op && n.kind != DrawnNode::Kind::Opaque;
    };
    auto labelOf = [&](const std::string &name) {
        const ir::Tensor *t = g.findTensor(name);
        return t ? t->toString() : std::string();
    };

    for (std::size_t k = 0; k < program.opaque.size(); ++k)
        for (const std::string &name : program.opaque[k].writes) {
            const ir::Tensor *t = g.findTensor(name);
            if (t && tensorNode.count(t->id))
                addEdge(opaqueNode[k], tensorNode[t->id], name, typeAndShape(*t));
            else
                addEdge(opaqueNode[k], buffer(name), name, labelOf(name));
        }

    // Where a tensor comes from: its input or output node, the op that writes it, or a buffer.
    auto sourceOf = [&](const ir::Tensor &t) {
        if (auto it = tensorNode.find(t.id); it != tensorNode.end())
            return it->second;
        if (const ir::ComputeOp *p = g.producer(t.id))
            return opNode[p->name];
        return buffer(t.name);
    };
    for (const ir::ComputeOp &op : g.ops())
        for (const ir::TensorRef &ref : op.inputs()) {
            const ir::Tensor *t = g.tensor(ref.id);
            if (!t)
                continue;
            const int from = sourceOf(*t);
            addEdge(from, opNode[op.name], t->name, isTensorNode(from, t->name) ? typeAndShape(*t) : t->toString());
        }
    for (const ir::Tensor &t : g.tensors())
        if (t.role == ir::TensorRole::Output)
            if (const ir::ComputeOp *p = g.producer(t.id))
                addEdge(opNode[p->name], tensorNode[t.id], t.name, typeAndShape(t));
    for (std::size_t k = 0; k < program.opaque.size(); ++k)
        for (const std::string &name : program.opaque[k].reads) {
            const auto &writes = program.opaque[k].writes;
            if (std::find(writes.begin(), writes.end(), name) != writes.end())
                continue; // a buffer it writes is drawn once, as written
            const ir::Tensor *t = g.findTensor(name);
            const int from = t ? sourceOf(*t) : buffer(name);
            addEdge(from, opaqueNode[k], name,
                    isTensorNode(from, name) ? (t ? typeAndShape(*t) : std::string()) : labelOf(name));
        }
    return d;
}

} // namespace stitch::views
