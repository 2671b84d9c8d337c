// GraphDrawing + GraphLayout on real lifted programs, without Qt's widgets: what is drawn, and
// where Graphviz puts it.
#include "GraphTestPrograms.h"

#include "core/arch/ArchDatabase.h"
#include "core/schedule/Space.h"
#include "views/GraphDrawing.h"
#include "views/GraphLayout.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace stitch;
using namespace stitch::views;

namespace {

// Sizes in the spirit of the studio's fonts (GraphItems measures the real ones).
LayoutInput layoutInputOf(const GraphDrawing &d)
{
    LayoutInput in;
    for (const DrawnNode &n : d.nodes) {
        const auto chars = std::max(n.name.size(), std::min<std::size_t>(n.detail.size(), 40));
        const bool ellipse = n.kind != DrawnNode::Kind::Op && n.kind != DrawnNode::Kind::Opaque;
        in.nodes.push_back({7.0 * static_cast<double>(chars) + 20, ellipse ? 44.0 : 36.0, n.kernel, ellipse});
    }
    for (const DrawnEdge &e : d.edges)
        in.edges.push_back({e.from, e.to, e.label.empty() ? 0.0 : 6.0 * static_cast<double>(e.label.size()), 12});
    for (const DrawnKernel &k : d.kernels)
        in.clusters.push_back({7.0 * static_cast<double>(k.name.size()) + 8, 14});
    return in;
}

double distanceToRect(const LayoutPoint &p, const LayoutRect &r)
{
    const double dx = std::max({r.x - p.x, 0.0, p.x - (r.x + r.width)});
    const double dy = std::max({r.y - p.y, 0.0, p.y - (r.y + r.height)});
    return std::hypot(dx, dy);
}

bool inside(const LayoutRect &inner, const LayoutRect &outer)
{
    return inner.x >= outer.x - 0.5 && inner.y >= outer.y - 0.5 &&
           inner.x + inner.width <= outer.x + outer.width + 0.5 &&
           inner.y + inner.height <= outer.y + outer.height + 0.5;
}

/// The checks every layout must pass: positions in the drawing, no overlaps, edges that start and
/// end at their nodes, producers above consumers, kernels around their ops.
void checkLayout(const GraphDrawing &d, const LayoutInput &in, const Layout &layout)
{
    QCOMPARE(layout.nodes.size(), d.nodes.size());
    QCOMPARE(layout.edges.size(), d.edges.size());
    QCOMPARE(layout.clusters.size(), d.kernels.size());
    for (std::size_t i = 0; i < layout.nodes.size(); ++i) {
        const LayoutRect &r = layout.nodes[i];
        QVERIFY2(std::abs(r.width - in.nodes[i].width) < 1 && std::abs(r.height - in.nodes[i].height) < 1,
                 d.nodes[i].name.c_str()); // fixed sizes are kept
        QVERIFY(r.x >= -0.5 && r.y >= -0.5 && r.x + r.width <= layout.width + 0.5 &&
                r.y + r.height <= layout.height + 0.5);
        for (std::size_t j = i + 1; j < layout.nodes.size(); ++j)
            QVERIFY2(!r.intersects(layout.nodes[j]), qPrintable(QStringLiteral("%1 overlaps %2")
                                                                    .arg(QString::fromStdString(d.nodes[i].name),
                                                                         QString::fromStdString(d.nodes[j].name))));
    }
    for (std::size_t e = 0; e < d.edges.size(); ++e) {
        const DrawnEdge &edge = d.edges[e];
        const EdgeRoute &route = layout.edges[e];
        QVERIFY(route.points.size() >= 4);
        QCOMPARE((route.points.size() - 1) % 3, std::size_t(0));
        const LayoutRect &from = layout.nodes[static_cast<std::size_t>(edge.from)];
        const LayoutRect &to = layout.nodes[static_cast<std::size_t>(edge.to)];
        const LayoutPoint end = route.arrowTip ? *route.arrowTip : route.points.back();
        QVERIFY2(distanceToRect(route.points.front(), from) < 2.0, edge.tensor.c_str());
        QVERIFY2(distanceToRect(end, to) < 2.0, edge.tensor.c_str());
        // Data flows downwards: the producer's rank is above the consumer's.
        QVERIFY2(from.center().y < to.center().y, edge.tensor.c_str());
        QCOMPARE(route.label.has_value(), !edge.label.empty());
        if (route.label)
            for (const LayoutRect &n : layout.nodes)
                QVERIFY2(!route.label->intersects(n), edge.label.c_str());
    }
    for (std::size_t i = 0; i < d.nodes.size(); ++i)
        if (d.nodes[i].kernel >= 0)
            QVERIFY(inside(layout.nodes[i], layout.clusters[static_cast<std::size_t>(d.nodes[i].kernel)]));
}

} // namespace

class TestGraphLayout : public QObject {
    Q_OBJECT
private slots:
    void examplesAreLaidOut_data();
    void examplesAreLaidOut();
    void edgesFollowTheTensors();
    void kernelsBecomeRegions();
    void opaqueKernelsAreNodes();
    void emptyAndInvalidInput();
    void largeGraph_data();
    void largeGraph();
};

void TestGraphLayout::examplesAreLaidOut_data()
{
    QTest::addColumn<QString>("path");
    for (const QString &path : test::examplePaths())
        QTest::newRow(qPrintable(QFileInfo(path).fileName())) << path;
}

void TestGraphLayout::examplesAreLaidOut()
{
    QFETCH(QString, path);
    const auto lifted = test::liftPath(path);
    QVERIFY2(lifted.ok(), lifted.ok() ? "" : lifted.error().message.c_str());
    const GraphDrawing d = drawingOf(*lifted);
    const ir::Graph &g = lifted->graph;
    const auto roles = [&](ir::TensorRole role) {
        return static_cast<std::size_t>(std::count_if(g.tensors().begin(), g.tensors().end(),
                                                      [role](const ir::Tensor &t) { return t.role == role; }));
    };
    QCOMPARE(static_cast<std::size_t>(d.opCount()), g.ops().size());
    QCOMPARE(d.nodes.size(),
             g.ops().size() + roles(ir::TensorRole::Input) + roles(ir::TensorRole::Output) + lifted->opaque.size());
    QVERIFY(d.opCount() > 0);

    const LayoutInput in = layoutInputOf(d);
    QElapsedTimer timer;
    timer.start();
    const auto layout = layoutGraph(in);
    QVERIFY2(layout.ok(), layout.ok() ? "" : layout.error().message.c_str());
    qInfo("%s: %zu nodes, %zu edges laid out in %.1f ms", qPrintable(QFileInfo(path).fileName()), d.nodes.size(),
          d.edges.size(), static_cast<double>(timer.nsecsElapsed()) / 1e6);
    checkLayout(d, in, *layout);
    // Every op of the graph has a place, and it came from the source.
    for (const ir::ComputeOp &op : g.ops()) {
        const int node = d.findNode(op.name, DrawnNode::Kind::Op);
        QVERIFY(node >= 0);
        QVERIFY(layout->nodes[static_cast<std::size_t>(node)].width > 0);
        QVERIFY(d.nodes[static_cast<std::size_t>(node)].begin.line > 0);
        QCOMPARE(d.nodeAt(op.source->begin.line, op.source->begin.column), node);
    }
}

void TestGraphLayout::edgesFollowTheTensors()
{
    const auto lifted = test::liftPath(QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/gemm_bias_gelu.te"));
    QVERIFY(lifted.ok());
    const GraphDrawing d = drawingOf(*lifted);
    auto edge = [&](const std::string &from, DrawnNode::Kind fromKind, const std::string &to, DrawnNode::Kind toKind) {
        const int f = d.findNode(from, fromKind);
        const int t = d.findNode(to, toKind);
        const auto it =
            std::find_if(d.edges.begin(), d.edges.end(), [&](const DrawnEdge &e) { return e.from == f && e.to == t; });
        return it == d.edges.end() ? nullptr : &*it;
    };
    using K = DrawnNode::Kind;
    // G = A W; H = G + bias; Y = gelu(H): the ops are named after the tensors they write.
    QVERIFY(edge("A", K::Input, "G", K::Op));
    QCOMPARE(edge("A", K::Input, "G", K::Op)->label, std::string("float32[M, K]"));
    QVERIFY(edge("W", K::Input, "G", K::Op));
    QVERIFY(edge("bias", K::Input, "H", K::Op));
    QVERIFY(edge("G", K::Op, "H", K::Op));
    QCOMPARE(edge("G", K::Op, "H", K::Op)->label, std::string("G: float32[M, N]"));
    QVERIFY(edge("H", K::Op, "Y", K::Op));
    QVERIFY(edge("Y", K::Op, "Y", K::Output));
    QCOMPARE(d.edges.size(), std::size_t(6));
    QVERIFY(!edge("A", K::Input, "H", K::Op));
}

void TestGraphLayout::kernelsBecomeRegions()
{
    const auto lifted = test::liftPath(QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/layernorm.te"));
    QVERIFY(lifted.ok());
    const ArchLimits *arch = ArchDatabase::builtin().arch("sm_90");
    QVERIFY(arch);
    const auto schedule = schedule::defaultSchedule({lifted->graph, lifted->sizes, *arch});
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().message.c_str());
    const GraphDrawing d = drawingOf(*lifted, schedule->groups);
    QCOMPARE(d.kernels.size(), schedule->groups.size());
    for (const schedule::KernelGroup &group : schedule->groups)
        for (const std::string &op : group.ops) {
            const int node = d.findNode(op, DrawnNode::Kind::Op);
            QVERIFY(node >= 0);
            QCOMPARE(d.kernels[static_cast<std::size_t>(d.nodes[static_cast<std::size_t>(node)].kernel)].name,
                     group.name);
        }
    const LayoutInput in = layoutInputOf(d);
    const auto layout = layoutGraph(in);
    QVERIFY(layout.ok());
    checkLayout(d, in, *layout);

    // A schedule of other ops (an older text) colours nothing.
    schedule::KernelGroup stale;
    stale.name = "k_old";
    stale.ops = {"no_such_op"};
    QVERIFY(drawingOf(*lifted, {stale}).kernels.empty());
}

void TestGraphLayout::opaqueKernelsAreNodes()
{
    const auto lifted = test::liftPath(QStringLiteral(STITCHCUDA_SOURCE_DIR "/tests/lift/corpus/refused_gather.cu"));
    QVERIFY(lifted.ok());
    QCOMPARE(lifted->opaque.size(), std::size_t(1));
    const GraphDrawing d = drawingOf(*lifted);
    const int k = d.findNode("gatherRows", DrawnNode::Kind::Opaque);
    QVERIFY(k >= 0);
    QVERIFY(d.nodes[static_cast<std::size_t>(k)].toolTip.find("cannot lift") != std::string::npos);
    // It reads the table and the indices and writes the output, buffers the graph does not have.
    const int out = d.findNode("d_out", DrawnNode::Kind::Buffer);
    QVERIFY(out >= 0);
    QVERIFY(
        std::any_of(d.edges.begin(), d.edges.end(), [&](const DrawnEdge &e) { return e.from == k && e.to == out; }));
    QVERIFY(
        std::none_of(d.edges.begin(), d.edges.end(), [&](const DrawnEdge &e) { return e.from == out && e.to == k; }));
    const int table = d.findNode("d_table", DrawnNode::Kind::Buffer);
    QVERIFY(table >= 0);
    QVERIFY(
        std::any_of(d.edges.begin(), d.edges.end(), [&](const DrawnEdge &e) { return e.from == table && e.to == k; }));
    // The cursor inside the kernel finds it.
    const auto &range = lifted->opaque[0].range;
    QCOMPARE(d.nodeAt(range.begin.line + 1, 1), k);

    const LayoutInput in = layoutInputOf(d);
    const auto layout = layoutGraph(in);
    QVERIFY(layout.ok());
    checkLayout(d, in, *layout);
}

void TestGraphLayout::emptyAndInvalidInput()
{
    const auto empty = layoutGraph({});
    QVERIFY(empty.ok());
    QVERIFY(empty->nodes.empty());

    LayoutInput bad;
    bad.nodes.push_back({10, 10});
    bad.edges.push_back({0, 3});
    const auto refused = layoutGraph(bad);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().kind, ErrorKind::InvalidArgument);

    // A cycle is drawn, not refused.
    LayoutInput cycle;
    cycle.nodes = {{40, 20}, {40, 20}};
    cycle.edges = {{0, 1}, {1, 0}};
    const auto drawn = layoutGraph(cycle);
    QVERIFY(drawn.ok());
    QCOMPARE(drawn->edges.size(), std::size_t(2));
    QVERIFY(!drawn->edges[1].points.empty());
}

void TestGraphLayout::largeGraph_data()
{
    QTest::addColumn<int>("ops");
    QTest::newRow("100 ops") << 100;
    QTest::newRow("300 ops") << 300;
    QTest::newRow("600 ops") << 600;
}

void TestGraphLayout::largeGraph()
{
    QFETCH(int, ops);
    const auto lifted = frontend::liftFile(test::largeProgram(ops), "large.te");
    QVERIFY2(lifted.ok(), lifted.ok() ? "" : lifted.error().message.c_str());
    QCOMPARE(lifted->graph.ops().size(), static_cast<std::size_t>(ops));
    const GraphDrawing d = drawingOf(*lifted);
    const LayoutInput in = layoutInputOf(d);
    QElapsedTimer timer;
    timer.start();
    const auto layout = layoutGraph(in);
    const double ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    QVERIFY(layout.ok());
    qInfo("%d ops: %zu nodes, %zu edges laid out in %.0f ms (%.0f x %.0f points)", ops, d.nodes.size(), d.edges.size(),
          ms, layout->width, layout->height);
    checkLayout(d, in, *layout);
}

QTEST_GUILESS_MAIN(TestGraphLayout)
#include "tst_graphlayout.moc"
