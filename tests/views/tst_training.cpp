// The Training dock and Retrain with my overrides: the curve and before/after models under
// QAbstractItemModelTester, a real training CSV and damaged ones, and in the main window a real
// retraining from an override of a bundled example (progress, curves, the before/after table from
// the networks before and after, Optimize using the retrained copy, the shipped checkpoint
// untouched), its cancel, and the dock in the window state.
#include "TestUtil.h"
#include "TestWindows.h"

#include "core/agents/Checkpoints.h"
#include "core/agents/TrainingLog.h"
#include "core/arch/ArchDatabase.h"
#include "core/storage/TextFile.h"
#include "views/AgentsModel.h"
#include "views/AgentsPanel.h"
#include "views/DevicePanel.h"
#include "views/MainWindow.h"
#include "views/RecentFiles.h"
#include "views/RetrainController.h"
#include "views/SyntaxRepository.h"
#include "views/TrainingModels.h"
#include "views/TrainingPanel.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QCryptographicHash>
#include <QDockWidget>
#include <QFile>
#include <QLineSeries>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

using namespace stitch;
using namespace stitch::views;

namespace {

QString example(const char *name) { return QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/") + QLatin1String(name); }

const QString kShippedLog = QStringLiteral(STITCHCUDA_SOURCE_DIR "/docs/agents/training-sm_90.csv.gz");

QByteArray sha256(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

/// Optimizes matmul.te in `window`, then overrides a decision with another legal value and waits for the agents to decide again around the pin. Returns the pin ("" on failure).
QString optimizeWithAnOverride(MainWindow &window)
{
    if (!window.openFile(example("matmul.te")))
        return {};
    QSignalSpy settled(&window, &MainWindow::optimizeSettled);
    if (!window.optimize() || !settled.wait(test::CompileTimeoutMs))
        return {};
    AgentsPanel *panel = window.agentsPanel();
    const agents::Trace *trace = panel->model()->trace();
    if (!trace)
        return {};
    // Preferably a value the model times faster than the agents' choice (an override that wins and
    // is learnt); else the first other legal value.
    int row = -1, option = -1;
    for (std::size_t d = 0; d < trace->decisions.size(); ++d) {
        const agents::TraceDecision &td = trace->decisions[d];
        const auto &chosen = td.options[static_cast<std::size_t>(td.chosen)];
        for (std::size_t o = 0; o < td.options.size(); ++o) {
            const agents::TraceOption &alt = td.options[o];
            if (!alt.legal || static_cast<int>(o) == td.chosen)
                continue;
            const bool faster = alt.estimatedMs && chosen.estimatedMs && *alt.estimatedMs < *chosen.estimatedMs;
            if (row < 0 || faster) {
                row = static_cast<int>(d) + 1;
                option = static_cast<int>(o);
            }
            if (faster)
                break;
        }
        if (row == static_cast<int>(d) + 1 && option >= 0) {
            const auto &alt = td.options[static_cast<std::size_t>(option)];
            if (alt.estimatedMs && chosen.estimatedMs && *alt.estimatedMs < *chosen.estimatedMs)
                break;
        }
    }
    if (row < 0)
        return {};
    const agents::TraceDecision &td = trace->decisions[static_cast<std::size_t>(row - 1)];
    const QString pin = QString::fromStdString(td.id + "=" + td.options[static_cast<std::size_t>(option)].text);
    panel->selectStep(row);
    panel->selectOption(option);
    QTest::mouseClick(panel->overrideButton(), Qt::LeftButton);
    return settled.wait(test::CompileTimeoutMs) ? pin : QString();
    return {};
}

} // namespace

class TestTraining final : public QObject {
    Q_OBJECT
private slots:
    void modelsPassTheModelTester();
    void aTrainingLogShowsItsCurves();
    void aDamagedLogIsAClearMessage_data();
    void aDamagedLogIsAClearMessage();
    void retrainWithMyOverridesShowsTheCurvesAndTheTable();
    void cancelStopsARetraining();
    void theDockIsInTheMenusAndTheWindowState();
};

void TestTraining::modelsPassTheModelTester()
{
    TrainingCurveModel curves;
    QAbstractItemModelTester curvesTester(&curves, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto log = agents::readTrainingLog(kShippedLog.toStdString());
    QVERIFY(log.ok());
    curves.setRows(std::vector<agents::TrainProgress>(log->rows.begin(), log->rows.begin() + 60));
    QCOMPARE(curves.rowCount(), 60);
    curves.appendRow(log->rows[60]);
    QCOMPARE(curves.rowCount(), 61);
    QCOMPARE(curves.data(curves.index(0, TrainingCurveModel::UpdateColumn)).toInt(), 1);
    QCOMPARE(curves.data(curves.index(0, TrainingCurveModel::HeldOutColumn)).toString(), QString()); // not measured
    QVERIFY(!curves.data(curves.index(49, TrainingCurveModel::HeldOutColumn)).toString().isEmpty()); // update 50
    curves.clear();
    QCOMPARE(curves.rowCount(), 0);

    PinnedProbabilityModel pins;
    QAbstractItemModelTester pinsTester(&pins, QAbstractItemModelTester::FailureReportingMode::QtTest);
    agents::PinnedOutcome p;
    p.decision = "memory_access.block_k@gemm";
    p.value = "16";
    p.won = true;
    p.before = 0.25;
    p.after = 0.5;
    pins.setPins({p});
    QCOMPARE(pins.rowCount(), 1);
    QCOMPARE(pins.data(pins.index(0, PinnedProbabilityModel::ChangeColumn)).toString(), QStringLiteral("+0.250"));
    QCOMPARE(pins.data(pins.index(0, PinnedProbabilityModel::AfterColumn), PinnedProbabilityModel::NumberRole).toDouble(), 0.5);
    pins.setPins({});
    QCOMPARE(pins.rowCount(), 0);
}

void TestTraining::aTrainingLogShowsItsCurves()
{
    TrainingPanel panel;
    QSignalSpy loaded(&panel, &TrainingPanel::logLoaded);
    QVERIFY(panel.openLog(kShippedLog));
    QVERIFY(panel.isLoading());
    QVERIFY(loaded.wait(20000));
    QCOMPARE(loaded.first().at(1).toInt(), 1500);
    QVERIFY(!panel.isLoading());
    QCOMPARE(panel.curves()->rowCount(), 1500);
    QCOMPARE(panel.series(TrainingPanel::Curve::Reward)->count(), 1500);
    QCOMPARE(panel.series(TrainingPanel::Curve::ValueLoss)->count(), 1500);
    QCOMPARE(panel.series(TrainingPanel::Curve::HeldOut)->count(), 30);
    QVERIFY(panel.series(TrainingPanel::Curve::HeldOut)->isVisible());
    const QPointF first = panel.series(TrainingPanel::Curve::Reward)->at(0);
    QCOMPARE(first.x(), 1.0);
    QCOMPARE(first.y(), 0.511293);
    QCOMPARE(panel.series(TrainingPanel::Curve::PolicyLoss)->at(0).y(), -0.006681);
    QVERIFY2(panel.title().contains(QStringLiteral("training-sm_90.csv")), qPrintable(panel.title()));
    QVERIFY2(panel.status().contains(QStringLiteral("1500 updates")), qPrintable(panel.status()));
}

void TestTraining::aDamagedLogIsAClearMessage_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expect");
    // The shipped log is kept gzip-compressed: its text, as the reader sees it.
    auto text = stitch::readTextFile(kShippedLog.toStdString());
    QVERIFY2(text.ok(), text.ok() ? "" : text.error().message.c_str());
    const QByteArray whole = QByteArray::fromStdString(*text);
    // Cut inside its fourth data row: an interrupted copy.
    int cut = 0;
    for (int line = 0; line < 4; ++line)
        cut = whole.indexOf('\n', cut) + 1;
    QTest::newRow("truncated") << whole.left(cut + 10) << QStringLiteral("run.csv:5:");
    QTest::newRow("not a number") << QByteArray(whole.left(cut)).append("4,64,oops,0.1,0,0,0,0,0,0,1,1,,\n")
                                  << QStringLiteral("mean_final_reward: expected a number, found 'oops'");
    QTest::newRow("another CSV") << QByteArray("kernel,ms\nmatmul,0.5\n") << QStringLiteral("no column 'update'");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("empty");
    QTest::newRow("binary") << QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) << QStringLiteral("binary");
}

void TestTraining::aDamagedLogIsAClearMessage()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, expect);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    TrainingPanel panel;
    QSignalSpy loaded(&panel, &TrainingPanel::logLoaded);
    QSignalSpy failed(&panel, &TrainingPanel::logFailed);
    // A good log first: a damaged one leaves its curves shown.
    QVERIFY(panel.openLog(kShippedLog));
    QVERIFY(loaded.wait(20000));
    const QString path = dir.filePath(QStringLiteral("run.csv"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
    f.close();
    QVERIFY(panel.openLog(path));
    QVERIFY(failed.wait(20000));
    const QString message = failed.first().at(1).toString();
    QVERIFY2(message.contains(expect), qPrintable(message));
    QVERIFY2(panel.status().contains(QStringLiteral("Cannot show run.csv")), qPrintable(panel.status()));
    QCOMPARE(panel.curves()->rowCount(), 1500);
    QCOMPARE(panel.series(TrainingPanel::Curve::Reward)->count(), 1500);
    // A missing file: said so too.
    QVERIFY(panel.openLog(dir.filePath(QStringLiteral("gone.csv"))));
    QVERIFY(failed.wait(20000));
    QVERIFY2(failed.last().at(1).toString().contains(QStringLiteral("cannot open")), qPrintable(failed.last().at(1).toString()));
}

void TestTraining::retrainWithMyOverridesShowsTheCurvesAndTheTable()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    test::Studio studio;
    MainWindow &window = *studio.window;
    window.retrainer()->setAgentsDirectory(dir.path());
    const auto shipped = agents::findCheckpoint("sm_90");
    QVERIFY(shipped);
    const QByteArray shippedHash = sha256(QString::fromStdString(*shipped));
    QVERIFY(!shippedHash.isEmpty());

    // Without an override there is nothing to learn: said so, nothing starts.
    QVERIFY(window.openFile(example("matmul.te")));
    QVERIFY(!window.retrainWithOverrides());
    QVERIFY2(window.trainingPanel()->status().contains(QStringLiteral("Nothing to retrain")),
             qPrintable(window.trainingPanel()->status()));

    const QString pin = optimizeWithAnOverride(window);
    QVERIFY(!pin.isEmpty());
    AgentsPanel *agentsPanel = window.agentsPanel();
    QVERIFY(agentsPanel->retrainButton()->isVisibleTo(agentsPanel));
    QVERIFY(agentsPanel->retrainButton()->isEnabled());
    const agents::Trace trace = agentsPanel->result()->trace;

    TrainingPanel *panel = window.trainingPanel();
    panel->setRetrainSize(3, 4);
    RetrainController *retrainer = window.retrainer();
    QSignalSpy stages(retrainer, &RetrainController::stageChanged);
    QSignalSpy updates(retrainer, &RetrainController::updated);
    QSignalSpy finished(retrainer, &RetrainController::finished);
    QSignalSpy failed(retrainer, &RetrainController::failed);
    QTest::mouseClick(agentsPanel->retrainButton(), Qt::LeftButton);
    QVERIFY(retrainer->isRunning());
    QVERIFY(panel->isLive());
    QVERIFY(!agentsPanel->retrainButton()->isEnabled());
    QVERIFY(panel->progressBar()->isVisibleTo(panel));
    QCOMPARE(panel->progressBar()->maximum(), 3);
    QVERIFY(panel->cancelButton()->isEnabled());
    QVERIFY(finished.wait(180000) || !failed.isEmpty());
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));

    // Progress: the stages, one row per update, the curves drawn.
    QVERIFY(stages.size() >= 2);
    QCOMPARE(stages.first().at(1).toString(), QString::fromUtf8(agents::retrainStageName(agents::RetrainStage::Replay)));
    QCOMPARE(updates.size(), 3);
    QCOMPARE(updates.last().at(1).value<agents::TrainProgress>().update, 3);
    QCOMPARE(panel->curves()->rowCount(), 3);
    QCOMPARE(panel->series(TrainingPanel::Curve::Reward)->count(), 3);
    QCOMPARE(panel->series(TrainingPanel::Curve::PolicyLoss)->count(), 3);
    QCOMPARE(panel->series(TrainingPanel::Curve::ValueLoss)->count(), 3);
    QVERIFY(!panel->isLive());
    QVERIFY(!panel->progressBar()->isVisibleTo(panel));
    QVERIFY(agentsPanel->retrainButton()->isEnabled());

    // The table: the pinned value's probability before and after.
    PinnedProbabilityModel *pins = panel->pins();
    QAbstractItemModelTester tester(pins, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(pins->rowCount(), 1);
    QCOMPARE(pins->data(pins->index(0, PinnedProbabilityModel::DecisionColumn)).toString() + QLatin1Char('=') +
                 pins->data(pins->index(0, PinnedProbabilityModel::ValueColumn)).toString(),
             pin);
    QVERIFY(panel->pinsView()->isVisibleTo(panel));
    const agents::PinnedOutcome outcome = pins->pins()[0];
    qInfo("%s=%s %s: p %.4f -> %.4f", outcome.decision.c_str(), outcome.value.c_str(),
          outcome.won ? "won" : "lost", outcome.before, outcome.after);
    QVERIFY(outcome.before > 0 && outcome.before < 1);
    // ... computed from the real networks: the shipped agents before, the written copy after.
    const QString checkpoint = finished.first().at(3).toString();
    QCOMPARE(QFileInfo(checkpoint).absolutePath(), QFileInfo(dir.path()).absoluteFilePath());
    auto before = agents::loadAgents(*shipped, "sm_90");
    auto after = agents::loadAgents(checkpoint.toStdString(), "sm_90");
    QVERIFY(before.ok() && after.ok());
    auto pBefore = agents::pinnedProbabilities(trace, *before->networks);
    auto pAfter = agents::pinnedProbabilities(trace, *after->networks);
    QVERIFY(pBefore.ok() && pAfter.ok());
    QCOMPARE(pBefore->size(), std::size_t{1});
    QCOMPARE((*pBefore)[0].probability, outcome.before);
    QCOMPARE((*pAfter)[0].probability, outcome.after);
    // An override that won is imitated: its probability rises (core's AgentsRetraining tests).
    if (outcome.won)
        QVERIFY2(outcome.after > outcome.before, qPrintable(QStringLiteral("%1 -> %2").arg(outcome.before).arg(outcome.after)));

    // The shipped checkpoint is untouched; the curves were written beside the copy.
    QCOMPARE(sha256(QString::fromStdString(*shipped)), shippedHash);
    auto log = agents::readTrainingLog(finished.first().at(4).toString().toStdString());
    QVERIFY(log.ok());
    QCOMPARE(log->rows.size(), std::size_t{3});
    QVERIFY2(panel->status().contains(QStringLiteral("Optimize now uses")), qPrintable(panel->status()));
    QVERIFY2(panel->agentsInUse().contains(checkpoint), qPrintable(panel->agentsInUse()));
    QVERIFY(panel->useShippedButton()->isVisibleTo(panel));

    // Optimize uses the retrained copy from now on ...
    QCOMPARE(retrainer->agentsInUse(QStringLiteral("sm_90")), checkpoint);
    QSignalSpy settled(&window, &MainWindow::optimizeSettled);
    QVERIFY(window.optimize());
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    QVERIFY2(QString::fromStdString(agentsPanel->result()->policy).contains(checkpoint),
             agentsPanel->result()->policy.c_str());
    // ... until the shipped agents are asked for again.
    QTest::mouseClick(panel->useShippedButton(), Qt::LeftButton);
    QVERIFY(retrainer->agentsInUse(QStringLiteral("sm_90")).isEmpty());
    QVERIFY2(panel->agentsInUse().contains(QStringLiteral("shipped")), qPrintable(panel->agentsInUse()));
}

void TestTraining::cancelStopsARetraining()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    test::Studio studio;
    MainWindow &window = *studio.window;
    window.retrainer()->setAgentsDirectory(dir.path());
    QVERIFY(!optimizeWithAnOverride(window).isEmpty());
    TrainingPanel *panel = window.trainingPanel();
    panel->setRetrainSize(400, 4);
    RetrainController *retrainer = window.retrainer();
    QSignalSpy updates(retrainer, &RetrainController::updated);
    QSignalSpy cancelled(retrainer, &RetrainController::cancelled);
    QSignalSpy finished(retrainer, &RetrainController::finished);
    QVERIFY(window.retrainWithOverrides());
    QVERIFY(updates.wait(120000));
    // A log cannot replace a live run.
    QVERIFY(!panel->openLog(kShippedLog));
    QTest::mouseClick(panel->cancelButton(), Qt::LeftButton);
    QVERIFY(cancelled.wait(60000));
    QVERIFY(finished.isEmpty());
    QVERIFY(!retrainer->isRunning());
    QVERIFY(updates.size() < 400);
    QVERIFY2(panel->status().contains(QStringLiteral("cancelled")), qPrintable(panel->status()));
    QVERIFY(!panel->cancelButton()->isEnabled());
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("sm_90-retrained.agents"))));
    QVERIFY(retrainer->agentsInUse(QStringLiteral("sm_90")).isEmpty());
    QCOMPARE(panel->curves()->rowCount(), static_cast<int>(updates.size()));
}

void TestTraining::theDockIsInTheMenusAndTheWindowState()
{
    test::Studio studio;
    MainWindow &window = *studio.window;
    auto *dock = window.findChild<QDockWidget *>(QStringLiteral("trainingDock"));
    QVERIFY(dock);
    QCOMPARE(dock->windowTitle(), QStringLiteral("Training"));
    QCOMPARE(dock->widget(), window.trainingPanel());
    bool inView = false, inFile = false;
    for (QAction *menu : window.menuBar()->actions()) {
        if (!menu->menu())
            continue;
        inView = inView || menu->menu()->actions().contains(dock->toggleViewAction());
        inFile = inFile || menu->menu()->actions().contains(window.openTrainingLogAction());
    }
    QVERIFY(inView);
    QVERIFY(inFile);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    dock->show();
    dock->raise();
    const QByteArray state = window.saveState();
    dock->hide();
    QVERIFY(window.restoreState(state));
    QVERIFY(dock->isVisible());
    dock->hide();
    const QByteArray hidden = window.saveState();
    dock->show();
    QVERIFY(window.restoreState(hidden));
    QVERIFY(!dock->isVisible());
}

QTEST_MAIN(TestTraining)
#include "tst_training.moc"
