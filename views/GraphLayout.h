#pragma once
// A layered layout of the drawn computation graph, computed by Graphviz's dot and used for
// nothing else: sizes in, positions out. The studio draws every shape itself with Qt.
//   GraphView (sizes measured with Qt) -> layoutGraph (a worker thread) -> Layout -> scene items
// Plain C++ (no Qt), so it is tested alone. Units are Graphviz points; x grows to the right and
// y downwards (dot's y-up coordinates are flipped here), the drawing's top-left corner is (0, 0).

#include "core/common/Result.h"

#include <optional>
#include <vector>

namespace stitch::views {

struct LayoutPoint {
    double x = 0;
    double y = 0;
};

/// Top-left corner and size.
struct LayoutRect {
    double x = 0;
    double y = 0;
    double width = 0;
    double height = 0;

    LayoutPoint center() const { return {x + width / 2, y + height / 2}; }
    bool intersects(const LayoutRect &o) const
    {
        return x < o.x + o.width && o.x < x + width && y < o.y + o.height && o.y < y + height;
    }
};

struct LayoutNode {
    double width = 0;     ///< points
    double height = 0;    ///< points
    int cluster = -1;     ///< index into LayoutInput::clusters, or -1
    bool ellipse = false; ///< edges end on an ellipse inscribed in the box instead of the box
};

/// A directed edge from node `from` to node `to` (indices into LayoutInput::nodes).
struct LayoutEdge {
    int from = -1;
    int to = -1;
    double labelWidth = 0; ///< room for a label beside the edge; 0: no label
    double labelHeight = 0;
};

/// A region that keeps its nodes together (a kernel that fused them), with room for a title.
struct LayoutCluster {
    double labelWidth = 0;
    double labelHeight = 0;
};

struct LayoutInput {
    std::vector<LayoutNode> nodes;
    std::vector<LayoutEdge> edges;
    std::vector<LayoutCluster> clusters;
    double nodeSeparation = 18; ///< points between neighbours of a rank
    double rankSeparation = 30; ///< points between ranks
};

struct EdgeRoute {
    /// A piecewise cubic Bézier curve: the start point, then three points per segment.
    std::vector<LayoutPoint> points;
    /// Where the arrowhead points; the curve ends at its base. Unset: the curve reaches the node.
    std::optional<LayoutPoint> arrowTip;
    std::optional<LayoutRect> label;
};

struct Layout {
    std::vector<LayoutRect> nodes;    ///< one per input node, same order
    std::vector<EdgeRoute> edges;     ///< one per input edge, same order
    std::vector<LayoutRect> clusters; ///< one per input cluster, same order
    double width = 0;
    double height = 0;
};

/// Lays the graph out top to bottom, producers above consumers (dot). Edges that close a cycle are
/// drawn against the flow rather than refused. Errors: InvalidArgument (an edge names a missing
/// node, a size is negative), Unsupported (Graphviz could not lay the graph out, with its message).
/// Graphviz keeps global state, so calls from several threads run one at a time.
Result<Layout> layoutGraph(const LayoutInput &input);

} // namespace stitch::views
