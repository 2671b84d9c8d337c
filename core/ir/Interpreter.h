#pragma once
// CPU reference interpreter: runs a Graph on concrete sizes and input data, in double precision.
//   Graph + SizeBindings + input TensorValues -> Interpreter::run -> every intermediate and output
// This is the reference that generated CUDA kernels are compared against; it favours clarity and
// exactness over speed, yet compiles each expression once so that ~10^7-point ops stay quick.

#include "core/common/Result.h"
#include "core/ir/Graph.h"
#include "core/ir/Shape.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace stitch::ir {

/// Row-major element values of one tensor, held as doubles whatever the tensor's DType.
using TensorData = std::vector<double>;
/// Tensor values by tensor name.
using TensorValues = std::map<std::string, TensorData, std::less<>>;

struct InterpreterOptions {
    /// Refuse (ResourceLimit) any tensor with more elements, so a wrong binding such as
    /// M = 10^9 fails at once instead of exhausting memory. The default is 1 GiB of doubles.
    std::int64_t maxTensorElements = std::int64_t{1} << 27;
};

/// Semantics, in brief:
/// - Every value is a double. Float types are not rounded to their width (casts to float32,
///   float16 or bfloat16 keep the double); integers are exact up to 2^53; storing to or casting
///   to an integer type truncates toward zero and faults when the value does not fit.
/// - Integer / and % follow C (truncation); // floors. Integer division by zero is a fault.
/// - Reads outside a tensor's shape are faults, never undefined behaviour. select, && and ||
///   evaluate only what they need, so guarded reads are safe.
/// - A reduction starts from its init (default: the identity of its kind) at each output point.
/// - Output and intermediate elements that no op's domain covers are zero.
/// A fault stops the run with an InvalidArgument error naming the op, the fault and the point.
class Interpreter {
public:
    explicit Interpreter(Graph graph, InterpreterOptions options = {});

    /// Validates the graph, checks that every size variable is bound and that inputs holds
    /// exactly the graph's inputs with the right element counts, then runs the ops in
    /// topological order. Returns the values of every intermediate and output tensor.
    Result<TensorValues> run(const SizeBindings &sizes, const TensorValues &inputs) const;

    const Graph &graph() const { return m_graph; }

private:
    Graph m_graph;
    InterpreterOptions m_options;
};

/// Interpreter(graph).run(sizes, inputs).
Result<TensorValues> interpret(const Graph &graph, const SizeBindings &sizes, const TensorValues &inputs);

} // namespace stitch::ir
