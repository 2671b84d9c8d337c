// The studio's main flow, walked as a user would (issue 32): start, open a naive kernel, Optimize,
// step back and forth through the agents' decisions, override one (the agents decide again around
// it), retrain briefly from the override, Run (the model's estimates without a GPU), save the
// project and reopen it in a fresh window. Each step's state is asserted; an event-loop watchdog
// (views/StallMonitor) measures how long the GUI thread stalled in each phase. The figures are
// printed (and written to $STITCHCUDA_WALK_REPORT as JSON): a benchmark reports them
// (scripts/bench/studio_walk.sh, docs/PERFORMANCE.md); no speed is asserted here.
// With $STITCHCUDA_WALK_SCREENSHOTS=DIR the walk also renders the window (1280x800, or its minimum
// width if wider) after the Run, each view (the side docks closed) and, at the end, the welcome
// page to DIR/studio*.png (scripts/docs/studio_screenshots.sh: the README's gallery).
#include "TestUtil.h"
#include "TestWindows.h"

#include "core/arch/ArchDatabase.h"
#include "views/AgentsModel.h"
#include "views/AgentsPanel.h"
#include "views/CodeDiffController.h"
#include "views/CodeDiffSources.h"
#include "views/DevicePanel.h"
#include "views/GraphPanel.h"
#include "views/GraphView.h"
#include "views/MainWindow.h"
#include "views/RecentFiles.h"
#include "views/RetrainController.h"
#include "views/RunController.h"
#include "views/StallMonitor.h"
#include "views/SyntaxRepository.h"
#include "views/TrainingPanel.h"
#include "views/WelcomeModels.h"
#include "views/WelcomePage.h"

#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QAbstractItemView>
#include <QtTest>

#include <memory>

using namespace stitch;
using namespace stitch::views;

namespace {

constexpr int kSlowMs = 300000; // Optimize and retraining on a loaded 2-core machine

// Where the screenshots go ($STITCHCUDA_WALK_SCREENSHOTS), empty: none are taken.
QString screenshotDir()
{
    return qEnvironmentVariable("STITCHCUDA_WALK_SCREENSHOTS");
}

constexpr QSize kShotSize(1280, 800);

// Lets queued layouts and repaints run, then renders the window to DIR/NAME.png.
bool renderWindow(MainWindow &window, const QString &name)
{
    QElapsedTimer settle;
    settle.start();
    while (settle.elapsed() < 300)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    const QString path = QDir(screenshotDir()).filePath(name + QStringLiteral(".png"));
    const bool saved = window.grab().save(path, "PNG");
    qInfo().noquote() << "screenshot:" << QDir::toNativeSeparators(path) << (saved ? "" : "NOT WRITTEN");
    return saved;
}

// The outline, device, resources and problems docks closed: the room goes to the view shown.
void closeSideDocks(MainWindow &window)
{
    for (const char *name : {"outlineDock", "deviceDock", "resourcesDock", "problemsDock"})
        if (auto *dock = window.findChild<QDockWidget *>(QLatin1String(name)))
            dock->close();
}

// The window with one dock raised and given `percent` of the width (the side docks closed),
// rendered; the layout restored.
bool renderDock(MainWindow &window, const QString &dockName, int percent, const QString &name)
{
    auto *dock = window.findChild<QDockWidget *>(dockName);
    if (!dock)
        return false;
    const QByteArray state = window.saveState();
    closeSideDocks(window);
    dock->show();
    dock->raise();
    window.resizeDocks({dock}, {window.width() * percent / 100}, Qt::Horizontal);
    const bool saved = renderWindow(window, name);
    window.restoreState(state);
    return saved;
}

// The first decision the agents had a real choice in (more than two legal values) that changed the
// program: the timeline row the Agents, Rubric and Code screenshots show.
int interestingStep(const agents::SourceResult &result)
{
    for (std::size_t d = 0; d < result.trace.decisions.size(); ++d) {
        const int row = static_cast<int>(d) + 1;
        int legal = 0;
        for (const auto &o : result.trace.decisions[d].options)
            legal += o.legal ? 1 : 0;
        if (legal <= 2)
            continue;
        auto before = programAt(result, row - 1), after = programAt(result, row);
        if (before && after && before->source != after->source)
            return row;
    }
    return -1;
}

} // namespace

class TestWalk : public QObject {
    Q_OBJECT
private slots:
    void theMainFlowWorksAndIsMeasured();
};

void TestWalk::theMainFlowWorksAndIsMeasured()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    SyntaxRepository syntax;
    RecentFiles recent;
    StallMonitor stalls;
    // Which event each stall was spent in (and, with STITCHCUDA_STALL_LOG, every stall past 50 ms printed).
    stalls.setTraceEvents(true);
    if (qEnvironmentVariableIsSet("STITCHCUDA_STALL_LOG"))
        stalls.setLogThresholdMs(50);
    stalls.start();

    // Start: the window up and drawn.
    stalls.setPhase(QStringLiteral("start"));
    QElapsedTimer startClock;
    startClock.start();
    auto window = std::make_unique<MainWindow>(syntax, ArchDatabase::builtin(), recent);
    test::answerNoDriver(*window);
    window->runController()->setSettings(test::noGpu());
    window->retrainer()->setAgentsDirectory(dir.path());
    const bool shots = !screenshotDir().isEmpty();
    if (shots)
        window->resize(kShotSize);
    window->showWelcome(); // started without a file, as stitchcuda-studio is
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    const double startMs = static_cast<double>(startClock.nsecsElapsed()) / 1e6;

    // Open: the naive matmul from the welcome page's examples (Down to it, Enter), compiled (NVRTC
    // on a worker) and lifted.
    stalls.setPhase(QStringLiteral("open"));
    QVERIFY(window->isWelcomeShown());
    QAbstractItemView *examples = window->welcomePage()->examplesView();
    const ExamplesModel *exampleList = window->welcomePage()->examples();
    int example = 0;
    while (example < exampleList->rowCount() &&
           exampleList->index(example, 0).data().toString() != QStringLiteral("matmul_naive.cu"))
        ++example;
    QVERIFY2(example < exampleList->rowCount(), "matmul_naive.cu is not among the welcome page's examples");
    examples->setFocus();
    examples->setCurrentIndex(exampleList->index(0, 0));
    for (int r = 0; r < example; ++r)
        QTest::keyClick(examples, Qt::Key_Down);
    QTest::keyClick(examples, Qt::Key_Return);
    QVERIFY(!window->isWelcomeShown());
    QTRY_VERIFY_WITH_TIMEOUT(window->isCompileSettled(), test::CompileTimeoutMs);
    QVERIFY(window->windowTitle().startsWith(QStringLiteral("matmul_naive.cu")));
    QString error;

    // Optimize: the agents' trace in the Agents dock, Parse to Stitch.
    stalls.setPhase(QStringLiteral("optimize"));
    QSignalSpy settled(window.get(), &MainWindow::optimizeSettled);
    QVERIFY(window->optimize());
    QVERIFY(settled.wait(kSlowMs));
    AgentsPanel *agents = window->agentsPanel();
    QVERIFY(agents->result());
    const agents::Trace &trace = agents->result()->trace;
    QVERIFY(!trace.decisions.empty());
    const int rows = agents->model()->rowCount();
    QCOMPARE(rows, static_cast<int>(trace.decisions.size()) + 2); // Parse, the decisions, Stitch
    QCOMPARE(agents->selectedStep(), rows - 1);

    // Step back to Parse and forward again: every row is shown once each way.
    stalls.setPhase(QStringLiteral("step"));
    QSignalSpy shown(agents, &AgentsPanel::stepShown);
    for (int row = rows - 1; row > 0; --row) {
        agents->stepBack();
        QCOMPARE(agents->selectedStep(), row - 1);
        QCoreApplication::processEvents();
    }
    for (int row = 0; row < rows - 1; ++row) {
        agents->stepForward();
        QCOMPARE(agents->selectedStep(), row + 1);
        QCoreApplication::processEvents();
    }
    QCOMPARE(shown.size(), 2 * (rows - 1));

    // Override: in the last decision with another legal value, the agents' runner-up (the legal
    // value they gave the most probability after their choice), pinned; the agents decide around it.
    stalls.setPhase(QStringLiteral("override"));
    int row = -1, option = -1;
    for (std::size_t d = trace.decisions.size(); d-- > 0 && row < 0;)
        for (std::size_t o = 0; o < trace.decisions[d].options.size(); ++o) {
            const auto &candidate = trace.decisions[d].options[o];
            if (!candidate.legal || static_cast<int>(o) == trace.decisions[d].chosen)
                continue;
            if (option < 0 || candidate.probability > trace.decisions[d].options[static_cast<std::size_t>(option)].probability) {
                row = static_cast<int>(d) + 1;
                option = static_cast<int>(o);
            }
        }
    QVERIFY(row > 0);
    const agents::TraceDecision pinned = trace.decisions[static_cast<std::size_t>(row - 1)];
    QVERIFY(agents->selectStep(row));
    QVERIFY(agents->selectOption(option));
    settled.clear();
    QTest::mouseClick(agents->overrideButton(), Qt::LeftButton);
    QVERIFY(settled.wait(kSlowMs));
    QCOMPARE(window->optimizePins().size(), 1);
    QVERIFY(agents->result());
    bool kept = false;
    for (const auto &d : agents->result()->trace.decisions)
        kept = kept || (d.id == pinned.id && d.pinned &&
                        d.options[static_cast<std::size_t>(d.chosen)].text == pinned.options[static_cast<std::size_t>(option)].text);
    QVERIFY2(kept, "the pinned value is not the one the new trace chose");

    // Retrain briefly from the override: two PPO updates in the background, curves drawn.
    stalls.setPhase(QStringLiteral("retrain"));
    window->trainingPanel()->setRetrainSize(2, 4);
    QSignalSpy retrained(window->retrainer(), &RetrainController::finished);
    QSignalSpy retrainFailed(window->retrainer(), &RetrainController::failed);
    QVERIFY(agents->retrainButton()->isEnabled());
    QTest::mouseClick(agents->retrainButton(), Qt::LeftButton);
    QVERIFY(retrained.wait(kSlowMs) || !retrainFailed.isEmpty());
    QVERIFY2(retrainFailed.isEmpty(), retrainFailed.isEmpty() ? "" : qPrintable(retrainFailed.first().at(1).toString()));

    // Run: no GPU here, so the model's estimates of the program as written and the optimized one.
    stalls.setPhase(QStringLiteral("run"));
    QSignalSpy ran(window.get(), &MainWindow::runSettled);
    window->runAction()->trigger();
    QVERIFY(ran.wait(kSlowMs));

    if (shots) { // not a phase of the walk: its stalls are left out of the figures
        stalls.stop();
        QVERIFY(renderWindow(*window, QStringLiteral("studio")));
        const int step = interestingStep(*agents->result());
        QVERIFY(step > 0);
        QVERIFY(agents->selectStep(step));
        QTRY_VERIFY_WITH_TIMEOUT(window->isRubricSettled(), test::CompileTimeoutMs);
        QVERIFY(renderDock(*window, QStringLiteral("agentsDock"), 55, QStringLiteral("studio-agents")));
        QVERIFY(renderDock(*window, QStringLiteral("decisionsDock"), 55, QStringLiteral("studio-decisions")));
        QVERIFY(renderDock(*window, QStringLiteral("rubricDock"), 55, QStringLiteral("studio-rubric")));
        QTRY_VERIFY_WITH_TIMEOUT(window->graphPanel()->drawing()->isLaidOut(), test::CompileTimeoutMs);
        QVERIFY(renderDock(*window, QStringLiteral("graphDock"), 55, QStringLiteral("studio-graph")));
        QVERIFY(renderDock(*window, QStringLiteral("runDock"), 62, QStringLiteral("studio-run")));
        QVERIFY(renderDock(*window, QStringLiteral("trainingDock"), 55, QStringLiteral("studio-training")));
        window->codeDiff()->showStepChanges(step);
        window->showCodeTab(true);
        QTRY_VERIFY_WITH_TIMEOUT(window->codeDiff()->isSettled(), test::CompileTimeoutMs);
        const QByteArray state = window->saveState();
        closeSideDocks(*window);
        window->resizeDocks({window->findChild<QDockWidget *>(QStringLiteral("runDock"))},
                            {window->width() * 30 / 100}, Qt::Horizontal);
        QVERIFY(renderWindow(*window, QStringLiteral("studio-diff")));
        window->restoreState(state);
        window->showCodeTab(false);
        stalls.start();
    }

    // Save the project, then reopen it in a fresh window: the trace and the pin come back.
    stalls.setPhase(QStringLiteral("save"));
    const QString project = dir.filePath(QStringLiteral("walk.stitchproj"));
    QVERIFY2(window->saveProject(project, &error), qPrintable(error));
    const std::size_t decisions = agents->result()->trace.decisions.size();
    window->setUnsavedChangesPrompt([](const QString &) { return QMessageBox::Discard; });
    window.reset();

    stalls.setPhase(QStringLiteral("reopen"));
    MainWindow reopened(syntax, ArchDatabase::builtin(), recent);
    test::answerNoDriver(reopened);
    if (shots)
        reopened.resize(kShotSize);
    reopened.show();
    QVERIFY(QTest::qWaitForWindowExposed(&reopened));
    QVERIFY2(reopened.openProject(project, &error), qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(reopened.agentsPanel()->result() != nullptr, test::CompileTimeoutMs);
    QCOMPARE(reopened.agentsPanel()->result()->trace.decisions.size(), decisions);
    QCOMPARE(reopened.optimizePins().size(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(reopened.isCompileSettled(), test::CompileTimeoutMs);
    stalls.stop();

    if (shots) { // File > Welcome at the end: the recent files are the walk's
        reopened.welcomeAction()->trigger();
        QVERIFY(reopened.isWelcomeShown());
        QVERIFY(reopened.welcomePage()->recent()->rowCount() >= 2);
        closeSideDocks(reopened);
        QVERIFY(renderWindow(reopened, QStringLiteral("studio-welcome")));
    }

    // The figures: startup time and the longest stall of each phase.
    QJsonObject report{{"startup_ms", startMs}, {"longest_stall_ms", stalls.longestMs()}};
    QJsonObject phases;
    for (const auto &[phase, ms] : stalls.byPhase())
        phases.insert(phase, ms);
    report.insert(QStringLiteral("stall_ms_by_phase"), phases);
    QJsonObject details; // the longest stall of each phase: its CPU time and its longest event
    for (const auto &[phase, stall] : stalls.longestStalls())
        details.insert(phase, QJsonObject{{"ms", stall.ms}, {"cpu_ms", stall.cpuMs}, {"event", stall.event},
                                          {"event_ms", stall.eventMs}});
    report.insert(QStringLiteral("longest_stall_by_phase"), details);
    const QByteArray json = QJsonDocument(report).toJson(QJsonDocument::Indented);
    qInfo().noquote() << "studio walk:" << json;
    if (const QByteArray path = qgetenv("STITCHCUDA_WALK_REPORT"); !path.isEmpty()) {
        QFile out(QString::fromLocal8Bit(path));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(json);
    }
}

QTEST_MAIN(TestWalk)
#include "tst_walk.moc"
