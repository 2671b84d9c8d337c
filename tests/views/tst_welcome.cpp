// The welcome page: every bundled example listed with its kind and description, opened by Enter or
// a click (the editor shows its text, the title its name), the recent files as the settings hold
// them, and the Open / Open Project actions. The models run under QAbstractItemModelTester.
#include "TestUtil.h"
#include "TestWindows.h"

#include "core/arch/ArchDatabase.h"
#include "views/CodeEditor.h"
#include "views/DevicePanel.h"
#include "views/MainWindow.h"
#include "views/RecentFiles.h"
#include "views/SyntaxRepository.h"
#include "views/WelcomeModels.h"
#include "views/WelcomePage.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QTemporaryDir>
#include <QToolButton>
#include <QAbstractItemView>
#include <QtTest>

#include <memory>

using namespace stitch;
using namespace stitch::views;

namespace {

const QString ExamplesDir = QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples");

QString readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

int rowOf(const QAbstractItemModel *model, const QString &name)
{
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->index(r, 0).data().toString() == name)
            return r;
    return -1;
}

} // namespace

class TestWelcome final : public QObject {
    Q_OBJECT
private slots:
    void descriptionIsTheFirstCommentLine_data();
    void descriptionIsTheFirstCommentLine();
    void everyBundledExampleIsListed_data();
    void everyBundledExampleIsListed();
    void theExamplesAreTheSourceTreesInABuildTree();
    void startsOnTheWelcomePageAndOpensAnExampleWithTheKeyboard();
    void aClickOpensAnExampleAndWelcomeComesBack();
    void recentFilesFollowTheSettings();
    void openAndOpenProjectAreOffered();

private:
    std::unique_ptr<MainWindow> makeWindow(RecentFiles &recent);
    SyntaxRepository m_syntax;
};

std::unique_ptr<MainWindow> TestWelcome::makeWindow(RecentFiles &recent)
{
    auto window = std::make_unique<MainWindow>(m_syntax, ArchDatabase::builtin(), recent);
    test::answerNoDriver(*window);
    window->setUnsavedChangesPrompt([](const QString &) { return QMessageBox::Discard; });
    window->welcomePage()->setExamplesDirectory(ExamplesDir);
    window->resize(1280, 800);
    return window;
}

void TestWelcome::descriptionIsTheFirstCommentLine_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("description");
    QTest::newRow("line comment, two sentences") << "// One thing. And another\n// more\n" << "One thing.";
    QTest::newRow("te comment ending in a colon") << "# Softmax of every row, as three ops:\n# max\n"
                                                  << "Softmax of every row, as three ops";
    QTest::newRow("blank lines first") << "\n\n   // After blanks\nint x;\n" << "After blanks";
    QTest::newRow("doc comment") << "/// Doc comment. Next\n" << "Doc comment.";
    QTest::newRow("block comment") << "/* A block comment. */\n" << "A block comment.";
    QTest::newRow("bare comment line first") << "//\n// The text\n" << "The text";
    QTest::newRow("code first") << "__global__ void k() {}\n// late comment\n" << "";
    QTest::newRow("a directive is no comment") << "#include <cstdio>\n// late\n" << "";
    QTest::newRow("empty") << "" << "";
}

void TestWelcome::descriptionIsTheFirstCommentLine()
{
    QFETCH(QString, text);
    QFETCH(QString, description);
    QCOMPARE(exampleDescription(text), description);
}

void TestWelcome::everyBundledExampleIsListed_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("description");
    // The first comment line of each file in examples/, its first sentence.
    QTest::newRow("matmul_naive.cu") << "matmul_naive.cu" << "CUDA program"
                                     << "Naive single-precision matrix multiply: one thread per element of C = A * B.";
    QTest::newRow("matmul_kernel_only.cu")
        << "matmul_kernel_only.cu" << "CUDA program"
        << "A naive matrix multiply as it is often pasted: the kernel alone, no host code.";
    QTest::newRow("avgpool.te") << "avgpool.te" << "tensor expressions" << "2x2 average pooling with stride 2 (NCHW).";
    QTest::newRow("conv2d.te") << "conv2d.te" << "tensor expressions"
                               << "2-D convolution (NCHW, stride 1) with zero padding and a bias, as one reduction.";
    QTest::newRow("elementwise_chain.te")
        << "elementwise_chain.te" << "tensor expressions"
        << "Five element-wise ops in a row: the classic fusion target (one kernel instead of five).";
    QTest::newRow("gemm_bias_gelu.te") << "gemm_bias_gelu.te" << "tensor expressions"
                                       << "A linear layer with exact (erf) GELU: Y = GELU(A W + bias).";
    QTest::newRow("layernorm.te") << "layernorm.te" << "tensor expressions"
                                  << "Layer normalisation over the last dimension, with a learned scale and shift";
    QTest::newRow("matmul.te") << "matmul.te" << "tensor expressions"
                               << "Matrix multiplication C = A B, the hello world of tensor expressions.";
    QTest::newRow("softmax.te") << "softmax.te" << "tensor expressions"
                                << "Numerically stable softmax of every row of X, as three ops";
}

void TestWelcome::everyBundledExampleIsListed()
{
    QFETCH(QString, name);
    QFETCH(QString, kind);
    QFETCH(QString, description);
    RecentFiles recent;
    auto window = makeWindow(recent);
    ExamplesModel *model = window->welcomePage()->examples();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);

    // Every *.cu and *.te of examples/, nothing else (the .plan.json beside them is not a program).
    const QStringList files = QDir(ExamplesDir).entryList({QStringLiteral("*.cu"), QStringLiteral("*.te")}, QDir::Files);
    QCOMPARE(model->rowCount(), files.size());
    QCOMPARE(files.size(), 9); // a new example needs its row in the table above
    for (int r = 0; r < model->rowCount(); ++r)
        QVERIFY2(!model->index(r, ExamplesModel::DescriptionColumn).data().toString().isEmpty(),
                 qPrintable(model->index(r, 0).data().toString() + QStringLiteral(" has no description")));

    const int row = rowOf(model, name);
    QVERIFY2(row >= 0, qPrintable(name));
    QCOMPARE(model->index(row, ExamplesModel::KindColumn).data().toString(), kind);
    QCOMPARE(model->index(row, ExamplesModel::DescriptionColumn).data().toString(), description);
    QCOMPARE(model->path(model->index(row, 0)), QDir(ExamplesDir).absoluteFilePath(name));
    // CUDA programs come first.
    QCOMPARE(model->index(0, ExamplesModel::KindColumn).data().toString(), QStringLiteral("CUDA program"));
}

void TestWelcome::theExamplesAreTheSourceTreesInABuildTree()
{
    // No share/stitchcuda/examples beside a build tree's binary: the source tree's folder.
    QCOMPARE(bundledExamplesDirectory(), QDir(ExamplesDir).canonicalPath());
}

void TestWelcome::startsOnTheWelcomePageAndOpensAnExampleWithTheKeyboard()
{
    RecentFiles recent;
    auto window = makeWindow(recent);
    window->showWelcome();
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    QVERIFY(window->isWelcomeShown());
    QVERIFY(window->welcomePage()->isVisible());
    QVERIFY(!window->editor()->isVisible());

    // The examples list has the focus on its first row; Down moves to matmul_naive.cu, Enter opens it.
    QAbstractItemView *list = window->welcomePage()->examplesView();
    QTRY_VERIFY(list->hasFocus());
    QCOMPARE(list->currentIndex().row(), 0);
    const int target = rowOf(list->model(), QStringLiteral("matmul_naive.cu"));
    QVERIFY(target >= 0);
    for (int r = 0; r < target; ++r)
        QTest::keyClick(list, Qt::Key_Down);
    QCOMPARE(list->currentIndex().row(), target);
    QTest::keyClick(list, Qt::Key_Up);
    QTest::keyClick(list, Qt::Key_Down);
    QCOMPARE(list->currentIndex().row(), target);
    QTest::keyClick(list, Qt::Key_Return);

    QVERIFY(!window->isWelcomeShown());
    QVERIFY(window->editor()->isVisible());
    const QString path = QDir(ExamplesDir).absoluteFilePath(QStringLiteral("matmul_naive.cu"));
    QCOMPARE(window->currentFile(), path);
    QCOMPARE(window->editor()->toPlainText(), readFile(path));
    QVERIFY2(window->windowTitle().startsWith(QStringLiteral("matmul_naive.cu")), qPrintable(window->windowTitle()));
    QCOMPARE(recent.files().value(0), path);
    QTRY_VERIFY_WITH_TIMEOUT(window->isCompileSettled(), test::CompileTimeoutMs);
}

void TestWelcome::aClickOpensAnExampleAndWelcomeComesBack()
{
    RecentFiles recent;
    auto window = makeWindow(recent);
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    QVERIFY(!window->isWelcomeShown()); // a window opened on a file never shows it by itself
    const QString before = window->windowTitle();

    // File > Welcome.
    window->welcomeAction()->trigger();
    QVERIFY(window->isWelcomeShown());
    QAbstractItemView *list = window->welcomePage()->examplesView();
    const int row = rowOf(list->model(), QStringLiteral("softmax.te"));
    QVERIFY(row >= 0);
    const QModelIndex index = list->model()->index(row, ExamplesModel::NameColumn);
    list->scrollTo(index);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(index).center());

    const QString path = QDir(ExamplesDir).absoluteFilePath(QStringLiteral("softmax.te"));
    QCOMPARE(window->currentFile(), path);
    QCOMPARE(window->editor()->toPlainText(), readFile(path));
    QVERIFY(window->windowTitle() != before);
    QVERIFY(window->windowTitle().startsWith(QStringLiteral("softmax.te")));
    QVERIFY(!window->isWelcomeShown());

    // Back to the welcome page and to the document again: the Source / Code toggle shows it.
    window->welcomeAction()->trigger();
    QVERIFY(window->isWelcomeShown());
    window->showCodeTab(false);
    QVERIFY(!window->isWelcomeShown());
    QCOMPARE(window->editor()->toPlainText(), readFile(path));
    QTRY_VERIFY_WITH_TIMEOUT(window->isCompileSettled(), test::CompileTimeoutMs);
}

void TestWelcome::recentFilesFollowTheSettings()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString a = dir.filePath(QStringLiteral("a.cu")), b = dir.filePath(QStringLiteral("b.te")),
                  c = dir.filePath(QStringLiteral("c.cu")), gone = dir.filePath(QStringLiteral("gone.cu"));
    QVERIFY(writeFile(a, "// a\n__global__ void a(float *x) { x[0] = 1.0f; }\n"));
    QVERIFY(writeFile(b, "# b\ngraph b\n"));
    QVERIFY(writeFile(c, "// c\n__global__ void c(float *x) { x[0] = 2.0f; }\n"));
    QSettings settings(dir.filePath(QStringLiteral("studio.ini")), QSettings::IniFormat);
    settings.setValue(QStringLiteral("recentFiles"), QStringList{a, gone, b});

    RecentFiles recent(&settings);
    auto window = makeWindow(recent);
    window->showWelcome();
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    RecentFilesModel *model = window->welcomePage()->recent();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemView *list = window->welcomePage()->recentView();
    QVERIFY(list->isVisible());

    // What the settings hold, in their order; the missing file says so and cannot be chosen.
    QCOMPARE(model->rowCount(), 3);
    QCOMPARE(model->path(model->index(0, 0)), a);
    QCOMPARE(model->index(0, RecentFilesModel::NameColumn).data().toString(), QStringLiteral("a.cu"));
    QCOMPARE(model->index(0, RecentFilesModel::KindColumn).data().toString(), QStringLiteral("CUDA program"));
    QCOMPARE(model->index(0, RecentFilesModel::FolderColumn).data().toString(),
             QDir::toNativeSeparators(QFileInfo(a).absolutePath()));
    QCOMPARE(model->index(1, RecentFilesModel::KindColumn).data().toString(), QStringLiteral("missing"));
    QVERIFY(!(model->flags(model->index(1, 0)) & Qt::ItemIsEnabled));
    QCOMPARE(model->index(2, RecentFilesModel::KindColumn).data().toString(), QStringLiteral("tensor expressions"));

    // Opening another file puts it first, in the list and in the settings.
    QString error;
    QVERIFY2(window->openFile(c, &error), qPrintable(error));
    QCOMPARE(model->rowCount(), 4);
    QCOMPARE(model->path(model->index(0, 0)), c);
    QCOMPARE(settings.value(QStringLiteral("recentFiles")).toStringList().value(0), c);

    // A click on a recent file opens it, and it moves to the front.
    window->showWelcome();
    const int row = 3;
    QCOMPARE(model->path(model->index(row, 0)), b);
    const QModelIndex index = model->index(row, RecentFilesModel::NameColumn);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(index).center());
    QCOMPARE(window->currentFile(), b);
    QCOMPARE(window->editor()->toPlainText(), readFile(b));
    QVERIFY(!window->isWelcomeShown());
    QCOMPARE(settings.value(QStringLiteral("recentFiles")).toStringList().value(0), b);
    QCOMPARE(model->path(model->index(0, 0)), b);

    // A click on the missing one does nothing.
    window->showWelcome();
    const int missing = 3; // b, c, a, gone
    QCOMPARE(model->path(model->index(missing, 0)), gone);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(model->index(missing, 0)).center());
    QVERIFY(window->isWelcomeShown());
    QCOMPARE(window->currentFile(), b);

    // The settings changed by another list (the File menu's Clear Menu): the page follows.
    recent.clear();
    QCOMPARE(model->rowCount(), 0);
    QVERIFY(settings.value(QStringLiteral("recentFiles")).toStringList().isEmpty());
    QVERIFY(!list->isVisible()); // no empty section
    QTRY_VERIFY_WITH_TIMEOUT(window->isCompileSettled(), test::CompileTimeoutMs);
}

void TestWelcome::openAndOpenProjectAreOffered()
{
    RecentFiles recent;
    auto window = makeWindow(recent);
    window->showWelcome();
    QStringList actions;
    for (const QToolButton *button : window->welcomePage()->findChildren<QToolButton *>())
        if (button->defaultAction())
            actions << button->defaultAction()->text();
    QCOMPARE(actions, (QStringList{QStringLiteral("&Open…"), QStringLiteral("Open &Project…")}));
}

QTEST_MAIN(TestWelcome)
#include "tst_welcome.moc"
