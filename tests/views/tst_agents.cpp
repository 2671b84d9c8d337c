// The studio's Optimize: OptimizeController runs the agents off the GUI thread (progress, result,
// cancel, superseded runs dropped), AgentsModel under QAbstractItemModelTester, the Agents panel's
// timeline and inspector, and MainWindow's Ctrl+R on the bundled examples.
#include "TestUtil.h"
#include "TestWindows.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "views/AgentsModel.h"
#include "views/AgentsPanel.h"
#include "views/CodeEditor.h"
#include "views/DevicePanel.h"
#include "views/MainWindow.h"
#include "views/OptimizeController.h"
#include "views/RecentFiles.h"
#include "views/RubricPanel.h"
#include "views/SyntaxRepository.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QPushButton>
#include <QFile>
#include <QSignalSpy>
#include <QTableView>
#include <QTreeWidget>
#include <QLabel>
#include <QtTest>

using namespace stitch;
using namespace stitch::views;

namespace {

QString example(const char *name) { return QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/") + QLatin1String(name); }

agents::SourceRequest request(const char *name)
{
    QFile f(example(name));
    f.open(QIODevice::ReadOnly);
    agents::SourceRequest r;
    r.text = f.readAll().toStdString();
    r.fileName = example(name).toStdString();
    return r;
}

} // namespace

class TestAgents final : public QObject {
    Q_OBJECT
private slots:
    void controllerDeliversTheTraceWithProgress();
    void aNewerRunDropsTheOlderOne();
    void cancelEndsWithCancelled();
    void badInputIsAFailureWithItsLocation();
    void panelStepsThroughTheDecisions();
    void aLongPinOrPathDoesNotWidenTheDock();
    void mainWindowOptimizesTheOpenFile();
    void anOverrideRunsTheAgentsAgainAroundThePin();
    void theDocksFollowTheSelectedStep();
};

void TestAgents::controllerDeliversTheTraceWithProgress()
{
    OptimizeController controller;
    QSignalSpy finished(&controller, &OptimizeController::finished);
    QSignalSpy progress(&controller, &OptimizeController::progress);
    const quint64 id = controller.start(request("softmax.te"));
    QVERIFY(controller.isRunning());
    QVERIFY(finished.wait(test::CompileTimeoutMs));
    QCOMPARE(finished.first().at(0).toULongLong(), id);
    QVERIFY(!controller.isRunning());
    QVERIFY(progress.count() > 0);
    const auto result = finished.first().at(1).value<std::shared_ptr<const agents::SourceResult>>();
    QVERIFY(result);
    QVERIFY(!result->trace.decisions.empty());
    QVERIFY(result->trace.finalMs > 0);
    QVERIFY(result->trace.finalMs <= result->trace.inputMs);
    QVERIFY(!result->program.source.empty());
    QCOMPARE(result->trace.sourceText, request("softmax.te").text);
}

void TestAgents::aNewerRunDropsTheOlderOne()
{
    OptimizeController controller;
    QSignalSpy finished(&controller, &OptimizeController::finished);
    controller.start(request("matmul.te"));
    const quint64 second = controller.start(request("elementwise_chain.te"));
    QVERIFY(finished.wait(test::CompileTimeoutMs));
    QTest::qWait(50); // nothing else arrives
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.first().at(0).toULongLong(), second);
    const auto result = finished.first().at(1).value<std::shared_ptr<const agents::SourceResult>>();
    QCOMPARE(QString::fromStdString(result->lifted.graph.name()), QStringLiteral("elementwise_chain"));
}

void TestAgents::cancelEndsWithCancelled()
{
    OptimizeController controller;
    QSignalSpy cancelled(&controller, &OptimizeController::cancelled);
    QSignalSpy finished(&controller, &OptimizeController::finished);
    auto r = request("matmul.te");
    r.options.budget = 64; // long enough to be cancelled in the search
    controller.start(r);
    controller.cancel();
    QVERIFY(cancelled.wait(test::CompileTimeoutMs));
    QCOMPARE(finished.count(), 0);
}

void TestAgents::badInputIsAFailureWithItsLocation()
{
    OptimizeController controller;
    QSignalSpy failed(&controller, &OptimizeController::failed);
    agents::SourceRequest r;
    r.text = "graph broken\nsize M = 4\ninput X: f32[M]\noutput Y: f32[M]\nY[i] = X[i] +\n";
    r.fileName = "broken.te";
    controller.start(r);
    QVERIFY(failed.wait(test::CompileTimeoutMs));
    const QString message = failed.first().at(1).toString();
    QVERIFY2(message.contains(QStringLiteral("broken.te:")), qPrintable(message));
}

void TestAgents::aLongPinOrPathDoesNotWidenTheDock()
{
    // A pin or a path has no space to wrap at; it once set the dock area's minimum width (the
    // studio's side docks squeezed to 70 px, the window widened). The panel's minimum stays put.
    AgentsPanel panel;
    panel.resize(300, 500);
    panel.show(); // hidden, the labels count for nothing in the layout's minimum
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const int before = panel.minimumSizeHint().width();
    const QString pin = QStringLiteral("instruction_scheduling.min_blocks@a_kernel_with_a_rather_long_name_indeed=1");
    panel.setPins({pin, pin});
    panel.setMessage(QStringLiteral("/home/someone/projects/with/a/deep/folder/structure/that/goes/on/kernels.cu: "
                                    "Optimize to see the agents' decisions"));
    QCoreApplication::processEvents();
    QCOMPARE(panel.minimumSizeHint().width(), before);
    QVERIFY(before < 320);
    auto *pins = panel.findChild<QLabel *>(QStringLiteral("pinsLabel"));
    QVERIFY(pins);
    QVERIFY(pins->toolTip().contains(pin)); // the exact text, for reading it whole
    QVERIFY(pins->text().contains(QStringLiteral("min_blocks@\u200Ba_kernel"))); // breaks after '.' and '@'
}

void TestAgents::panelStepsThroughTheDecisions()
{
    agents::SourceOptimizer optimizer;
    auto result = optimizer.run(request("layernorm.te"));
    QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
    auto shared = std::make_shared<const agents::SourceResult>(std::move(*result));
    AgentsPanel panel;
    QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.setResult(shared);
    const int decisions = static_cast<int>(shared->trace.decisions.size());
    QCOMPARE(panel.model()->rowCount(), decisions + 2);
    QCOMPARE(panel.selectedStep(), decisions + 1); // Stitch, the outcome, first
    QVERIFY(panel.rationale().contains(QString::fromStdString(shared->trace.integrate.summary)));
    QVERIFY(panel.selectStep(0));
    QVERIFY(panel.rationale().startsWith(QStringLiteral("lifted ")));
    panel.stepForward();
    QCOMPARE(panel.selectedStep(), 1);
    const agents::TraceDecision &first = shared->trace.decisions.front();
    QCOMPARE(panel.rationale(), QString::fromStdString(first.rationale));
    QCOMPARE(panel.options()->topLevelItemCount(), static_cast<int>(first.options.size()));
    const QTreeWidgetItem *chosen = panel.options()->topLevelItem(first.chosen);
    QVERIFY(chosen->text(AgentsPanel::ValueColumn).startsWith(QString::fromStdString(first.options[first.chosen].text)));
    QCOMPARE(chosen->text(AgentsPanel::ProbabilityColumn),
             QString::number(first.options[first.chosen].probability, 'f', 3));
    panel.stepBack();
    QCOMPARE(panel.selectedStep(), 0);
    // Every decision row names its agent and its chosen value.
    for (int row = 1; row <= decisions; ++row) {
        const agents::TraceDecision &d = shared->trace.decisions[static_cast<std::size_t>(row - 1)];
        QCOMPARE(panel.model()->index(row, AgentsModel::AgentColumn).data().toString(),
                 QString::fromUtf8(agents::agentTitle(d.agent)));
        QVERIFY(panel.model()
                    ->index(row, AgentsModel::ChoiceColumn)
                    .data()
                    .toString()
                    .startsWith(QString::fromStdString(d.options[static_cast<std::size_t>(d.chosen)].text)));
    }
}

void TestAgents::mainWindowOptimizesTheOpenFile()
{
    test::Studio studio;
    MainWindow &window = *studio.window;
    QString error;
    QVERIFY2(window.openFile(example("elementwise_chain.te"), &error), qPrintable(error));
    QSignalSpy settled(&window, &MainWindow::optimizeSettled);
    QCOMPARE(window.optimizeAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_R));
    window.optimizeAction()->trigger();
    QVERIFY(window.isOptimizing());
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    QVERIFY(!window.isOptimizing());
    QVERIFY(window.agentsPanel()->model()->rowCount() >= 2);
    QVERIFY2(window.agentsPanel()->summary().contains(QStringLiteral("elementwise_chain.te")),
             qPrintable(window.agentsPanel()->summary()));
    // The Generated dock shows the agents' program.
    const agents::SourceResult *result = window.agentsPanel()->result();
    QVERIFY(result);
    auto nonBlank = [](const QString &text) {
        QStringList lines = text.split(QLatin1Char('\n'));
        lines.removeIf([](const QString &l) { return l.trimmed().isEmpty(); });
        return lines;
    };
    QCOMPARE(nonBlank(window.generatedView()->toPlainText()), nonBlank(QString::fromStdString(result->program.source)));
}

void TestAgents::anOverrideRunsTheAgentsAgainAroundThePin()
{
    test::Studio studio;
    MainWindow &window = *studio.window;
    QVERIFY(window.openFile(example("matmul.te")));
    QSignalSpy settled(&window, &MainWindow::optimizeSettled);
    QVERIFY(window.optimize());
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    AgentsPanel *panel = window.agentsPanel();
    const agents::Trace *trace = panel->model()->trace();
    QVERIFY(trace);
    // The first decision with a legal value the agents did not choose.
    int row = -1, option = -1;
    for (std::size_t d = 0; d < trace->decisions.size() && row < 0; ++d)
        for (std::size_t o = 0; o < trace->decisions[d].options.size(); ++o)
            if (trace->decisions[d].options[o].legal && static_cast<int>(o) != trace->decisions[d].chosen) {
                row = static_cast<int>(d) + 1;
                option = static_cast<int>(o);
                break;
            }
    QVERIFY(row > 0);
    const std::string id = trace->decisions[static_cast<std::size_t>(row - 1)].id;
    const std::string value = trace->decisions[static_cast<std::size_t>(row - 1)].options[static_cast<std::size_t>(option)].text;
    QVERIFY(panel->selectStep(row));
    QVERIFY(!panel->overrideButton()->isEnabled()); // the chosen value is current: nothing to override
    QVERIFY(panel->selectOption(option));
    QVERIFY(panel->overrideButton()->isEnabled());
    QTest::mouseClick(panel->overrideButton(), Qt::LeftButton);
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    QCOMPARE(window.optimizePins(), QStringList{QString::fromStdString(id + "=" + value)});
    const agents::Trace *again = panel->model()->trace();
    QVERIFY(again);
    bool found = false;
    for (const auto &d : again->decisions)
        if (d.id == id) {
            found = true;
            QVERIFY(d.pinned);
            QCOMPARE(d.options[static_cast<std::size_t>(d.chosen)].text, value);
        }
    QVERIFY(found);
}

void TestAgents::theDocksFollowTheSelectedStep()
{
    test::Studio studio;
    MainWindow &window = *studio.window;
    QVERIFY(window.openFile(example("softmax.te")));
    QSignalSpy settled(&window, &MainWindow::optimizeSettled);
    QVERIFY(window.optimize());
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    AgentsPanel *panel = window.agentsPanel();
    const agents::Trace *trace = panel->model()->trace();
    QVERIFY(trace && trace->decisions.size() >= 2);
    QSignalSpy rubric(&window, &MainWindow::rubricUpdated);
    auto waitForScore = [&](const QString &words) {
        // The step's schedule is scored on a worker; the dock's summary names it once it lands
        // (while it is scored, the summary says "Scoring ...").
        auto landed = [&] {
            const QString s = window.rubricPanel()->summary();
            return s.contains(words) && !s.startsWith(QStringLiteral("Scoring"));
        };
        for (int i = 0; i < 20 && !landed(); ++i)
            rubric.wait(test::CompileTimeoutMs);
        return landed();
    };
    auto nonBlank = [](const QString &text) {
        QStringList lines = text.split(QLatin1Char('\n'));
        lines.removeIf([](const QString &l) { return l.trimmed().isEmpty(); });
        return lines;
    };
    // Every decision recorded the whole schedule once it was taken.
    for (const auto &d : trace->decisions)
        QVERIFY2(!d.schedule.groups.empty(), d.id.c_str());
    // Step 1: the Rubric, Decisions and Generated docks show the program as it stood after it.
    QVERIFY(panel->selectStep(1));
    QVERIFY2(waitForScore(QStringLiteral("after step 1")), qPrintable(window.rubricPanel()->summary()));
    const agents::SourceResult *result = panel->result();
    const schedule::Problem problem{result->lifted.graph, result->sizes, *ArchDatabase::builtin().arch("sm_90"),
                                    trace->decisions[0].schedule.precision};
    auto first = codegen::generateProgram(problem, trace->decisions[0].schedule);
    QVERIFY(first.ok());
    QCOMPARE(nonBlank(window.generatedView()->toPlainText()), nonBlank(QString::fromStdString(first->source)));
    // Stitch: the agents' final program again.
    QVERIFY(panel->selectStep(panel->model()->rowCount() - 1));
    QVERIFY2(waitForScore(QStringLiteral("final schedule")), qPrintable(window.rubricPanel()->summary()));
    QCOMPARE(nonBlank(window.generatedView()->toPlainText()), nonBlank(QString::fromStdString(result->program.source)));
    // An edit of the text ends it: the next lift scores the default schedule again.
    window.editor()->setPlainText(window.editor()->toPlainText() + QStringLiteral("\n"));
    QVERIFY2(waitForScore(QStringLiteral("default schedule")), qPrintable(window.rubricPanel()->summary()));
}

QTEST_MAIN(TestAgents)
#include "tst_agents.moc"
