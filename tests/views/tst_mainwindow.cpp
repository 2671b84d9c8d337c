// MainWindow end to end with the real compiler: docks fill, clicks navigate, work is never lost.
#include "TestUtil.h"
#include "TestWindows.h"

#include "views/CodeEditor.h"
#include "views/CompileController.h"
#include "views/DecisionsPanel.h"
#include "views/GeneratedPanel.h"
#include "views/DevicePanel.h"
#include "views/DiagnosticsModel.h"
#include "views/GraphModel.h"
#include "views/GraphPanel.h"
#include "views/GraphView.h"
#include "views/KernelOutlineModel.h"
#include "views/KernelResourcesModel.h"
#include "views/MainWindow.h"
#include "views/RecentFiles.h"
#include "views/ResourcesPanel.h"
#include "views/RubricPanel.h"
#include "views/RubricRadar.h"
#include "views/SyntaxRepository.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QGraphicsItem>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QDir>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTreeView>
#include <QTreeWidget>
#include <QSettings>
#include <QtTest>

#include <memory>

using namespace stitch;
using namespace stitch::views;

class TestMainWindow final : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void goodFileFillsDocks();
    void problemsClickMovesCursor();
    void outlineClickJumpsToKernel();
    void blockSizeChangesOccupancy();
    void architectureChangeRecompiles();
    void missingFileIsReported();
    void unsavedChangesPromptGuardsClose();
    void layoutIsKeptBetweenRuns();
    void saveWritesFileAndRecentList();
    void devicePanelReportsProbe();
    void graphDockShowsLiftedProgram();
    void graphDockExplainsALiftError();
    void includeFoldersAndMacrosReachTheLift();
    void aKernelAlonesSizesAreAskedForAndBound();
    void graphDrawingAndEditorSelectEachOther();
    void rubricDockScoresTheLiftedProgram();
    void rubricDockSaysWhyItCannotScore();
    void decisionOverrideRescoresAndRegenerates();

private:
    void waitForCompile();
    void clickRow(QTreeView *view, const QModelIndex &index);

    SyntaxRepository m_syntax;
    std::unique_ptr<RecentFiles> m_recent;
    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_testers[4];
};

void TestMainWindow::init()
{
    m_recent = std::make_unique<RecentFiles>();
    m_window = std::make_unique<MainWindow>(m_syntax, ArchDatabase::builtin(), *m_recent);
    test::answerNoDriver(*m_window);
    const auto mode = QAbstractItemModelTester::FailureReportingMode::QtTest;
    m_testers[0] = std::make_unique<QAbstractItemModelTester>(m_window->diagnosticsModel(), mode);
    m_testers[1] = std::make_unique<QAbstractItemModelTester>(m_window->resourcesModel(), mode);
    m_testers[2] = std::make_unique<QAbstractItemModelTester>(m_window->outlineModel(), mode);
    m_testers[3] = std::make_unique<QAbstractItemModelTester>(m_window->graphModel(), mode);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void TestMainWindow::cleanup()
{
    // Tests leave edits behind; nothing may block on a dialog.
    m_window->setUnsavedChangesPrompt([](const QString &) { return QMessageBox::Discard; });
    for (auto &tester : m_testers)
        tester.reset();
    m_window.reset();
    m_recent.reset();
}

void TestMainWindow::waitForCompile()
{
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isCompileSettled(), test::CompileTimeoutMs);
}

void TestMainWindow::clickRow(QTreeView *view, const QModelIndex &index)
{
    view->scrollTo(index);
    const QRect rect = view->visualRect(index);
    QVERIFY(rect.isValid());
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, rect.center());
}

void TestMainWindow::goodFileFillsDocks()
{
    QString error;
    QVERIFY2(m_window->openFile(test::dataPath("saxpy.cu"), &error), qPrintable(error));
    QVERIFY(!m_window->isWindowModified());
    QVERIFY(m_window->windowTitle().startsWith(QStringLiteral("saxpy.cu")));
    waitForCompile();

    QCOMPARE(m_window->resourcesModel()->rowCount(), 2);
    QCOMPARE(m_window->resourcesModel()->architecture(), m_window->architecture());
    QVERIFY(m_window->resourcesModel()->kernel(0)->registers > 0);
    QVERIFY(m_window->ptxView()->toPlainText().contains(QStringLiteral(".entry")));
    QCOMPARE(m_window->ptxView()->definition().name(), QStringLiteral("PTX"));
    QVERIFY(m_window->compileStatus().startsWith(QStringLiteral("Compiled in")));
    QVERIFY(m_window->resourcesPanel()->summary().contains(QStringLiteral("2 kernels")));
    QTRY_COMPARE(m_window->outlineModel()->rowCount(), 2);
    QCOMPARE(m_window->diagnosticsModel()->count(Severity::Error), 0);
}

void TestMainWindow::problemsClickMovesCursor()
{
    QVERIFY(m_window->openFile(test::dataPath("broken.cu")));
    waitForCompile();
    QVERIFY(m_window->compileStatus().startsWith(QStringLiteral("Compile failed")));
    QCOMPARE(m_window->resourcesModel()->rowCount(), 0);
    QVERIFY(m_window->ptxView()->toPlainText().isEmpty());

    auto *model = m_window->diagnosticsModel();
    QVERIFY(model->rowCount() >= 1);
    const QModelIndex first = model->index(0, DiagnosticsModel::MessageColumn);
    QCOMPARE(first.data(DiagnosticsModel::LineRole).toInt(), 7);
    QVERIFY(!m_window->editor()->diagnosticsAt(7).isEmpty());

    m_window->editor()->goToLocation(1, 1);
    QCOMPARE(m_window->editor()->currentLine(), 1);
    clickRow(m_window->problemsView(), first);
    QCOMPARE(m_window->editor()->currentLine(), 7);
    const int column = first.data(DiagnosticsModel::ColumnRole).toInt();
    if (column > 0)
        QCOMPARE(m_window->editor()->currentColumn(), column);
    else
        QCOMPARE(m_window->editor()->currentColumn(), 9); // first non-blank of line 7
}

void TestMainWindow::outlineClickJumpsToKernel()
{
    QVERIFY(m_window->openFile(test::dataPath("saxpy.cu")));
    QTRY_COMPARE(m_window->outlineModel()->rowCount(), 2);
    const QModelIndex scale = m_window->outlineModel()->index(1, 0);
    QCOMPARE(scale.data().toString(), QStringLiteral("scale"));
    clickRow(m_window->outlineView(), scale);
    QCOMPARE(m_window->editor()->currentLine(), 9);
    QCOMPARE(m_window->editor()->textCursor().block().text().mid(m_window->editor()->currentColumn() - 1, 5),
             QStringLiteral("scale"));
    waitForCompile();
}

void TestMainWindow::blockSizeChangesOccupancy()
{
    QVERIFY(m_window->openFile(test::dataPath("saxpy.cu")));
    waitForCompile();
    auto *model = m_window->resourcesModel();
    QSignalSpy changed(model, &QAbstractItemModel::dataChanged);
    QSpinBox *spin = m_window->resourcesPanel()->blockSizeSpinBox();
    QCOMPARE(spin->value(), 256);
    spin->setValue(64);
    QCOMPARE(model->blockSize(), 64);
    QCOMPARE(changed.count(), 1);
    const auto &occupancy = model->occupancy(0);
    QVERIFY(occupancy.ok());
    const auto *limits = ArchDatabase::builtin().arch(m_window->architecture().toStdString());
    QVERIFY(limits);
    const auto expected = computeOccupancy(*limits, 64, model->kernel(0)->registers, model->kernel(0)->sharedBytes);
    QCOMPARE(occupancy->occupancy, expected->occupancy);
}

void TestMainWindow::architectureChangeRecompiles()
{
    const QStringList archs = m_window->architectures();
    QVERIFY(!archs.isEmpty());
    if (archs.contains(QStringLiteral("sm_90")))
        QCOMPARE(m_window->architecture(), QStringLiteral("sm_90"));
    if (!archs.contains(QStringLiteral("sm_80")))
        QSKIP("this NVRTC or database does not offer sm_80");
    QVERIFY(m_window->openFile(test::dataPath("saxpy.cu")));
    waitForCompile();
    QSignalSpy started(m_window->compiler(), &CompileController::started);
    QVERIFY(m_window->setArchitecture(QStringLiteral("sm_80")));
    QCOMPARE(started.count(), 1);
    waitForCompile();
    QCOMPARE(m_window->resourcesModel()->architecture(), QStringLiteral("sm_80"));
    QVERIFY(!m_window->setArchitecture(QStringLiteral("sm_1")));
}

void TestMainWindow::missingFileIsReported()
{
    QString error;
    QVERIFY(!m_window->openFile(QStringLiteral("/nonexistent/kernel.cu"), &error));
    QVERIFY2(error.contains(QStringLiteral("does not exist")), qPrintable(error));
    QVERIFY(!m_window->openFile(QStringLiteral(STITCHCUDA_VIEWS_TEST_DATA), &error));
    QVERIFY2(error.contains(QStringLiteral("not a regular file")), qPrintable(error));
    QVERIFY(m_window->currentFile().isEmpty());
}

void TestMainWindow::layoutIsKeptBetweenRuns()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QSettings settings(dir.filePath(QStringLiteral("studio.ini")), QSettings::IniFormat);
    auto dock = [](MainWindow &w, const char *name) {
        return w.findChild<QDockWidget *>(QLatin1String(name));
    };
    // A first run: the Run dock closed, the Training dock floating.
    m_window->setLayoutSettings(&settings);
    QDockWidget *run = dock(*m_window, "runDock");
    QDockWidget *training = dock(*m_window, "trainingDock");
    QVERIFY(run && training);
    run->hide();
    training->show();
    training->setFloating(true);
    QVERIFY(m_window->close()); // nothing unsaved: closes, and keeps the layout
    QCOMPARE(settings.value(QStringLiteral("layout/version")).toInt(), 1);

    // The next run finds the docks as they were left.
    MainWindow next(m_syntax, ArchDatabase::builtin(), *m_recent);
    next.show();
    QVERIFY(QTest::qWaitForWindowExposed(&next));
    QVERIFY(dock(next, "runDock")->toggleViewAction()->isChecked()); // open by default
    next.setLayoutSettings(&settings);
    QVERIFY(!dock(next, "runDock")->toggleViewAction()->isChecked());
    QVERIFY(dock(next, "trainingDock")->isFloating());

    // A layout from another layout version is left alone: the default layout stands.
    settings.setValue(QStringLiteral("layout/version"), 0);
    MainWindow older(m_syntax, ArchDatabase::builtin(), *m_recent);
    older.show();
    QVERIFY(QTest::qWaitForWindowExposed(&older));
    older.setLayoutSettings(&settings);
    QVERIFY(!dock(older, "trainingDock")->isFloating());
    QVERIFY(dock(older, "runDock")->toggleViewAction()->isChecked());
    m_window->show();
}

void TestMainWindow::unsavedChangesPromptGuardsClose()
{
    QVERIFY(m_window->openFile(test::dataPath("saxpy.cu")));
    int prompts = 0;
    m_window->setUnsavedChangesPrompt([&prompts](const QString &name) {
        ++prompts;
        return name == QStringLiteral("saxpy.cu") ? QMessageBox::Cancel : QMessageBox::Discard;
    });
    QVERIFY(m_window->close()); // unmodified: no question
    QCOMPARE(prompts, 0);
    m_window->show();

    m_window->editor()->moveCursor(QTextCursor::End);
    QTest::keyClicks(m_window->editor(), QStringLiteral("// edit"));
    QTest::keyClick(m_window->editor(), Qt::Key_Return);
    QVERIFY(m_window->isWindowModified());
    QVERIFY(!m_window->close());
    QCOMPARE(prompts, 1);
    QVERIFY(m_window->isVisible());
    QVERIFY(!m_window->maybeSave()); // opening another file is refused the same way
    QCOMPARE(prompts, 2);

    m_window->setUnsavedChangesPrompt([&prompts](const QString &) {
        ++prompts;
        return QMessageBox::Discard;
    });
    QVERIFY(m_window->close());
    QCOMPARE(prompts, 3);
    waitForCompile();
}

void TestMainWindow::saveWritesFileAndRecentList()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(m_window->openFile(test::dataPath("saxpy.cu")));
    m_window->editor()->moveCursor(QTextCursor::End);
    QTest::keyClicks(m_window->editor(), QStringLiteral("// saved"));
    QTest::keyClick(m_window->editor(), Qt::Key_Return);
    const QString path = dir.filePath(QStringLiteral("copy.cu"));
    QString error;
    QVERIFY2(m_window->saveFile(path, &error), qPrintable(error));
    QVERIFY(!m_window->isWindowModified());
    QCOMPARE(m_window->currentFile(), path);
    QCOMPARE(m_window->compiler()->fileName(), path);
    QCOMPARE(m_recent->files().first(), path);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().endsWith("// saved\n"));
    QVERIFY(!m_window->saveFile(dir.filePath(QStringLiteral("missing/dir/x.cu")), &error));
    QVERIFY(!error.isEmpty());
    waitForCompile();
}

void TestMainWindow::devicePanelReportsProbe()
{
    QTRY_VERIFY(m_window->devicePanel()->hasProbed());
    const QString text = m_window->devicePanel()->text();
    QVERIFY2(text.contains(QStringLiteral("No GPU: test probe: no driver")), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("NVRTC")));
    QVERIFY(text.contains(QStringLiteral("Target ") + m_window->architecture()));
}

QTEST_MAIN(TestMainWindow)
namespace {

QModelIndex findGroup(const QAbstractItemModel *model, const QString &title)
{
    for (int r = 0; r < model->rowCount(); ++r) {
        const QModelIndex i = model->index(r, 0);
        if (i.data().toString().startsWith(title))
            return i;
    }
    return {};
}

} // namespace

void TestMainWindow::graphDockShowsLiftedProgram()
{
    QSignalSpy updated(m_window.get(), &MainWindow::graphUpdated);
    QVERIFY(m_window->openFile(QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/softmax.te")));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->graphModel()->hasGraph(), test::CompileTimeoutMs);
    QVERIFY(updated.count() >= 1);
    QVERIFY(m_window->graphModel()->summary().startsWith(QStringLiteral("3 ops")));

    auto *model = m_window->graphModel();
    const QModelIndex ops = findGroup(model, QStringLiteral("Operations"));
    QVERIFY(ops.isValid());
    QCOMPARE(model->rowCount(ops), 3);
    const QModelIndex first = model->index(0, GraphModel::TextColumn, ops);
    QVERIFY(first.data().toString().contains(QStringLiteral("max(j)")));
    const int line = first.data(GraphModel::BeginLineRole).toInt();
    QVERIFY(line > 0);

    // Clicking an op in the tree selects the source it came from.
    m_window->graphPanel()->showTree();
    m_window->editor()->goToLocation(1, 1);
    clickRow(m_window->graphView(), first);
    QCOMPARE(m_window->editor()->currentLine(), first.data(GraphModel::EndLineRole).toInt() > 0
                                                    ? first.data(GraphModel::EndLineRole).toInt()
                                                    : line);
    QVERIFY(m_window->editor()->textCursor().selectedText().contains(QStringLiteral("rowMax")));
}

void TestMainWindow::graphDockExplainsALiftError()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.te"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("graph bad\ninput A: f32[4]\noutput B: f32[4]\nB[i] = A[i] * Q[i]\n");
    file.close();
    QVERIFY(m_window->openFile(path));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->graphModel()->summary().startsWith(QStringLiteral("Not lifted")),
                             test::CompileTimeoutMs);
    QVERIFY(!m_window->graphModel()->hasGraph());
    const QModelIndex why = m_window->graphModel()->index(0, 0);
    QVERIFY(why.isValid());
    const QModelIndex first = m_window->graphModel()->index(0, GraphModel::TextColumn, why);
    QVERIFY(first.data().toString().contains(QStringLiteral("Q")));
    QCOMPARE(first.data(GraphModel::BeginLineRole).toInt(), 4);
}

void TestMainWindow::includeFoldersAndMacrosReachTheLift()
{
    // app.cu includes "scale.cuh" from a folder beside it that only -I names, and sizes itself with
    // N unless -D says otherwise.
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("src")) && QDir(dir.path()).mkpath(QStringLiteral("inc")));
    auto write = [&](const QString &name, const QByteArray &text) {
        QFile f(dir.filePath(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text);
    };
    write(QStringLiteral("inc/scale.cuh"), "#pragma once\n__global__ void scale(const float *in, float *out, int n)\n{\n"
                                           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                           "    if (i < n)\n        out[i] = in[i] * 2.0f;\n}\n");
    write(QStringLiteral("src/app.cu"), "#include \"scale.cuh\"\n#ifndef N\n#define N 4096\n#endif\nint main()\n{\n"
                                        "    float *a, *b;\n    cudaMalloc(&a, N * sizeof(float));\n"
                                        "    cudaMalloc(&b, N * sizeof(float));\n    scale<<<N / 256, 256>>>(a, b, N);\n"
                                        "    return 0;\n}\n");
    QVERIFY(m_window->openFile(dir.filePath(QStringLiteral("src/app.cu"))));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->graphModel()->summary().startsWith(QStringLiteral("Not lifted")),
                             test::CompileTimeoutMs);
    QVERIFY(m_window->graphModel()->summary().contains(QStringLiteral("cannot find the included file 'scale.cuh'")));

    QString error;
    QVERIFY(!m_window->setSourceOptions({}, {QStringLiteral("3X=1")}, &error));
    QVERIFY(error.contains(QStringLiteral("3X=1")));
    QVERIFY(m_window->setSourceOptions({dir.filePath(QStringLiteral("inc"))}, {QStringLiteral("N=1024")}, &error));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->graphModel()->hasGraph(), test::CompileTimeoutMs);
    QCOMPARE(m_window->defines(), QStringList{QStringLiteral("N=1024")});
    // The Sizes group lists N with the -D value.
    const QModelIndex sizes = m_window->graphModel()->index(0, 0);
    QCOMPARE(sizes.data().toString(), QStringLiteral("Sizes"));
    QCOMPARE(m_window->graphModel()->index(0, 0, sizes).data().toString(), QStringLiteral("N = 1024"));
}

void TestMainWindow::aKernelAlonesSizesAreAskedForAndBound()
{
    // A kernel pasted alone: M, N and K have no value until the user gives them (Build > Sizes, or
    // when Optimize asks); then the rubric scores it and Optimize runs at those sizes.
    QVERIFY(m_window->openFile(QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/matmul_kernel_only.cu")));
    RubricPanel *rubric = m_window->rubricPanel();
    QTRY_VERIFY_WITH_TIMEOUT(rubric->summary().contains(QStringLiteral("has no value in the source")), test::CompileTimeoutMs);
    QStringList open = m_window->unboundSizes();
    open.sort();
    QCOMPARE(open, (QStringList{QStringLiteral("K"), QStringLiteral("M"), QStringLiteral("N")}));

    // Optimize asks; a cancelled prompt optimizes nothing and says why.
    QMap<QString, qint64> asked;
    m_window->setSizesPrompt([&](const QMap<QString, qint64> &proposed) -> std::optional<QMap<QString, qint64>> {
        asked = proposed;
        return std::nullopt;
    });
    QVERIFY(!m_window->optimize());
    QCOMPARE(asked.value(QStringLiteral("M")), 1024);
    QCOMPARE(asked.size(), 3);

    m_window->setSizeBindings({{QStringLiteral("M"), 256}, {QStringLiteral("N"), 128}, {QStringLiteral("K"), 64}});
    QTRY_VERIFY_WITH_TIMEOUT(rubric->summary().startsWith(QStringLiteral("1 kernel")), test::CompileTimeoutMs);
    QVERIFY(m_window->unboundSizes().isEmpty());
    QCOMPARE(m_window->sizeBindings().value(QStringLiteral("K")), 64);
}

void TestMainWindow::graphDrawingAndEditorSelectEachOther()
{
    QVERIFY(m_window->openFile(QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/softmax.te")));
    m_window->findChild<QDockWidget *>(QStringLiteral("graphDock"))->raise();
    GraphView *drawing = m_window->graphPanel()->drawing();
    QVERIFY(m_window->graphPanel()->isShowingDrawing());
    QTRY_VERIFY_WITH_TIMEOUT(drawing->isLaidOut() && drawing->drawing().opCount() == 3, test::CompileTimeoutMs);
    // The default schedule's kernels shade the drawing once the Rubric dock has scored it.
    QTRY_VERIFY_WITH_TIMEOUT(drawing->isLaidOut() && drawing->kernelCaption().contains(QStringLiteral("default schedule")),
                             test::CompileTimeoutMs);

    // Clicking the rowSum op selects its line in the editor.
    const int rowSum = drawing->drawing().findNode("rowSum", DrawnNode::Kind::Op);
    QVERIFY(rowSum >= 0);
    m_window->editor()->goToLocation(1, 1);
    drawing->fit();
    const QPoint at = drawing->mapFromScene(drawing->nodeItem(rowSum)->sceneBoundingRect().center());
    QTest::mouseClick(drawing->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(drawing->selectedNode(), rowSum);
    QCOMPARE(m_window->editor()->currentLine(), 13);
    QVERIFY(m_window->editor()->textCursor().selectedText().startsWith(QStringLiteral("rowSum[i] = sum(j)")));

    // Moving the cursor into the last op's line selects its node.
    m_window->editor()->goToLocation(14, 5);
    QCOMPARE(drawing->selectedNode(), drawing->drawing().findNode("Y", DrawnNode::Kind::Op));
    m_window->editor()->goToLocation(2, 1); // a comment: nothing selected
    QCOMPARE(drawing->selectedNode(), -1);
}

void TestMainWindow::rubricDockScoresTheLiftedProgram()
{
    // The lift's default schedule, generated, compiled by NVRTC and scored: eight dimensions for the
    // program and for its one kernel in the table, the six the agents read drawn as a radar (the
    // generic schedule as written, a .te having no code, and the default schedule); switching the
    // architecture scores again.
    QSignalSpy updated(m_window.get(), &MainWindow::rubricUpdated);
    QVERIFY(m_window->openFile(QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/matmul.te")));
    RubricPanel *panel = m_window->rubricPanel();
    QTRY_VERIFY_WITH_TIMEOUT(panel->summary().startsWith(QStringLiteral("1 kernel")), test::CompileTimeoutMs);
    QVERIFY(updated.count() >= 1);
    QVERIFY2(panel->summary().contains(QStringLiteral("predicted")), qPrintable(panel->summary()));
    QVERIFY(!panel->summary().contains(QStringLiteral("not compiled")));
    QAbstractItemModelTester tester(panel->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(panel->model()->rowCount(), 8);
    QCOMPARE(panel->model()->index(0, RubricModel::DimensionColumn).data().toString(), QStringLiteral("coalescing"));
    for (int row = 0; row < 8; ++row) {
        const double score = panel->model()->index(row, 0).data(RubricModel::ScoreRole).toDouble();
        QVERIFY(score >= 0 && score <= 5);
        QVERIFY(!panel->model()->index(row, RubricModel::SentenceColumn).data().toString().isEmpty());
        QVERIFY(panel->model()->index(row, 0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("Evidence")));
    }
    QCOMPARE(panel->radar()->spokes().size(), 6);
    QTRY_COMPARE_WITH_TIMEOUT(panel->radar()->lines().size(), 2, test::CompileTimeoutMs);
    QCOMPARE(panel->scopeBox()->count(), 2); // the program and kernel C
    panel->scopeBox()->setCurrentIndex(1);
    QVERIFY(panel->model()->rowCount() >= 6);
    int applying = 0; // the kernel's scores among the six
    for (const char *d : {"coalescing", "arithmetic_intensity", "divergence", "occupancy", "instruction_mix",
                          "bank_conflicts"})
        applying += rubric::findScore(panel->model()->scores(), d) ? 1 : 0;
    QCOMPARE(panel->radar()->spokes().size(), applying);
    QCOMPARE(panel->radar()->lines().size(), 1);

    const int before = updated.count();
    QVERIFY(m_window->setArchitecture(QStringLiteral("sm_80")));
    QTRY_VERIFY_WITH_TIMEOUT(updated.count() > before && panel->summary().startsWith(QStringLiteral("1 kernel")),
                             test::CompileTimeoutMs);
}

void TestMainWindow::rubricDockSaysWhyItCannotScore()
{
    // A size without a value: the rubric needs concrete sizes and says which one is missing.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("symbolic.te"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("graph scale\nsize N\ninput A: f32[N]\noutput B: f32[N]\nB[i] = A[i] * 2\n");
    file.close();
    QVERIFY(m_window->openFile(path));
    RubricPanel *panel = m_window->rubricPanel();
    QTRY_VERIFY_WITH_TIMEOUT(panel->summary().contains(QStringLiteral("size 'N' has no value")), test::CompileTimeoutMs);
    QCOMPARE(panel->model()->rowCount(), 0);
    QVERIFY(panel->radar()->lines().isEmpty());
    QVERIFY(!panel->scopeBox()->isEnabled());

    // A lift error: the dock says the program was not lifted.
    m_window->editor()->setPlainText(QStringLiteral("graph bad\ninput A: f32[4]\noutput B: f32[4]\nB[i] = A[i] * Q[i]\n"));
    QTRY_VERIFY_WITH_TIMEOUT(panel->summary().contains(QStringLiteral("not lifted")), test::CompileTimeoutMs);
}

void TestMainWindow::decisionOverrideRescoresAndRegenerates()
{
    // The Decisions dock shows the scored schedule; another legal value of block_m is scored and
    // generated as "your schedule"; an illegal value cannot be picked; the reset brings back the default.
    QSignalSpy updated(m_window.get(), &MainWindow::rubricUpdated);
    QVERIFY(m_window->openFile(QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/matmul.te")));
    RubricPanel *rubric = m_window->rubricPanel();
    DecisionsPanel *decisions = m_window->decisionsPanel();
    QTRY_VERIFY_WITH_TIMEOUT(rubric->summary().startsWith(QStringLiteral("1 kernel")), test::CompileTimeoutMs);
    QVERIFY(rubric->summary().contains(QStringLiteral("default schedule")));
    QCOMPARE(decisions->decisions().size(), std::size_t(1));
    const GroupDecisions g = decisions->decisions().front(); // a copy: the dock replaces its rows
    QCOMPARE(g.strategy, std::string("gemm"));
    const auto blockM = std::find_if(g.rows.begin(), g.rows.end(), [](const DecisionRow &r) { return r.key == "block_m"; });
    QVERIFY(blockM != g.rows.end());
    QCOMPARE(blockM->category, std::string("parallel_mapping"));
    QVERIFY(m_window->generatedView()->toPlainText().contains(
        QStringLiteral("block_m=%1 ").arg(blockM->value)));
    int other = -1, illegal = -1;
    for (const auto &o : blockM->options) {
        if (o.legal && o.value != blockM->value && other < 0)
            other = o.value;
        if (!o.legal && illegal < 0)
            illegal = o.value;
    }
    QVERIFY(other > 0);
    // The rubric of the alternatives: each legal value's estimated time, in its list entry.
    QVERIFY(g.estimatedMs > 0);
    int estimated = 0;
    for (std::size_t i = 0; i < blockM->options.size(); ++i)
        estimated += blockM->options[i].legal && blockM->options[i].value != blockM->value && blockM->estimatedMs[i] > 0;
    QVERIFY(estimated > 0);
    auto *box = decisions->tree()->findChild<QComboBox *>(QStringLiteral("%1.block_m").arg(QString::fromStdString(g.name)));
    QVERIFY(box);
    QVERIFY(box->itemText(box->findData(other)).contains(QStringLiteral(" us (")));
    if (illegal > 0)
        QVERIFY(!decisions->choose(0, QStringLiteral("block_m"), illegal));

    const int before = updated.count();
    QVERIFY(decisions->choose(0, QStringLiteral("block_m"), other));
    QTRY_VERIFY2_WITH_TIMEOUT(updated.count() > before && rubric->summary().contains(QStringLiteral("your schedule")),
                              qPrintable(rubric->summary()), test::CompileTimeoutMs);
    QVERIFY2(rubric->summary().startsWith(QStringLiteral("1 kernel")), qPrintable(rubric->summary()));
    QVERIFY(m_window->generatedView()->toPlainText().contains(QStringLiteral("block_m=%1 ").arg(other)));
    QVERIFY(decisions->summary().contains(QStringLiteral("1 decision(s) overridden")));
    // The Generated dock shows the previous program beside the new one, what changed marked.
    GeneratedPanel *generated = m_window->generatedPanel();
    QVERIFY(generated->compareBox()->isChecked());
    QVERIFY(generated->previous()->toPlainText().contains(QStringLiteral("block_m=%1 ").arg(blockM->value)));
    QVERIFY2(generated->summary().contains(QStringLiteral("changed")), qPrintable(generated->summary()));
    QVERIFY(generated->previous()->lineHighlightCount() > 0);
    QVERIFY(generated->current()->lineHighlightCount() > 0);
    QCOMPARE(generated->previous()->blockCount(), generated->current()->blockCount()); // rows aligned
    generated->compareBox()->setChecked(false);
    QCOMPARE(generated->current()->toPlainText(), generated->currentSource());
    QCOMPARE(generated->current()->lineHighlightCount(), 0);
    generated->compareBox()->setChecked(true);
    QVERIFY(decisions->resetButton()->isEnabled());

    const int overridden = updated.count();
    decisions->resetButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(updated.count() > overridden && rubric->summary().contains(QStringLiteral("default schedule")),
                             test::CompileTimeoutMs);
    QVERIFY(m_window->generatedView()->toPlainText().contains(QStringLiteral("block_m=%1 ").arg(blockM->value)));
}

#include "tst_mainwindow.moc"
