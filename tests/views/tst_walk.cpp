// The studio's main flow, walked as a user would (issue 32): start, open a naive kernel, Optimize,
// step back and forth through the agents' decisions, override one (the agents decide again around
// it), retrain briefly from the override, Run (the model's estimates without a GPU), save the
// project and reopen it in a fresh window. Each step's state is asserted; an event-loop watchdog
// (views/StallMonitor) measures how long the GUI thread stalled in each phase. The figures are
// printed (and written to $STITCHCUDA_WALK_REPORT as JSON): a benchmark reports them
// (scripts/bench/studio_walk.sh, docs/PERFORMANCE.md); no speed is asserted here.
#include "TestUtil.h"

#include "core/arch/ArchDatabase.h"
#include "views/AgentsModel.h"
#include "views/AgentsPanel.h"
#include "views/DevicePanel.h"
#include "views/MainWindow.h"
#include "views/RecentFiles.h"
#include "views/RetrainController.h"
#include "views/RunController.h"
#include "views/StallMonitor.h"
#include "views/SyntaxRepository.h"
#include "views/TrainingPanel.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace stitch;
using namespace stitch::views;

namespace {

constexpr int kSlowMs = 300000; // Optimize and retraining on a loaded 2-core machine

RunController::Settings noGpu()
{
    RunController::Settings s;
    s.worker.workerPath = STITCHCUDA_WORKER_PATH;
    s.worker.environment = {{"STITCHCUDA_LIBCUDA", "/nonexistent/libcuda.so.1"}};
    s.cache = false; // never the user's measurement cache
    return s;
}

void noDriverProbe(MainWindow &window)
{
    window.devicePanel()->setProbeFunction([] {
        DeviceProbe probe;
        probe.problem = QStringLiteral("test probe: no driver");
        return probe;
    });
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
    stalls.start();

    // Start: the window up and drawn.
    stalls.setPhase(QStringLiteral("start"));
    QElapsedTimer startClock;
    startClock.start();
    auto window = std::make_unique<MainWindow>(syntax, ArchDatabase::builtin(), recent);
    noDriverProbe(*window);
    window->runController()->setSettings(noGpu());
    window->retrainer()->setAgentsDirectory(dir.path());
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    const double startMs = static_cast<double>(startClock.nsecsElapsed()) / 1e6;

    // Open: the naive matmul, compiled (NVRTC on a worker) and lifted.
    stalls.setPhase(QStringLiteral("open"));
    QString error;
    QVERIFY2(window->openFile(QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/matmul_naive.cu"), &error),
             qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(window->isCompileSettled(), test::CompileTimeoutMs);
    QVERIFY(window->windowTitle().startsWith(QStringLiteral("matmul_naive.cu")));

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

    // Override: the first decision with another legal value, pinned; the agents decide around it.
    stalls.setPhase(QStringLiteral("override"));
    int row = -1, option = -1;
    for (std::size_t d = 0; d < trace.decisions.size() && row < 0; ++d)
        for (std::size_t o = 0; o < trace.decisions[d].options.size(); ++o)
            if (trace.decisions[d].options[o].legal && static_cast<int>(o) != trace.decisions[d].chosen) {
                row = static_cast<int>(d) + 1;
                option = static_cast<int>(o);
                break;
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

    // Save the project, then reopen it in a fresh window: the trace and the pin come back.
    stalls.setPhase(QStringLiteral("save"));
    const QString project = dir.filePath(QStringLiteral("walk.stitchproj"));
    QVERIFY2(window->saveProject(project, &error), qPrintable(error));
    const std::size_t decisions = agents->result()->trace.decisions.size();
    window->setUnsavedChangesPrompt([](const QString &) { return QMessageBox::Discard; });
    window.reset();

    stalls.setPhase(QStringLiteral("reopen"));
    MainWindow reopened(syntax, ArchDatabase::builtin(), recent);
    noDriverProbe(reopened);
    reopened.show();
    QVERIFY(QTest::qWaitForWindowExposed(&reopened));
    QVERIFY2(reopened.openProject(project, &error), qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(reopened.agentsPanel()->result() != nullptr, test::CompileTimeoutMs);
    QCOMPARE(reopened.agentsPanel()->result()->trace.decisions.size(), decisions);
    QCOMPARE(reopened.optimizePins().size(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(reopened.isCompileSettled(), test::CompileTimeoutMs);
    stalls.stop();

    // The figures: startup time and the longest stall of each phase.
    QJsonObject report{{"startup_ms", startMs}, {"longest_stall_ms", stalls.longestMs()}};
    QJsonObject phases;
    for (const auto &[phase, ms] : stalls.byPhase())
        phases.insert(phase, ms);
    report.insert(QStringLiteral("stall_ms_by_phase"), phases);
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
