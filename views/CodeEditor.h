#pragma once
// The source editor: line numbers, current line, syntax highlighting and compiler markers.
//   QTextDocument <- user edits -> CompileController; DiagnosticsModel -> setDiagnostics -> markers
// Markers hold QTextCursors, so they move with the text when the user edits above them before
// the next compile replaces them.

#include "core/common/Result.h"

#include <KSyntaxHighlighting/Definition>
#include <KSyntaxHighlighting/Theme>

#include <QPlainTextEdit>

#include <vector>

namespace KSyntaxHighlighting {
class SyntaxHighlighter;
}

namespace stitch::views {

class SyntaxRepository;

class CodeEditor final : public QPlainTextEdit {
    Q_OBJECT
public:
    /// `syntax` must outlive the editor.
    explicit CodeEditor(SyntaxRepository &syntax, QWidget *parent = nullptr);
    ~CodeEditor() override;

    void setDefinition(const KSyntaxHighlighting::Definition &definition);
    KSyntaxHighlighting::Definition definition() const;
    void setTheme(const KSyntaxHighlighting::Theme &theme);
    /// Runs the highlighter's queued re-highlights of following lines now. KSyntaxHighlighting
    /// queues them with the QTextBlock to redo; replacing the whole text before they run would
    /// leave them pointing at blocks that no longer exist. Call it before replacing the text.
    void flushHighlighting();
    /// Replaces the whole text of a read-only pane filled in bulk (a diff's side, a generated
    /// program): the text shows at once, its colours on a later turn of the event loop, one editor
    /// per turn. Highlighting a few hundred lines costs ~10 ms of the GUI thread; two panes and
    /// their marks filled in one event went past the studio's 50 ms budget.
    void replaceText(const QString &text);
    /// The colours that replaceText left for later are not there yet.
    bool highlightingPending() const { return m_highlightPending; }
    /// Highlights now what replaceText left for later (tests, captures).
    void finishHighlighting();
    KSyntaxHighlighting::Theme theme() const { return m_theme; }

    /// Underlines each located diagnostic and marks its line in the gutter; replaces older ones.
    void setDiagnostics(const std::vector<Diagnostic> &diagnostics);
    void clearDiagnostics();
    int diagnosticCount() const { return static_cast<int>(m_markers.size()); }
    /// Paints the background of whole lines (1-based), e.g. a diff's changed lines; replaces older ones.
    void setLineHighlights(const QList<QPair<int, QColor>> &lines);
    int lineHighlightCount() const { return static_cast<int>(m_lineHighlights.size()); }
    /// A run of characters to paint: a diff's changed characters inside a line.
    struct TextHighlight {
        int line = 0;   ///< 1-based
        int start = 0;  ///< position in the line (QString units)
        int length = 0;
        QColor color;
    };
    /// Paints the background of runs of characters over the line highlights; replaces older ones.
    void setTextHighlights(const QList<TextHighlight> &ranges);
    QList<TextHighlight> textHighlights() const { return m_textHighlights; }
    /// Lines (1-based) that stand for no line of the text (a diff's filler rows): hatched, unnumbered.
    void setFillerLines(const QList<int> &lines);
    /// The three above at once (a diff's marks), the editor's selections rebuilt once, not three times.
    void setMarks(const QList<QPair<int, QColor>> &lines, const QList<TextHighlight> &ranges, const QList<int> &filler);
    /// The number the gutter shows for each line (0: none); empty (the default): 1, 2, 3, ...
    /// A diff's pane numbers each side's own lines, skipping its filler rows.
    void setLineNumbers(const QList<int> &numbers);
    /// The number shown beside 1-based line `line` (0: none).
    int lineNumberShown(int line) const;
    /// Messages of the diagnostics on a 1-based line (for tooltips and tests).
    QStringList diagnosticsAt(int line) const;

    /// Moves the cursor to a 1-based line and column (column 0: first non-blank), centres it
    /// and gives the editor focus.
    void goToLocation(int line, int column = 0);
    /// Selects from (line, column) to (endLine, endColumn), 1-based; a missing end selects to the
    /// end of the first line. Used to show where a graph op came from.
    void selectRange(int line, int column, int endLine, int endColumn);
    int currentLine() const;   ///< 1-based
    int currentColumn() const; ///< 1-based

    int lineNumberAreaWidth() const;

protected:
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override;
    bool viewportEvent(QEvent *event) override;

private:
    class LineNumberArea;
    struct Marker {
        QTextCursor cursor; ///< spans the underlined text
        Severity severity = Severity::Error;
        QString message;
    };

    void updateLineNumberAreaWidth();
    void updateLineNumberArea(const QRect &rect, int dy);
    void updateExtraSelections();
    /// The marks' selections cover the visible lines and a page around them; scrolling past
    /// that window builds them again.
    void followSelectionWindow();
    void paintLineNumbers(QPaintEvent *event);
    bool gutterToolTip(const QPoint &pos, const QPoint &globalPos);
    QColor severityColor(Severity severity) const;

    SyntaxRepository &m_syntax;
    KSyntaxHighlighting::SyntaxHighlighter *m_highlighter = nullptr;
    /// The editor's language (the highlighter is detached from the document while replaceText's colours wait).
    KSyntaxHighlighting::Definition m_definition;
    bool m_highlightPending = false;
    KSyntaxHighlighting::Theme m_theme;
    LineNumberArea *m_lineNumberArea = nullptr;
    std::vector<Marker> m_markers;
    QList<QPair<int, QColor>> m_lineHighlights;
    QList<TextHighlight> m_textHighlights;
    QList<int> m_fillerLines;
    QList<int> m_lineNumbers;
    bool m_wasEmpty = true;
    /// The marks changed while the editor was hidden: its selections are built when it shows.
    bool m_selectionsStale = false;
    /// The 1-based lines whose marks are in the editor's selections (see followSelectionWindow).
    int m_windowFirst = 0;
    int m_windowLast = -1;
};

} // namespace stitch::views
