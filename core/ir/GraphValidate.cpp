// Graph::validate: every structural rule of the IR in one place, reported all at once.
#include "core/ir/Graph.h"

#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace stitch::ir {

namespace {

class Problems {
public:
    void add(std::string message, const ComputeOp *op = nullptr)
    {
        Diagnostic d;
        d.message = std::move(message);
        if (op && op->source)
            d.location = op->source->begin;
        m_diagnostics.push_back(std::move(d));
    }

    Status status(const std::string &graphName) const
    {
        if (m_diagnostics.empty())
            return Ok{};
        std::string message = m_diagnostics.front().message;
        if (m_diagnostics.size() > 1)
            message += " (and " + std::to_string(m_diagnostics.size() - 1) + " more)";
        if (!graphName.empty())
            message = "graph '" + graphName + "': " + message;
        Error error = makeError(ErrorKind::InvalidArgument, std::move(message));
        if (m_diagnostics.front().location.known())
            error.location = m_diagnostics.front().location;
        error.diagnostics = m_diagnostics;
        return error;
    }

private:
    std::vector<Diagnostic> m_diagnostics;
};

std::string quoted(const std::string &s)
{
    return "'" + s + "'";
}

std::string opLabel(const ComputeOp &op)
{
    if (!op.name.empty())
        return "op " + quoted(op.name);
    return "op writing " + quoted(op.output.name);
}

bool contains(const std::vector<std::string> &list, const std::string &value)
{
    return std::find(list.begin(), list.end(), value) != list.end();
}

class Validator {
public:
    Validator(const Graph &graph, Problems &problems) : m_graph(graph), m_problems(problems) {}

    void run()
    {
        // Tensor id -> the ops writing it, in op order: keeps the checks linear in the graph.
        const std::vector<ComputeOp> &ops = m_graph.ops();
        for (std::size_t i = 0; i < ops.size(); ++i)
            m_writersOf[ops[i].output.id].push_back(i);
        checkTensors();
        for (const ComputeOp &op : m_graph.ops())
            checkOp(op);
        checkOutputsWritten();
        checkCycles();
    }

private:
    // Rules for the expressions of ranges (shapes, extents, lower bounds) and of values.
    struct Scope {
        std::vector<std::string> vars; ///< iteration variables the expression may use
        bool allowReads = false;
        bool requireInteger = false;
        const char *varRule = "";      ///< appended to an unknown-variable message
    };

    void checkTensors()
    {
        std::map<std::string, TensorId> seen;
        for (const Tensor &t : m_graph.tensors()) {
            const std::string label = "tensor " + quoted(t.name);
            if (t.name.empty())
                m_problems.add("tensor #" + std::to_string(t.id) + " has no name");
            else if (!seen.emplace(t.name, t.id).second)
                m_problems.add("duplicate tensor name " + quoted(t.name));
            for (std::size_t d = 0; d < t.shape.dims().size(); ++d) {
                checkExpr(t.shape[d], Scope{{}, false, true, "; shapes may use only sizes"},
                          "dimension " + std::to_string(d) + " of " + label, nullptr);
            }
        }
    }

    void checkExpr(const Expr &e, const Scope &scope, const std::string &where, const ComputeOp *op)
    {
        if (!e.defined()) {
            m_problems.add(where + " is undefined", op);
            return;
        }
        if (hasUndefined(e)) {
            m_problems.add(where + " has an undefined sub-expression", op);
            return;
        }
        for (const std::string &name : collectIterVars(e)) {
            if (!contains(scope.vars, name))
                m_problems.add(where + " uses unknown iteration variable " + quoted(name) + scope.varRule, op);
        }
        if (scope.requireInteger && !isInteger(e.dtype()))
            m_problems.add(where + " has type " + dtypeName(e.dtype()) + ", not an integer type", op);
        for (const Expr &r : collectReads(e)) {
            if (!scope.allowReads) {
                m_problems.add(where + " reads tensor " + quoted(r.tensor().name)
                                   + "; ranges cannot depend on tensor data", op);
                continue;
            }
            checkRead(r, where, op);
        }
    }

    void checkRead(const Expr &r, const std::string &where, const ComputeOp *op)
    {
        const TensorRef &ref = r.tensor();
        const Tensor *t = m_graph.tensor(ref.id);
        if (!t) {
            m_problems.add(where + " reads unknown tensor " + quoted(ref.name), op);
            return;
        }
        if (t->name != ref.name) {
            m_problems.add(where + " reads tensor #" + std::to_string(ref.id) + " as " + quoted(ref.name)
                               + " but it is named " + quoted(t->name), op);
        }
        const auto arity = static_cast<int>(r.operands().size());
        if (arity != t->rank()) {
            m_problems.add(where + ": read " + r.toString() + " has " + std::to_string(arity) + " indices but "
                               + quoted(t->name) + " has rank " + std::to_string(t->rank()), op);
        }
        for (std::size_t i = 0; i < r.operands().size(); ++i) {
            const DType type = r.operand(i).dtype();
            if (!isInteger(type)) {
                m_problems.add(where + ": index " + std::to_string(i) + " of " + r.toString() + " has type "
                                   + dtypeName(type) + ", not an integer type", op);
            }
        }
        if (t->role != TensorRole::Input && !m_writersOf.count(t->id)) {
            m_problems.add(opLabel(*op) + " reads " + quoted(t->name)
                               + ", which no op writes and which is not an input", op);
        }
    }

    void checkOp(const ComputeOp &op)
    {
        const std::string label = opLabel(op);
        if (!op.name.empty() && !m_opNames.emplace(op.name).second)
            m_problems.add("duplicate op name " + quoted(op.name), &op);

        const Tensor *out = m_graph.tensor(op.output.id);
        if (!out) {
            m_problems.add(label + " writes unknown tensor " + quoted(op.output.name), &op);
        } else {
            if (out->name != op.output.name) {
                m_problems.add(label + " writes tensor #" + std::to_string(out->id) + " as "
                                   + quoted(op.output.name) + " but it is named " + quoted(out->name), &op);
            }
            if (out->role == TensorRole::Input)
                m_problems.add(label + " writes input tensor " + quoted(out->name), &op);
            auto [it, first] = m_writers.emplace(out->id, &op);
            if (!first) {
                m_problems.add("tensor " + quoted(out->name) + " is written by both " + opLabel(*it->second)
                                   + " and " + label, &op);
            }
            if (static_cast<int>(op.domain.size()) != out->rank()) {
                m_problems.add(label + " has " + std::to_string(op.domain.size()) + " spatial iteration variables but "
                                   + quoted(out->name) + " has rank " + std::to_string(out->rank()), &op);
            }
        }

        std::vector<std::string> spatial;
        std::vector<std::string> all;
        for (const IterVar &iv : op.allIterVars()) {
            if (iv.name.empty())
                m_problems.add(label + " has an iteration variable without a name", &op);
            else if (contains(all, iv.name))
                m_problems.add(label + " declares iteration variable " + quoted(iv.name) + " twice", &op);
            all.push_back(iv.name);
        }
        for (const IterVar &iv : op.domain) {
            const Scope scope{{}, false, true, "; spatial ranges may use only sizes"};
            checkExpr(iv.extent, scope, "extent of " + quoted(iv.name) + " in " + label, &op);
            checkExpr(iv.lowerBound, scope, "lower bound of " + quoted(iv.name) + " in " + label, &op);
            spatial.push_back(iv.name);
        }
        if (op.reduction) {
            if (op.reduction->vars.empty())
                m_problems.add(label + " has a reduction without reduction variables", &op);
            const Scope scope{spatial, false, true, "; reduction ranges may use only sizes and spatial variables"};
            for (const IterVar &iv : op.reduction->vars) {
                checkExpr(iv.extent, scope, "extent of " + quoted(iv.name) + " in " + label, &op);
                checkExpr(iv.lowerBound, scope, "lower bound of " + quoted(iv.name) + " in " + label, &op);
            }
            if (op.reduction->init.defined()) {
                checkExpr(op.reduction->init, Scope{spatial, true, false, "; the init may use only spatial variables"},
                          "init of " + label, &op);
            }
        }
        checkExpr(op.body, Scope{all, true, false, ""}, "body of " + label, &op);
    }

    void checkOutputsWritten()
    {
        for (const Tensor *t : m_graph.outputs()) {
            if (!m_writersOf.count(t->id))
                m_problems.add("output " + quoted(t->name) + " is never written");
        }
    }

    void checkCycles()
    {
        const std::vector<ComputeOp> &ops = m_graph.ops();
        const std::size_t n = ops.size();
        // Edge i -> j when op j reads what op i writes.
        std::vector<std::vector<std::size_t>> consumersOf(n);
        for (std::size_t j = 0; j < n; ++j) {
            for (const TensorRef &t : ops[j].inputs()) {
                auto writers = m_writersOf.find(t.id);
                if (writers == m_writersOf.end())
                    continue;
                for (std::size_t i : writers->second) {
                    if (i == j)
                        m_problems.add(opLabel(ops[j]) + " reads its own output " + quoted(t.name), &ops[j]);
                    else
                        consumersOf[i].push_back(j);
                }
            }
        }
        // Depth-first search with an explicit stack: a chain of thousands of ops must not
        // exhaust the call stack. path holds the active ops and how many consumers each has seen.
        enum class Mark { New, Active, Done };
        std::vector<Mark> marks(n, Mark::New);
        std::vector<std::pair<std::size_t, std::size_t>> path;
        for (std::size_t root = 0; root < n; ++root) {
            if (marks[root] != Mark::New)
                continue;
            marks[root] = Mark::Active;
            path.emplace_back(root, 0);
            while (!path.empty()) {
                auto &[i, next] = path.back();
                if (next == consumersOf[i].size()) {
                    marks[i] = Mark::Done;
                    path.pop_back();
                    continue;
                }
                const std::size_t j = consumersOf[i][next++];
                if (marks[j] == Mark::Active) {
                    std::string cycle;
                    auto start = std::find_if(path.begin(), path.end(), [&](const auto &p) { return p.first == j; });
                    for (auto it = start; it != path.end(); ++it)
                        cycle += opLabel(ops[it->first]) + " -> ";
                    m_problems.add("ops form a cycle: " + cycle + opLabel(ops[j]), &ops[j]);
                    return; // one cycle is enough to explain the problem
                }
                if (marks[j] == Mark::New) {
                    marks[j] = Mark::Active;
                    path.emplace_back(j, 0);
                }
            }
        }
    }

    const Graph &m_graph;
    Problems &m_problems;
    std::set<std::string> m_opNames;
    std::map<TensorId, const ComputeOp *> m_writers;
    std::unordered_map<TensorId, std::vector<std::size_t>> m_writersOf;
};

} // namespace

Status Graph::validate() const
{
    Problems problems;
    Validator(*this, problems).run();
    return problems.status(m_name);
}

} // namespace stitch::ir
