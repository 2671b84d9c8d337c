#pragma once
// The drawn computation graph: ops, tensors and opaque kernels laid out by Graphviz (GraphLayout),
// drawn with QGraphicsScene, with the kernels a schedule fused them into as shaded regions.
//   LiftedProgram + kernel groups -> drawingOf (GUI thread) -> node sizes (GUI thread)
//     -> layoutGraph (worker; a newer request drops a stale one) -> scene items (GUI thread)
//   click on an op -> sourceRequested -> editor selection; editor cursor -> selectSourceAt
// Zoom with Ctrl+wheel or +/-, pan by dragging, F fits; exports to SVG and PNG. A drawing too
// large to read when fitted opens at a readable scale on its inputs.

#include "core/frontend/Lift.h"
#include "core/schedule/Schedule.h"
#include "views/GraphDrawing.h"

#include <QGraphicsView>

#include <atomic>
#include <memory>
#include <vector>

namespace stitch::views {

struct Layout;
class GraphNodeItem;

class GraphView final : public QGraphicsView {
    Q_OBJECT
public:
    /// Where the time of the last drawing went, in milliseconds. Only `layoutMs` runs off the GUI
    /// thread.
    struct Timings {
        double prepareMs = 0; ///< drawing and node sizes (GUI thread)
        double layoutMs = 0;  ///< Graphviz (worker)
        double sceneMs = 0;   ///< scene items (GUI thread)
    };

    explicit GraphView(QWidget *parent = nullptr);
    ~GraphView() override;

    /// Draws a lifted program (nullptr: nothing). The layout runs on a worker; laidOut() follows.
    void setProgram(std::shared_ptr<const frontend::LiftedProgram> program);
    /// The kernels the ops were fused into (a schedule's groups) and whose schedule that is, for
    /// the caption; empty groups: no fusion is known and each op has its own colour.
    void setKernelGroups(std::vector<schedule::KernelGroup> groups, const QString &whose = {});
    /// Shown instead of a drawing (why there is no graph).
    void setMessage(const QString &message);

    const GraphDrawing &drawing() const { return m_drawing; }
    /// "3 kernels of the default schedule", or why ops are not grouped.
    QString kernelCaption() const { return m_kernelCaption; }
    /// True when the scene shows the newest program and kernel groups.
    bool isLaidOut() const { return m_laidOut; }
    QString layoutError() const { return m_layoutError; }
    Timings timings() const { return m_timings; }

    /// The scene item of drawing().nodes[index], or nullptr (not laid out yet).
    QGraphicsItem *nodeItem(int index) const;
    int selectedNode() const;
    /// Selects the op or opaque kernel whose source holds (line, column), or clears the selection;
    /// brings it into view. Does not emit sourceRequested.
    void selectSourceAt(int line, int column);

    double zoom() const;
    void zoomIn();
    void zoomOut();
    void setZoom(double factor);
    /// The whole drawing in view (never magnified past 100 %).
    void fit();

    /// Writes the drawing as SVG or PNG (twice the on-screen resolution, within a size limit).
    bool exportSvg(const QString &path, QString *error = nullptr) const;
    bool exportPng(const QString &path, QString *error = nullptr) const;

signals:
    /// The user selected a node that came from source: select (line, column)-(endLine, endColumn).
    void sourceRequested(int line, int column, int endLine, int endColumn);
    /// The scene shows the newest program (or its layout error).
    void laidOut();

protected:
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void relayout();
    void buildScene(const Layout &layout, const QString &message);
    void onSelectionChanged();
    void scaleBy(double factor);
    /// The whole drawing when its text stays readable; a larger one opens at a readable scale on
    /// its inputs (the top) instead.
    void showInitially();

    std::shared_ptr<const frontend::LiftedProgram> m_program;
    std::vector<schedule::KernelGroup> m_groups;
    QString m_whose;
    QString m_kernelCaption;
    QString m_message;
    GraphDrawing m_drawing;
    std::vector<GraphNodeItem *> m_nodeItems;
    std::shared_ptr<std::atomic<quint64>> m_latestJob;
    quint64 m_job = 0;
    bool m_laidOut = true;
    bool m_fitPending = true;
    bool m_userZoomed = false;
    bool m_selectingFromSource = false;
    QString m_layoutError;
    Timings m_timings;
};

} // namespace stitch::views
