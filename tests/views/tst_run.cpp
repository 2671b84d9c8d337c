// The Run dock: the last Optimize's programs through the runner. Without a GPU (the real worker
// with no driver) every figure is the performance model's and says so, and the library reference
// (cuBLAS, for a GEMM) says why it has none; with the fake worker standing in for a GPU
// (tests/runner/fake_worker.cpp: C = A + B, and cuBLAS's SGEMM, computed on the host like a GPU
// would), the measured path fills the verification table and CUPTI's rows. Real core results of the
// bundled examples.
#include "TestUtil.h"
#include "TestWindows.h"

#include "core/arch/ArchDatabase.h"
#include "views/AgentsPanel.h"
#include "views/DevicePanel.h"
#include "views/MainWindow.h"
#include "views/OptimizeController.h"
#include "views/ProjectController.h"
#include "views/RecentFiles.h"
#include "views/RunCharts.h"
#include "views/RunController.h"
#include "views/RunHistoryModel.h"
#include "views/RunModels.h"
#include "views/RunPanel.h"
#include "views/SyntaxRepository.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QDockWidget>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace stitch;
using namespace stitch::views;

namespace {

QString example(const char *name) { return QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/") + QLatin1String(name); }

agents::SourceRequest request(const QString &path, ir::SizeBindings sizes = {})
{
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    agents::SourceRequest r;
    r.text = f.readAll().toStdString();
    r.fileName = path.toStdString();
    r.sizes = std::move(sizes);
    return r;
}

std::shared_ptr<const agents::SourceResult> optimized(const agents::SourceRequest &r)
{
    OptimizeController controller;
    QSignalSpy finished(&controller, &OptimizeController::finished);
    controller.start(r);
    if (!finished.wait(test::CompileTimeoutMs))
        return nullptr;
    return finished.first().at(1).value<std::shared_ptr<const agents::SourceResult>>();
}

RunController::Settings fakeGpu()
{
    RunController::Settings s;
    s.worker.workerPath = STITCHCUDA_FAKE_WORKER_PATH;
    s.cache = false;
    return s;
}

std::shared_ptr<const RunReport> runWith(const RunController::Settings &settings, std::shared_ptr<const agents::SourceResult> result)
{
    RunController controller(ArchDatabase::builtin());
    controller.setSettings(settings);
    QSignalSpy finished(&controller, &RunController::finished);
    RunInput input;
    input.optimized = std::move(result);
    controller.run(std::move(input));
    if (!finished.wait(test::CompileTimeoutMs))
        return nullptr;
    return finished.first().at(1).value<std::shared_ptr<const RunReport>>();
}

int kernelsOnLogAxes(const ProgramRun &run)
{
    int n = 0;
    for (const auto &p : run.kernels)
        n += p.intensity() > 0 && p.gflops() > 0 ? 1 : 0;
    return n;
}

/// The shared test window, its Run dock on the worker "without a driver".
struct Studio : test::Studio {
    Studio() { window->runController()->setSettings(test::noGpu()); }
};

} // namespace

class TestRun final : public QObject {
    Q_OBJECT
private slots:
    void withoutAGpuEveryFigureIsMarkedEstimated_data();
    void withoutAGpuEveryFigureIsMarkedEstimated();
    void aProgramThatCannotRunAsWrittenSaysWhereAndWhy();
    void theFakeWorkerStandsForAGpu();
    void aGemmIsTimedBesideCublas_data();
    void aGemmIsTimedBesideCublas();
    void aFaultingKernelCostsTheWorkerNotTheStudio();
    void cancelStopsTheRun();
    void mainWindowRunsAfterOptimizeAndNamesTheDevice();
    void whatAGpuMeasuredIsKeptWithTheProject();
    void onAGpuBothProgramsAreVerifiedAndTimed();
};

void TestRun::withoutAGpuEveryFigureIsMarkedEstimated_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("before"); // the program the optimized one is compared with
    QTest::addColumn<bool>("gemm");
    QTest::addColumn<int>("programs");
    // A GEMM adds the library reference's row (cuBLAS), which has no time without a GPU.
    QTest::newRow("matmul_naive.cu") << example("matmul_naive.cu") << QStringLiteral("as written") << true << 3;
    QTest::newRow("softmax.te") << example("softmax.te") << QStringLiteral("generic schedule") << false << 2;
    QTest::newRow("gemm_bias_gelu.te") << example("gemm_bias_gelu.te") << QStringLiteral("generic schedule") << true
                                       << 3;
}

void TestRun::withoutAGpuEveryFigureIsMarkedEstimated()
{
    QFETCH(QString, file);
    QFETCH(QString, before);
    QFETCH(bool, gemm);
    QFETCH(int, programs);
    auto result = optimized(request(file));
    QVERIFY(result);
    auto report = runWith(test::noGpu(), result);
    QVERIFY(report);
    QVERIFY(!report->gpu);
    QVERIFY2(QString::fromStdString(report->device).startsWith(QStringLiteral("no GPU: ")), report->device.c_str());
    QCOMPARE(report->programs.size(), std::size_t(programs));
    QCOMPARE(QString::fromStdString(report->before()->name), before);
    QCOMPARE(QString::fromStdString(report->optimized()->name), QStringLiteral("optimized"));
    for (const ProgramRun &p : report->programs) {
        if (p.role == ProgramRun::Role::Library)
            continue;
        QVERIFY2(p.result, (p.error + "; " + p.note).c_str());
        QVERIFY(p.estimated());
        QVERIFY(p.timing() && p.timing()->medianMs > 0);
        QVERIFY(!p.result->verification);
        QVERIFY(!p.kernels.empty());
        QVERIFY(!p.metrics.empty());
    }
    // The library reference: no model of cuBLAS, so no number at all, and the row says why.
    QCOMPARE(report->library() != nullptr, gemm);
    if (gemm) {
        const ProgramRun &library = *report->library();
        QCOMPARE(&library, &report->programs.back());
        QCOMPARE(QString::fromStdString(library.name), QStringLiteral("cuBLAS"));
        QVERIFY(!library.result);
        QVERIFY(library.kernels.empty());
        QVERIFY2(library.error.find("no GPU here") != std::string::npos &&
                     library.error.find("no estimate of cuBLAS") != std::string::npos,
                 library.error.c_str());
        QVERIFY2(library.note.rfind("cuBLAS computes ", 0) == 0, library.note.c_str());
    }

    RunPanel panel(nullptr, nullptr);
    panel.resize(1200, 700);
    panel.setReport(report);
    QAbstractItemModelTester t1(panel.timesModel()), t2(panel.verificationModel()), t3(panel.metricsModel());
    QVERIFY2(panel.message().startsWith(QStringLiteral("ESTIMATED")), qPrintable(panel.message()));
    RunTimesModel *times = panel.timesModel();
    QCOMPARE(times->rowCount(), programs);
    const int beforeRow = static_cast<int>(report->before() - report->programs.data());
    const int afterRow = static_cast<int>(report->optimized() - report->programs.data());
    for (int row : {beforeRow, afterRow}) {
        QVERIFY(times->index(row, RunTimesModel::MedianColumn).data().toString().endsWith(QStringLiteral("(estimated)")));
        QVERIFY(times->index(row, RunTimesModel::SourceColumn).data().toString().startsWith(QStringLiteral("ESTIMATED")));
        QVERIFY(times->index(row, RunTimesModel::MedianColumn).data(Qt::ToolTipRole).toString().contains(QStringLiteral("ESTIMATED")));
    }
    if (gemm) {
        const int row = programs - 1;
        QCOMPARE(times->index(row, RunTimesModel::ProgramColumn).data().toString(), QStringLiteral("cuBLAS"));
        QCOMPARE(times->index(row, RunTimesModel::MedianColumn).data().toString(), QStringLiteral("-"));
        QCOMPARE(times->index(row, RunTimesModel::VerifiedColumn).data().toString(),
                 QStringLiteral("not run (no GPU)"));
        QVERIFY(
            times->index(row, RunTimesModel::SourceColumn).data().toString().contains(QStringLiteral("no GPU here")));
        QVERIFY(panel.message().contains(QStringLiteral("cuBLAS not run: not timed: no GPU here")));
    }
    QVERIFY(!panel.message().contains(QStringLiteral("no library reference")));
    QCOMPARE(panel.verificationModel()->rowCount(), programs);
    for (const auto &r : panel.verificationModel()->rows())
        QVERIFY2(
            r.result.contains(QStringLiteral("estimated")) || r.result == QStringLiteral("not run") ||
                (r.program == QStringLiteral("cuBLAS") && r.result == QStringLiteral("not run (no GPU)") && !r.failed),
            qPrintable(r.program + QStringLiteral(": ") + r.result));
    // No CUPTI without a GPU: the metrics table holds the static rubric's evidence, labelled.
    QCOMPARE(panel.metricsModel()->measuredRows(), 0);
    QVERIFY(panel.metricsModel()->index(0, RunMetricsModel::SourceColumn).data().toString().startsWith(QStringLiteral("static rubric")));

    RunTimeChart *chart = panel.timeChart();
    QVERIFY(chart->title().contains(QStringLiteral("ESTIMATED")));
    QCOMPARE(chart->bars()->barSets().size(), 1);
    QCOMPARE(chart->bars()->barSets().first()->count(), 2);
    QVERIFY(chart->bars()->barSets().first()->label().contains(QStringLiteral("estimated")));
    QVERIFY(chart->spreads().isEmpty()); // an estimate has no spread
    QVERIFY(chart->barToolTip(0).contains(QStringLiteral("ESTIMATED")));

    RooflineChart *roofline = panel.roofline();
    QVERIFY(roofline->title().contains(QStringLiteral("ESTIMATED")));
    const GpuSpec *gpu = ArchDatabase::builtin().defaultGpuFor("sm_90");
    QVERIFY(gpu);
    QVERIFY(roofline->ceilings().size() >= 2);
    // The DRAM slope at the datasheet bandwidth, the FP32 roof at its peak.
    const QPointF slope = roofline->ceilings().at(0)->at(0);
    QVERIFY(qAbs(slope.y() / slope.x() - gpu->memoryBandwidthGBs) < 1e-6 * gpu->memoryBandwidthGBs);
    QCOMPARE(roofline->ceilings().at(1)->at(0).y(), gpu->fp32Tflops * 1e3);
    // Each ceiling is named on the plot, in its colour, not in the (narrow) legend.
    for (QLineSeries *ceiling : roofline->ceilings()) {
        for (QLegendMarker *marker : roofline->chart()->legend()->markers(ceiling))
            QVERIFY(!marker->isVisible());
        bool named = false;
        for (QGraphicsItem *item : roofline->chart()->childItems())
            if (auto *label = dynamic_cast<QGraphicsSimpleTextItem *>(item); label && label->text() == ceiling->name())
                named = label->brush().color() == ceiling->pen().color();
        QVERIFY2(named, qPrintable(ceiling->name()));
    }
    QVERIFY(roofline->beforePoints() && roofline->afterPoints());
    QCOMPARE(roofline->beforePoints()->count(), kernelsOnLogAxes(*report->before()));
    QCOMPARE(roofline->afterPoints()->count(), kernelsOnLogAxes(*report->optimized()));
    QCOMPARE(roofline->beforePoints()->count() + roofline->afterPoints()->count() + roofline->omitted().size(),
             static_cast<qsizetype>(report->before()->kernels.size() + report->optimized()->kernels.size()));
    QVERIFY(roofline->afterPoints()->count() >= 1);
    QVERIFY(roofline->afterPoints()->name().contains(QStringLiteral("estimated")));
    const QString tip = roofline->pointToolTip(roofline->afterPoints(), roofline->afterPoints()->at(0));
    QVERIFY2(tip.contains(QStringLiteral("ESTIMATED")), qPrintable(tip));
}

void TestRun::aProgramThatCannotRunAsWrittenSaysWhereAndWhy()
{
    // A kernel alone has no host code: its launch is inferred, so it cannot run as written.
    auto result = optimized(request(example("matmul_kernel_only.cu"), {{"M", 256}, {"N", 128}, {"K", 64}}));
    QVERIFY(result);
    auto report = runWith(test::noGpu(), result);
    QVERIFY(report);
    QCOMPARE(report->programs.size(), std::size_t(4)); // as written (refused), generic, optimized, cuBLAS
    QVERIFY(report->library() && !report->library()->result);
    const ProgramRun &asWritten = report->programs[0];
    QCOMPARE(asWritten.role, ProgramRun::Role::AsWritten);
    QVERIFY(!asWritten.result);
    QVERIFY2(asWritten.error.find("matmul_kernel_only.cu:") != std::string::npos, asWritten.error.c_str());
    QCOMPARE(report->before()->role, ProgramRun::Role::Generic);
    QVERIFY(report->before()->estimated());
    RunPanel panel(nullptr, nullptr);
    panel.setReport(report);
    QAbstractItemModelTester tester(panel.verificationModel());
    QVERIFY(panel.message().contains(QStringLiteral("as written not run")));
    QCOMPARE(panel.timesModel()->index(0, RunTimesModel::VerifiedColumn).data().toString(), QStringLiteral("not run"));
}

void TestRun::theFakeWorkerStandsForAGpu()
{
    auto result = optimized(request(test::dataPath("add.te")));
    QVERIFY(result);
    auto report = runWith(fakeGpu(), result);
    QVERIFY(report);
    QVERIFY(report->gpu);
    QCOMPARE(QString::fromStdString(report->device), QStringLiteral("Fake GPU (sm_90)"));
    for (const ProgramRun &p : report->programs) {
        QVERIFY2(p.result, p.error.c_str());
        QVERIFY(!p.estimated());
        QVERIFY(p.result->verification);
        QVERIFY(p.result->verification->verified);
        QCOMPARE(p.timing()->samplesMs.size(), std::size_t(3));
    }
    RunPanel panel(nullptr, nullptr);
    panel.setReport(report);
    QAbstractItemModelTester t1(panel.timesModel()), t2(panel.verificationModel()), t3(panel.metricsModel());
    QVERIFY2(panel.message().startsWith(QStringLiteral("Measured on Fake GPU")), qPrintable(panel.message()));
    // One row per program and output, each verified against the CPU interpreter.
    const auto &rows = panel.verificationModel()->rows();
    QCOMPARE(rows.size(), std::size_t(2));
    for (const auto &r : rows) {
        QCOMPARE(r.output, QStringLiteral("C"));
        QCOMPARE(r.result, QStringLiteral("verified"));
        QVERIFY(r.tooltip.contains(QStringLiteral("CPU interpreter")));
    }
    QCOMPARE(panel.timesModel()->index(1, RunTimesModel::MedianColumn).data().toString(), QStringLiteral("0.5100 ms"));
    QVERIFY(panel.timesModel()->index(1, RunTimesModel::SourceColumn).data().toString().startsWith(QStringLiteral("measured on Fake GPU")));
    // CUPTI's counters first, then the static rubric beside them.
    QVERIFY(panel.metricsModel()->measuredRows() > 0);
    QCOMPARE(panel.metricsModel()->index(0, RunMetricsModel::SourceColumn).data().toString(), QStringLiteral("CUPTI (measured)"));
    QVERIFY(panel.metricsModel()->measuredRows() < panel.metricsModel()->rowCount());
    QCOMPARE(panel.timeChart()->spreads().size(), 2);
    QCOMPARE(panel.timeChart()->spreads().first()->at(0).y(), 0.5);
    QCOMPARE(panel.timeChart()->spreads().first()->at(1).y(), 0.52);
    QVERIFY(!panel.timeChart()->title().contains(QStringLiteral("ESTIMATED")));
    // The fake worker gives no CUPTI kernel records: the kernels' own times stay the model's, said so.
    QVERIFY(panel.roofline()->title().contains(QStringLiteral("ESTIMATED")));
}

void TestRun::aGemmIsTimedBesideCublas_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("product"); // the tensor cuBLAS computes
    QTest::addColumn<bool>("epilogue");   // a fused epilogue cuBLAS leaves out
    QTest::newRow("matmul.te") << example("matmul.te") << QStringLiteral("C") << false;
    QTest::newRow("gemm_bias_gelu.te") << example("gemm_bias_gelu.te") << QStringLiteral("G") << true;
}

// The fake worker computes cuBLAS's SGEMM on the host as the GPU would: the cuBLAS row is timed (the
// fake's samples) and its product verified against the CPU interpreter. The fake cannot run the
// generated GEMM kernels, so those rows say so; only the library's row is asserted on here.
void TestRun::aGemmIsTimedBesideCublas()
{
    QFETCH(QString, file);
    QFETCH(QString, product);
    QFETCH(bool, epilogue);
    auto result = optimized(request(file));
    QVERIFY(result);
    auto report = runWith(fakeGpu(), result);
    QVERIFY(report);
    QVERIFY(report->gpu);
    const ProgramRun *library = report->library();
    QVERIFY(library);
    QCOMPARE(library, &report->programs.back());
    QVERIFY2(library->result, library->error.c_str());
    QVERIFY(!library->estimated());
    QCOMPARE(QString::fromStdString(library->result->library), QStringLiteral("cuBLAS emulated by the fake worker"));
    QVERIFY(library->result->verification);
    QCOMPARE(QString::fromStdString(library->result->verification->reference), QStringLiteral("cpu"));
    QVERIFY(library->result->verification->verified);
    QCOMPARE(library->result->verification->outputs.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(library->result->verification->outputs[0].buffer), product);
    QCOMPARE(library->timing()->samplesMs.size(), std::size_t(3));
    const QString note = QString::fromStdString(library->note);
    QVERIFY2(note.startsWith(QStringLiteral("cuBLAS computes ") + product + QStringLiteral(" = ")), qPrintable(note));
    QCOMPARE(note.contains(QStringLiteral("not part of cuBLAS")), epilogue);
    if (epilogue)
        QVERIFY2(note.contains(QStringLiteral("(H, Y)")), qPrintable(note));

    RunPanel panel(nullptr, nullptr);
    panel.setReport(report);
    qInfo("%s\n%s", qPrintable(panel.message()), library->note.c_str());
    QAbstractItemModelTester t1(panel.timesModel()), t2(panel.verificationModel()), t3(panel.metricsModel());
    RunTimesModel *times = panel.timesModel();
    const int row = times->rowCount() - 1;
    QCOMPARE(times->index(row, RunTimesModel::ProgramColumn).data().toString(), QStringLiteral("cuBLAS"));
    QCOMPARE(times->index(row, RunTimesModel::VerifiedColumn).data().toString(), QStringLiteral("verified"));
    QCOMPARE(times->index(row, RunTimesModel::MedianColumn).data().toString(),
             QString::fromStdString(runMsText(library->timing()->medianMs)));
    QVERIFY(
        times->index(row, RunTimesModel::SourceColumn).data().toString().contains(QStringLiteral("cuBLAS emulated")));
    QVERIFY(times->index(row, RunTimesModel::MedianColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("cuBLAS computes")));
    bool verifiedRow = false;
    for (const auto &r : panel.verificationModel()->rows())
        if (r.program == QStringLiteral("cuBLAS")) {
            QCOMPARE(r.output, product);
            QCOMPARE(r.result, QStringLiteral("verified"));
            QVERIFY(r.tooltip.contains(QStringLiteral("CPU interpreter")));
            verifiedRow = true;
        }
    QVERIFY(verifiedRow);
    QVERIFY(!panel.message().contains(QStringLiteral("no library reference")));

    // Its bar, with the spread of its timed runs.
    RunTimeChart *chart = panel.timeChart();
    QVERIFY(!chart->title().contains(QStringLiteral("ESTIMATED")));
    auto *axis = qobject_cast<QBarCategoryAxis *>(chart->chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(axis);
    QVERIFY(axis->categories().contains(QStringLiteral("cuBLAS")));
    const int bar = static_cast<int>(axis->categories().indexOf(QStringLiteral("cuBLAS")));
    QCOMPARE(chart->bars()->barSets().first()->at(bar), library->timing()->medianMs);
    QVERIFY(chart->barToolTip(bar).startsWith(QStringLiteral("cuBLAS: median")));
    bool spread = false;
    for (QLineSeries *whisker : chart->spreads())
        spread = spread || (whisker->at(0).x() == bar && whisker->at(0).y() == library->timing()->minMs &&
                            whisker->at(1).y() == library->timing()->maxMs);
    QVERIFY(spread);
}

void TestRun::aFaultingKernelCostsTheWorkerNotTheStudio()
{
    auto faulting = optimized(request(test::dataPath("fault.te")));
    QVERIFY(faulting);
    QCOMPARE(QString::fromStdString(faulting->program.kernels.at(0).code.name), QStringLiteral("fault"));
    RunController controller(ArchDatabase::builtin());
    controller.setSettings(fakeGpu());
    QSignalSpy finished(&controller, &RunController::finished);
    RunInput input;
    input.optimized = faulting;
    controller.run(input);
    QVERIFY(finished.wait(test::CompileTimeoutMs));
    auto report = finished.last().at(1).value<std::shared_ptr<const RunReport>>();
    for (const ProgramRun &p : report->programs) {
        QVERIFY(!p.result);
        QVERIFY2(p.error.rfind("fault: ", 0) == 0, p.error.c_str());
    }
    RunPanel panel(nullptr, nullptr);
    panel.setReport(report);
    QVERIFY(panel.message().contains(QStringLiteral("not run: fault")));
    // The same controller runs again on a fresh worker.
    input.optimized = optimized(request(test::dataPath("add.te")));
    controller.run(input);
    QVERIFY(finished.wait(test::CompileTimeoutMs));
    report = finished.last().at(1).value<std::shared_ptr<const RunReport>>();
    QVERIFY(report->optimized()->result && report->optimized()->result->verification->verified);
}

void TestRun::cancelStopsTheRun()
{
    auto result = optimized(request(example("softmax.te")));
    QVERIFY(result);
    RunController controller(ArchDatabase::builtin());
    controller.setSettings(test::noGpu());
    QSignalSpy finished(&controller, &RunController::finished);
    QSignalSpy cancelled(&controller, &RunController::cancelled);
    RunInput input;
    input.optimized = result;
    const quint64 id = controller.run(input);
    QVERIFY(controller.isRunning());
    controller.cancel();
    QVERIFY(!controller.isRunning());
    QVERIFY(cancelled.wait(5000));
    QCOMPARE(cancelled.first().at(0).toULongLong(), id);
    controller.waitForIdle();
    QTest::qWait(100); // the cancelled run's outcome is dropped
    QCOMPARE(finished.count(), 0);
}

void TestRun::mainWindowRunsAfterOptimizeAndNamesTheDevice()
{
    Studio studio;
    MainWindow &window = *studio.window;
    QCOMPARE(window.runAction()->shortcut(), QKeySequence(Qt::Key_F5));
    QVERIFY(!window.runAction()->isEnabled());
    QSignalSpy ran(&window, &MainWindow::runSettled);
    QVERIFY(!window.runPrograms()); // nothing optimized yet: said, never a crash
    QCOMPARE(ran.count(), 1);
    QVERIFY(window.runPanel()->message().contains(QStringLiteral("Optimize first")));

    auto *status = window.findChild<QLabel *>(QStringLiteral("deviceStatus"));
    QVERIFY(status);
    QTRY_VERIFY_WITH_TIMEOUT(status->text().startsWith(QStringLiteral("No GPU: ")), 30000);
    // Short enough to leave the status bar's messages room; the whole reason is in the tooltip.
    QVERIFY2(status->text().size() <= 68, qPrintable(status->text()));
    QVERIFY2(!status->text().contains(QLatin1Char('(')), qPrintable(status->text()));
    QVERIFY2(status->toolTip().contains(QString::fromStdString(window.runController()->device()->why)),
             qPrintable(status->toolTip()));

    QVERIFY(window.openFile(example("matmul_naive.cu")));
    QSignalSpy optimizedSpy(&window, &MainWindow::optimizeSettled);
    QVERIFY(window.optimize());
    QVERIFY(optimizedSpy.wait(test::CompileTimeoutMs));
    QVERIFY(window.runAction()->isEnabled());
    window.runAction()->trigger();
    QVERIFY(ran.wait(test::CompileTimeoutMs));
    QVERIFY(window.isRunSettled());
    const RunReport *report = window.runPanel()->report();
    QVERIFY(report);
    QCOMPARE(report->programs.size(), std::size_t(3)); // as written, optimized, cuBLAS (not timed here)
    QVERIFY(window.runPanel()->message().startsWith(QStringLiteral("ESTIMATED")));
    // Estimates are not measurements: the project keeps none of them.
    QVERIFY(window.project()->measurements().empty());
    QCOMPARE(window.runPanel()->historyModel()->rowCount(), 0);
    QVERIFY(window.findChild<QDockWidget *>(QStringLiteral("runDock")));
    // The dock is part of the window's state.
    QByteArray name; // saveState() keeps object names as QDataStream does: UTF-16, big-endian
    for (char c : QByteArray("runDock"))
        name.append('\0').append(c);
    QVERIFY(window.saveState().contains(name));
}

// A Run on a GPU (the fake worker standing for one) adds its programs' times to the project: the
// History tab lists them, the session has unsaved work, and a saved project brings them back.
void TestRun::whatAGpuMeasuredIsKeptWithTheProject()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString projectPath = dir.filePath(QStringLiteral("add.stitchproj"));
    {
        test::Studio studio;
        MainWindow &window = *studio.window;
        window.runController()->setSettings(fakeGpu());
        QVERIFY(window.openFile(test::dataPath("add.te")));
        QSignalSpy optimizedSpy(&window, &MainWindow::optimizeSettled);
        QVERIFY(window.optimize());
        QVERIFY(optimizedSpy.wait(test::CompileTimeoutMs));
        QString error;
        QVERIFY2(window.saveProject(projectPath, &error), qPrintable(error));
        QVERIFY(!window.project()->isDirty());
        QSignalSpy ran(&window, &MainWindow::runSettled);
        QVERIFY(window.runPrograms());
        QVERIFY(ran.wait(test::CompileTimeoutMs));
        const auto &measured = window.project()->measurements();
        QCOMPARE(measured.size(), std::size_t(2)); // the generic schedule, the optimized program
        QCOMPARE(QString::fromStdString(measured.back().program), QStringLiteral("optimized"));
        QCOMPARE(QString::fromStdString(measured.back().gpu), QStringLiteral("Fake GPU (sm_90)"));
        QCOMPARE(measured.back().ms, 0.51); // the fake worker's median
        QVERIFY(measured.back().verified);
        QVERIFY(!measured.back().when.empty());
        RunHistoryModel *history = window.runPanel()->historyModel();
        QAbstractItemModelTester tester(history);
        QCOMPARE(history->rowCount(), 2);
        QCOMPARE(history->index(0, RunHistoryModel::Time).data().toString(), QStringLiteral("0.5100 ms"));
        QCOMPARE(history->index(0, RunHistoryModel::Verified).data().toString(), QStringLiteral("yes"));
        QVERIFY(window.project()->isDirty()); // a measurement would be lost unsaved
        QVERIFY2(window.saveProject(projectPath, &error), qPrintable(error));
    }
    test::Studio reopened;
    QSignalSpy restored(reopened.window->project(), &ProjectController::restored);
    QString error;
    QVERIFY2(reopened.window->openFile(projectPath, &error), qPrintable(error));
    QVERIFY(restored.count() == 1 || restored.wait(test::CompileTimeoutMs));
    QCOMPARE(reopened.window->project()->measurements().size(), std::size_t(2));
    QCOMPARE(reopened.window->runPanel()->historyModel()->rowCount(), 2);
    QVERIFY(!reopened.window->project()->isDirty());
}

// The real worker on the local GPU (skips without one): the program as written, the optimized one
// and cuBLAS verified against the CPU interpreter, timed with their spread, their kernels on the
// roofline from CUPTI's records.
void TestRun::onAGpuBothProgramsAreVerifiedAndTimed()
{
    RunController::Settings gpu;
    gpu.worker.workerPath = STITCHCUDA_WORKER_PATH;
    gpu.cache = false;
    {
        RunController probe(ArchDatabase::builtin());
        probe.setSettings(gpu);
        QSignalSpy probed(&probe, &RunController::deviceProbed);
        probe.probe();
        QVERIFY(probed.wait(test::CompileTimeoutMs));
        if (!probe.device()->gpu)
            QSKIP(qPrintable(QStringLiteral("no GPU: ") + QString::fromStdString(probe.device()->why)));
    }
    auto result = optimized(request(example("matmul_naive.cu")));
    QVERIFY(result);
    auto report = runWith(gpu, result);
    QVERIFY(report);
    QVERIFY(report->gpu);
    QCOMPARE(report->programs.size(), std::size_t(3));
    for (const ProgramRun &p : report->programs) {
        QVERIFY2(p.result, p.error.c_str());
        QVERIFY(!p.estimated());
        QVERIFY(p.result->verification && p.result->verification->verified);
        QVERIFY(p.timing()->samplesMs.size() >= 3 && p.timing()->minMs <= p.timing()->maxMs);
        for (const RooflinePoint &k : p.kernels)
            QVERIFY2(k.measured || !p.result->profile || !p.result->profile->available, k.kernel.c_str());
    }
    const ProgramRun *library = report->library();
    QVERIFY(library);
    QVERIFY2(QString::fromStdString(library->result->library).startsWith(QStringLiteral("cuBLAS ")),
             library->result->library.c_str());
    qInfo("as written %.4f ms, optimized %.4f ms, %s %.4f ms", report->before()->timing()->medianMs,
          report->optimized()->timing()->medianMs, library->result->library.c_str(), library->timing()->medianMs);
    RunPanel panel(nullptr, nullptr);
    panel.setReport(report);
    QAbstractItemModelTester t1(panel.timesModel()), t2(panel.verificationModel()), t3(panel.metricsModel());
    QCOMPARE(panel.timeChart()->spreads().size(), 3);
    QVERIFY2(panel.message().contains(QStringLiteral("over cuBLAS")), qPrintable(panel.message()));
    if (library->result->profile && library->result->profile->available)
        QVERIFY(panel.roofline()->libraryPoints() && panel.roofline()->libraryPoints()->count() == 1);
    QVERIFY(!panel.timeChart()->title().contains(QStringLiteral("ESTIMATED")));
}

QTEST_MAIN(TestRun)
#include "tst_run.moc"
