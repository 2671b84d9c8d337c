#include "views/GraphView.h"

#include "views/GraphItems.h"
#include "views/GraphLayout.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QImage>
#include <QKeyEvent>
#include <QSvgGenerator>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace stitch::views {

namespace {

constexpr double kMinZoom = 0.02;
constexpr double kMaxZoom = 8.0;
constexpr double kZoomStep = 1.25;
// Below this a drawing is opened at this scale on its inputs instead of fitted (F still fits).
constexpr double kReadableZoom = 0.6;
constexpr double kSceneMargin = 16;
// A PNG export at twice the screen's resolution, unless that passes this many pixels.
constexpr double kMaxPngPixels = 64.0 * 1024 * 1024;

struct LayoutJob {
    GraphDrawing drawing;
    LayoutInput input;
};

struct LayoutOutcome {
    std::shared_ptr<const LayoutJob> job;
    std::shared_ptr<const Result<Layout>> layout; ///< null: a newer request made this one stale
    double ms = 0;
};

QPointF toQt(const LayoutPoint &p)
{
    return {p.x, p.y};
}
QRectF toQt(const LayoutRect &r)
{
    return {r.x, r.y, r.width, r.height};
}

QPainterPath edgePath(const EdgeRoute &route)
{
    QPainterPath path;
    if (route.points.empty())
        return path;
    path.moveTo(toQt(route.points[0]));
    for (std::size_t i = 1; i + 2 < route.points.size(); i += 3)
        path.cubicTo(toQt(route.points[i]), toQt(route.points[i + 1]), toQt(route.points[i + 2]));
    return path;
}

// dot leaves room for the arrowhead between the curve's end and the node; fill it.
QPolygonF arrowHead(const EdgeRoute &route)
{
    if (!route.arrowTip || route.points.empty())
        return {};
    const QPointF tip = toQt(*route.arrowTip);
    const QPointF base = toQt(route.points.back());
    const QPointF d = tip - base;
    const double length = std::hypot(d.x(), d.y());
    if (length < 1e-6)
        return {};
    const QPointF normal(-d.y() / length * 3.5, d.x() / length * 3.5);
    return QPolygonF({tip, base + normal, base - normal});
}

} // namespace

GraphView::GraphView(QWidget *parent) : QGraphicsView(parent), m_latestJob(std::make_shared<std::atomic<quint64>>(0))
{
    setScene(new QGraphicsScene(this));
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setBackgroundBrush(Qt::white);
    setFocusPolicy(Qt::StrongFocus);
    connect(scene(), &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
}

GraphView::~GraphView()
{
    // A layout in flight finds itself stale and its result is never delivered (the watcher is ours).
    m_latestJob->store(0);
    // The scene is our child, destroyed after this destructor: deleting a selected item then emits
    // selectionChanged, which must not reach onSelectionChanged on a view that is no longer a GraphView.
    disconnect(scene(), nullptr, this, nullptr);
}

void GraphView::setProgram(std::shared_ptr<const frontend::LiftedProgram> program)
{
    m_program = std::move(program);
    m_message.clear();
    m_fitPending = true;
    relayout();
}

void GraphView::setKernelGroups(std::vector<schedule::KernelGroup> groups, const QString &whose)
{
    if (groups == m_groups && whose == m_whose)
        return;
    m_groups = std::move(groups);
    m_whose = whose;
    relayout();
}

void GraphView::setMessage(const QString &message)
{
    m_program.reset();
    m_message = message;
    relayout();
}

void GraphView::relayout()
{
    const quint64 job = ++m_job;
    m_latestJob->store(job);
    m_laidOut = false;
    m_layoutError.clear();
    if (!m_program) {
        buildScene(Layout{}, m_message);
        return;
    }

    QElapsedTimer prepare;
    prepare.start();
    auto pending = std::make_shared<LayoutJob>();
    pending->drawing = drawingOf(*m_program, m_groups);
    const GraphDrawing &d = pending->drawing;
    for (const DrawnNode &n : d.nodes) {
        const QSizeF size = graphNodeSize(n);
        const bool ellipse = n.kind != DrawnNode::Kind::Op && n.kind != DrawnNode::Kind::Opaque;
        pending->input.nodes.push_back({size.width(), size.height(), n.kernel, ellipse});
    }
    for (const DrawnEdge &e : d.edges) {
        const QSizeF size = e.label.empty() ? QSizeF() : graphEdgeLabelSize(QString::fromStdString(e.label));
        pending->input.edges.push_back({e.from, e.to, size.width(), size.height()});
    }
    for (const DrawnKernel &k : d.kernels) {
        const QSizeF size = graphClusterTitleSize(
            QStringLiteral("%1 [%2]").arg(QString::fromStdString(k.name), QString::fromStdString(k.strategy)));
        pending->input.clusters.push_back({size.width(), size.height()});
    }
    m_timings.prepareMs = static_cast<double>(prepare.nsecsElapsed()) / 1e6;

    auto *watcher = new QFutureWatcher<LayoutOutcome>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, job] {
        watcher->deleteLater();
        if (job != m_job)
            return;
        const LayoutOutcome outcome = watcher->result();
        m_drawing = outcome.job->drawing;
        m_timings.layoutMs = outcome.ms;
        if (!outcome.layout->ok()) {
            m_layoutError = QString::fromStdString(outcome.layout->error().message);
            buildScene(Layout{}, tr("The graph could not be drawn: %1").arg(m_layoutError));
            return;
        }
        buildScene(**outcome.layout, {});
    });
    watcher->setFuture(
        QtConcurrent::run([job, latest = m_latestJob, input = std::shared_ptr<const LayoutJob>(pending)] {
            LayoutOutcome outcome;
            outcome.job = input;
            if (latest->load() != job) { // a newer program is waiting: skip this one's layout
                outcome.layout = std::make_shared<const Result<Layout>>(makeError(ErrorKind::Cancelled, "stale"));
                return outcome;
            }
            QElapsedTimer timer;
            timer.start();
            outcome.layout = std::make_shared<const Result<Layout>>(layoutGraph(input->input));
            outcome.ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
            return outcome;
        }));
}

void GraphView::buildScene(const Layout &layout, const QString &message)
{
    QElapsedTimer timer;
    timer.start();
    m_selectingFromSource = true; // clearing the scene is no user's selection
    scene()->clear();
    m_selectingFromSource = false;
    m_nodeItems.clear();
    if (!m_program)
        m_drawing = {};

    const bool fused = !m_drawing.kernels.empty();
    if (m_program && fused)
        m_kernelCaption = (m_drawing.kernels.size() == 1 ? tr("Shaded: 1 kernel")
                                                         : tr("Shaded: %1 kernels").arg(m_drawing.kernels.size())) +
                          (m_whose.isEmpty() ? QString() : tr(" of %1").arg(m_whose));
    else if (m_program)
        m_kernelCaption = tr("No fusion known yet: one colour per op");
    else
        m_kernelCaption.clear();

    if (!message.isEmpty() || layout.nodes.empty()) {
        auto *text = scene()->addSimpleText(message.isEmpty() ? tr("Nothing to draw: the graph is empty.") : message);
        text->setBrush(QColor(90, 90, 90));
        scene()->setSceneRect(text->boundingRect().adjusted(-kSceneMargin, -kSceneMargin, kSceneMargin, kSceneMargin));
    } else {
        for (std::size_t c = 0; c < layout.clusters.size(); ++c) {
            const DrawnKernel &k = m_drawing.kernels[c];
            scene()->addItem(new GraphClusterItem(
                toQt(layout.clusters[c]), graphKernelColour(static_cast<int>(c)),
                QStringLiteral("%1 [%2]").arg(QString::fromStdString(k.name), QString::fromStdString(k.strategy))));
        }
        int opIndex = 0;
        for (std::size_t i = 0; i < layout.nodes.size(); ++i) {
            const DrawnNode &n = m_drawing.nodes[i];
            const int colour = n.kind != DrawnNode::Kind::Op ? -1 : fused ? n.kernel : opIndex;
            opIndex += n.kind == DrawnNode::Kind::Op ? 1 : 0;
            auto *item = new GraphNodeItem(static_cast<int>(i), n, toQt(layout.nodes[i]),
                                           colour >= 0 ? graphKernelColour(colour) : QColor(235, 235, 235));
            scene()->addItem(item);
            m_nodeItems.push_back(item);
        }
        for (std::size_t i = 0; i < layout.edges.size(); ++i) {
            const EdgeRoute &route = layout.edges[i];
            scene()->addItem(new GraphEdgeItem(edgePath(route), arrowHead(route),
                                               route.label ? toQt(*route.label) : QRectF(),
                                               QString::fromStdString(m_drawing.edges[i].label)));
        }
        scene()->setSceneRect(QRectF(0, 0, layout.width, layout.height)
                                  .adjusted(-kSceneMargin, -kSceneMargin, kSceneMargin, kSceneMargin));
    }
    m_timings.sceneMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    m_laidOut = true;
    if (m_fitPending || !m_userZoomed) {
        m_fitPending = false;
        showInitially();
    }
    emit laidOut();
}

QGraphicsItem *GraphView::nodeItem(int index) const
{
    if (index < 0 || index >= static_cast<int>(m_nodeItems.size()))
        return nullptr;
    return m_nodeItems[static_cast<std::size_t>(index)];
}

int GraphView::selectedNode() const
{
    for (QGraphicsItem *item : scene()->selectedItems())
        if (auto *node = dynamic_cast<GraphNodeItem *>(item))
            return node->index();
    return -1;
}

void GraphView::onSelectionChanged()
{
    if (m_selectingFromSource)
        return;
    const int index = selectedNode();
    if (index < 0)
        return;
    const DrawnNode &n = m_drawing.nodes[static_cast<std::size_t>(index)];
    if (n.begin.line > 0)
        emit sourceRequested(n.begin.line, n.begin.column, n.end.line, n.end.column);
}

void GraphView::selectSourceAt(int line, int column)
{
    const int index = m_drawing.nodeAt(line, column);
    if (index == selectedNode())
        return;
    m_selectingFromSource = true;
    scene()->clearSelection();
    if (QGraphicsItem *item = nodeItem(index)) {
        item->setSelected(true);
        ensureVisible(item, 40, 40);
    }
    m_selectingFromSource = false;
}

double GraphView::zoom() const
{
    return transform().m11();
}

void GraphView::setZoom(double factor)
{
    factor = std::clamp(factor, kMinZoom, kMaxZoom);
    setTransform(QTransform::fromScale(factor, factor));
}

void GraphView::scaleBy(double factor)
{
    m_userZoomed = true;
    setZoom(zoom() * factor);
}

void GraphView::zoomIn()
{
    scaleBy(kZoomStep);
}
void GraphView::zoomOut()
{
    scaleBy(1 / kZoomStep);
}

void GraphView::fit()
{
    const QRectF rect = scene()->sceneRect();
    if (rect.isEmpty())
        return;
    fitInView(rect, Qt::KeepAspectRatio);
    if (zoom() > 1.0) // a small graph stays at its natural size, centred
        setZoom(1.0);
    else if (zoom() < kMinZoom)
        setZoom(kMinZoom);
    centerOn(rect.center());
    m_userZoomed = false;
}

void GraphView::showInitially()
{
    fit();
    const QRectF rect = scene()->sceneRect();
    if (rect.isEmpty() || zoom() >= kReadableZoom)
        return;
    setZoom(std::clamp(viewport()->width() / rect.width(), kReadableZoom, 1.0));
    const double visibleHeight = mapToScene(viewport()->rect()).boundingRect().height();
    centerOn(rect.center().x(), rect.top() + visibleHeight / 2);
}

void GraphView::wheelEvent(QWheelEvent *event)
{
    if (event->modifiers() & Qt::ControlModifier) {
        const double steps = event->angleDelta().y() / 120.0;
        if (steps != 0)
            scaleBy(std::pow(kZoomStep, steps));
        event->accept();
        return;
    }
    QGraphicsView::wheelEvent(event);
}

void GraphView::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomIn();
        return;
    case Qt::Key_Minus:
        zoomOut();
        return;
    case Qt::Key_F:
        fit();
        return;
    case Qt::Key_0:
        m_userZoomed = true;
        setZoom(1.0);
        return;
    default:
        QGraphicsView::keyPressEvent(event);
    }
}

void GraphView::resizeEvent(QResizeEvent *event)
{
    QGraphicsView::resizeEvent(event);
    if (!m_userZoomed && m_laidOut) // follow the dock until the user picks a zoom
        showInitially();
}

bool GraphView::exportSvg(const QString &path, QString *error) const
{
    const QRectF source = scene()->sceneRect();
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
    svg.setTitle(m_program ? QString::fromStdString(m_program->graph.name()) : tr("graph"));
    svg.setDescription(tr("Computation graph drawn by StitchCUDA Studio"));
    QPainter painter;
    if (!painter.begin(&svg)) {
        if (error)
            *error = tr("could not write %1").arg(path);
        return false;
    }
    painter.setRenderHint(QPainter::Antialiasing);
    scene()->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    painter.end();
    if (!QFileInfo(path).isFile() || QFileInfo(path).size() == 0) {
        if (error)
            *error = tr("could not write %1").arg(path);
        return false;
    }
    return true;
}

bool GraphView::exportPng(const QString &path, QString *error) const
{
    const QRectF source = scene()->sceneRect();
    double scale = 2.0;
    const double pixels = source.width() * source.height() * scale * scale;
    if (pixels > kMaxPngPixels)
        scale *= std::sqrt(kMaxPngPixels / pixels);
    const QSize size(std::max(1, static_cast<int>(std::ceil(source.width() * scale))),
                     std::max(1, static_cast<int>(std::ceil(source.height() * scale))));
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) {
        if (error)
            *error = tr("the drawing is too large for an image (%1 x %2)").arg(size.width()).arg(size.height());
        return false;
    }
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    scene()->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), source);
    painter.end();
    if (!image.save(path, "PNG")) {
        if (error)
            *error = tr("could not write %1").arg(path);
        return false;
    }
    return true;
}

} // namespace stitch::views
