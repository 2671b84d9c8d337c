// The Code view (views/CodeDiffView, CodeDiffController, CodeDiffSources, MainWindowDiff.cpp): rows
// aligned with hatched unnumbered fillers, changed lines and characters marked, the panes scrolling
// together, next / previous change, the palette's light or dark theme; and, from real Optimize
// results of the bundled examples, the program as written beside the optimized one, a step beside
// the step before (CUDA and PTX), the jump from a decision in the Agents dock to what it changed.
#include "TestUtil.h"
#include "TestWindows.h"

#include "core/arch/ArchDatabase.h"
#include "views/AgentsPanel.h"
#include "views/CodeDiffController.h"
#include "views/CodeDiffSources.h"
#include "views/CodeDiffView.h"
#include "views/CodeEditor.h"
#include "views/DevicePanel.h"
#include "views/MainWindow.h"
#include "views/RecentFiles.h"
#include "views/SyntaxRepository.h"

#include <QAction>
#include <QFile>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTextBlock>
#include <QToolButton>
#include <QtTest>

#include <KSyntaxHighlighting/Theme>

#include <map>

using namespace stitch;
using namespace stitch::views;

namespace {

QString example(const char *name) { return QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/") + QLatin1String(name); }

/// The agents' result on a bundled example, once per test run (each run takes seconds).
std::shared_ptr<const agents::SourceResult> optimized(const char *name)
{
    static std::map<std::string, std::shared_ptr<const agents::SourceResult>> done;
    if (auto it = done.find(name); it != done.end())
        return it->second;
    QFile f(example(name));
    if (!f.open(QIODevice::ReadOnly))
        return nullptr;
    agents::SourceRequest r;
    r.text = f.readAll().toStdString();
    r.fileName = example(name).toStdString();
    agents::SourceOptimizer optimizer;
    auto result = optimizer.run(r);
    if (!result)
        qWarning("%s", result.error().message.c_str());
    auto shared = result ? std::make_shared<const agents::SourceResult>(std::move(*result)) : nullptr;
    done[name] = shared;
    return shared;
}

/// The first timeline row after Parse whose program differs from the row before it.
int firstChangingStep(const agents::SourceResult &result, int from = 2)
{
    for (int row = from; row < timelineRows(result); ++row) {
        auto before = programAt(result, row - 1), after = programAt(result, row);
        if (before && after && before->source != after->source)
            return row;
    }
    return -1;
}

QStringList lines(const std::string &text)
{
    QStringList out;
    for (const std::string &l : splitLines(text))
        out << QString::fromStdString(l);
    return out;
}

/// What a pane shows on its non-filler rows, in order.
QStringList shownLines(const CodeEditor *pane)
{
    QStringList out;
    for (QTextBlock b = pane->document()->begin(); b.isValid(); b = b.next())
        if (pane->lineNumberShown(b.blockNumber() + 1) > 0)
            out << b.text();
    return out;
}

const char *kLeft = "__global__ void k(float *c)\n{\n    constexpr int BK = 8;\n    loop();\n    old();\n}\n";
const char *kRight = "__global__ void k(float *c)\n{\n    constexpr int BK = 16;\n    prefetch();\n    wait();\n    loop();\n}\n";

} // namespace

class TestCodeDiff final : public QObject {
    Q_OBJECT
private slots:
    void rowsAlignWithFillersAndMarks();
    void thePanesScrollTogether();
    void nextAndPreviousChangeWithTheKeyboard();
    void theThemeFollowsThePalette();
    void sassListingsLoseAddressesAndEncodings();
    void theTimelineProgramsOfAnExample();
    void asWrittenBesideOptimized();
    void aStepBesideTheStepBeforeInCudaAndPtx();
    void aTraceWithoutStepsSaysSo();
    void aDecisionInTheAgentsDockJumpsToItsChanges();
};

void TestCodeDiff::rowsAlignWithFillersAndMarks()
{
    SyntaxRepository syntax;
    CodeDiffView view(syntax);
    view.setTexts(QStringLiteral("before"), QString::fromLatin1(kLeft), QStringLiteral("after"),
                  QString::fromLatin1(kRight), CodeDiffView::Language::Cuda);
    CodeEditor *left = view.leftPane(), *right = view.rightPane();
    // 8 rows: 2 same, BK changed, prefetch and wait added (fillers left), loop same, old removed
    // (filler right), brace same.
    QCOMPARE(left->blockCount(), 8);
    QCOMPARE(right->blockCount(), 8);
    QCOMPARE(shownLines(left), lines(kLeft));
    QCOMPARE(shownLines(right), lines(kRight));
    QCOMPARE(left->lineNumberShown(4), 0); // filler beside prefetch
    QCOMPARE(left->lineNumberShown(6), 4); // loop is the left's line 4, row 6
    QCOMPARE(right->lineNumberShown(6), 6);
    QCOMPARE(right->lineNumberShown(7), 0); // filler beside old
    QCOMPARE(left->lineHighlightCount(), 2);  // BK, old
    QCOMPARE(right->lineHighlightCount(), 3); // BK, prefetch, wait
    // The changed characters: 8 and 16, nothing else of the line.
    const auto lt = left->textHighlights(), rt = right->textHighlights();
    QCOMPARE(lt.size(), 1);
    QCOMPARE(rt.size(), 1);
    QCOMPARE(lt[0].line, 3);
    QCOMPARE(left->document()->findBlockByNumber(2).text().mid(lt[0].start, lt[0].length), QStringLiteral("8"));
    QCOMPARE(right->document()->findBlockByNumber(2).text().mid(rt[0].start, rt[0].length), QStringLiteral("16"));
    QCOMPARE(view.diff().hunks.size(), std::size_t(2));
    QVERIFY2(view.summary().contains(QStringLiteral("2 change(s)")), qPrintable(view.summary()));
    QCOMPARE(view.currentRow(), 2); // at the first change
    QCOMPARE(view.leftTitle(), QStringLiteral("before"));

    // Identical texts, empty texts, a message: no marks, nothing to step to, no crash.
    view.setTexts({}, QStringLiteral("a\n"), {}, QStringLiteral("a\n"), CodeDiffView::Language::Cuda);
    QVERIFY(view.summary().contains(QStringLiteral("same")));
    QVERIFY(!view.nextChange());
    view.setTexts({}, {}, {}, {}, CodeDiffView::Language::Ptx);
    QCOMPARE(view.leftPane()->lineHighlightCount(), 0);
    view.setMessage(QStringLiteral("nothing"));
    QVERIFY(!view.nextChange() && !view.previousChange());
    QCOMPARE(view.currentChange(), -1);
}

void TestCodeDiff::thePanesScrollTogether()
{
    SyntaxRepository syntax;
    CodeDiffView view(syntax);
    view.resize(900, 300);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto result = optimized("matmul_naive.cu");
    QVERIFY(result);
    auto asWritten = programAt(*result, 0);
    QVERIFY(asWritten);
    view.setTexts({}, QString::fromStdString(asWritten->source), {}, QString::fromStdString(result->program.source),
                  CodeDiffView::Language::Cuda);
    QScrollBar *l = view.leftPane()->verticalScrollBar(), *r = view.rightPane()->verticalScrollBar();
    QVERIFY(l->maximum() > 20);
    QCOMPARE(l->maximum(), r->maximum()); // the same rows on both sides
    l->setValue(17);
    QCOMPARE(r->value(), 17);
    r->setValue(5);
    QCOMPARE(l->value(), 5);
    // A click on a row puts both cursors on it.
    QTextCursor c(view.rightPane()->document()->findBlockByNumber(9));
    view.rightPane()->setTextCursor(c);
    QCOMPARE(view.leftPane()->textCursor().blockNumber(), 9);
}

void TestCodeDiff::nextAndPreviousChangeWithTheKeyboard()
{
    SyntaxRepository syntax;
    CodeDiffView view(syntax);
    view.resize(800, 200);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QString left, right;
    for (int i = 0; i < 200; ++i) { // three changes far apart
        left += QStringLiteral("line %1\n").arg(i);
        right += (i == 20 || i == 100 || i == 180) ? QStringLiteral("LINE %1\n").arg(i) : QStringLiteral("line %1\n").arg(i);
    }
    view.setTexts({}, left, {}, right, CodeDiffView::Language::Cuda);
    QCOMPARE(view.currentChange(), 0);
    QCOMPARE(view.currentRow(), 20);
    view.leftPane()->setFocus();
    QCOMPARE(view.nextChangeAction()->shortcut(), QKeySequence(Qt::ALT | Qt::Key_Down));
    view.nextChangeAction()->trigger();
    QCOMPARE(view.currentRow(), 100);
    QVERIFY(view.nextChange());
    QCOMPARE(view.currentChange(), 2);
    QVERIFY(!view.nextChange()); // the last one
    QVERIFY(!view.nextChangeAction()->isEnabled());
    QVERIFY(view.previousChange());
    QCOMPARE(view.currentRow(), 100);
    // The row is in view on both sides.
    const int top = view.rightPane()->verticalScrollBar()->value();
    QVERIFY2(top <= 100 && top + 5 > 80, qPrintable(QStringLiteral("%1 %2 max %3").arg(top).arg(view.leftPane()->verticalScrollBar()->value()).arg(view.leftPane()->verticalScrollBar()->maximum())));
    QVERIFY(!view.goToChange(3));
}

void TestCodeDiff::theThemeFollowsThePalette()
{
    SyntaxRepository syntax;
    CodeDiffView view(syntax);
    view.setTexts({}, QString::fromLatin1(kLeft), {}, QString::fromLatin1(kRight), CodeDiffView::Language::Cuda);
    QPalette dark = view.palette();
    dark.setColor(QPalette::Base, QColor(30, 30, 30));
    dark.setColor(QPalette::Window, QColor(40, 40, 40));
    view.setPalette(dark);
    QVERIFY2(view.leftPane()->theme().name().contains(QStringLiteral("Dark")), qPrintable(view.leftPane()->theme().name()));
    QCOMPARE(view.rightPane()->theme().name(), view.leftPane()->theme().name());
    QVERIFY(view.rightPane()->textHighlights().front().color.lightness() < 128); // dark tints too
    QPalette light = view.palette();
    light.setColor(QPalette::Base, Qt::white);
    view.setPalette(light);
    QVERIFY(!view.leftPane()->theme().name().contains(QStringLiteral("Dark")));
    QVERIFY(view.rightPane()->textHighlights().front().color.lightness() > 128);
}

void TestCodeDiff::sassListingsLoseAddressesAndEncodings()
{
    const std::string listing = "\n\tcode for sm_90\n\t\tFunction : G_Y\n"
                                "        /*0000*/                   LDC R1, c[0x0][0x28] ;          /* 0x00000a00ff017b82 */\n"
                                "                                                                   /* 0x000ff00000000800 */\n"
                                "        /*0010*/                   S2R R7, SR_CTAID.X ;            /* 0x0000000000077919 */\n"
                                "        /*0020*/              @P0  BRA `(.L_x_1) ;  /* keep me */\n";
    QCOMPARE(QString::fromStdString(normalizeSassListing(listing)),
             QStringLiteral("\ncode for sm_90\nFunction : G_Y\n    LDC R1, c[0x0][0x28] ;\n    S2R R7, SR_CTAID.X ;\n"
                            "    @P0 BRA `(.L_x_1) ; /* keep me */\n"));
    QVERIFY(normalizeSassListing("").empty());
}

void TestCodeDiff::theTimelineProgramsOfAnExample()
{
    auto result = optimized("layernorm.te");
    QVERIFY(result);
    const int rows = timelineRows(*result);
    QCOMPARE(rows, static_cast<int>(result->trace.decisions.size()) + 2);
    auto input = programAt(*result, 0);
    QVERIFY2(input, input ? "" : input.error().message.c_str());
    QVERIFY(!input->asWritten); // a .te has no CUDA: the generic schedule's program stands for it
    QVERIFY(input->title.contains(QStringLiteral("generic schedule")));
    auto last = programAt(*result, rows - 1);
    QVERIFY(last);
    QCOMPARE(last->source, result->program.source);
    for (int row = 1; row < rows - 1; ++row) {
        auto step = programAt(*result, row);
        QVERIFY2(step, step ? "" : step.error().message.c_str());
        QVERIFY(step->source.find("__global__") != std::string::npos);
        QVERIFY(stepName(*result, row).startsWith(QStringLiteral("Step %1: ").arg(row)));
    }
    QVERIFY(!programAt(*result, rows));
    QVERIFY(!programAt(*result, -1));
}

void TestCodeDiff::asWrittenBesideOptimized()
{
    auto result = optimized("matmul_naive.cu");
    QVERIFY(result);
    SyntaxRepository syntax;
    CodeDiffView view(syntax);
    CodeDiffController controller(&view);
    QSignalSpy updated(&controller, &CodeDiffController::updated);
    controller.setResult(result, example("matmul_naive.cu"), -1);
    QVERIFY(updated.wait(test::CompileTimeoutMs));
    QVERIFY(controller.isSettled());
    QCOMPARE(view.leftTitle(), QStringLiteral("As written: matmul_naive.cu"));
    QVERIFY(view.rightTitle().startsWith(QStringLiteral("Optimized")));
    QCOMPARE(shownLines(view.leftPane()), lines(result->trace.sourceText));
    QCOMPARE(shownLines(view.rightPane()), lines(result->program.source));
    QVERIFY(!view.diff().identical());
    QCOMPARE(view.currentChange(), 0);
}

void TestCodeDiff::aStepBesideTheStepBeforeInCudaAndPtx()
{
    auto result = optimized("gemm_bias_gelu.te");
    QVERIFY(result);
    const int row = firstChangingStep(*result);
    if (row < 0)
        QSKIP("no step of this trace changed the program");
    SyntaxRepository syntax;
    CodeDiffView view(syntax);
    CodeDiffController controller(&view);
    QSignalSpy updated(&controller, &CodeDiffController::updated);
    controller.setResult(result, example("gemm_bias_gelu.te"), -1);
    controller.showStepChanges(row);
    QTRY_VERIFY_WITH_TIMEOUT(controller.isSettled(), test::CompileTimeoutMs);
    QCOMPARE(controller.comparison(), CodeDiffController::StepAndPrevious);
    auto before = programAt(*result, row - 1), after = programAt(*result, row);
    QCOMPARE(shownLines(view.leftPane()), lines(before->source));
    QCOMPARE(shownLines(view.rightPane()), lines(after->source));
    QCOMPARE(view.leftTitle(), before->title);
    QVERIFY(!view.diff().identical());
    QCOMPARE(view.currentRow(), view.diff().hunks.front().firstRow); // at the first change it made

    // The same pair's PTX (NVRTC, on the worker): PTX on both sides, still aligned.
    updated.clear();
    controller.setRepresentation(CodeDiffView::PtxCode);
    QTRY_VERIFY_WITH_TIMEOUT(controller.isSettled() && !updated.isEmpty(), test::CompileTimeoutMs);
    QVERIFY2(view.leftPane()->toPlainText().contains(QStringLiteral(".entry")), qPrintable(view.summary()));
    QCOMPARE(view.leftPane()->blockCount(), view.rightPane()->blockCount());
    QCOMPARE(view.leftPane()->definition().name(), QStringLiteral("PTX"));

    // Stepping back to CUDA reuses nothing stale; SASS is offered only where a tool is.
    controller.setRepresentation(CodeDiffView::CudaSource);
    QTRY_VERIFY_WITH_TIMEOUT(controller.isSettled(), test::CompileTimeoutMs);
    QCOMPARE(shownLines(view.rightPane()), lines(after->source));
    if (sassTool().isEmpty()) {
        controller.setRepresentation(CodeDiffView::SassCode); // chosen anyway (a stale setting): a message, no crash
        QTRY_VERIFY_WITH_TIMEOUT(controller.isSettled(), test::CompileTimeoutMs);
        QVERIFY2(view.summary().contains(QStringLiteral("cuobjdump")), qPrintable(view.summary()));
    }
}

void TestCodeDiff::aTraceWithoutStepsSaysSo()
{
    auto result = optimized("softmax.te");
    QVERIFY(result);
    auto old = std::make_shared<agents::SourceResult>(*result);
    for (auto &d : old->trace.decisions) // as a trace written before steps were recorded
        d.schedule = {};
    SyntaxRepository syntax;
    CodeDiffView view(syntax);
    CodeDiffController controller(&view);
    controller.setResult(old, example("softmax.te"), 1);
    controller.showStepChanges(1);
    QTRY_VERIFY_WITH_TIMEOUT(controller.isSettled(), test::CompileTimeoutMs);
    QVERIFY2(view.summary().contains(QStringLiteral("no schedule")), qPrintable(view.summary()));
    controller.showStepChanges(1000); // out of range: ignored
    controller.clear(QStringLiteral("gone"));
    QCOMPARE(view.summary(), QStringLiteral("gone"));
}

void TestCodeDiff::aDecisionInTheAgentsDockJumpsToItsChanges()
{
    SyntaxRepository syntax;
    RecentFiles recent;
    MainWindow window(syntax, ArchDatabase::builtin(), recent);
    test::answerNoDriver(window);
    QString error;
    QVERIFY2(window.openFile(example("layernorm.te"), &error), qPrintable(error));
    QVERIFY(!window.isCodeTabShown());
    QSignalSpy settled(&window, &MainWindow::optimizeSettled);
    QSignalSpy updated(window.codeDiff(), &CodeDiffController::updated);
    QVERIFY(window.optimize());
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    QTRY_VERIFY_WITH_TIMEOUT(!updated.isEmpty() && window.codeDiff()->isSettled(), test::CompileTimeoutMs);
    const agents::SourceResult *result = window.agentsPanel()->result();
    QVERIFY(result);
    QVERIFY(window.codeDiffView()->rightTitle().startsWith(QStringLiteral("Optimized")));

    const int row = firstChangingStep(*result, 1);
    QVERIFY(row >= 1);
    QVERIFY(window.agentsPanel()->selectStep(row));
    QToolButton *button = window.agentsPanel()->codeChangesButton();
    QVERIFY(button->isEnabled());
    button->click();
    QVERIFY(window.isCodeTabShown());
    QTRY_VERIFY_WITH_TIMEOUT(window.codeDiff()->isSettled(), test::CompileTimeoutMs);
    QCOMPARE(window.codeDiff()->step(), row);
    CodeDiffView *view = window.codeDiffView();
    auto after = programAt(*result, row);
    QCOMPARE(shownLines(view->rightPane()), lines(after->source));
    QCOMPARE(view->currentRow(), view->diff().hunks.front().firstRow);

    // In step mode the view follows the dock's selection.
    const int next = firstChangingStep(*result, row + 1);
    if (next > 0) {
        QVERIFY(window.agentsPanel()->selectStep(next));
        QTRY_VERIFY_WITH_TIMEOUT(window.codeDiff()->isSettled() && window.codeDiff()->step() == next,
                                 test::CompileTimeoutMs);
        QCOMPARE(shownLines(view->rightPane()), lines(programAt(*result, next)->source));
    }
    // A jump in the source (a diagnostic, the outline) brings the editor back.
    window.editor()->goToLocation(3);
    QVERIFY(!window.isCodeTabShown());
}

QTEST_MAIN(TestCodeDiff)
#include "tst_codediff.moc"
