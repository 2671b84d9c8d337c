// MainWindow's Graph dock: the lift drawn (GraphView) or as a tree (GraphModel), the kernels of
// the newest schedule as shaded regions, and the editor and the drawing selecting each other.
//   runLift -> showLiftDrawing -> GraphView::setProgram
//   rubricUpdated (scored schedule) / Optimize finished (agents' schedule) -> showGraphKernels
//   op clicked -> editor selection; editor cursor -> GraphView::selectSourceAt
#include "views/MainWindow.h"

#include "core/frontend/Lift.h"
#include "views/CodeEditor.h"
#include "views/GraphModel.h"
#include "views/GraphPanel.h"
#include "views/GraphView.h"
#include "views/WrapLabel.h"

#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

namespace stitch::views {

void MainWindow::createGraphDock()
{
    auto *graphWidget = new QWidget(this);
    auto *graphLayout = new QVBoxLayout(graphWidget);
    graphLayout->setContentsMargins(4, 4, 4, 4);
    m_graphSummary = new QLabel(graphWidget);
    m_graphSummary->setObjectName(QStringLiteral("graphSummary"));
    wrapWithinDock(m_graphSummary);
    m_graphPanel = new GraphPanel(graphWidget);
    m_graphPanel->setObjectName(QStringLiteral("graphPanel"));
    m_graphView = m_graphPanel->tree();
    m_graphView->setModel(m_graph);
    m_graphView->setUniformRowHeights(true);
    m_graphView->header()->setStretchLastSection(false);
    m_graphView->header()->setSectionResizeMode(GraphModel::TextColumn, QHeaderView::Stretch);
    m_graphView->header()->setSectionResizeMode(GraphModel::LocationColumn, QHeaderView::ResizeToContents);
    connect(m_graphView, &QTreeView::clicked, this, &MainWindow::selectGraphItemSource);
    connect(m_graphView, &QTreeView::activated, this, &MainWindow::selectGraphItemSource);
    connect(m_graph, &QAbstractItemModel::modelReset, m_graphView, &QTreeView::expandAll);
    graphLayout->addWidget(m_graphSummary);
    graphLayout->addWidget(m_graphPanel, 1);

    GraphView *drawing = m_graphPanel->drawing();
    drawing->setMessage(tr("Open a tensor-expression file or a liftable CUDA program to draw its graph."));
    connect(drawing, &GraphView::sourceRequested, m_editor, &CodeEditor::selectRange);
    connect(m_editor, &QPlainTextEdit::cursorPositionChanged, drawing,
            [this] { m_graphPanel->drawing()->selectSourceAt(m_editor->currentLine(), m_editor->currentColumn()); });
    connect(this, &MainWindow::rubricUpdated, this, [this] {
        showGraphKernels(m_scoredSchedule, !m_agentStep.isEmpty() ? m_agentStep
                                           : m_userSchedule       ? tr("your schedule")
                                                                  : tr("the default schedule"));
    });
    m_graphDock = new QDockWidget(tr("Graph"), this);
    m_graphDock->setObjectName(QStringLiteral("graphDock"));
    m_graphDock->setWidget(graphWidget);
    addDockWidget(Qt::RightDockWidgetArea, m_graphDock);
}

void MainWindow::showLiftDrawing()
{
    GraphView *drawing = m_graphPanel->drawing();
    if (!m_lifted || !m_lifted->ok()) {
        drawing->setMessage(m_lifted ? tr("Not lifted: %1").arg(QString::fromStdString(m_lifted->error().message))
                                     : QString());
        return;
    }
    // Shares the lift's ownership; the program lives as long as the drawing needs it.
    drawing->setProgram(std::shared_ptr<const frontend::LiftedProgram>(m_lifted, &**m_lifted));
}

void MainWindow::showGraphKernels(const schedule::Schedule &schedule, const QString &whose)
{
    m_graphPanel->drawing()->setKernelGroups(schedule.groups, whose);
}

} // namespace stitch::views
