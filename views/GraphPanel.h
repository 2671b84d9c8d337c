#pragma once
// The Graph dock's body: the drawn graph (GraphView) or the tree (a QTreeView over GraphModel),
// with a toolbar to switch between them, zoom, fit and export the drawing.
//   MainWindow (lift, kernel groups) -> GraphPanel -> GraphView | tree
// The tree keeps the object name "graphView" it had before the drawing existed.

#include <QWidget>

QT_BEGIN_NAMESPACE
class QAction;
class QLabel;
class QStackedWidget;
class QTreeView;
QT_END_NAMESPACE

namespace stitch::views {

class GraphView;

class GraphPanel final : public QWidget {
    Q_OBJECT
public:
    explicit GraphPanel(QWidget *parent = nullptr);

    GraphView *drawing() const { return m_drawing; }
    QTreeView *tree() const { return m_tree; }
    bool isShowingDrawing() const;
    void showDrawing();
    void showTree();

    QAction *fitAction() const { return m_fit; }
    QAction *exportSvgAction() const { return m_exportSvg; }
    QAction *exportPngAction() const { return m_exportPng; }

    /// Asks where to save; tests and scripts call GraphView::exportSvg/exportPng directly.
    void exportWithDialog(bool svg);

private:
    void updateActions();

    GraphView *m_drawing = nullptr;
    QTreeView *m_tree = nullptr;
    QStackedWidget *m_stack = nullptr;
    QLabel *m_caption = nullptr;
    QAction *m_showDrawing = nullptr;
    QAction *m_showTree = nullptr;
    QAction *m_zoomIn = nullptr;
    QAction *m_zoomOut = nullptr;
    QAction *m_fit = nullptr;
    QAction *m_exportSvg = nullptr;
    QAction *m_exportPng = nullptr;
};

} // namespace stitch::views
