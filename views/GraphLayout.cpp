#include "views/GraphLayout.h"

#include <gvc.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <string>

namespace stitch::views {

namespace {

// cgraph, the layout engines and the plugin registry keep global state; one layout at a time.
std::mutex &graphvizMutex()
{
    static std::mutex m;
    return m;
}

constexpr double kPointsPerInch = 72.0;

std::string inches(double points)
{
    return std::to_string(points / kPointsPerInch);
}

void set(void *object, const char *name, const std::string &value)
{
    agsafeset(object, const_cast<char *>(name), const_cast<char *>(value.c_str()), const_cast<char *>(""));
}

// An HTML-like label of an exact size: dot reserves this room whatever fonts the machine has
// (a text label would be measured with Graphviz's own font metrics, not the studio's).
void setSizedLabel(Agraph_t *g, void *object, double width, double height)
{
    const std::string html = "<TABLE FIXEDSIZE=\"TRUE\" BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" "
                             "CELLPADDING=\"0\" WIDTH=\"" +
                             std::to_string(static_cast<int>(std::ceil(width))) + "\" HEIGHT=\"" +
                             std::to_string(static_cast<int>(std::ceil(height))) + "\"><TR><TD></TD></TR></TABLE>";
    char *label = agstrdup_html(g, const_cast<char *>(html.c_str()));
    agsafeset(object, const_cast<char *>("label"), label, const_cast<char *>(""));
    agstrfree(g, label);
}

struct GraphDeleter {
    void operator()(Agraph_t *g) const { agclose(g); }
};
struct ContextDeleter {
    void operator()(GVC_t *gvc) const { gvFreeContext(gvc); }
};

} // namespace

Result<Layout> layoutGraph(const LayoutInput &input)
{
    const auto nodeCount = static_cast<int>(input.nodes.size());
    for (const LayoutNode &n : input.nodes) {
        if (!(n.width >= 0 && n.height >= 0))
            return makeError(ErrorKind::InvalidArgument, "layout: a node has a negative size");
        if (n.cluster >= static_cast<int>(input.clusters.size()))
            return makeError(ErrorKind::InvalidArgument, "layout: a node names a cluster that does not exist");
    }
    for (const LayoutEdge &e : input.edges)
        if (e.from < 0 || e.from >= nodeCount || e.to < 0 || e.to >= nodeCount)
            return makeError(ErrorKind::InvalidArgument, "layout: an edge names a node that does not exist");

    Layout layout;
    layout.nodes.resize(input.nodes.size());
    layout.edges.resize(input.edges.size());
    layout.clusters.resize(input.clusters.size());
    if (input.nodes.empty())
        return layout;

    const std::lock_guard lock(graphvizMutex());
    agseterr(AGMAX); // no messages on stderr; aglasterr() still has the last error
    const std::unique_ptr<GVC_t, ContextDeleter> gvc(gvContext());
    const std::unique_ptr<Agraph_t, GraphDeleter> graph(agopen(const_cast<char *>("g"), Agdirected, nullptr));
    Agraph_t *g = graph.get();
    set(g, "rankdir", "TB");
    set(g, "nodesep", inches(input.nodeSeparation));
    set(g, "ranksep", inches(input.rankSeparation));
    set(g, "labelloc", "t");
    agattr(g, AGNODE, const_cast<char *>("label"), const_cast<char *>(""));
    agattr(g, AGNODE, const_cast<char *>("fixedsize"), const_cast<char *>("true"));
    agattr(g, AGNODE, const_cast<char *>("margin"), const_cast<char *>("0"));

    std::vector<Agraph_t *> clusters;
    for (std::size_t c = 0; c < input.clusters.size(); ++c) {
        const std::string name = "cluster_" + std::to_string(c);
        Agraph_t *sg = agsubg(g, const_cast<char *>(name.c_str()), 1);
        const LayoutCluster &cluster = input.clusters[c];
        if (cluster.labelWidth > 0 && cluster.labelHeight > 0)
            setSizedLabel(g, sg, cluster.labelWidth, cluster.labelHeight);
        set(sg, "margin", "8");
        clusters.push_back(sg);
    }

    std::vector<Agnode_t *> nodes;
    nodes.reserve(input.nodes.size());
    for (std::size_t i = 0; i < input.nodes.size(); ++i) {
        const LayoutNode &in = input.nodes[i];
        const std::string name = "n" + std::to_string(i);
        Agraph_t *owner = in.cluster >= 0 ? clusters[static_cast<std::size_t>(in.cluster)] : g;
        Agnode_t *n = agnode(owner, const_cast<char *>(name.c_str()), 1);
        set(n, "shape", in.ellipse ? "ellipse" : "box");
        set(n, "width", inches(in.width));
        set(n, "height", inches(in.height));
        nodes.push_back(n);
    }

    std::vector<Agedge_t *> edges;
    edges.reserve(input.edges.size());
    for (std::size_t i = 0; i < input.edges.size(); ++i) {
        const LayoutEdge &in = input.edges[i];
        const std::string name = "e" + std::to_string(i); // named: parallel edges stay distinct
        Agedge_t *e = agedge(g, nodes[static_cast<std::size_t>(in.from)], nodes[static_cast<std::size_t>(in.to)],
                             const_cast<char *>(name.c_str()), 1);
        if (in.labelWidth > 0 && in.labelHeight > 0)
            setSizedLabel(g, e, in.labelWidth, in.labelHeight);
        edges.push_back(e);
    }

    if (gvLayout(gvc.get(), g, "dot") != 0) {
        const char *why = aglasterr();
        return makeError(ErrorKind::Unsupported,
                         std::string("Graphviz could not lay the graph out") + (why ? std::string(": ") + why : ""));
    }

    // dot's origin is the bottom-left corner with y up; ours the top-left with y down.
    const boxf bb = GD_bb(g);
    auto flip = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };
    layout.width = bb.UR.x - bb.LL.x;
    layout.height = bb.UR.y - bb.LL.y;

    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const LayoutPoint c = flip(ND_coord(nodes[i]));
        const double w = ND_width(nodes[i]) * kPointsPerInch;
        const double h = ND_height(nodes[i]) * kPointsPerInch;
        layout.nodes[i] = {c.x - w / 2, c.y - h / 2, w, h};
    }
    for (std::size_t i = 0; i < edges.size(); ++i) {
        EdgeRoute &route = layout.edges[i];
        Agedge_t *e = edges[i];
        if (const splines *spl = ED_spl(e)) {
            for (int b = 0; b < spl->size; ++b) {
                const bezier &bz = spl->list[b];
                // Consecutive pieces share their joining point; keep it once.
                for (int p = route.points.empty() ? 0 : 1; p < bz.size; ++p)
                    route.points.push_back(flip(bz.list[p]));
                if (bz.eflag)
                    route.arrowTip = flip(bz.ep);
            }
        }
        if (const textlabel_t *label = ED_label(e); label && label->set) {
            const LayoutPoint c = flip(label->pos);
            const LayoutEdge &in = input.edges[i];
            route.label = LayoutRect{c.x - in.labelWidth / 2, c.y - in.labelHeight / 2, in.labelWidth, in.labelHeight};
        }
    }
    for (std::size_t c = 0; c < clusters.size(); ++c) {
        const boxf cb = GD_bb(clusters[c]);
        const LayoutPoint topLeft = flip({cb.LL.x, cb.UR.y});
        layout.clusters[c] = {topLeft.x, topLeft.y, cb.UR.x - cb.LL.x, cb.UR.y - cb.LL.y};
    }
    gvFreeLayout(gvc.get(), g);
    return layout;
}

} // namespace stitch::views
