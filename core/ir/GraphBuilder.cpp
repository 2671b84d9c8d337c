#include "core/ir/GraphBuilder.h"

namespace stitch::ir {

Tensor GraphBuilder::input(std::string name, DType dtype, Shape shape)
{
    return m_graph.addTensor(std::move(name), dtype, std::move(shape), TensorRole::Input);
}

Tensor GraphBuilder::output(std::string name, DType dtype, Shape shape)
{
    return m_graph.addTensor(std::move(name), dtype, std::move(shape), TensorRole::Output);
}

Tensor GraphBuilder::intermediate(std::string name, DType dtype, Shape shape)
{
    return m_graph.addTensor(std::move(name), dtype, std::move(shape), TensorRole::Intermediate);
}

ComputeOp &GraphBuilder::compute(const Tensor &out, const std::vector<Expr> &vars, Expr body)
{
    ComputeOp op;
    op.name = out.name;
    op.output = out.ref();
    for (std::size_t d = 0; d < vars.size(); ++d) {
        // A non-variable or a var beyond the rank yields an unnamed or unbounded IterVar,
        // which validate() reports instead of this builder guessing.
        const bool isVar = vars[d].defined() && vars[d].kind() == ExprKind::IterVar;
        const Expr extent = d < out.shape.dims().size() ? out.shape[d] : Expr();
        op.domain.emplace_back(isVar ? vars[d].name() : std::string(), extent);
    }
    op.body = std::move(body);
    return add(std::move(op));
}

ComputeOp &GraphBuilder::compute(const Tensor &out, const std::vector<Expr> &vars, Reduction reduction, Expr body)
{
    ComputeOp &op = compute(out, vars, std::move(body));
    op.reduction = std::move(reduction);
    return op;
}

ComputeOp &GraphBuilder::add(ComputeOp op)
{
    m_ops.push_back(std::move(op));
    return m_ops.back();
}

Graph GraphBuilder::finish() const
{
    Graph graph = m_graph;
    for (const ComputeOp &op : m_ops)
        graph.addOp(op);
    return graph;
}

Result<Graph> GraphBuilder::build() const
{
    Graph graph = finish();
    Status status = graph.validate();
    if (!status)
        return status.error();
    return graph;
}

} // namespace stitch::ir
