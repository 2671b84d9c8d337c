#include "core/ir/Interpreter.h"

#include "core/ir/ExprProgram.h"

#include <cmath>

namespace stitch::ir {

namespace {

struct Storage {
    std::vector<std::vector<std::int64_t>> extents; ///< by tensor id
    std::map<TensorId, BufferView> views;
    std::map<TensorId, double *> writable;
};

std::string opLabel(const ComputeOp &op)
{
    return "op '" + (op.name.empty() ? op.output.name : op.name) + "'";
}

Error opError(const ComputeOp &op, const std::string &message)
{
    Error error = makeError(ErrorKind::InvalidArgument, opLabel(op) + ": " + message);
    if (op.source && op.source->begin.known())
        error.location = op.source->begin;
    return error;
}

/// Runs one op over its whole domain.
class OpRunner {
public:
    OpRunner(const ComputeOp &op, const SizeBindings &sizes, const Storage &storage)
        : m_op(op), m_sizes(sizes), m_storage(storage)
    {
    }

    Status run()
    {
        const auto outId = static_cast<std::size_t>(m_op.output.id);
        const std::vector<std::int64_t> &outExtents = m_storage.extents[outId];
        m_outStrides = rowMajorStrides(outExtents);
        m_out = m_storage.writable.at(m_op.output.id);

        for (const IterVar &iv : m_op.allIterVars())
            m_slotNames.push_back(iv.name);
        m_spatial = m_op.domain.size();

        bool empty = false;
        for (std::size_t d = 0; d < m_spatial; ++d) {
            const IterVar &iv = m_op.domain[d];
            auto lower = evaluateSizeExpr(iv.lowerBound, m_sizes);
            if (!lower)
                return opError(m_op, lower.error().message);
            auto extent = evaluateSizeExpr(iv.extent, m_sizes);
            if (!extent)
                return opError(m_op, extent.error().message);
            if (*extent <= 0) {
                empty = true;
                continue;
            }
            if (*lower < 0 || *lower + *extent > outExtents[d]) {
                return opError(m_op, "'" + iv.name + "' covers [" + std::to_string(*lower) + ", "
                                         + std::to_string(*lower + *extent) + ") but '" + m_op.output.name
                                         + "' has extent " + std::to_string(outExtents[d]) + " in dimension "
                                         + std::to_string(d));
            }
            m_lower.push_back(*lower);
            m_upper.push_back(*lower + *extent);
        }
        if (empty)
            return Ok{};

        if (Status s = compile(m_op.body, m_body); !s)
            return s;
        if (m_op.reduction) {
            if (Status s = compile(m_op.reduction->initValue(m_op.output.dtype), m_init); !s)
                return s;
            for (const IterVar &iv : m_op.reduction->vars) {
                m_reduceLower.emplace_back();
                m_reduceExtent.emplace_back();
                if (Status s = compile(iv.lowerBound, m_reduceLower.back()); !s)
                    return s;
                if (Status s = compile(iv.extent, m_reduceExtent.back()); !s)
                    return s;
            }
            m_reduceLowerValues.resize(m_reduceExtent.size());
            m_reduceUpperValues.resize(m_reduceExtent.size());
        }
        return loop();
    }

private:
    Status compile(const Expr &e, ExprProgram &program)
    {
        auto compiled = ExprProgram::compile(e, m_slotNames, m_sizes, m_storage.views);
        if (!compiled)
            return opError(m_op, compiled.error().message);
        program = std::move(compiled).value();
        return Ok{};
    }

    /// The fault with the point it happened at; reduction variables are shown only when the
    /// fault is inside the reduction loop, where they have meaningful values.
    Error fault(const std::string &what, bool inReduction = false) const
    {
        const std::size_t shown = inReduction ? m_slotNames.size() : m_spatial;
        std::string at;
        for (std::size_t s = 0; s < shown; ++s)
            at += (s > 0 ? ", " : "") + m_slotNames[s] + " = " + std::to_string(m_slots[s]);
        return opError(m_op, at.empty() ? what : what + " at " + at);
    }

    Status loop()
    {
        m_slots.assign(m_slotNames.size(), 0);
        for (std::size_t d = 0; d < m_spatial; ++d)
            m_slots[d] = m_lower[d];
        const DType outType = m_op.output.dtype;
        for (;;) {
            std::int64_t offset = 0;
            for (std::size_t d = 0; d < m_spatial; ++d)
                offset += m_slots[d] * m_outStrides[d];
            double value = 0.0;
            if (Status s = m_op.reduction ? reducePoint(value) : evaluate(m_body, value); !s)
                return s;
            if (!convertToType(outType, value))
                return fault("value " + std::to_string(value) + " does not fit " + dtypeName(outType));
            m_out[offset] = value;

            // Odometer over the spatial variables, last one fastest (row-major output order).
            std::size_t d = m_spatial;
            while (d > 0) {
                --d;
                if (++m_slots[d] < m_upper[d])
                    break;
                m_slots[d] = m_lower[d];
                if (d == 0)
                    return Ok{};
            }
            if (m_spatial == 0)
                return Ok{};
        }
    }

    Status evaluate(const ExprProgram &program, double &value) const
    {
        if (!program.evaluate(m_slots.data(), value))
            return fault(program.fault());
        return Ok{};
    }

    template <typename Combine>
    Status reduceWith(double &acc, Combine combine)
    {
        const std::size_t first = m_spatial;
        const std::size_t count = m_reduceExtent.size();
        const std::size_t last = first + count - 1;
        std::vector<std::int64_t> &lower = m_reduceLowerValues;
        std::vector<std::int64_t> &upper = m_reduceUpperValues;
        for (std::size_t r = 0; r < count; ++r) {
            double lo = 0.0;
            double extent = 0.0;
            if (Status s = evaluate(m_reduceLower[r], lo); !s)
                return s;
            if (Status s = evaluate(m_reduceExtent[r], extent); !s)
                return s;
            if (extent <= 0.0)
                return Ok{}; // an empty range leaves the init value
            lower[r] = static_cast<std::int64_t>(lo);
            upper[r] = lower[r] + static_cast<std::int64_t>(extent);
            m_slots[first + r] = lower[r];
        }
        std::int64_t *innermost = &m_slots[last];
        const std::int64_t innerLower = lower[count - 1];
        const std::int64_t innerUpper = upper[count - 1];
        for (;;) {
            for (*innermost = innerLower; *innermost < innerUpper; ++*innermost) {
                double value = 0.0;
                if (!m_body.evaluate(m_slots.data(), value))
                    return fault(m_body.fault(), true);
                acc = combine(acc, value);
            }
            std::size_t r = count - 1;
            for (;;) {
                if (r == 0)
                    return Ok{};
                --r;
                if (++m_slots[first + r] < upper[r])
                    break;
                m_slots[first + r] = lower[r];
            }
        }
    }

    Status reducePoint(double &acc)
    {
        if (Status s = evaluate(m_init, acc); !s)
            return s;
        switch (m_op.reduction->kind) {
        case ReduceKind::Sum: return reduceWith(acc, [](double a, double b) { return a + b; });
        case ReduceKind::Prod: return reduceWith(acc, [](double a, double b) { return a * b; });
        case ReduceKind::Max: return reduceWith(acc, [](double a, double b) { return std::fmax(a, b); });
        case ReduceKind::Min: return reduceWith(acc, [](double a, double b) { return std::fmin(a, b); });
        }
        return Ok{};
    }

    const ComputeOp &m_op;
    const SizeBindings &m_sizes;
    const Storage &m_storage;
    std::vector<std::string> m_slotNames;
    std::size_t m_spatial = 0;
    std::vector<std::int64_t> m_lower;
    std::vector<std::int64_t> m_upper;
    std::vector<std::int64_t> m_outStrides;
    double *m_out = nullptr;
    ExprProgram m_body;
    ExprProgram m_init;
    std::vector<ExprProgram> m_reduceLower;
    std::vector<ExprProgram> m_reduceExtent;
    std::vector<std::int64_t> m_reduceLowerValues;
    std::vector<std::int64_t> m_reduceUpperValues;
    std::vector<std::int64_t> m_slots;
};

} // namespace

Interpreter::Interpreter(Graph graph, InterpreterOptions options)
    : m_graph(std::move(graph)), m_options(options)
{
}

Result<TensorValues> Interpreter::run(const SizeBindings &sizes, const TensorValues &inputs) const
{
    if (Status valid = m_graph.validate(); !valid)
        return valid.error();
    for (const std::string &name : m_graph.sizeVars()) {
        if (sizes.find(name) == sizes.end())
            return makeError(ErrorKind::InvalidArgument, "size variable '" + name + "' is not bound");
    }
    for (const auto &entry : inputs) {
        const Tensor *t = m_graph.findTensor(entry.first);
        if (!t || t->role != TensorRole::Input)
            return makeError(ErrorKind::InvalidArgument, "'" + entry.first + "' is not an input of the graph");
    }

    Storage storage;
    TensorValues results;
    for (const Tensor &t : m_graph.tensors()) {
        auto extents = t.shape.evaluate(sizes);
        if (!extents)
            return makeError(ErrorKind::InvalidArgument, "tensor '" + t.name + "': " + extents.error().message);
        double count = 1.0;
        for (std::int64_t e : *extents)
            count *= static_cast<double>(e);
        if (count > static_cast<double>(m_options.maxTensorElements)) {
            return makeError(ErrorKind::ResourceLimit, "tensor '" + t.name + "' would have "
                                 + std::to_string(static_cast<long long>(count)) + " elements, more than the limit of "
                                 + std::to_string(m_options.maxTensorElements));
        }
        const auto elements = static_cast<std::size_t>(elementCount(*extents));
        BufferView view{t.name, nullptr, *extents, rowMajorStrides(*extents)};
        if (t.role == TensorRole::Input) {
            auto it = inputs.find(t.name);
            if (it == inputs.end())
                return makeError(ErrorKind::InvalidArgument, "no data for input '" + t.name + "'");
            if (it->second.size() != elements) {
                return makeError(ErrorKind::InvalidArgument, "input '" + t.name + "' has " + std::to_string(it->second.size())
                                     + " elements but its shape " + t.shape.toString() + " needs " + std::to_string(elements));
            }
            // Inputs are read in place: the caller's vectors outlive this call.
            view.data = it->second.data();
        } else {
            TensorData &data = results[t.name];
            data.assign(elements, 0.0);
            view.data = data.data();
            storage.writable[t.id] = data.data();
        }
        storage.views.emplace(t.id, std::move(view));
        storage.extents.push_back(std::move(*extents));
    }

    for (const ComputeOp &op : m_graph.ops()) {
        OpRunner runner(op, sizes, storage);
        if (Status s = runner.run(); !s)
            return s.error();
    }
    return results;
}

Result<TensorValues> interpret(const Graph &graph, const SizeBindings &sizes, const TensorValues &inputs)
{
    return Interpreter(graph).run(sizes, inputs);
}

} // namespace stitch::ir
