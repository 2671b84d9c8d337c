// GraphView offscreen: what it draws of a real lifted program, the kernel regions, selection in
// both directions, zoom and fit, SVG and PNG export, and a graph of hundreds of ops.
#include "GraphTestPrograms.h"

#include "core/arch/ArchDatabase.h"
#include "core/schedule/Space.h"
#include "views/GraphItems.h"
#include "views/GraphPanel.h"
#include "views/GraphView.h"

#include <QAction>
#include <QApplication>
#include <QElapsedTimer>
#include <QGraphicsSimpleTextItem>
#include <QImage>
#include <QPixmap>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QWheelEvent>

#include <memory>

using namespace stitch;
using namespace stitch::views;

namespace {

std::shared_ptr<const frontend::LiftedProgram> lifted(const QString &path)
{
    auto result = test::liftPath(path);
    if (!result.ok())
        return nullptr;
    return std::make_shared<const frontend::LiftedProgram>(std::move(*result));
}

QString example(const char *name)
{
    return QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/") + QLatin1String(name);
}

template <typename Item> int countItems(const QGraphicsScene *scene)
{
    int n = 0;
    for (QGraphicsItem *item : scene->items())
        n += dynamic_cast<Item *>(item) ? 1 : 0;
    return n;
}

} // namespace

class TestGraphView : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();

    void drawsOpsAndTensors_data();
    void drawsOpsAndTensors();
    void kernelsAreShadedRegions();
    void opaqueKernelIsMarked();
    void clickingAnOpRequestsItsSource();
    void sourcePositionSelectsTheOp();
    void zoomAndFit();
    void exportsSvgAndPng();
    void messageWhenThereIsNoGraph();
    void panelSwitchesBetweenDrawingAndTree();
    void largeGraphKeepsTheGuiThreadFree();

private:
    /// Sets the program and waits for its layout.
    bool show(std::shared_ptr<const frontend::LiftedProgram> program);
    QPoint viewPointOf(int node) const;

    std::unique_ptr<GraphView> m_view;
};

void TestGraphView::init()
{
    m_view = std::make_unique<GraphView>();
    m_view->resize(900, 700);
    m_view->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_view.get()));
}

void TestGraphView::cleanup()
{
    m_view.reset();
}

bool TestGraphView::show(std::shared_ptr<const frontend::LiftedProgram> program)
{
    QSignalSpy laidOut(m_view.get(), &GraphView::laidOut);
    m_view->setProgram(std::move(program));
    return laidOut.wait(30000) && m_view->isLaidOut();
}

QPoint TestGraphView::viewPointOf(int node) const
{
    QGraphicsItem *item = m_view->nodeItem(node);
    return item ? m_view->mapFromScene(item->sceneBoundingRect().center()) : QPoint();
}

void TestGraphView::drawsOpsAndTensors_data()
{
    QTest::addColumn<QString>("path");
    for (const QString &path : test::examplePaths())
        QTest::newRow(qPrintable(QFileInfo(path).fileName())) << path;
}

void TestGraphView::drawsOpsAndTensors()
{
    QFETCH(QString, path);
    const auto program = lifted(path);
    QVERIFY(program);
    QVERIFY(show(program));
    const ir::Graph &g = program->graph;
    int inputs = 0, outputs = 0;
    for (const ir::Tensor &t : g.tensors()) {
        inputs += t.role == ir::TensorRole::Input;
        outputs += t.role == ir::TensorRole::Output;
    }
    const int expected = static_cast<int>(g.ops().size() + program->opaque.size()) + inputs + outputs;
    QCOMPARE(countItems<GraphNodeItem>(m_view->scene()), expected);
    QCOMPARE(countItems<GraphEdgeItem>(m_view->scene()), static_cast<int>(m_view->drawing().edges.size()));
    QCOMPARE(m_view->drawing().opCount(), static_cast<int>(g.ops().size()));
    // Each op's node says which op it is.
    for (const ir::ComputeOp &op : g.ops()) {
        const int node = m_view->drawing().findNode(op.name, DrawnNode::Kind::Op);
        QVERIFY(node >= 0);
        QVERIFY(m_view->nodeItem(node)->toolTip().contains(QString::fromStdString(op.toString())));
    }
    const GraphView::Timings t = m_view->timings();
    qInfo("%s: prepare %.1f ms, layout %.1f ms (worker), scene %.1f ms", qPrintable(QFileInfo(path).fileName()),
          t.prepareMs, t.layoutMs, t.sceneMs);
}

void TestGraphView::kernelsAreShadedRegions()
{
    const auto program = lifted(example("gemm_bias_gelu.te"));
    QVERIFY(show(program));
    QCOMPARE(countItems<GraphClusterItem>(m_view->scene()), 0);
    QVERIFY(m_view->kernelCaption().contains(QStringLiteral("one colour per op")));

    const ArchLimits *arch = ArchDatabase::builtin().arch("sm_90");
    const auto schedule = schedule::defaultSchedule({program->graph, program->sizes, *arch});
    QVERIFY(schedule.ok());
    QSignalSpy laidOut(m_view.get(), &GraphView::laidOut);
    m_view->setKernelGroups(schedule->groups, QStringLiteral("the default schedule"));
    QVERIFY(laidOut.wait(30000));
    QCOMPARE(countItems<GraphClusterItem>(m_view->scene()), static_cast<int>(schedule->groups.size()));
    QVERIFY(m_view->kernelCaption().contains(QStringLiteral("the default schedule")));
    // Every op sits inside the region of its kernel.
    for (const schedule::KernelGroup &group : schedule->groups)
        for (const std::string &op : group.ops) {
            const int node = m_view->drawing().findNode(op, DrawnNode::Kind::Op);
            QVERIFY(node >= 0);
            QVERIFY(m_view->nodeItem(node)->toolTip().contains(QString::fromStdString(group.name)));
        }
    // The same groups again lay nothing out.
    m_view->setKernelGroups(schedule->groups, QStringLiteral("the default schedule"));
    QVERIFY(m_view->isLaidOut());
}

void TestGraphView::opaqueKernelIsMarked()
{
    const auto program = lifted(QStringLiteral(STITCHCUDA_SOURCE_DIR "/tests/lift/corpus/refused_gather.cu"));
    QVERIFY(program);
    QVERIFY(show(program));
    const int node = m_view->drawing().findNode("gatherRows", DrawnNode::Kind::Opaque);
    QVERIFY(node >= 0);
    auto *item = dynamic_cast<GraphNodeItem *>(m_view->nodeItem(node));
    QVERIFY(item);
    QCOMPARE(item->kind(), DrawnNode::Kind::Opaque);
    QVERIFY(item->toolTip().contains(QStringLiteral("cannot lift kernel 'gatherRows'")));
}

void TestGraphView::clickingAnOpRequestsItsSource()
{
    const auto program = lifted(example("layernorm.te"));
    QVERIFY(show(program));
    QSignalSpy requested(m_view.get(), &GraphView::sourceRequested);
    const int node = m_view->drawing().findNode("variance", DrawnNode::Kind::Op);
    QVERIFY(node >= 0);
    m_view->fit();
    QTest::mouseClick(m_view->viewport(), Qt::LeftButton, {}, viewPointOf(node));
    QCOMPARE(m_view->selectedNode(), node);
    QCOMPARE(requested.count(), 1);
    const ir::ComputeOp *op = program->graph.findOp("variance");
    QCOMPARE(requested.at(0).at(0).toInt(), op->source->begin.line);
    QCOMPARE(requested.at(0).at(1).toInt(), op->source->begin.column);
    QCOMPARE(requested.at(0).at(2).toInt(), op->source->end.line);
    QCOMPARE(requested.at(0).at(3).toInt(), op->source->end.column);

    // An input has no source range: selected, nothing requested.
    const int input = m_view->drawing().findNode("X", DrawnNode::Kind::Input);
    QTest::mouseClick(m_view->viewport(), Qt::LeftButton, {}, viewPointOf(input));
    QCOMPARE(m_view->selectedNode(), input);
    QCOMPARE(requested.count(), 1);
}

void TestGraphView::sourcePositionSelectsTheOp()
{
    const auto program = lifted(example("layernorm.te"));
    QVERIFY(show(program));
    QSignalSpy requested(m_view.get(), &GraphView::sourceRequested);
    const ir::ComputeOp *op = program->graph.findOp("mean");
    m_view->selectSourceAt(op->source->begin.line, op->source->begin.column + 3);
    QCOMPARE(m_view->selectedNode(), m_view->drawing().findNode("mean", DrawnNode::Kind::Op));
    QVERIFY(m_view->nodeItem(m_view->selectedNode())->isSelected());
    m_view->selectSourceAt(1, 1); // the comment at the top: no op
    QCOMPARE(m_view->selectedNode(), -1);
    QCOMPARE(requested.count(), 0); // the editor moved; it is not asked to move again
}

void TestGraphView::zoomAndFit()
{
    QVERIFY(show(lifted(example("layernorm.te"))));
    const double fitted = m_view->zoom();
    QVERIFY(fitted > 0 && fitted <= 1.0);
    m_view->setFocus();
    QTest::keyClick(m_view.get(), Qt::Key_Plus);
    QVERIFY(m_view->zoom() > fitted);
    QWheelEvent wheel(QPointF(100, 100), m_view->viewport()->mapToGlobal(QPointF(100, 100)), {}, QPoint(0, 240),
                      Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
    const double before = m_view->zoom();
    QApplication::sendEvent(m_view->viewport(), &wheel);
    QVERIFY(m_view->zoom() > before * 1.5);
    QTest::keyClick(m_view.get(), Qt::Key_Minus);
    QVERIFY(m_view->zoom() < before * 1.5);

    // F: the whole drawing is in view again.
    QTest::keyClick(m_view.get(), Qt::Key_F);
    QCOMPARE(m_view->zoom(), fitted);
    const QRectF visible = m_view->mapToScene(m_view->viewport()->rect()).boundingRect();
    QVERIFY2(visible.adjusted(-1, -1, 1, 1).contains(m_view->scene()->itemsBoundingRect()),
             qPrintable(QStringLiteral("visible %1,%2 %3x%4")
                            .arg(visible.x())
                            .arg(visible.y())
                            .arg(visible.width())
                            .arg(visible.height())));
}

void TestGraphView::exportsSvgAndPng()
{
    QVERIFY(show(lifted(example("layernorm.te"))));
    QTemporaryDir dir;
    const QString svgPath = dir.filePath(QStringLiteral("graph.svg"));
    QString error;
    QVERIFY2(m_view->exportSvg(svgPath, &error), qPrintable(error));
    QFile svg(svgPath);
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QByteArray text = svg.readAll();
    QVERIFY(text.contains("<svg"));
    for (const char *name : {"mean", "variance", "gamma", "beta"})
        QVERIFY2(text.contains(name), name);
    QVERIFY(text.contains("float32[M, N]")); // an edge's shape

    const QString pngPath = dir.filePath(QStringLiteral("graph.png"));
    QVERIFY2(m_view->exportPng(pngPath, &error), qPrintable(error));
    const QImage image(pngPath);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= m_view->scene()->sceneRect().width());
    int dark = 0;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2)
            dark += qGray(image.pixel(x, y)) < 128 ? 1 : 0;
    QVERIFY(dark > 100); // text and edges, not a blank page

    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("QSvgPaintEngine::begin.*")));
    QTest::ignoreMessage(QtWarningMsg, "QPainter::begin(): Returned false");
    QVERIFY(!m_view->exportSvg(dir.filePath(QStringLiteral("no/such/folder/graph.svg")), &error));
    QVERIFY(!error.isEmpty());
}

void TestGraphView::messageWhenThereIsNoGraph()
{
    m_view->setMessage(QStringLiteral("Not lifted: something"));
    QVERIFY(m_view->isLaidOut());
    QCOMPARE(countItems<GraphNodeItem>(m_view->scene()), 0);
    QCOMPARE(m_view->drawing().nodes.size(), std::size_t(0));
    bool found = false;
    for (QGraphicsItem *item : m_view->scene()->items())
        if (auto *text = dynamic_cast<QGraphicsSimpleTextItem *>(item))
            found = found || text->text().contains(QStringLiteral("Not lifted"));
    QVERIFY(found);
}

void TestGraphView::panelSwitchesBetweenDrawingAndTree()
{
    GraphPanel panel;
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(panel.isShowingDrawing());
    QVERIFY(panel.drawing()->isVisible());
    QCOMPARE(panel.tree()->objectName(), QStringLiteral("graphView"));
    QVERIFY(panel.fitAction()->isEnabled());
    panel.showTree();
    QVERIFY(panel.tree()->isVisible());
    QVERIFY(!panel.drawing()->isVisible());
    QVERIFY(!panel.fitAction()->isEnabled());
    panel.showDrawing();
    QVERIFY(panel.drawing()->isVisible());
}

void TestGraphView::largeGraphKeepsTheGuiThreadFree()
{
    auto result = frontend::liftFile(test::largeProgram(400), "large.te");
    QVERIFY(result.ok());
    auto program = std::make_shared<const frontend::LiftedProgram>(std::move(*result));
    QSignalSpy laidOut(m_view.get(), &GraphView::laidOut);
    QElapsedTimer blocked;
    blocked.start();
    m_view->setProgram(program);
    const double setMs = static_cast<double>(blocked.nsecsElapsed()) / 1e6;
    QVERIFY(!m_view->isLaidOut()); // the layout runs on a worker
    QVERIFY(laidOut.wait(120000));
    const GraphView::Timings t = m_view->timings();
    qInfo("400 ops: setProgram returned in %.1f ms (prepare %.1f ms); layout %.0f ms on a worker; scene %.1f ms", setMs,
          t.prepareMs, t.layoutMs, t.sceneMs);
    QCOMPARE(countItems<GraphNodeItem>(m_view->scene()), static_cast<int>(m_view->drawing().nodes.size()));
    // Too tall to read when fitted: it opens readable, on its first op at the top.
    QVERIFY(m_view->zoom() >= 0.6);
    const int first = m_view->drawing().findNode("t0", DrawnNode::Kind::Op);
    const QRectF visible = m_view->mapToScene(m_view->viewport()->rect()).boundingRect();
    QVERIFY(visible.contains(m_view->nodeItem(first)->sceneBoundingRect()));
    QVERIFY(!visible.contains(m_view->scene()->sceneRect()));
    QElapsedTimer paint;
    paint.start();
    QVERIFY(!m_view->viewport()->grab().isNull());
    qInfo("400 ops: a repaint at %.0f %% took %.1f ms", m_view->zoom() * 100,
          static_cast<double>(paint.nsecsElapsed()) / 1e6);
    // F: all of it, text left out at that scale.
    m_view->fit();
    QVERIFY(m_view->mapToScene(m_view->viewport()->rect())
                .boundingRect()
                .adjusted(-1, -1, 1, 1)
                .contains(m_view->scene()->itemsBoundingRect()));
    paint.restart();
    const QPixmap frame = m_view->viewport()->grab(); // one full repaint of the fitted drawing
    qInfo("400 ops: a full repaint at %.0f %% took %.1f ms", m_view->zoom() * 100,
          static_cast<double>(paint.nsecsElapsed()) / 1e6);
    QVERIFY(!frame.isNull());

    // A newer program while one is laid out: only the newest is shown.
    m_view->setProgram(program);
    m_view->setProgram(lifted(example("softmax.te")));
    QTRY_VERIFY_WITH_TIMEOUT(m_view->isLaidOut(), 120000);
    QCOMPARE(m_view->drawing().opCount(), 3);
}

QTEST_MAIN(TestGraphView)
#include "tst_graphview.moc"
