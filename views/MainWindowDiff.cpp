// MainWindow's Code tab: the central area holds the source editor and, beside it as a tab, the Code
// view (two programs of the last Optimize side by side: as written / optimized, or a step beside
// the step before; CUDA, PTX or SASS).
//   OptimizeController::finished (MainWindowAgents.cpp) -> CodeDiffController::setResult -> CodeDiffView
//   Agents dock: selection -> followStep; Code Changes (or a double click) -> showStepChanges + Code tab
#include "views/MainWindow.h"

#include "views/AgentsPanel.h"
#include "views/CodeDiffController.h"
#include "views/CodeDiffView.h"
#include "views/CodeEditor.h"
#include "views/OptimizeController.h"

#include <QAction>
#include <QComboBox>
#include <QMenu>
#include <QTabWidget>

namespace stitch::views {

void MainWindow::createCodeDiff()
{
    m_codeDiffView = new CodeDiffView(m_syntax, this);
    m_codeDiffView->setObjectName(QStringLiteral("codeDiffView"));
    m_codeDiff = new CodeDiffController(m_codeDiffView, this);
    m_codeDiff->setArchitecture(architecture());

    // Two programs side by side need the width a dock does not have: a tab of the central area.
    auto *tabs = new QTabWidget(this);
    tabs->setObjectName(QStringLiteral("centralTabs"));
    tabs->setDocumentMode(true);
    QWidget *editor = takeCentralWidget();
    tabs->addTab(editor, tr("Source"));
    tabs->addTab(m_codeDiffView, tr("Code"));
    tabs->setTabToolTip(1, tr("The program as written beside the optimized one, or a step of the agents beside the "
                              "step before, changed lines and characters marked (Ctrl+Shift+D)"));
    setCentralWidget(tabs);
    m_centralTabs = tabs;

    // OptimizeController::finished reaches the controller in MainWindowAgents.cpp, before the Agents dock.
    connect(m_optimizer, &OptimizeController::failed, this,
            [this](quint64, const QString &message) { m_codeDiff->clear(tr("Nothing optimized: %1").arg(message)); });
    connect(m_optimizer, &OptimizeController::cancelled, this,
            [this](quint64) { m_codeDiff->clear(tr("Optimize was cancelled: nothing to compare.")); });
    connect(m_agentsPanel, &AgentsPanel::stepShown, m_codeDiff, &CodeDiffController::followStep);
    connect(m_agentsPanel, &AgentsPanel::codeChangesRequested, this, [this](int row) {
        m_codeDiff->showStepChanges(row);
        showCodeTab(true);
    });
    connect(m_archCombo, &QComboBox::currentIndexChanged, m_codeDiff,
            [this] { m_codeDiff->setArchitecture(architecture()); });
    // A jump to a line of the source (a diagnostic, an outline item, a graph op) needs the editor in view.
    connect(m_editor, &QPlainTextEdit::cursorPositionChanged, this, [this] {
        if (isCodeTabShown() || isWelcomeShown())
            showCodeTab(false);
    });

    auto *toggle = new QAction(tr("Source / &Code"), this);
    toggle->setObjectName(QStringLiteral("codeTabAction"));
    toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    toggle->setToolTip(tr("Switch the central area between the source and the Code view (Ctrl+Shift+D)"));
    connect(toggle, &QAction::triggered, this, [this] { showCodeTab(!isCodeTabShown()); });
    addAction(toggle);
    if (m_viewMenu) {
        m_viewMenu->addSeparator();
        m_viewMenu->addAction(toggle);
        m_viewMenu->addAction(m_codeDiffView->nextChangeAction());
        m_viewMenu->addAction(m_codeDiffView->previousChangeAction());
    }
}

void MainWindow::showCodeTab(bool code)
{
    showDocument();
    m_centralTabs->setCurrentWidget(code ? static_cast<QWidget *>(m_codeDiffView) : static_cast<QWidget *>(m_editor));
    if (code)
        m_codeDiffView->leftPane()->setFocus(Qt::OtherFocusReason);
}

bool MainWindow::isCodeTabShown() const
{
    return !isWelcomeShown() && m_centralTabs->currentWidget() == m_codeDiffView;
}

} // namespace stitch::views
