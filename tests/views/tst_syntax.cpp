// The studio's CUDA and PTX syntax definitions load from the embedded resource and highlight.
#include "views/CodeEditor.h"
#include "views/SyntaxRepository.h"

#include <KSyntaxHighlighting/SyntaxHighlighter>

#include <QScrollBar>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>
#include <QtTest>

using namespace stitch::views;

class TestSyntax final : public QObject {
    Q_OBJECT
private slots:
    void definitionsLoad();
    void cudaHighlighting();
    void ptxHighlighting();
    void editorUsesCudaDefinition();
    void replacedTextIsColouredOnALaterTurnOneEditorAtATime();
    void marksAreSelectionsOnlyAroundTheVisibleLines();

private:
    SyntaxRepository m_syntax;
};

namespace {

/// The character format the highlighter gave the character at 0-based (line, column).
QTextCharFormat formatAt(const QTextDocument &document, int line, int column)
{
    const QTextBlock block = document.findBlockByNumber(line);
    for (const auto &range : block.layout()->formats()) {
        if (column >= range.start && column < range.start + range.length)
            return range.format;
    }
    return {};
}

int columnOf(const QTextDocument &document, int line, const QString &needle)
{
    return static_cast<int>(document.findBlockByNumber(line).text().indexOf(needle));
}

bool sameLook(const QTextCharFormat &a, const QTextCharFormat &b)
{
    return a.foreground() == b.foreground() && a.fontWeight() == b.fontWeight() && a.fontItalic() == b.fontItalic();
}

} // namespace

void TestSyntax::definitionsLoad()
{
    const auto cuda = m_syntax.cudaDefinition();
    QVERIFY2(cuda.isValid(), "CUDA definition not found under the custom search path");
    QCOMPARE(cuda.name(), QStringLiteral("CUDA"));
    QVERIFY(cuda.filePath().startsWith(SyntaxRepository::searchPath()));
    QVERIFY(cuda.includedDefinitions().contains(m_syntax.repository().definitionForName(QStringLiteral("ISO C++"))));
    QVERIFY(cuda.keywordLists().contains(QStringLiteral("CudaQualifiers")));

    const auto ptx = m_syntax.ptxDefinition();
    QVERIFY(ptx.isValid());
    QCOMPARE(ptx.name(), QStringLiteral("PTX"));

    QCOMPARE(m_syntax.definitionForFile(QStringLiteral("kernel.cu")).name(), QStringLiteral("CUDA"));
    QCOMPARE(m_syntax.definitionForFile(QStringLiteral("helpers.cuh")).name(), QStringLiteral("CUDA"));
    QCOMPARE(m_syntax.definitionForFile(QStringLiteral("out.ptx")).name(), QStringLiteral("PTX"));
    QVERIFY(m_syntax.themeFor(QPalette()).isValid());
}

void TestSyntax::cudaHighlighting()
{
    QTextDocument document;
    document.setPlainText(QStringLiteral("__global__ void k(float4 *out, int n)\n"
                                         "{\n"
                                         "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                         "    __syncthreads();\n"
                                         "}\n"
                                         "void host(float4 *d) { k<<<1, 32>>>(d, 1); int plain = 0; }\n"));
    KSyntaxHighlighting::SyntaxHighlighter highlighter(&document);
    highlighter.setTheme(m_syntax.themeFor(QPalette()));
    highlighter.setDefinition(m_syntax.cudaDefinition());
    highlighter.rehighlight();

    const auto plain = formatAt(document, 5, columnOf(document, 5, QStringLiteral("plain")));
    const auto global = formatAt(document, 0, 0);
    QVERIFY2(!sameLook(global, plain), "__global__ looks like plain text");
    QVERIFY(global.foreground().style() != Qt::NoBrush);

    const auto builtin = formatAt(document, 2, columnOf(document, 2, QStringLiteral("threadIdx")));
    QVERIFY(!sameLook(builtin, plain));
    const auto intrinsic = formatAt(document, 3, columnOf(document, 3, QStringLiteral("__syncthreads")));
    QVERIFY(!sameLook(intrinsic, plain));
    const auto vectorType = formatAt(document, 0, columnOf(document, 0, QStringLiteral("float4")));
    QVERIFY(!sameLook(vectorType, plain));
    const auto launchOpen = formatAt(document, 5, columnOf(document, 5, QStringLiteral("<<<")));
    const auto launchClose = formatAt(document, 5, columnOf(document, 5, QStringLiteral(">>>")));
    QVERIFY(!sameLook(launchOpen, plain));
    QVERIFY(sameLook(launchOpen, launchClose));
    // Inside <<< >>> the arguments are ordinary C++ again: the number is a number.
    const auto number = formatAt(document, 5, columnOf(document, 5, QStringLiteral("32")));
    QVERIFY(!sameLook(number, launchOpen));
}

void TestSyntax::ptxHighlighting()
{
    QTextDocument document;
    document.setPlainText(QStringLiteral("// comment\n"
                                         ".visible .entry _Z1kPf(\n"
                                         "\tld.global.f32 \t%f1, [%rd4];\n"
                                         "\t@%p1 bra \t$L__BB0_2;\n"));
    KSyntaxHighlighting::SyntaxHighlighter highlighter(&document);
    highlighter.setTheme(m_syntax.themeFor(QPalette()));
    highlighter.setDefinition(m_syntax.ptxDefinition());
    highlighter.rehighlight();

    const auto comment = formatAt(document, 0, 0);
    const auto directive = formatAt(document, 1, 0);
    const auto instruction = formatAt(document, 2, 1);
    const auto type = formatAt(document, 2, columnOf(document, 2, QStringLiteral(".f32")));
    const auto reg = formatAt(document, 2, columnOf(document, 2, QStringLiteral("%f1")));
    const auto label = formatAt(document, 3, columnOf(document, 3, QStringLiteral("$L__BB0_2")));
    QVERIFY(!sameLook(comment, directive));
    QVERIFY(!sameLook(instruction, reg));
    QVERIFY(!sameLook(type, instruction));
    QVERIFY(!sameLook(label, reg));
    QVERIFY(instruction.fontWeight() > QFont::Normal);
}

void TestSyntax::editorUsesCudaDefinition()
{
    CodeEditor editor(m_syntax);
    QCOMPARE(editor.definition().name(), QStringLiteral("CUDA"));
    editor.setPlainText(QStringLiteral("__global__ void k() {}\nint plain;\n"));
    QTRY_VERIFY(!editor.document()->firstBlock().layout()->formats().isEmpty());
    QVERIFY(!sameLook(formatAt(*editor.document(), 0, 0), formatAt(*editor.document(), 1, 4)));
}

namespace {
QString program(int lines)
{
    QStringList text;
    for (int i = 0; i < lines; ++i)
        text << QStringLiteral("__global__ void k%1(float *out) { out[%1] = 1.0f; } // line %1").arg(i);
    return text.join(QLatin1Char('\n'));
}

/// More than one look on the line: a keyword and a comment told apart (waiting for its colours, a
/// line is one run in the plain text colour).
bool coloured(const CodeEditor &editor, int line)
{
    return editor.document()->findBlockByNumber(line).layout()->formats().size() > 1;
}
} // namespace

// A pane filled in bulk shows its text at once and its colours on a later turn of the event loop,
// one editor per turn, so two big panes never highlight in the same event.
void TestSyntax::replacedTextIsColouredOnALaterTurnOneEditorAtATime()
{
    CodeEditor a(m_syntax), b(m_syntax);
    a.replaceText(program(300));
    b.replaceText(program(300));
    QCOMPARE(a.blockCount(), 300);
    QVERIFY(a.highlightingPending() && b.highlightingPending());
    QVERIFY(!coloured(a, 0) && !coloured(a, 299));
    QCOMPARE(a.definition().name(), QStringLiteral("CUDA")); // the language is the editor's all along
    QCoreApplication::processEvents(); // one editor's turn
    QCOMPARE(int(a.highlightingPending()) + int(b.highlightingPending()), 1);
    QTRY_VERIFY(!a.highlightingPending() && !b.highlightingPending());
    QVERIFY(coloured(a, 0) && coloured(a, 299) && coloured(b, 299));
    QVERIFY(!sameLook(formatAt(*a.document(), 0, 0), formatAt(*a.document(), 0, 70))); // keyword, comment

    // Replaced again before its turn: the newest text is coloured, once.
    a.replaceText(program(10));
    a.replaceText(program(20));
    QCOMPARE(a.blockCount(), 20);
    a.finishHighlighting();
    QVERIFY(!a.highlightingPending());
    QVERIFY(coloured(a, 19));
    // An editor destroyed before its turn leaves the queue.
    {
        CodeEditor gone(m_syntax);
        gone.replaceText(program(5));
    }
    QCoreApplication::processEvents();
}

// A diff's marks become the editor's selections only around the lines in view: building all of them
// laid out every marked line. Scrolling to the end builds the end's.
void TestSyntax::marksAreSelectionsOnlyAroundTheVisibleLines()
{
    CodeEditor editor(m_syntax);
    editor.resize(600, 300);
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    editor.replaceText(program(2000));
    QList<QPair<int, QColor>> lines;
    QList<CodeEditor::TextHighlight> chars;
    for (int line = 1; line <= 2000; ++line) {
        lines.append({line, Qt::yellow});
        chars.append({line, 0, 10, Qt::red});
    }
    editor.setMarks(lines, chars, {});
    QCOMPARE(editor.lineHighlightCount(), 2000); // every mark is kept
    const auto selectionsOn = [&editor](int line) {
        int n = 0;
        for (const QTextEdit::ExtraSelection &s : editor.extraSelections())
            n += s.cursor.blockNumber() == line - 1 && s.format.background().color() == Qt::yellow ? 1 : 0;
        return n;
    };
    QVERIFY(editor.extraSelections().size() < 200);
    QCOMPARE(selectionsOn(1), 1);
    QCOMPARE(selectionsOn(2000), 0);
    editor.verticalScrollBar()->setValue(editor.verticalScrollBar()->maximum());
    QCOMPARE(selectionsOn(2000), 1);
    QCOMPARE(selectionsOn(1), 0);
    QVERIFY(editor.extraSelections().size() < 200);
}

QTEST_MAIN(TestSyntax)
#include "tst_syntax.moc"
