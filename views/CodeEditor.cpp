#include "views/CodeEditor.h"

#include "views/SyntaxRepository.h"

#include <KSyntaxHighlighting/SyntaxHighlighter>

#include <QCoreApplication>
#include <QFontDatabase>
#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QPointer>
#include <QScrollBar>
#include <QTextBlock>
#include <QToolTip>

#include <algorithm>
#include <map>

namespace stitch::views {

using KSyntaxHighlighting::Theme;

class CodeEditor::LineNumberArea final : public QWidget {
public:
    explicit LineNumberArea(CodeEditor *editor) : QWidget(editor), m_editor(editor) { setMouseTracking(true); }

    QSize sizeHint() const override { return {m_editor->lineNumberAreaWidth(), 0}; }

protected:
    void paintEvent(QPaintEvent *event) override { m_editor->paintLineNumbers(event); }

    bool event(QEvent *event) override
    {
        if (event->type() == QEvent::ToolTip) {
            auto *help = static_cast<QHelpEvent *>(event);
            if (!m_editor->gutterToolTip(help->pos(), help->globalPos()))
                QToolTip::hideText();
            return true;
        }
        return QWidget::event(event);
    }

private:
    CodeEditor *m_editor;
};

namespace {

constexpr int MarkerSize = 8;

bool isIdentifierChar(QChar c)
{
    return c.isLetterOrNumber() || c == QLatin1Char('_');
}

/// Lines a viewport of `height` pixels shows at `lineHeight` (one more for a partial line).
int pageLines(int height, int lineHeight)
{
    return std::max(1, height / std::max(1, lineHeight) + 1);
}

/// The editors whose colours replaceText left for later, highlighted one per turn of the event
/// loop (a posted event: those posted while Qt delivers a batch wait for the next batch, so the
/// GUI thread returns to its loop between two editors). Visible editors go first.
class HighlightQueue final : public QObject {
public:
    static HighlightQueue &instance()
    {
        static QPointer<HighlightQueue> queue;
        if (!queue)
            queue = new HighlightQueue(QCoreApplication::instance());
        return *queue;
    }

    void add(CodeEditor *editor)
    {
        if (!m_editors.contains(editor))
            m_editors.append(editor);
        schedule();
    }
    void remove(CodeEditor *editor) { m_editors.removeAll(editor); }

private:
    using QObject::QObject;

    void schedule()
    {
        if (m_scheduled || m_editors.isEmpty())
            return;
        m_scheduled = true;
        QMetaObject::invokeMethod(this, [this] { runOne(); }, Qt::QueuedConnection);
    }

    void runOne()
    {
        m_scheduled = false;
        m_editors.removeAll(nullptr);
        if (!m_editors.isEmpty()) {
            auto it = std::find_if(m_editors.begin(), m_editors.end(), [](const QPointer<CodeEditor> &e) { return e->isVisible(); });
            if (it == m_editors.end())
                it = m_editors.begin();
            const QPointer<CodeEditor> editor = *it;
            m_editors.erase(it);
            editor->finishHighlighting();
        }
        schedule();
    }

    QList<QPointer<CodeEditor>> m_editors;
    bool m_scheduled = false;
};

} // namespace

CodeEditor::CodeEditor(SyntaxRepository &syntax, QWidget *parent)
    : QPlainTextEdit(parent), m_syntax(syntax), m_highlighter(new KSyntaxHighlighting::SyntaxHighlighter(document())),
      m_lineNumberArea(new LineNumberArea(this))
{
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setTabStopDistance(4 * fontMetrics().horizontalAdvance(QLatin1Char(' ')));
    setCenterOnScroll(false);

    connect(this, &QPlainTextEdit::blockCountChanged, this, &CodeEditor::updateLineNumberAreaWidth);
    connect(this, &QPlainTextEdit::updateRequest, this, &CodeEditor::updateLineNumberArea);
    connect(this, &QPlainTextEdit::cursorPositionChanged, this, &CodeEditor::updateExtraSelections);
    connect(this, &QPlainTextEdit::textChanged, this, [this] {
        if (document()->isEmpty() != m_wasEmpty)
            updateExtraSelections();
    });
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, &CodeEditor::followSelectionWindow);

    setDefinition(m_syntax.cudaDefinition());
    setTheme(m_syntax.themeFor(palette()));
    updateLineNumberAreaWidth();
}

CodeEditor::~CodeEditor()
{
    if (m_highlightPending)
        HighlightQueue::instance().remove(this);
}

void CodeEditor::setDefinition(const KSyntaxHighlighting::Definition &definition)
{
    m_definition = definition;
    m_highlighter->setDefinition(definition); // detached while replaceText's colours wait: no work
}

KSyntaxHighlighting::Definition CodeEditor::definition() const
{
    return m_definition;
}

void CodeEditor::replaceText(const QString &text)
{
    flushHighlighting();
    if (!m_highlightPending) {
        // Emptied first, so detaching the highlighter clears one line's formats, not the old text's.
        clear();
        m_highlighter->setDocument(nullptr);
        m_highlightPending = true;
    }
    // No highlighter on the document: its lines get no formats and no highlighting state yet. (A
    // highlighter that passed over them, even without a language, would leave a state on each
    // line, and the real pass would then queue a re-highlight of every next line: a second pass.)
    setPlainText(text);
    HighlightQueue::instance().add(this);
}

void CodeEditor::finishHighlighting()
{
    if (!m_highlightPending)
        return;
    m_highlightPending = false;
    HighlightQueue::instance().remove(this);
    m_highlighter->setDefinition(m_definition); // detached: nothing to re-highlight yet
    m_highlighter->setDocument(document());     // queues the highlighting of the whole text...
    flushHighlighting();                        // ...which runs now
}

void CodeEditor::setTheme(const KSyntaxHighlighting::Theme &theme)
{
    m_theme = theme;
    QPalette pal = palette();
    pal.setColor(QPalette::Base, QColor::fromRgba(theme.editorColor(Theme::BackgroundColor)));
    pal.setColor(QPalette::Text, QColor::fromRgba(theme.textColor(Theme::Normal)));
    pal.setColor(QPalette::Highlight, QColor::fromRgba(theme.editorColor(Theme::TextSelection)));
    pal.setColor(QPalette::HighlightedText, QColor::fromRgba(theme.selectedTextColor(Theme::Normal)));
    setPalette(pal);
    m_highlighter->setTheme(theme);
    m_highlighter->rehighlight();
    updateExtraSelections();
    m_lineNumberArea->update();
}

void CodeEditor::flushHighlighting()
{
    QCoreApplication::sendPostedEvents(m_highlighter, QEvent::MetaCall);
}

int CodeEditor::lineNumberAreaWidth() const
{
    const int largest = m_lineNumbers.isEmpty() ? blockCount() : *std::max_element(m_lineNumbers.begin(), m_lineNumbers.end());
    const int digits = std::max(3, static_cast<int>(QString::number(std::max(1, largest)).size()));
    return 6 + MarkerSize + 4 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits + 8;
}

void CodeEditor::updateLineNumberAreaWidth()
{
    setViewportMargins(lineNumberAreaWidth(), 0, 0, 0);
}

void CodeEditor::updateLineNumberArea(const QRect &rect, int dy)
{
    if (dy != 0)
        m_lineNumberArea->scroll(0, dy);
    else
        m_lineNumberArea->update(0, rect.y(), m_lineNumberArea->width(), rect.height());
    if (rect.contains(viewport()->rect()))
        updateLineNumberAreaWidth();
}

void CodeEditor::showEvent(QShowEvent *event)
{
    QPlainTextEdit::showEvent(event);
    if (m_selectionsStale)
        updateExtraSelections();
}

void CodeEditor::resizeEvent(QResizeEvent *event)
{
    QPlainTextEdit::resizeEvent(event);
    const QRect cr = contentsRect();
    m_lineNumberArea->setGeometry(QRect(cr.left(), cr.top(), lineNumberAreaWidth(), cr.height()));
    followSelectionWindow();
}

void CodeEditor::followSelectionWindow()
{
    if (m_lineHighlights.isEmpty() && m_textHighlights.isEmpty() && m_fillerLines.isEmpty())
        return;
    const int first = firstVisibleBlock().blockNumber() + 1;
    const int last = first + pageLines(viewport()->height(), fontMetrics().height());
    if (first < m_windowFirst || last > m_windowLast)
        updateExtraSelections();
}

QColor CodeEditor::severityColor(Severity severity) const
{
    switch (severity) {
    case Severity::Error:
        return QColor::fromRgba(m_theme.editorColor(Theme::MarkError));
    case Severity::Warning:
        return QColor::fromRgba(m_theme.editorColor(Theme::MarkWarning));
    case Severity::Note:
        return QColor::fromRgba(m_theme.editorColor(Theme::MarkBookmark));
    }
    return Qt::red;
}

void CodeEditor::paintLineNumbers(QPaintEvent *event)
{
    QPainter painter(m_lineNumberArea);
    painter.fillRect(event->rect(), QColor::fromRgba(m_theme.editorColor(Theme::IconBorder)));
    painter.setRenderHint(QPainter::Antialiasing);

    // Most severe marker per line; Severity is ordered Error < Warning < Note.
    std::map<int, Severity> lineMarkers;
    for (const auto &m : m_markers) {
        const int block = m.cursor.block().blockNumber();
        auto [it, inserted] = lineMarkers.emplace(block, m.severity);
        if (!inserted && m.severity < it->second)
            it->second = m.severity;
    }

    const int current = textCursor().blockNumber();
    const QColor numberColor = QColor::fromRgba(m_theme.editorColor(Theme::LineNumbers));
    const QColor currentColor = QColor::fromRgba(m_theme.editorColor(Theme::CurrentLineNumber));
    const int numberRight = m_lineNumberArea->width() - 6;

    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    int bottom = top + qRound(blockBoundingRect(block).height());
    while (block.isValid() && top <= event->rect().bottom()) {
        if (block.isVisible() && bottom >= event->rect().top()) {
            const int number = block.blockNumber();
            painter.setPen(number == current ? currentColor : numberColor);
            if (const int shown = lineNumberShown(number + 1); shown > 0)
                painter.drawText(0, top, numberRight, fontMetrics().height(), Qt::AlignRight, QString::number(shown));
            if (auto it = lineMarkers.find(number); it != lineMarkers.end()) {
                const int y = top + (fontMetrics().height() - MarkerSize) / 2;
                painter.setPen(Qt::NoPen);
                painter.setBrush(severityColor(it->second));
                painter.drawEllipse(QRect(4, y, MarkerSize, MarkerSize));
            }
        }
        block = block.next();
        top = bottom;
        bottom = top + qRound(blockBoundingRect(block).height());
    }
}

void CodeEditor::setLineHighlights(const QList<QPair<int, QColor>> &lines)
{
    m_lineHighlights = lines;
    updateExtraSelections();
}

void CodeEditor::setTextHighlights(const QList<TextHighlight> &ranges)
{
    m_textHighlights = ranges;
    updateExtraSelections();
}

void CodeEditor::setFillerLines(const QList<int> &lines)
{
    m_fillerLines = lines;
    updateExtraSelections();
}

void CodeEditor::setMarks(const QList<QPair<int, QColor>> &lines, const QList<TextHighlight> &ranges,
                          const QList<int> &filler)
{
    m_lineHighlights = lines;
    m_textHighlights = ranges;
    m_fillerLines = filler;
    updateExtraSelections();
}

void CodeEditor::setLineNumbers(const QList<int> &numbers)
{
    m_lineNumbers = numbers;
    updateLineNumberAreaWidth();
    m_lineNumberArea->update();
}

int CodeEditor::lineNumberShown(int line) const
{
    if (m_lineNumbers.isEmpty())
        return line >= 1 && line <= blockCount() ? line : 0;
    return line >= 1 && line <= m_lineNumbers.size() ? m_lineNumbers.at(line - 1) : 0;
}

void CodeEditor::updateExtraSelections()
{
    m_wasEmpty = document()->isEmpty();
    // Each selection costs its line's layout (QPlainTextEdit asks for its rectangle): thousands of
    // them for a diff are tens of milliseconds on the GUI thread. A hidden editor (the Code tab
    // behind the source, a dock's tab behind another) builds them when it is shown.
    if (!isVisible()) {
        m_selectionsStale = true;
        return;
    }
    m_selectionsStale = false;
    // The marks' selections cover the lines in view and a page on either side: each costs its
    // line's layout, so a diff of hundreds of marked lines built them all in tens of milliseconds.
    const int page = pageLines(viewport()->height(), fontMetrics().height());
    m_windowFirst = std::max(1, firstVisibleBlock().blockNumber() + 1 - page);
    m_windowLast = firstVisibleBlock().blockNumber() + 1 + 2 * page;
    const auto inWindow = [this](int line) { return line >= m_windowFirst && line <= m_windowLast; };
    QList<QTextEdit::ExtraSelection> selections;
    // First, so a marked line's colour (a diff's change) shows on the cursor's line too.
    // An empty document shows its placeholder text, which a full-width line highlight would hide.
    if (!document()->isEmpty()) {
        QTextEdit::ExtraSelection line;
        line.format.setBackground(QColor::fromRgba(m_theme.editorColor(Theme::CurrentLine)));
        line.format.setProperty(QTextFormat::FullWidthSelection, true);
        line.cursor = textCursor();
        line.cursor.clearSelection();
        selections.append(line);
    }
    // Filler rows: hatched in the gutter's colour, so they read as "nothing here", not as a blank line.
    const QColor hatch = QColor::fromRgba(m_theme.editorColor(Theme::LineNumbers));
    for (const int lineNumber : m_fillerLines) {
        if (!inWindow(lineNumber))
            continue;
        const QTextBlock block = document()->findBlockByNumber(lineNumber - 1);
        if (!block.isValid())
            continue;
        QTextEdit::ExtraSelection line;
        line.format.setBackground(QBrush(hatch, Qt::BDiagPattern));
        line.format.setProperty(QTextFormat::FullWidthSelection, true);
        line.cursor = QTextCursor(block);
        selections.append(line);
    }
    for (const auto &[lineNumber, color] : m_lineHighlights) {
        if (!inWindow(lineNumber))
            continue;
        const QTextBlock block = document()->findBlockByNumber(lineNumber - 1);
        if (!block.isValid())
            continue;
        QTextEdit::ExtraSelection line;
        line.format.setBackground(color);
        line.format.setProperty(QTextFormat::FullWidthSelection, true);
        line.cursor = QTextCursor(block);
        selections.append(line);
    }
    for (const TextHighlight &h : m_textHighlights) {
        if (!inWindow(h.line))
            continue;
        const QTextBlock block = document()->findBlockByNumber(h.line - 1);
        const int length = block.isValid() ? static_cast<int>(block.text().size()) : 0;
        if (!block.isValid() || h.start < 0 || h.length <= 0 || h.start >= length)
            continue;
        QTextEdit::ExtraSelection range;
        range.format.setBackground(h.color);
        range.cursor = QTextCursor(block);
        range.cursor.setPosition(block.position() + h.start);
        range.cursor.setPosition(block.position() + std::min(length, h.start + h.length), QTextCursor::KeepAnchor);
        selections.append(range);
    }
    for (const auto &m : m_markers) {
        QTextEdit::ExtraSelection s;
        s.cursor = m.cursor;
        s.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
        s.format.setUnderlineColor(severityColor(m.severity));
        s.format.setToolTip(m.message);
        selections.append(s);
    }
    setExtraSelections(selections);
    m_lineNumberArea->update();
}

void CodeEditor::setDiagnostics(const std::vector<Diagnostic> &diagnostics)
{
    m_markers.clear();
    for (const auto &d : diagnostics) {
        if (!d.location.known() || d.location.line > blockCount())
            continue;
        const QTextBlock block = document()->findBlockByNumber(d.location.line - 1);
        const QString text = block.text();
        int start = 0;
        int end = static_cast<int>(text.size());
        if (d.location.column > 0 && d.location.column <= text.size()) {
            // Underline the token at the column: the identifier, or the single symbol there.
            start = d.location.column - 1;
            end = start + 1;
            if (isIdentifierChar(text.at(start))) {
                while (end < text.size() && isIdentifierChar(text.at(end)))
                    ++end;
            }
        } else {
            while (start < end && text.at(start).isSpace())
                ++start;
        }
        // On a blank line the selection is empty: no underline, but the gutter marker and the
        // tooltip still point at it.
        QTextCursor cursor(block);
        cursor.setPosition(block.position() + start);
        cursor.setPosition(block.position() + end, QTextCursor::KeepAnchor);
        m_markers.push_back({cursor, d.severity, QString::fromStdString(d.message)});
    }
    updateExtraSelections();
}

void CodeEditor::clearDiagnostics()
{
    setDiagnostics({});
}

QStringList CodeEditor::diagnosticsAt(int line) const
{
    QStringList messages;
    for (const auto &m : m_markers) {
        if (m.cursor.block().blockNumber() == line - 1)
            messages << m.message;
    }
    return messages;
}

bool CodeEditor::gutterToolTip(const QPoint &pos, const QPoint &globalPos)
{
    const QTextCursor cursor = cursorForPosition(QPoint(0, pos.y()));
    const QStringList messages = diagnosticsAt(cursor.blockNumber() + 1);
    if (messages.isEmpty())
        return false;
    QToolTip::showText(globalPos, messages.join(QLatin1Char('\n')), m_lineNumberArea);
    return true;
}

bool CodeEditor::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const int position = cursorForPosition(help->pos()).position();
        QStringList messages;
        for (const auto &m : m_markers) {
            if (position >= m.cursor.selectionStart() && position <= m.cursor.selectionEnd())
                messages << m.message;
        }
        if (messages.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), messages.join(QLatin1Char('\n')), viewport());
        return true;
    }
    return QPlainTextEdit::viewportEvent(event);
}

void CodeEditor::goToLocation(int line, int column)
{
    const QTextBlock block = document()->findBlockByNumber(std::clamp(line, 1, blockCount()) - 1);
    const QString text = block.text();
    int offset = 0;
    if (column > 0) {
        offset = std::min(column - 1, static_cast<int>(text.size()));
    } else {
        while (offset < text.size() && text.at(offset).isSpace())
            ++offset;
    }
    QTextCursor cursor(block);
    cursor.setPosition(block.position() + offset);
    setTextCursor(cursor);
    centerCursor();
    setFocus(Qt::OtherFocusReason);
}

void CodeEditor::selectRange(int line, int column, int endLine, int endColumn)
{
    const auto position = [this](int l, int c, bool endOfLine) {
        const QTextBlock block = document()->findBlockByNumber(std::clamp(l, 1, blockCount()) - 1);
        const int length = static_cast<int>(block.text().size());
        return block.position() + (endOfLine || c <= 0 ? length : std::min(c - 1, length));
    };
    const int begin = position(line, column, false);
    const int end = endLine > 0 ? position(endLine, endColumn, false) : position(line, 0, true);
    QTextCursor cursor(document());
    cursor.setPosition(begin);
    cursor.setPosition(std::max(begin, end), QTextCursor::KeepAnchor);
    setTextCursor(cursor);
    centerCursor();
    setFocus(Qt::OtherFocusReason);
}

int CodeEditor::currentLine() const
{
    return textCursor().blockNumber() + 1;
}

int CodeEditor::currentColumn() const
{
    return textCursor().positionInBlock() + 1;
}

} // namespace stitch::views
