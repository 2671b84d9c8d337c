#pragma once
// One graph from all lifted launches (phase 2b of the CUDA lifter).
//   HostProgram events (copies, launches, memsets) + FlatOps + ShapeMap -> assemble -> ir::Graph
// Each write of a buffer makes a new tensor version (d_y, d_y_1, ...), so in-place kernels such as
// SAXPY read the old version and write the new one; what the host copies back becomes an output.

#include "core/frontend/cudalift/HostProgram.h"
#include "core/frontend/cudalift/Shapes.h"
#include "core/ir/Graph.h"

#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace stitch::frontend::cudalift {

/// What the graph makes of one host buffer.
struct BufferPlan {
    std::string name;
    ir::DType dtype = ir::DType::F32;
    ir::Expr elements;
    std::vector<ir::Expr> shape;
    std::string inputTensor;   ///< graph input holding what the host put there first ("" if none)
    std::string outputTensor;  ///< tensor holding the buffer's final contents ("" if no op writes it)
};

/// How one opaque launch meets the graph's tensors through one buffer it is passed: the tensor the
/// buffer holds when it runs ("" when no op wrote it and none read it yet) and, when it may write
/// the buffer, the graph input that stands for what it wrote at the first later read ("" if none).
/// A kernel carried unchanged into a generated program (codegen/Carry.h) finds its data with it.
struct OpaqueBufferUse {
    int launch = -1;   ///< HostProgram::launches index
    int buffer = -1;   ///< HostProgram::buffers index
    std::string before;
    std::string after;
    bool writes = false; ///< the launch may write the buffer
};

struct Assembled {
    ir::Graph graph;
    std::vector<OpaqueBufferUse> opaqueUses; ///< in launch order
    std::vector<std::vector<std::string>> launchOps; ///< op names per launch
    std::vector<BufferPlan> buffers;
    std::vector<Diagnostic> diagnostics;
};

/// A launch that turned out not to be liftable while assembling.
struct LaunchFailure {
    std::size_t launch = 0;
    Refusal refusal;
};

/// Builds the graph. launches[i] is empty for launches kept opaque; opaqueWrites[i] lists the
/// buffers such a launch may write. Iteration variables are never named like reservedNames.
std::variant<Assembled, LaunchFailure> assemble(const HostProgram &host, const std::vector<std::optional<LaunchOps>> &launches,
                                                const std::vector<std::set<int>> &opaqueWrites, const ShapeMap &shapes,
                                                const std::string &graphName, IndexMath &math,
                                                const std::set<std::string> &reservedNames);

} // namespace stitch::frontend::cudalift
