#include "views/GraphPanel.h"

#include "views/GraphView.h"
#include "views/WrapLabel.h"

#include <QAction>
#include <QActionGroup>
#include <QFileDialog>
#include <QLabel>
#include <QMessageBox>
#include <QStackedWidget>
#include <QToolBar>
#include <QTreeView>
#include <QVBoxLayout>

namespace stitch::views {

GraphPanel::GraphPanel(QWidget *parent) : QWidget(parent)
{
    m_drawing = new GraphView(this);
    m_drawing->setObjectName(QStringLiteral("graphDrawing"));
    m_tree = new QTreeView(this);
    m_tree->setObjectName(QStringLiteral("graphView"));
    m_stack = new QStackedWidget(this);
    m_stack->addWidget(m_drawing);
    m_stack->addWidget(m_tree);

    auto *bar = new QToolBar(this);
    bar->setObjectName(QStringLiteral("graphToolBar"));
    bar->setIconSize(QSize(16, 16));
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    auto *mode = new QActionGroup(this);
    m_showDrawing = bar->addAction(tr("Drawing"), this, &GraphPanel::showDrawing);
    m_showDrawing->setToolTip(tr("The graph drawn: ops, tensors and the kernels they fuse into"));
    m_showTree = bar->addAction(tr("Tree"), this, &GraphPanel::showTree);
    m_showTree->setToolTip(tr("The graph as a tree: sizes, tensors, ops, launches, diagnostics"));
    for (QAction *a : {m_showDrawing, m_showTree}) {
        a->setCheckable(true);
        mode->addAction(a);
    }
    bar->addSeparator();
    // Shortcuts live on the view itself (keyPressEvent) so they never steal keys from the editor.
    m_zoomIn = bar->addAction(tr("+"), m_drawing, &GraphView::zoomIn);
    m_zoomIn->setToolTip(tr("Zoom in (+, Ctrl+wheel)"));
    m_zoomOut = bar->addAction(tr("−"), m_drawing, &GraphView::zoomOut);
    m_zoomOut->setToolTip(tr("Zoom out (-, Ctrl+wheel)"));
    m_fit = bar->addAction(tr("Fit"), m_drawing, &GraphView::fit);
    m_fit->setObjectName(QStringLiteral("graphFitAction"));
    m_fit->setToolTip(tr("Show the whole graph (F)"));
    bar->addSeparator();
    m_exportSvg = bar->addAction(tr("SVG…"), this, [this] { exportWithDialog(true); });
    m_exportSvg->setToolTip(tr("Export the drawing as SVG"));
    m_exportPng = bar->addAction(tr("PNG…"), this, [this] { exportWithDialog(false); });
    m_exportPng->setToolTip(tr("Export the drawing as PNG"));

    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("graphKernelCaption"));
    wrapWithinDock(m_caption);
    connect(m_drawing, &GraphView::laidOut, this, [this] { m_caption->setText(m_drawing->kernelCaption()); });

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(bar);
    layout->addWidget(m_caption);
    layout->addWidget(m_stack, 1);
    showDrawing();
}

bool GraphPanel::isShowingDrawing() const
{
    return m_stack->currentWidget() == m_drawing;
}

void GraphPanel::showDrawing()
{
    m_stack->setCurrentWidget(m_drawing);
    updateActions();
}

void GraphPanel::showTree()
{
    m_stack->setCurrentWidget(m_tree);
    updateActions();
}

void GraphPanel::updateActions()
{
    const bool drawing = isShowingDrawing();
    m_showDrawing->setChecked(drawing);
    m_showTree->setChecked(!drawing);
    for (QAction *a : {m_zoomIn, m_zoomOut, m_fit, m_exportSvg, m_exportPng})
        a->setEnabled(drawing);
    m_caption->setVisible(drawing);
}

void GraphPanel::exportWithDialog(bool svg)
{
    const QString filter = svg ? tr("SVG images (*.svg)") : tr("PNG images (*.png)");
    QString path =
        QFileDialog::getSaveFileName(this, svg ? tr("Export Graph as SVG") : tr("Export Graph as PNG"), {}, filter);
    if (path.isEmpty())
        return;
    const QString suffix = svg ? QStringLiteral(".svg") : QStringLiteral(".png");
    if (!path.endsWith(suffix, Qt::CaseInsensitive))
        path += suffix;
    QString error;
    if (!(svg ? m_drawing->exportSvg(path, &error) : m_drawing->exportPng(path, &error)))
        QMessageBox::warning(this, tr("Export failed"), error);
}

} // namespace stitch::views
