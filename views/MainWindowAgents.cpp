// MainWindow's Optimize: the Agents dock, the Optimize and Cancel actions, and the run's progress
// in the status bar (OptimizeController runs the agents off the GUI thread).
#include "views/MainWindow.h"

#include "views/AgentsModel.h"
#include "views/AgentsPanel.h"
#include "views/CodeDiffController.h"
#include "views/CodeEditor.h"
#include "views/GeneratedPanel.h"
#include "views/OptimizeController.h"
#include "views/RetrainController.h"
#include "views/RubricPanel.h"

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QProgressBar>
#include <QStyle>

#include <algorithm>
#include <iterator>

namespace stitch::views {

void MainWindow::createAgents()
{
    m_optimizer = new OptimizeController(this);
    m_optimizeAction = new QAction(themeIcon("system-run", QStyle::SP_MediaSeekForward), tr("&Optimize"), this);
    m_optimizeAction->setObjectName(QStringLiteral("optimizeAction"));
    m_optimizeAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_optimizeAction->setToolTip(tr("The agents decide the schedule of this program, step by step (Ctrl+R)"));
    connect(m_optimizeAction, &QAction::triggered, this, [this] { optimize(); });
    m_cancelOptimizeAction = new QAction(themeIcon("process-stop", QStyle::SP_BrowserStop), tr("Cancel Optimize"), this);
    m_cancelOptimizeAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    m_cancelOptimizeAction->setEnabled(false);
    connect(m_cancelOptimizeAction, &QAction::triggered, this, &MainWindow::cancelOptimize);

    m_agentsPanel = new AgentsPanel(this);
    m_agentsPanel->setObjectName(QStringLiteral("agentsPanel"));
    auto *dock = new QDockWidget(tr("Agents"), this);
    dock->setObjectName(QStringLiteral("agentsDock"));
    dock->setWidget(m_agentsPanel);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    tabifyDockWidget(m_generatedDock, dock);
    m_agentsDock = dock;

    // An override replaces an earlier pin of the same decision, then the agents run again around it.
    connect(m_agentsPanel, &AgentsPanel::overrideRequested, this, [this](const QString &pin) {
        const QString id = pin.section(QLatin1Char('='), 0, 0) + QLatin1Char('=');
        m_pins.erase(std::remove_if(m_pins.begin(), m_pins.end(), [&](const QString &p) { return p.startsWith(id); }),
                     m_pins.end());
        m_pins << pin;
        optimize();
    });
    connect(m_agentsPanel, &AgentsPanel::stepShown, this, &MainWindow::showAgentStep);
    connect(m_agentsPanel, &AgentsPanel::clearOverridesRequested, this, [this] {
        m_pins.clear();
        optimize();
    });

    m_optimizeStatus = new QLabel(this);
    m_optimizeStatus->setObjectName(QStringLiteral("optimizeStatus"));
    m_optimizeProgress = new QProgressBar(this);
    m_optimizeProgress->setMaximumWidth(160);
    m_optimizeProgress->setTextVisible(false);
    m_optimizeProgress->hide();

    connect(m_optimizer, &OptimizeController::progress, this, &MainWindow::onOptimizeProgress);
    connect(m_optimizer, &OptimizeController::finished, this,
            [this](quint64, std::shared_ptr<const agents::SourceResult> result) {
                const agents::Trace &t = result->trace;
                // The Generated dock shows the agents' program beside the one it showed before
                // (the heuristics' schedule, or the previous Optimize), changed lines marked.
                m_generatedPanel->setProgram(QString::fromStdString(result->program.source));
                // The Code tab has the result before the Agents dock announces its step (and before
                // optimizeSettled): it compares what the dock selects.
                m_codeDiff->setResult(result, compileFileName(), -1);
                showGraphKernels(t.schedule, tr("the agents' schedule"));
                m_agentsPanel->setResult(std::move(result));
                m_agentsPanel->setPins(m_pins);
                const double inputMs = t.asWrittenMs ? *t.asWrittenMs : t.inputMs;
                endOptimize(t.keptInput ? tr("Optimized: %1 decisions; the input as written is kept (Stitch's notes "
                                             "say why)")
                                              .arg(t.decisions.size())
                                        : tr("Optimized: %1 decisions, %2x over the input as written")
                                              .arg(t.decisions.size())
                                              .arg(inputMs / std::max(t.finalMs, 1e-12), 0, 'f', 2));
            });
    connect(m_optimizer, &OptimizeController::failed, this, [this](quint64, const QString &message) {
        m_agentsPanel->setMessage(tr("Nothing optimized: %1").arg(message));
        m_agentsPanel->setPins(m_pins);
        endOptimize(tr("Optimize failed"));
    });
    connect(m_optimizer, &OptimizeController::cancelled, this, [this](quint64) {
        m_agentsPanel->setMessage(tr("Optimize was cancelled."));
        endOptimize(tr("Optimize cancelled"));
    });
}

bool MainWindow::optimize()
{
    const QString text = m_editor->toPlainText();
    if (text.trimmed().isEmpty()) {
        m_agentsPanel->setMessage(tr("Nothing to optimize: the document is empty."));
        Q_EMIT optimizeSettled();
        return false;
    }
    // Sizes the source leaves open are asked for first (a kernel alone), with values to accept.
    if (const QStringList open = unboundSizes(); !open.isEmpty()) {
        const QMap<QString, qint64> proposed = proposedSizes();
        const auto answer = m_sizesPrompt ? m_sizesPrompt(proposed) : askSizes(proposed);
        if (!answer) {
            m_agentsPanel->setMessage(tr("Not optimized: sizes %1 have no value (Build > Sizes).").arg(open.join(QStringLiteral(", "))));
            Q_EMIT optimizeSettled();
            return false;
        }
        setSizeBindings(*answer);
    }
    agents::SourceRequest request;
    request.text = text.toStdString();
    for (const auto &[name, value] : m_sizeBindings)
        request.sizes[name] = value;
    request.fileName = compileFileName().toStdString();
    request.arch = architecture().toStdString();
    request.source = m_sourceOptions;
    // The retrained copy once Retrain with my overrides succeeded (MainWindowTraining.cpp), else the shipped agents.
    request.checkpoint = m_retrainer->agentsInUse(architecture()).toStdString();
    for (const QString &text : m_pins) {
        auto pin = agents::parsePin(text.toStdString());
        if (!pin) { // pins come from the dock's own decisions; a stale one is dropped with a note
            m_agentsPanel->setMessage(tr("Override %1 was dropped: %2").arg(text, QString::fromStdString(pin.error().message)));
            continue;
        }
        request.options.pins.push_back(*pin);
    }
    m_agentsPanel->setMessage(tr("The agents are deciding %1 for %2…").arg(documentName(), architecture()));
    m_agentsDock->raise();
    m_optimizeProgress->setRange(0, 0);
    m_optimizeProgress->show();
    m_optimizeStatus->setText(tr("Optimizing…"));
    m_cancelOptimizeAction->setEnabled(true);
    m_optimizer->start(request);
    return true;
}

void MainWindow::cancelOptimize() { m_optimizer->cancel(); }

void MainWindow::showAgentStep(int row)
{
    const agents::SourceResult *result = m_agentsPanel->result();
    if (!result)
        return;
    const AgentsModel *model = m_agentsPanel->model();
    const agents::TraceDecision *d = model->decisionAt(row);
    const bool stitch = row == model->rowCount() - 1;
    const schedule::Schedule *s = d ? &d->schedule : stitch ? &result->trace.schedule : nullptr;
    if (!s || s->groups.empty()) // Parse: the program as written is the editor's; old traces hold no steps
        return;
    m_agentStep = d ? tr("the agents' schedule after step %1 (%2)").arg(row).arg(QString::fromStdString(d->id))
                    : tr("the agents' final schedule");
    // The radar's previous and current series: the trace's scores around this step (Stitch: the
    // last decision's, then the final schedule as the Rubric dock scores it).
    const auto dims = [](const double(&values)[agents::kStaticDimensionCount]) {
        return std::vector<double>(std::begin(values), std::end(values));
    };
    const auto &decisions = result->trace.decisions;
    std::optional<AgentStepScores> step;
    if (d)
        step = AgentStepScores{tr("before step %1").arg(row), dims(d->dimensionsBefore), tr("after step %1").arg(row),
                               dims(d->dimensionsAfter)};
    else if (!decisions.empty())
        step = AgentStepScores{tr("after step %1, the last decision").arg(decisions.size()),
                               dims(decisions.back().dimensionsAfter), {}, {}};
    m_rubricPanel->setStep(std::move(step));
    m_userSchedule = *s;
    m_overridden.clear();
    runRubric();
}

bool MainWindow::isOptimizing() const { return m_optimizer->isRunning(); }

void MainWindow::onOptimizeProgress(quint64, const QString &stage, const QString &agent, int decisions, int candidates,
                                    int budget)
{
    if (stage == QLatin1String("search") && budget > 0) {
        m_optimizeProgress->setRange(0, budget);
        m_optimizeProgress->setValue(candidates);
        m_optimizeStatus->setText(tr("Search: %1 of %2 candidates").arg(candidates).arg(budget));
    } else {
        m_optimizeStatus->setText(tr("%1: %2 decisions").arg(agent).arg(decisions));
    }
}

void MainWindow::endOptimize(const QString &status)
{
    m_optimizeProgress->hide();
    m_optimizeStatus->setText(status);
    m_cancelOptimizeAction->setEnabled(false);
    Q_EMIT optimizeSettled();
}

} // namespace stitch::views
