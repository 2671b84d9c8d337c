// MainWindow's Training dock and Retrain with my overrides: the Agents dock's result (its pins)
// retrained on a worker (RetrainController), the curves live in the Training dock, the retrained
// copy used by Optimize afterwards; File > Open Training Log... shows a run's CSV.
#include "views/MainWindow.h"

#include "views/AgentsPanel.h"
#include "views/RetrainController.h"
#include "views/TrainingPanel.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QStatusBar>

namespace stitch::views {

void MainWindow::createTraining()
{
    m_retrainer = new RetrainController(this);
    m_trainingPanel = new TrainingPanel(this);
    m_trainingPanel->setObjectName(QStringLiteral("trainingPanel"));
    auto *dock = new QDockWidget(tr("Training"), this);
    dock->setObjectName(QStringLiteral("trainingDock")); // saveState()/restoreState() know it by this name
    dock->setWidget(m_trainingPanel);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    tabifyDockWidget(m_agentsDock, dock);
    m_agentsDock->raise();
    m_trainingDock = dock;

    m_openTrainingLogAction = new QAction(tr("Open &Training Log…"), this);
    m_openTrainingLogAction->setObjectName(QStringLiteral("openTrainingLogAction"));
    m_openTrainingLogAction->setToolTip(tr("The reward and loss curves of a training run, from its CSV"));
    connect(m_openTrainingLogAction, &QAction::triggered, this, [this] {
        m_trainingDock->show();
        m_trainingDock->raise();
        m_trainingPanel->openLogWithDialog();
    });

    connect(m_agentsPanel, &AgentsPanel::retrainRequested, this, &MainWindow::retrainWithOverrides);
    connect(m_trainingPanel, &TrainingPanel::cancelRequested, m_retrainer, &RetrainController::cancel);
    connect(m_trainingPanel, &TrainingPanel::useShippedAgentsRequested, this, [this] {
        for (const QString &arch : m_retrainer->retrainedArchitectures())
            m_retrainer->useShippedAgents(arch);
    });
    connect(m_retrainer, &RetrainController::agentsInUseChanged, this, &MainWindow::showAgentsInUse);
    connect(m_retrainer, &RetrainController::stageChanged, this,
            [this](quint64, const QString &stage) { m_trainingPanel->setStage(stage); });
    connect(m_retrainer, &RetrainController::updated, this,
            [this](quint64, const agents::TrainProgress &row) { m_trainingPanel->addUpdate(row); });
    connect(m_retrainer, &RetrainController::finished, this,
            [this](quint64, std::shared_ptr<const agents::RetrainReport> report, const QString &arch,
                   const QString &checkpoint, const QString &csv) {
                m_agentsPanel->setRetraining(false);
                int won = 0;
                for (const auto &p : report->pins)
                    won += p.won ? 1 : 0;
                QString message =
                    tr("Retrained in %1 s (%2 updates): %3 of %4 pinned values won and were learnt. Optimize now uses "
                       "the retrained agents for %5 (%6); the shipped checkpoint is unchanged. Curves: %7.")
                        .arg(report->seconds, 0, 'f', 1)
                        .arg(report->updates)
                        .arg(won)
                        .arg(report->pins.size())
                        .arg(arch, QDir::toNativeSeparators(checkpoint), QDir::toNativeSeparators(csv));
                if (report->heldOutBefore.problems > 0)
                    message += tr(" Held out (greedy / search baseline): %1 -> %2.")
                                   .arg(report->heldOutBefore.geomean, 0, 'f', 3)
                                   .arg(report->heldOutAfter.geomean, 0, 'f', 3);
                m_trainingPanel->endRun(message, report->pins);
                statusBar()->showMessage(tr("Retrained: Optimize now uses the retrained agents"), 10000);
            });
    connect(m_retrainer, &RetrainController::failed, this, [this](quint64, const QString &message) {
        m_agentsPanel->setRetraining(false);
        m_trainingPanel->endRun(tr("Retraining failed: %1").arg(message));
    });
    connect(m_retrainer, &RetrainController::cancelled, this, [this](quint64) {
        m_agentsPanel->setRetraining(false);
        m_trainingPanel->endRun(tr("Retraining cancelled: no agents were written; Optimize uses the same agents as before."));
    });
    showAgentsInUse();
}

void MainWindow::showAgentsInUse()
{
    const QStringList arches = m_retrainer->retrainedArchitectures();
    if (arches.isEmpty()) {
        m_trainingPanel->setAgentsInUse(tr("Optimize uses the shipped agents."), false);
        return;
    }
    QStringList uses;
    for (const QString &arch : arches)
        uses << tr("%1: %2").arg(arch, QDir::toNativeSeparators(m_retrainer->agentsInUse(arch)));
    m_trainingPanel->setAgentsInUse(
        tr("Optimize uses the retrained agents (%1); the shipped ones are unchanged.").arg(uses.join(QStringLiteral("; "))),
        true);
}

bool MainWindow::retrainWithOverrides()
{
    m_trainingDock->show();
    m_trainingDock->raise();
    const agents::SourceResult *result = m_agentsPanel->result();
    if (!result) {
        m_trainingPanel->tell(tr("Nothing to retrain from: Optimize, then override a decision in the Agents dock."));
        return false;
    }
    if (result->trace.pins.empty()) {
        m_trainingPanel->tell(tr("Nothing to retrain from: override a decision in the Agents dock first (its pins "
                                 "are what the agents learn)."));
        return false;
    }
    if (m_retrainer->isRunning()) {
        m_trainingPanel->tell(tr("A retraining is running: cancel it or wait for it."));
        return false;
    }
    RetrainRequest request;
    request.trace = result->trace;
    request.traceName = documentName();
    request.updates = m_trainingPanel->retrainUpdates();
    request.episodesPerUpdate = m_trainingPanel->retrainEpisodes();
    QString error;
    if (m_retrainer->start(request, &error) == 0) {
        m_trainingPanel->tell(tr("Cannot retrain: %1").arg(error));
        return false;
    }
    QStringList pins;
    for (const auto &p : result->trace.pins)
        pins << QString::fromStdString(p);
    m_trainingPanel->beginRun(tr("Retraining the agents from %1's overrides: %2").arg(documentName(), pins.join(QStringLiteral(", "))),
                              request.updates);
    m_agentsPanel->setRetraining(true);
    return true;
}

} // namespace stitch::views
