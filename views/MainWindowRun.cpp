// MainWindow's Run dock: the last Optimize's programs through the runner (worker process), the
// device in the status bar.
//   Run (F5) -> RunController (runner thread: runPrograms) -> RunPanel (chart, tables, roofline)
//   window shown -> RunController::probe -> status bar: the GPU, or why there is none
#include "views/MainWindow.h"

#include "views/AgentsPanel.h"
#include "views/OptimizeController.h"
#include "views/ProjectController.h"
#include "views/RunController.h"
#include "views/RunHistoryModel.h"
#include "views/RunPanel.h"
#include "views/Text.h"

#include <QAction>
#include <QDateTime>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>

namespace stitch::views {

namespace {

// The status bar's part of why there is no GPU: its first line up to the first parenthesis
// ("no CUDA driver: cannot load libcuda.so.1"), at most 60 characters; the tooltip has it whole.
QString shortReason(const QString &why)
{
    QString reason = why.section(QLatin1Char('\n'), 0, 0);
    if (const qsizetype paren = reason.indexOf(QStringLiteral(" (")); paren > 0)
        reason.truncate(paren);
    constexpr qsizetype kMax = 60;
    if (reason.size() > kMax)
        reason = reason.left(kMax - 1) + QChar(0x2026); // …
    return reason;
}

} // namespace

void MainWindow::createRun()
{
    m_runController = new RunController(m_database, this);
    m_runAction = new QAction(themeIcon("media-playback-start", QStyle::SP_MediaPlay), tr("&Run and Profile"), this);
    m_runAction->setObjectName(QStringLiteral("runAction"));
    m_runAction->setShortcut(QKeySequence(Qt::Key_F5));
    m_runAction->setToolTip(tr("Verify and time the optimized program and the one before it on the local GPU, or "
                               "estimate them with the performance model without one (F5)"));
    m_runAction->setEnabled(false);
    connect(m_runAction, &QAction::triggered, this, [this] { runPrograms(); });
    auto *cancel = new QAction(themeIcon("process-stop", QStyle::SP_BrowserStop), tr("Cancel Run"), this);
    cancel->setObjectName(QStringLiteral("cancelRunAction"));
    cancel->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
    cancel->setEnabled(false);
    connect(cancel, &QAction::triggered, m_runController, &RunController::cancel);

    m_runPanel = new RunPanel(m_runAction, cancel, this);
    m_runPanel->setObjectName(QStringLiteral("runPanel"));
    m_runDock = new QDockWidget(tr("Run"), this);
    m_runDock->setObjectName(QStringLiteral("runDock")); // saveState() keys on it
    m_runDock->setWidget(m_runPanel);
    addDockWidget(Qt::RightDockWidgetArea, m_runDock);
    tabifyDockWidget(m_agentsDock, m_runDock);
    m_agentsDock->raise();
    if (m_viewMenu)
        m_viewMenu->insertAction(m_viewMenu->actions().value(0), m_runDock->toggleViewAction());
    for (QAction *item : menuBar()->actions())
        if (QMenu *menu = item->menu(); menu && menu->actions().contains(m_cancelOptimizeAction)) {
            const QList<QAction *> actions = menu->actions();
            menu->insertActions(actions.value(actions.indexOf(m_cancelOptimizeAction) + 1), {m_runAction, cancel});
            break;
        }
    for (QObject *object : m_optimizeAction->associatedObjects())
        if (auto *bar = qobject_cast<QToolBar *>(object))
            bar->insertAction(m_cancelOptimizeAction, m_runAction);

    m_deviceStatus = new QLabel(tr("GPU: asking the runner..."), this);
    m_deviceStatus->setObjectName(QStringLiteral("deviceStatus"));
    statusBar()->addPermanentWidget(m_deviceStatus);
    connect(m_runController, &RunController::deviceProbed, this, [this] {
        const DeviceStatus *d = m_runController->device();
        if (!d)
            return;
        m_deviceStatus->setText(d->gpu ? tr("GPU: %1 (%2)").arg(qs(d->name), qs(d->arch))
                                       : tr("No GPU: %1").arg(shortReason(qs(d->why))));
        m_deviceStatus->setToolTip(d->gpu ? tr("The runner's worker process owns this GPU; Run (F5) measures on it")
                                          : tr("The runner found no GPU: %1\nRun (F5) shows the performance model's "
                                               "estimates, marked estimated")
                                                .arg(qs(d->why)));
    });
    connect(m_project, &ProjectController::measurementsChanged, this,
            [this] { m_runPanel->historyModel()->setMeasurements(m_project->measurements()); });
    // Deferred like the Device dock's probe, so a caller (a test) can still change the settings.
    QTimer::singleShot(0, m_runController, &RunController::probe);

    connect(m_runController, &RunController::progress, this,
            [this](quint64, const QString &stage) { m_runPanel->setMessage(tr("Running: %1...").arg(stage)); });
    connect(m_runController, &RunController::finished, this,
            [this, cancel](quint64, std::shared_ptr<const RunReport> report) {
                cancel->setEnabled(false);
                m_runPanel->setReport(report);
                // What a GPU measured is the project's: kept with it (estimates are not).
                m_project->addMeasurements(
                    measurementsOf(*report, QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString()));
                const ProgramRun *after = report->optimized();
                m_optimizeStatus->setText(after && after->timing()
                                              ? tr("Run: optimized %1%2")
                                                    .arg(qs(runMsText(after->timing()->medianMs)),
                                                         after->estimated() ? tr(" (estimated)") : QString())
                                              : tr("Run: nothing timed (the Run dock says why)"));
                Q_EMIT runSettled();
            });
    connect(m_runController, &RunController::cancelled, this, [this, cancel](quint64) {
        cancel->setEnabled(false);
        m_runPanel->setMessage(tr("Run was cancelled (its worker process was stopped)."));
        Q_EMIT runSettled();
    });
    connect(m_runController, &RunController::progress, cancel, [cancel] { cancel->setEnabled(true); });
    // A new Optimize makes the shown run stale: its programs are no longer the agents'.
    connect(m_optimizer, &OptimizeController::finished, this, [this] {
        m_runAction->setEnabled(true);
        if (m_runPanel->report()) {
            m_runPanel->setReport(nullptr);
            m_runPanel->setMessage(tr("A new Optimize: Run (F5) to verify and time its program."));
        }
    });
    connect(m_optimizer, &OptimizeController::failed, this,
            [this] { m_runAction->setEnabled(m_agentsPanel->result()); });
}

bool MainWindow::runPrograms()
{
    auto result = m_agentsPanel->sharedResult();
    if (!result) {
        m_runPanel->setMessage(tr("Nothing to run: Optimize first (Ctrl+R); Run verifies and times its program."));
        Q_EMIT runSettled();
        return false;
    }
    RunInput input;
    input.optimized = std::move(result);
    input.source = m_sourceOptions;
    input.arch = input.optimized->trace.arch.empty() ? architecture().toStdString() : input.optimized->trace.arch;
    m_runDock->raise();
    m_runPanel->setMessage(tr("Running %1 through the runner...").arg(documentName()));
    m_runController->run(std::move(input));
    return true;
}

bool MainWindow::isRunSettled() const
{
    return !m_runController->isRunning();
}

} // namespace stitch::views
