#pragma once
// The IR program: tensors plus the ComputeOps that write them, kept in a topological order.
//   frontend / GraphBuilder / Programs -> Graph -> validate -> Interpreter, (later) codegen, rubric
// Ops refer to tensors by id; the graph answers who writes and who reads each tensor.

#include "core/common/Result.h"
#include "core/ir/ComputeOp.h"
#include "core/ir/Tensor.h"

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace stitch::ir {

/// Owns the tensors and ops of one program. Tensors are indexed by their id. After every addOp
/// a producer precedes its consumers, and ops that do not depend on each other keep the order
/// they were added in; while the ops form a cycle (which validate() reports) a new op is only
/// appended. Adding an op that no earlier op reads (the usual producer-first order) is O(its
/// reads); adding one that an earlier op reads re-sorts all ops in O((ops + reads) log ops).
///
/// Pointers returned by the query functions stay valid until the next addTensor or addOp.
class Graph {
public:
    explicit Graph(std::string name = {}) : m_name(std::move(name)) {}

    const std::string &name() const { return m_name; }
    void setName(std::string name) { m_name = std::move(name); }

    /// Adds a tensor and returns it with its new id.
    Tensor addTensor(std::string name, DType dtype, Shape shape, TensorRole role);
    /// Adds an op (not checked here: see validate()) and keeps the topological order.
    void addOp(ComputeOp op);

    const std::vector<Tensor> &tensors() const { return m_tensors; }
    const std::vector<ComputeOp> &ops() const { return m_ops; }

    /// The tensor with this id, or nullptr.
    const Tensor *tensor(TensorId id) const;
    const Tensor *findTensor(std::string_view name) const;
    const ComputeOp *findOp(std::string_view name) const;
    std::vector<const Tensor *> inputs() const;
    std::vector<const Tensor *> outputs() const;

    /// The op that writes tensor id, or nullptr (an input, or a tensor nobody writes yet).
    const ComputeOp *producer(TensorId id) const;
    /// The ops that read tensor id, in topological order.
    std::vector<const ComputeOp *> consumers(TensorId id) const;

    /// Size variables of the program (shapes, ranges, bodies), each once, first use first.
    std::vector<std::string> sizeVars() const;

    /// Checks the graph is well formed: unique names, every read has a writer or is an input,
    /// each tensor is written at most once and every output exactly once, index counts match
    /// ranks, bodies use only declared iteration variables, ranges use what they may, no cycles.
    /// The error lists every problem in Error::diagnostics; the message is the first one.
    Status validate() const;

    /// The whole program as text: tensor declarations, then one line per op with its ranges.
    std::string toString() const;

private:
    void sortTopologically();

    std::string m_name;
    std::vector<Tensor> m_tensors;
    std::vector<ComputeOp> m_ops;
    std::vector<std::vector<TensorId>> m_opReads; ///< m_ops[i].inputs() ids, kept in m_ops' order
    std::unordered_set<TensorId> m_readIds;       ///< every tensor some op reads
};

} // namespace stitch::ir
