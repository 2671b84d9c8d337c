#include "core/ir/Graph.h"

#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>

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
    std::vector<TensorId> reads;
    for (const TensorRef &t : op.inputs())
        reads.push_back(t.id);
    // Appending keeps a topological order unless an op already placed reads the new output: the
    // earliest-ready sort below would return the list unchanged, so skip it.
    const bool readByEarlierOp = m_readIds.count(op.output.id) > 0;
    m_readIds.insert(reads.begin(), reads.end());
    m_ops.push_back(std::move(op));
    m_opReads.push_back(std::move(reads));
    if (readByEarlierOp)
        sortTopologically();
}

void Graph::sortTopologically()
{
    // Kahn's algorithm that always takes the earliest ready op, so an already ordered list
    // (the usual case: ops added producer first) keeps the order the author wrote.
    const std::size_t n = m_ops.size();
    std::unordered_map<TensorId, std::vector<std::size_t>> writers;
    for (std::size_t i = 0; i < n; ++i)
        writers[m_ops[i].output.id].push_back(i);
    std::vector<std::vector<std::size_t>> dependents(n);
    std::vector<std::size_t> unplacedProducers(n, 0);
    std::vector<std::size_t> producers;
    for (std::size_t i = 0; i < n; ++i) {
        producers.clear();
        for (TensorId id : m_opReads[i]) {
            auto it = writers.find(id);
            if (it == writers.end())
                continue;
            for (std::size_t j : it->second) {
                if (j != i)
                    producers.push_back(j);
            }
        }
        std::sort(producers.begin(), producers.end());
        producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
        unplacedProducers[i] = producers.size();
        for (std::size_t j : producers)
            dependents[j].push_back(i);
    }

    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < n; ++i) {
        if (unplacedProducers[i] == 0)
            ready.push(i);
    }
    std::vector<std::size_t> order;
    order.reserve(n);
    while (!ready.empty()) {
        const std::size_t i = ready.top();
        ready.pop();
        order.push_back(i);
        for (std::size_t d : dependents[i]) {
            if (--unplacedProducers[d] == 0)
                ready.push(d);
        }
    }
    if (order.size() < n)
        return; // a cycle: leave the order for validate() to report

    std::vector<ComputeOp> sorted;
    std::vector<std::vector<TensorId>> sortedReads;
    sorted.reserve(n);
    sortedReads.reserve(n);
    for (std::size_t i : order) {
        sorted.push_back(std::move(m_ops[i]));
        sortedReads.push_back(std::move(m_opReads[i]));
    }
    m_ops = std::move(sorted);
    m_opReads = std::move(sortedReads);
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
