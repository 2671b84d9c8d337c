#pragma once
// What the Graph dock draws of a lifted program: nodes, edges and kernel regions, before any
// geometry. Plain C++ (no Qt) so the layout can be tested on real programs without a display.
//   LiftedProgram (+ the schedule's kernel groups) -> drawingOf -> GraphDrawing
//     -> GraphView measures each node -> layoutGraph (GraphLayout.h) -> scene items
// Ops are boxes; inputs, outputs and buffers only opaque kernels touch are ellipses; a tensor that
// flows from one op to another is an edge labelled with its name and shape.

#include "core/common/Result.h"
#include "core/frontend/Lift.h"
#include "core/schedule/Schedule.h"

#include <string>
#include <vector>

namespace stitch::views {

struct DrawnNode {
    enum class Kind {
        Op,     ///< a compute op of the graph
        Input,  ///< an input tensor
        Output, ///< an output tensor
        Buffer, ///< a buffer that only opaque kernels read or write (not a tensor of the graph)
        Opaque, ///< a kernel kept as written (LiftedProgram::opaque)
    };
    Kind kind = Kind::Op;
    std::string name;     ///< op, tensor or kernel name
    std::string detail;   ///< second line: the op's expression, the tensor's type and shape
    std::string toolTip;  ///< the full text: the op with its ranges, why a kernel is opaque
    SourceLocation begin; ///< where it came from in the source (line 0: nowhere)
    SourceLocation end;
    int kernel = -1; ///< index into GraphDrawing::kernels, or -1
};

struct DrawnEdge {
    int from = -1;
    int to = -1;
    std::string tensor; ///< the tensor that flows along it
    std::string label;  ///< "G: float32[M, N]"
};

/// A generated kernel and the ops fused into it.
struct DrawnKernel {
    std::string name;
    std::string strategy; ///< "gemm", "elementwise", ...
};

struct GraphDrawing {
    std::vector<DrawnNode> nodes;
    std::vector<DrawnEdge> edges;
    std::vector<DrawnKernel> kernels; ///< only kernels that contain an op of this graph

    int opCount() const;
    /// The node of the op or kernel whose source range holds (line, column), the innermost one
    /// when ranges nest; -1 when none does. 1-based, like SourceLocation.
    int nodeAt(int line, int column) const;
    int findNode(const std::string &name, DrawnNode::Kind kind) const;
};

/// Builds the drawing of a lifted program. `groups` (a schedule's kernels, in launch order) puts
/// each op into the kernel it was fused into; op names that are not in the graph (a schedule of
/// an older text) are ignored.
GraphDrawing drawingOf(const frontend::LiftedProgram &program, const std::vector<schedule::KernelGroup> &groups = {});

} // namespace stitch::views
