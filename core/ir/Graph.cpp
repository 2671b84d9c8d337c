#include "core/ir/Graph.h"

#include "core/ir/ExprUtil.h"

#include <algorithm>

namespace stitch::ir {

Tensor Graph::addTensor(std::string name, DType dtype, Shape shape, TensorRole role)
{
    Tensor tensor;
    tensor.id = static_cast<TensorId>(m_tensors.size());
    tensor.name = std::move(name);
    tensor.dtype = dtype;
    tensor.shape = std::move(shape);
    tensor.role = role;
    m_tensors.push_back(tensor);
    return tensor;
}

void Graph::addOp(ComputeOp op)
{
    m_ops.push_back(std::move(op));
    sortTopologically();
}

void Graph::sortTopologically()
{
    // Kahn's algorithm that always takes the earliest ready op, so an already ordered list
    // (the usual case: ops added producer first) keeps the order the author wrote.
    const std::size_t n = m_ops.size();
    std::vector<std::vector<TensorId>> readsOf(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (const TensorRef &t : m_ops[i].inputs())
            readsOf[i].push_back(t.id);
    }
    auto dependsOn = [&](std::size_t consumer, std::size_t producer) {
        const TensorId written = m_ops[producer].output.id;
        return consumer != producer
            && std::find(readsOf[consumer].begin(), readsOf[consumer].end(), written) != readsOf[consumer].end();
    };

    std::vector<bool> placed(n, false);
    std::vector<std::size_t> order;
    order.reserve(n);
    while (order.size() < n) {
        bool progress = false;
        for (std::size_t i = 0; i < n && !progress; ++i) {
            if (placed[i])
                continue;
            bool ready = true;
            for (std::size_t j = 0; j < n && ready; ++j)
                ready = placed[j] || !dependsOn(i, j);
            if (ready) {
                placed[i] = true;
                order.push_back(i);
                progress = true;
            }
        }
        if (!progress)
            return; // a cycle: leave the insertion order for validate() to report
    }
    std::vector<ComputeOp> sorted;
    sorted.reserve(n);
    for (std::size_t i : order)
        sorted.push_back(std::move(m_ops[i]));
    m_ops = std::move(sorted);
}

const Tensor *Graph::tensor(TensorId id) const
{
    if (id < 0 || static_cast<std::size_t>(id) >= m_tensors.size())
        return nullptr;
    return &m_tensors[static_cast<std::size_t>(id)];
}

const Tensor *Graph::findTensor(std::string_view name) const
{
    auto it = std::find_if(m_tensors.begin(), m_tensors.end(), [&](const Tensor &t) { return t.name == name; });
    return it != m_tensors.end() ? &*it : nullptr;
}

const ComputeOp *Graph::findOp(std::string_view name) const
{
    auto it = std::find_if(m_ops.begin(), m_ops.end(), [&](const ComputeOp &op) { return op.name == name; });
    return it != m_ops.end() ? &*it : nullptr;
}

std::vector<const Tensor *> Graph::inputs() const
{
    std::vector<const Tensor *> result;
    for (const Tensor &t : m_tensors) {
        if (t.role == TensorRole::Input)
            result.push_back(&t);
    }
    return result;
}

std::vector<const Tensor *> Graph::outputs() const
{
    std::vector<const Tensor *> result;
    for (const Tensor &t : m_tensors) {
        if (t.role == TensorRole::Output)
            result.push_back(&t);
    }
    return result;
}

const ComputeOp *Graph::producer(TensorId id) const
{
    auto it = std::find_if(m_ops.begin(), m_ops.end(), [&](const ComputeOp &op) { return op.output.id == id; });
    return it != m_ops.end() ? &*it : nullptr;
}

std::vector<const ComputeOp *> Graph::consumers(TensorId id) const
{
    std::vector<const ComputeOp *> result;
    for (const ComputeOp &op : m_ops) {
        if (op.reads(id))
            result.push_back(&op);
    }
    return result;
}

std::vector<std::string> Graph::sizeVars() const
{
    std::vector<std::string> names;
    auto add = [&](const Expr &e) {
        for (std::string &name : collectSizeVars(e)) {
            if (std::find(names.begin(), names.end(), name) == names.end())
                names.push_back(std::move(name));
        }
    };
    for (const Tensor &t : m_tensors) {
        for (const Expr &dim : t.shape.dims())
            add(dim);
    }
    for (const ComputeOp &op : m_ops) {
        for (const IterVar &iv : op.allIterVars()) {
            add(iv.lowerBound);
            add(iv.extent);
        }
        if (op.reduction)
            add(op.reduction->init);
        add(op.body);
    }
    return names;
}

std::string Graph::toString() const
{
    std::string text = "graph " + (m_name.empty() ? std::string("<unnamed>") : m_name);
    const std::vector<std::string> sizes = sizeVars();
    if (!sizes.empty()) {
        text += " sizes ";
        for (std::size_t i = 0; i < sizes.size(); ++i)
            text += (i > 0 ? ", " : "") + sizes[i];
    }
    text += '\n';
    for (const Tensor &t : m_tensors)
        text += std::string(tensorRoleName(t.role)) + ' ' + t.toString() + '\n';
    for (const ComputeOp &op : m_ops) {
        text += op.toString();
        const std::string domain = op.domainString();
        if (!domain.empty())
            text += "  where " + domain;
        if (!op.name.empty() && op.name != op.output.name)
            text += "  # " + op.name;
        text += '\n';
    }
    return text;
}

} // namespace stitch::ir
