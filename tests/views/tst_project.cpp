// Projects in the studio with real core results: an optimized session saved and reopened in a fresh
// window, damaged and newer files refused with the session untouched, autosave and recovery after
// a crash, atomic saves, and the core's errors in Problems with a click to the place.
#include "TestUtil.h"
#include "TestWindows.h"

#include "views/AgentsModel.h"
#include "views/AgentsPanel.h"
#include "views/CodeEditor.h"
#include "views/DecisionsPanel.h"
#include "views/DevicePanel.h"
#include "views/DiagnosticsModel.h"
#include "views/GeneratedPanel.h"
#include "views/MainWindow.h"
#include "views/ProjectController.h"
#include "views/RecentFiles.h"
#include "views/RubricPanel.h"
#include "views/SyntaxRepository.h"

#include "core/storage/ProjectFile.h"

#include <nlohmann/json.hpp>

#include <QAbstractItemModelTester>
#include <QDialog>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <csignal>
#include <memory>
#include <sys/resource.h>

using namespace stitch;
using namespace stitch::views;

namespace {

QString example(const char *name)
{
    return QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/") + QLatin1String(name);
}

QString readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

bool writeAll(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

/// The first row of `model` from `origin`, or -1.
int rowFrom(const DiagnosticsModel *model, DiagnosticsModel::Origin origin)
{
    for (int r = 0; r < model->rowCount(); ++r) {
        if (model->origin(model->index(r, 0)) == origin)
            return r;
    }
    return -1;
}

} // namespace

class TestProject final : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void anOptimizedSessionReopensInAFreshWindow();
    void damagedAndNewerProjectsLeaveTheSessionAlone();
    void anAutosaveIsOfferedAndRestoredAfterACrash();
    void aCleanExitLeavesNothingToRecover();
    void aFailedSaveLeavesTheOldFileWhole();
    void liftAndOptimizeErrorsReachProblems();

private:
    std::unique_ptr<MainWindow> makeWindow();
    /// Waits until the Rubric dock's summary contains `words` (and is not "Scoring ...").
    bool waitForRubric(MainWindow &window, const QString &words);
    QString path(const QString &name) const { return m_dir->filePath(name); }

    SyntaxRepository m_syntax;
    RecentFiles m_recent;
    std::unique_ptr<QTemporaryDir> m_dir;
    QStringList m_messages; ///< what the windows told the user (message boxes)
    std::vector<std::unique_ptr<MainWindow>> m_windows;
    std::vector<std::unique_ptr<QAbstractItemModelTester>> m_testers;
};

void TestProject::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestProject::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_messages.clear();
}

void TestProject::cleanup()
{
    for (auto &w : m_windows)
        w->setUnsavedChangesPrompt([](const QString &) { return QMessageBox::Discard; });
    m_testers.clear();
    m_windows.clear();
    m_dir.reset();
}

std::unique_ptr<MainWindow> TestProject::makeWindow()
{
    auto window = std::make_unique<MainWindow>(m_syntax, ArchDatabase::builtin(), m_recent);
    test::answerNoDriver(*window);
    window->setUnsavedChangesPrompt([](const QString &) { return QMessageBox::Discard; });
    window->project()->setRecoveryDirectory(path(QStringLiteral("recovery")));
    window->project()->setMessageSink(
        [this](const QString &title, const QString &text) { m_messages << title + QStringLiteral(": ") + text; });
    window->project()->setRecoveryPrompt([](const ProjectController::Recovery &) { return false; });
    m_testers.push_back(std::make_unique<QAbstractItemModelTester>(
        window->diagnosticsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest));
    window->show();
    return window;
}

bool TestProject::waitForRubric(MainWindow &window, const QString &words)
{
    auto landed = [&] {
        const QString s = window.rubricPanel()->summary();
        return s.contains(words) && !s.startsWith(QStringLiteral("Scoring")) && window.isRubricSettled();
    };
    QElapsedTimer timer;
    timer.start();
    while (!landed() && timer.elapsed() < test::CompileTimeoutMs)
        QTest::qWait(50);
    return landed();
}

void TestProject::anOptimizedSessionReopensInAFreshWindow()
{
    // A kernel alone (its sizes bound here), optimized for sm_80 with an include folder and a macro,
    // one decision pinned in the Agents dock and one value set in the Decisions dock.
    const QString source = path(QStringLiteral("matmul_kernel_only.cu"));
    QVERIFY(QFile::copy(example("matmul_kernel_only.cu"), source));
    QVERIFY(QDir().mkpath(path(QStringLiteral("include"))));
    auto a = makeWindow();
    QString error;
    QVERIFY2(a->openFile(source, &error), qPrintable(error));
    QVERIFY(a->setArchitecture(QStringLiteral("sm_80")));
    QVERIFY(a->setSourceOptions({path(QStringLiteral("include"))}, {QStringLiteral("UNROLL=4")}, &error));
    const QMap<QString, qint64> sizes{
        {QStringLiteral("M"), 512}, {QStringLiteral("N"), 256}, {QStringLiteral("K"), 128}};
    a->setSizesPrompt([&](const QMap<QString, qint64> &) { return std::optional(sizes); });
    QTRY_VERIFY_WITH_TIMEOUT(!a->unboundSizes().isEmpty(), test::CompileTimeoutMs);
    QSignalSpy settled(a.get(), &MainWindow::optimizeSettled);
    QSignalSpy autosaved(a->project(), &ProjectController::autosaved);
    QVERIFY(a->optimize());
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    QVERIFY2(a->agentsPanel()->result(), qPrintable(a->agentsPanel()->summary()));
    // Unsaved work after an Optimize is autosaved at once.
    QCOMPARE(autosaved.count(), 1);
    QVERIFY(QFileInfo::exists(a->project()->recoveryFile()));

    // Pin the first decision with a legal value the agents did not choose: they decide again.
    const agents::Trace *trace = a->agentsPanel()->model()->trace();
    QVERIFY(trace);
    int row = -1, option = -1;
    for (std::size_t d = 0; d < trace->decisions.size() && row < 0; ++d)
        for (std::size_t o = 0; o < trace->decisions[d].options.size(); ++o)
            if (trace->decisions[d].options[o].legal && static_cast<int>(o) != trace->decisions[d].chosen) {
                row = static_cast<int>(d) + 1;
                option = static_cast<int>(o);
                break;
            }
    QVERIFY(row > 0);
    QVERIFY(a->agentsPanel()->selectStep(row));
    QVERIFY(a->agentsPanel()->selectOption(option));
    a->agentsPanel()->overrideButton()->click();
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    QCOMPARE(a->optimizePins().size(), 1);
    QVERIFY(waitForRubric(*a, QStringLiteral("final schedule")));

    // A value of the Decisions dock: another legal value of the first decision that has one.
    QVERIFY(!a->decisionsPanel()->decisions().empty());
    const GroupDecisions g = a->decisionsPanel()->decisions().front();
    QString key;
    int value = -1;
    for (const DecisionRow &r : g.rows) {
        for (const auto &o : r.options) {
            if (o.legal && o.value != r.value && value < 0) {
                key = QString::fromStdString(r.key);
                value = o.value;
            }
        }
    }
    QVERIFY(value >= 0);
    QVERIFY(a->decisionsPanel()->choose(0, key, value));
    QVERIFY(waitForRubric(*a, QStringLiteral("your schedule")));
    QTRY_VERIFY(a->project()->isDirty());

    const QString project = path(QStringLiteral("matmul.stitchproj"));
    QVERIFY2(a->saveProject(project, &error), qPrintable(error));
    QVERIFY(!a->isWindowModified());
    QVERIFY(a->windowTitle().startsWith(QStringLiteral("matmul.stitchproj[*] (matmul_kernel_only.cu)")));
    QVERIFY(!QFileInfo::exists(a->project()->recoveryFile())); // saved: nothing to recover
    QCOMPARE(m_recent.files().value(0), QFileInfo(project).absoluteFilePath());
    const storage::Project saved = a->projectSnapshot();
    QVERIFY(saved.rubric && !saved.rubric->scores.empty());
    QCOMPARE(saved.rubric->schedule, std::string("your schedule"));
    QVERIFY(saved.asWritten);
    const std::string traceJson = agents::traceToJson(a->agentsPanel()->result()->trace);
    const QString generated = a->generatedPanel()->currentSource();

    // A fresh window opens it: everything comes back, and it is clean.
    auto b = makeWindow();
    QSignalSpy restored(b->project(), &ProjectController::restored);
    QVERIFY2(b->openFile(project, &error), qPrintable(error));
    QVERIFY(restored.count() == 1 || restored.wait(test::CompileTimeoutMs));
    QCOMPARE(b->editor()->toPlainText(), a->editor()->toPlainText());
    QCOMPARE(b->currentFile(), QFileInfo(source).absoluteFilePath());
    QCOMPARE(b->architecture(), QStringLiteral("sm_80"));
    QCOMPARE(b->includeDirs(), a->includeDirs());
    QCOMPARE(b->defines(), QStringList{QStringLiteral("UNROLL=4")});
    QCOMPARE(b->sizeBindings(), sizes);
    QCOMPARE(b->optimizePins(), a->optimizePins());
    QVERIFY(b->agentsPanel()->result());
    QCOMPARE(agents::traceToJson(b->agentsPanel()->result()->trace), traceJson);
    QCOMPARE(b->agentsPanel()->model()->rowCount(), a->agentsPanel()->model()->rowCount());
    QVERIFY(waitForRubric(*b, QStringLiteral("your schedule")));
    QVERIFY2(b->decisionsPanel()->summary().contains(QStringLiteral("1 decision(s) overridden")),
             qPrintable(b->decisionsPanel()->summary()));
    const DecisionRow *restoredRow = nullptr;
    for (const DecisionRow &r : b->decisionsPanel()->decisions().front().rows)
        if (QString::fromStdString(r.key) == key)
            restoredRow = &r;
    QVERIFY(restoredRow);
    QCOMPARE(restoredRow->value, value);
    QCOMPARE(b->generatedPanel()->currentSource(), generated);
    QVERIFY(!b->project()->isDirty());
    QVERIFY(!b->isWindowModified());
    QCOMPARE(rowFrom(b->diagnosticsModel(), DiagnosticsModel::Origin::Project), -1);

    // Another architecture makes it dirty (the title's star); back, it is clean again.
    QVERIFY(b->setArchitecture(QStringLiteral("sm_90")));
    QTRY_VERIFY_WITH_TIMEOUT(b->isWindowModified(), test::CompileTimeoutMs);
    QVERIFY(b->setArchitecture(QStringLiteral("sm_80")));
    QTRY_VERIFY_WITH_TIMEOUT(!b->isWindowModified(), test::CompileTimeoutMs);
    // An edit makes it dirty; closing a dirty project asks, and Cancel keeps the window open.
    b->editor()->appendPlainText(QStringLiteral("// note"));
    QTRY_VERIFY(b->isWindowModified());
    int asked = 0;
    b->setUnsavedChangesPrompt([&](const QString &name) {
        ++asked;
        [&] { QCOMPARE(name, QStringLiteral("matmul.stitchproj")); }();
        return QMessageBox::Cancel;
    });
    QVERIFY(!b->close());
    QCOMPARE(asked, 1);

    // The input changed on disk since: the project's copy still wins, and the user is told.
    QVERIFY(writeAll(source, "// edited elsewhere\n"));
    auto c = makeWindow();
    QSignalSpy restoredC(c->project(), &ProjectController::restored);
    QVERIFY(c->openFile(project, &error));
    QVERIFY(restoredC.count() == 1 || restoredC.wait(test::CompileTimeoutMs));
    QCOMPARE(c->editor()->toPlainText(), a->editor()->toPlainText());
    const int note = rowFrom(c->diagnosticsModel(), DiagnosticsModel::Origin::Project);
    QVERIFY(note >= 0);
    QVERIFY(c->diagnosticsModel()
                ->index(note, DiagnosticsModel::MessageColumn)
                .data()
                .toString()
                .contains(QStringLiteral("has changed since the project was saved")));
}

void TestProject::damagedAndNewerProjectsLeaveTheSessionAlone()
{
    auto w = makeWindow();
    QVERIFY(w->openFile(test::dataPath("saxpy.cu")));
    w->editor()->appendPlainText(QStringLiteral("// unsaved work"));
    QVERIFY(w->setArchitecture(QStringLiteral("sm_86")));
    const QString text = w->editor()->toPlainText();
    const std::string good =
        storage::projectToJson(w->projectSnapshot(), path(QStringLiteral("x.stitchproj")).toStdString());

    // Damaged: cut in the middle (an interrupted copy).
    const QString damaged = path(QStringLiteral("damaged.stitchproj"));
    QVERIFY(writeAll(damaged, QByteArray::fromStdString(good.substr(0, good.size() / 2))));
    QString error;
    QVERIFY(!w->openFile(damaged, &error));
    QVERIFY2(error.contains(QStringLiteral("is damaged")) && error.contains(QStringLiteral("truncated")),
             qPrintable(error));
    QCOMPARE(w->editor()->toPlainText(), text);
    QCOMPARE(w->currentFile(), QFileInfo(test::dataPath("saxpy.cu")).absoluteFilePath());
    QCOMPARE(w->architecture(), QStringLiteral("sm_86"));
    QVERIFY(w->editor()->document()->isModified());
    // Problems lists the place; a click shows the file there, read-only.
    const int row = rowFrom(w->diagnosticsModel(), DiagnosticsModel::Origin::Project);
    QVERIFY(row >= 0);
    const QModelIndex index = w->diagnosticsModel()->index(row, DiagnosticsModel::LocationColumn);
    QVERIFY(index.data().toString().startsWith(QStringLiteral("damaged.stitchproj:")));
    const int line = index.data(DiagnosticsModel::LineRole).toInt();
    QVERIFY(line > 1);
    QTreeView *problems = w->problemsView();
    problems->scrollTo(index);
    QTest::mouseClick(problems->viewport(), Qt::LeftButton, {}, problems->visualRect(index).center());
    auto *viewer = w->findChild<QDialog *>(QStringLiteral("locationViewer"));
    QVERIFY(viewer && viewer->isVisible());
    auto *shown = viewer->findChild<CodeEditor *>(QStringLiteral("locationEditor"));
    QVERIFY(shown);
    QCOMPARE(shown->currentLine(), line);
    QVERIFY(shown->isReadOnly());
    QCOMPARE(w->editor()->toPlainText(), text);

    // Newer: dropped on the window, it is refused with both versions named.
    nlohmann::json newer = nlohmann::json::parse(good);
    newer["version"] = storage::Project::kFormatVersion + 1;
    const QString newerPath = path(QStringLiteral("newer.stitchproj"));
    QVERIFY(writeAll(newerPath, QByteArray::fromStdString(newer.dump(2))));
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(newerPath)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(w.get(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(w.get(), &drop);
    QTRY_COMPARE(m_messages.size(), 1);
    const QString message = m_messages.first();
    QVERIFY2(
        message.contains(QStringLiteral("newer version of StitchCUDA Studio")) &&
            message.contains(QStringLiteral("project format version %1").arg(storage::Project::kFormatVersion + 1)) &&
            message.contains(QStringLiteral("reads version %1").arg(storage::Project::kFormatVersion)),
        qPrintable(message));
    QCOMPARE(w->editor()->toPlainText(), text);
    QCOMPARE(w->architecture(), QStringLiteral("sm_86"));

    // Not even JSON (a binary dropped by mistake): refused the same way, never a crash.
    const QString junk = path(QStringLiteral("junk.stitchproj"));
    QVERIFY(writeAll(junk, QByteArray("\x00\x01\x02\xff", 4)));
    QVERIFY(!w->openFile(junk, &error));
    QCOMPARE(w->editor()->toPlainText(), text);
}

void TestProject::anAutosaveIsOfferedAndRestoredAfterACrash()
{
    QString autosaved;
    QString text;
    {
        auto crashed = makeWindow();
        QVERIFY(crashed->openFile(test::dataPath("saxpy.cu")));
        QVERIFY(!crashed->project()->autosave()); // nothing unsaved yet: nothing written
        crashed->editor()->appendPlainText(QStringLiteral("// typed, never saved"));
        QVERIFY(crashed->setArchitecture(QStringLiteral("sm_86")));
        text = crashed->editor()->toPlainText();
        QVERIFY(crashed->project()->autosave());
        autosaved = crashed->project()->recoveryFile();
        QVERIFY(autosaved.startsWith(path(QStringLiteral("recovery"))));
        QVERIFY(QFileInfo::exists(autosaved));
        // While it runs, another session does not take its autosave.
        auto other = makeWindow();
        QVERIFY(other->project()->orphans().empty());
        crashed->setUnsavedChangesPrompt([](const QString &) { return QMessageBox::Discard; });
    } // destroyed without closing: as a crash, the autosave stays
    QVERIFY(QFileInfo::exists(autosaved));

    // Declined: the session stays as it is and the autosave goes.
    {
        auto declined = makeWindow();
        int offered = 0;
        declined->project()->setRecoveryPrompt([&](const ProjectController::Recovery &r) {
            ++offered;
            [&] { QCOMPARE(r.file, autosaved); }();
            return false;
        });
        QVERIFY(QFile::copy(autosaved, autosaved + QStringLiteral(".keep")));
        QVERIFY(!declined->offerRecovery());
        QCOMPARE(offered, 1);
        QVERIFY(!QFileInfo::exists(autosaved));
        QVERIFY(declined->editor()->toPlainText().isEmpty());
        QVERIFY(QFile::rename(autosaved + QStringLiteral(".keep"), autosaved));
    }

    // Accepted: the work comes back, unsaved (closing asks), and the autosave is taken.
    auto next = makeWindow();
    next->project()->setRecoveryPrompt([](const ProjectController::Recovery &r) { return r.projectPath.isEmpty(); });
    QSignalSpy restored(next->project(), &ProjectController::restored);
    QVERIFY(next->offerRecovery());
    QVERIFY(restored.count() == 1 || restored.wait(test::CompileTimeoutMs));
    QCOMPARE(next->editor()->toPlainText(), text);
    QCOMPARE(next->architecture(), QStringLiteral("sm_86"));
    QCOMPARE(next->currentFile(), QFileInfo(test::dataPath("saxpy.cu")).absoluteFilePath());
    QVERIFY(next->editor()->document()->isModified());
    QVERIFY(!QFileInfo::exists(autosaved));
    QVERIFY(next->project()->orphans().empty());

    // A project autosaved and then saved: the older autosave is not offered.
    const QString project = path(QStringLiteral("saved.stitchproj"));
    QVERIFY(next->saveProject(project));
    next->editor()->appendPlainText(QStringLiteral("// more"));
    QVERIFY(next->project()->autosave());
    const QString second = next->project()->recoveryFile();
    QTest::qWait(20);
    QVERIFY(next->saveProject(project)); // the save drops the autosave
    QVERIFY(!QFileInfo::exists(second));
}

void TestProject::aCleanExitLeavesNothingToRecover()
{
    auto w = makeWindow();
    QVERIFY(w->openFile(test::dataPath("saxpy.cu")));
    w->editor()->appendPlainText(QStringLiteral("// unsaved"));
    QVERIFY(w->project()->autosave());
    const QString file = w->project()->recoveryFile();
    QVERIFY(QFileInfo::exists(file));
    QVERIFY(w->close()); // the prompt answers Discard: a clean exit
    QVERIFY(!QFileInfo::exists(file));
    auto next = makeWindow();
    QVERIFY(next->project()->orphans().empty());
}

void TestProject::aFailedSaveLeavesTheOldFileWhole()
{
    auto w = makeWindow();
    QVERIFY(w->openFile(test::dataPath("saxpy.cu")));
    const QString project = path(QStringLiteral("keep.stitchproj"));
    QString error;
    QVERIFY2(w->saveProject(project, &error), qPrintable(error));
    const QByteArray before = readAll(project).toUtf8();
    QVERIFY(before.size() > 100);
    // A large edit, then the disk "fills up": no write may grow a file past a few bytes now
    // (RLIMIT_FSIZE holds for root too, where a read-only folder would not).
    w->editor()->appendPlainText(QString(4096, QLatin1Char('x')));
    QTRY_VERIFY(w->isWindowModified());
    struct rlimit old {};
    QCOMPARE(getrlimit(RLIMIT_FSIZE, &old), 0);
    auto *previous = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit tiny = old;
    tiny.rlim_cur = 64;
    QCOMPARE(setrlimit(RLIMIT_FSIZE, &tiny), 0);
    const bool saved = w->saveProject(project, &error);
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
    QVERIFY(!saved);
    QVERIFY2(error.contains(QStringLiteral("keep.stitchproj")), qPrintable(error));
    QCOMPARE(readAll(project).toUtf8(), before);
    QVERIFY(w->isWindowModified());
    QCOMPARE(QDir(m_dir->path()).entryList({QStringLiteral("keep.stitchproj*")}, QDir::Files),
             QStringList{QStringLiteral("keep.stitchproj")}); // no temporary left behind
    // With room again, the same save goes through.
    QVERIFY2(w->saveProject(project, &error), qPrintable(error));
    QVERIFY(!w->isWindowModified());
}

void TestProject::liftAndOptimizeErrorsReachProblems()
{
    // A tensor-expression file with a syntax error: NVRTC has nothing to say, the lift does.
    const QString te = path(QStringLiteral("softmax.te"));
    QString source = readAll(example("softmax.te"));
    source.replace(QStringLiteral("rowSum[i] = sum(j)"), QStringLiteral("rowSum[i] = sum(j) +* "));
    QVERIFY(writeAll(te, source.toUtf8()));
    auto w = makeWindow();
    QSignalSpy graph(w.get(), &MainWindow::graphUpdated);
    QVERIFY(w->openFile(te));
    QTRY_VERIFY_WITH_TIMEOUT(rowFrom(w->diagnosticsModel(), DiagnosticsModel::Origin::Lift) >= 0,
                             test::CompileTimeoutMs);
    DiagnosticsModel *model = w->diagnosticsModel();
    const int row = rowFrom(model, DiagnosticsModel::Origin::Lift);
    const QModelIndex index = model->index(row, DiagnosticsModel::LocationColumn);
    QCOMPARE(model->index(row, DiagnosticsModel::SeverityColumn).data().toString(), QStringLiteral("Error"));
    QCOMPARE(model->index(row, DiagnosticsModel::OriginColumn).data().toString(), QStringLiteral("Lift"));
    const int line = index.data(DiagnosticsModel::LineRole).toInt();
    QCOMPARE(line, source.left(source.indexOf(QStringLiteral("+*"))).count(QLatin1Char('\n')) + 1);
    QVERIFY(index.data().toString().startsWith(QStringLiteral("softmax.te:%1:").arg(line)));
    w->editor()->goToLocation(1, 1);
    QTreeView *problems = w->problemsView();
    problems->scrollTo(index);
    QTest::mouseClick(problems->viewport(), Qt::LeftButton, {}, problems->visualRect(index).center());
    QCOMPARE(w->editor()->currentLine(), line);
    QCOMPARE(w->editor()->currentColumn(), index.data(DiagnosticsModel::ColumnRole).toInt());

    // Optimize's own failure is located the same way.
    QSignalSpy settled(w.get(), &MainWindow::optimizeSettled);
    QVERIFY(w->optimize());
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    QTRY_VERIFY(rowFrom(model, DiagnosticsModel::Origin::Optimize) >= 0);
    const int optimizeRow = rowFrom(model, DiagnosticsModel::Origin::Optimize);
    QCOMPARE(model->index(optimizeRow, 0).data(DiagnosticsModel::LineRole).toInt(), line);

    // Fixed: both go.
    source.replace(QStringLiteral(" +* "), QStringLiteral(" "));
    w->editor()->setPlainText(source);
    QTRY_VERIFY_WITH_TIMEOUT(rowFrom(model, DiagnosticsModel::Origin::Lift) < 0, test::CompileTimeoutMs);
    QVERIFY(w->optimize());
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    QCOMPARE(rowFrom(model, DiagnosticsModel::Origin::Optimize), -1);
}

QTEST_MAIN(TestProject)
#include "tst_project.moc"
