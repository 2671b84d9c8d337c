#include "views/CodeDiffView.h"

#include "views/CodeEditor.h"
#include "views/SyntaxRepository.h"

#include <KSyntaxHighlighting/Theme>

#include <QAction>
#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStyle>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace stitch::views {

namespace {

struct Tints {
    QColor removedLine, removedText, addedLine, addedText;
};

Tints tintsFor(bool dark)
{
    if (dark)
        return {QColor(74, 38, 40), QColor(130, 52, 56), QColor(34, 64, 42), QColor(44, 112, 60)};
    return {QColor(255, 226, 226), QColor(250, 170, 170), QColor(221, 246, 221), QColor(150, 222, 150)};
}

/// UTF-8 byte offset -> position in the QString of the same line.
int qtPosition(const std::string &line, int byteOffset)
{
    const auto bytes = static_cast<qsizetype>(std::clamp(byteOffset, 0, static_cast<int>(line.size())));
    return static_cast<int>(QString::fromUtf8(line.data(), bytes).size());
}

} // namespace

CodeDiffView::CodeDiffView(SyntaxRepository &syntax, QWidget *parent)
    : QWidget(parent), m_syntax(syntax), m_left(new CodeEditor(syntax, this)), m_right(new CodeEditor(syntax, this)),
      m_leftTitle(new QLabel(this)), m_rightTitle(new QLabel(this)), m_comparisons(new QComboBox(this)),
      m_steps(new QComboBox(this)), m_representation(new QComboBox(this)), m_previousButton(new QToolButton(this)),
      m_nextButton(new QToolButton(this)), m_previousAction(new QAction(tr("Previous Change"), this)),
      m_nextAction(new QAction(tr("Next Change"), this)), m_summary(new QLabel(this))
{
    m_left->setObjectName(QStringLiteral("codeDiffLeft"));
    m_right->setObjectName(QStringLiteral("codeDiffRight"));
    for (CodeEditor *e : {m_left, m_right}) {
        e->setReadOnly(true);
        e->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
        e->setLineWrapMode(QPlainTextEdit::NoWrap);
    }
    for (QLabel *l : {m_leftTitle, m_rightTitle}) {
        l->setTextFormat(Qt::PlainText);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    m_comparisons->setObjectName(QStringLiteral("codeDiffComparison"));
    m_comparisons->setToolTip(tr("Which two programs to compare"));
    m_steps->setObjectName(QStringLiteral("codeDiffStep"));
    m_steps->setToolTip(tr("The agents' step to compare with the step before it (follows the Agents dock)"));
    m_steps->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_steps->setMinimumContentsLength(30);
    m_representation->setObjectName(QStringLiteral("codeDiffRepresentation"));
    m_representation->addItem(tr("CUDA"));
    m_representation->addItem(tr("PTX"));
    m_representation->addItem(tr("SASS"));
    m_representation->setToolTip(tr("Compare the programs' CUDA, their PTX (NVRTC) or their machine code (SASS)"));

    m_previousAction->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    m_nextAction->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Down));
    m_previousAction->setToolTip(tr("Go to the previous change (Alt+Up)"));
    m_nextAction->setToolTip(tr("Go to the next change (Alt+Down)"));
    m_previousAction->setIcon(style()->standardIcon(QStyle::SP_ArrowUp));
    m_nextAction->setIcon(style()->standardIcon(QStyle::SP_ArrowDown));
    for (QAction *a : {m_previousAction, m_nextAction}) {
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(a);
    }
    connect(m_previousAction, &QAction::triggered, this, &CodeDiffView::previousChange);
    connect(m_nextAction, &QAction::triggered, this, &CodeDiffView::nextChange);
    m_previousButton->setDefaultAction(m_previousAction);
    m_nextButton->setDefaultAction(m_nextAction);
    m_summary->setObjectName(QStringLiteral("codeDiffSummary"));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Compare:"), this));
    bar->addWidget(m_comparisons);
    bar->addWidget(m_steps);
    bar->addWidget(new QLabel(tr("Show:"), this));
    bar->addWidget(m_representation);
    bar->addWidget(m_previousButton);
    bar->addWidget(m_nextButton);
    bar->addStretch(1);

    auto *split = new QSplitter(Qt::Horizontal, this);
    for (auto [title, pane] : {std::pair{m_leftTitle, m_left}, std::pair{m_rightTitle, m_right}}) {
        auto *side = new QWidget(split);
        auto *column = new QVBoxLayout(side);
        column->setContentsMargins(0, 0, 0, 0);
        column->setSpacing(2);
        column->addWidget(title);
        column->addWidget(pane);
        split->addWidget(side);
    }
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);

    // The rows are aligned, so the panes scroll (and keep their cursors) together.
    auto sync = [this](CodeEditor *from, CodeEditor *to) {
        connect(from->verticalScrollBar(), &QScrollBar::valueChanged, this, [this, to](int value) {
            if (!m_syncing) {
                m_syncing = true;
                to->verticalScrollBar()->setValue(value);
                m_syncing = false;
            }
        });
        connect(from->horizontalScrollBar(), &QScrollBar::valueChanged, this, [this, to](int value) {
            if (!m_syncing) {
                m_syncing = true;
                to->horizontalScrollBar()->setValue(value);
                m_syncing = false;
            }
        });
        connect(from, &QPlainTextEdit::cursorPositionChanged, this, [this, from, to] {
            if (m_syncing || to->textCursor().blockNumber() == from->textCursor().blockNumber())
                return;
            m_syncing = true;
            const QTextBlock block = to->document()->findBlockByNumber(from->textCursor().blockNumber());
            if (block.isValid()) { // the rows are aligned: the same scroll as the pane that moved
                to->setTextCursor(QTextCursor(block));
                to->verticalScrollBar()->setValue(from->verticalScrollBar()->value());
            }
            m_syncing = false;
            updateNavigation();
        });
    };
    sync(m_left, m_right);
    sync(m_right, m_left);

    connect(m_comparisons, &QComboBox::activated, this, &CodeDiffView::comparisonChosen);
    connect(m_steps, &QComboBox::activated, this, &CodeDiffView::stepChosen);
    connect(m_representation, &QComboBox::activated, this, &CodeDiffView::representationChosen);
    applyTheme();
    setMessage(tr("Optimize (Ctrl+R) to compare the program as written with the agents' program, step by step."));
}

void CodeDiffView::setDiff(const QString &leftTitle, const QString &rightTitle, TextDiff diff, Language language)
{
    if (!isVisible()) {
        m_pending = Pending{leftTitle, rightTitle, std::move(diff), language};
        emit shown();
        return;
    }
    m_pending.reset();
    applyDiff(leftTitle, rightTitle, std::move(diff), language);
    emit shown();
}

void CodeDiffView::ensureFresh() const
{
    if (!m_pending)
        return;
    auto *self = const_cast<CodeDiffView *>(this);
    Pending p = std::move(*self->m_pending);
    self->m_pending.reset();
    self->applyDiff(p.leftTitle, p.rightTitle, std::move(p.diff), p.language);
}

void CodeDiffView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    ensureFresh();
}

const TextDiff &CodeDiffView::diff() const
{
    ensureFresh();
    return m_diff;
}

CodeEditor *CodeDiffView::leftPane() const
{
    ensureFresh();
    return m_left;
}

CodeEditor *CodeDiffView::rightPane() const
{
    ensureFresh();
    return m_right;
}

void CodeDiffView::applyDiff(const QString &leftTitle, const QString &rightTitle, TextDiff diff, Language language)
{
    m_diff = std::move(diff);
    m_language = language;
    const KSyntaxHighlighting::Definition definition =
        language == Language::Cuda ? m_syntax.cudaDefinition()
        : language == Language::Ptx
            ? m_syntax.ptxDefinition()
            : m_syntax.repository().definitionForName(QStringLiteral("GNU Assembler"));
    QStringList left, right;
    QList<int> leftNumbers, rightNumbers;
    for (const DiffRow &row : m_diff.rows) {
        left << (row.left >= 0 ? QString::fromStdString(m_diff.left[std::size_t(row.left)]) : QString());
        right << (row.right >= 0 ? QString::fromStdString(m_diff.right[std::size_t(row.right)]) : QString());
        leftNumbers << row.left + 1;
        rightNumbers << row.right + 1;
    }
    m_syncing = true;
    for (CodeEditor *e : {m_left, m_right}) {
        resetPane(e);
        e->setDefinition(definition); // on an empty document: nothing to re-highlight
    }
    m_right->replaceText(right.join(QLatin1Char('\n'))); // the side coloured first
    m_left->replaceText(left.join(QLatin1Char('\n')));
    m_left->setLineNumbers(leftNumbers);
    m_right->setLineNumbers(rightNumbers);
    m_syncing = false;
    m_leftTitle->setText(leftTitle);
    m_rightTitle->setText(rightTitle);
    paintMarks();
    const int hunks = static_cast<int>(m_diff.hunks.size());
    m_summary->setText(m_diff.identical()
                           ? tr("The two are the same (%1 lines).").arg(m_diff.right.size())
                           : tr("%1 change(s): %2 changed, %3 removed, %4 added line(s).")
                                 .arg(hunks)
                                 .arg(m_diff.changedRows)
                                 .arg(m_diff.removedRows)
                                 .arg(m_diff.addedRows));
    if (!goToChange(0))
        moveToRow(0);
}

void CodeDiffView::setTexts(const QString &leftTitle, const QString &left, const QString &rightTitle,
                            const QString &right, Language language)
{
    setDiff(leftTitle, rightTitle, diffTexts(left.toStdString(), right.toStdString()), language);
}

void CodeDiffView::setMessage(const QString &text)
{
    m_pending.reset(); // the message replaces a diff still waiting to be shown
    m_diff = {};
    for (CodeEditor *e : {m_left, m_right})
        resetPane(e);
    m_leftTitle->clear();
    m_rightTitle->clear();
    m_left->setPlaceholderText(text);
    m_summary->setText(text);
    updateNavigation();
    emit shown();
}

void CodeDiffView::resetPane(CodeEditor *pane)
{
    pane->setMarks({}, {}, {});
    pane->setLineNumbers({});
    pane->flushHighlighting(); // its queued work names blocks that clear() removes
    pane->clear();
}

void CodeDiffView::setStatus(const QString &text)
{
    m_summary->setText(text);
}

void CodeDiffView::paintMarks()
{
    using Theme = KSyntaxHighlighting::Theme;
    const bool dark = QColor::fromRgba(m_left->theme().editorColor(Theme::BackgroundColor)).lightness() < 128;
    const Tints t = tintsFor(dark);
    QList<QPair<int, QColor>> leftLines, rightLines;
    QList<CodeEditor::TextHighlight> leftText, rightText;
    QList<int> leftFiller, rightFiller;
    for (std::size_t r = 0; r < m_diff.rows.size(); ++r) {
        const DiffRow &row = m_diff.rows[r];
        const int line = static_cast<int>(r) + 1;
        if (row.kind == DiffRow::Kind::Same)
            continue;
        if (row.left >= 0)
            leftLines.append({line, t.removedLine});
        else
            leftFiller << line;
        if (row.right >= 0)
            rightLines.append({line, t.addedLine});
        else
            rightFiller << line;
        const LineChanges &c = m_diff.changes[r];
        for (const TextRange &range : c.left) {
            const std::string &text = m_diff.left[std::size_t(row.left)];
            const int start = qtPosition(text, range.begin);
            leftText.append({line, start, qtPosition(text, range.end) - start, t.removedText});
        }
        for (const TextRange &range : c.right) {
            const std::string &text = m_diff.right[std::size_t(row.right)];
            const int start = qtPosition(text, range.begin);
            rightText.append({line, start, qtPosition(text, range.end) - start, t.addedText});
        }
    }
    m_left->setMarks(leftLines, leftText, leftFiller);
    m_right->setMarks(rightLines, rightText, rightFiller);
}

void CodeDiffView::applyTheme()
{
    const KSyntaxHighlighting::Theme theme = m_syntax.themeFor(palette());
    for (CodeEditor *e : {m_left, m_right}) {
        e->setTheme(theme);
        e->flushHighlighting(); // the next diff may replace the text before the event loop runs
    }
    paintMarks();
}

void CodeDiffView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyTheme();
}

void CodeDiffView::setComparisons(const QStringList &names, int current)
{
    m_comparisons->clear();
    m_comparisons->addItems(names);
    m_comparisons->setCurrentIndex(current);
}

int CodeDiffView::comparison() const
{
    return m_comparisons->currentIndex();
}

void CodeDiffView::setSteps(const QStringList &names, int current)
{
    m_steps->clear();
    m_steps->addItems(names);
    m_steps->setCurrentIndex(current);
}

int CodeDiffView::step() const
{
    return m_steps->currentIndex();
}

void CodeDiffView::setStepsEnabled(bool enabled)
{
    m_steps->setEnabled(enabled);
}

void CodeDiffView::setRepresentationAvailable(Representation r, bool available, const QString &why)
{
    auto *model = qobject_cast<QStandardItemModel *>(m_representation->model());
    if (QStandardItem *item = model ? model->item(r) : nullptr) {
        item->setEnabled(available);
        item->setToolTip(available ? QString() : why);
    }
}

CodeDiffView::Representation CodeDiffView::representation() const
{
    return static_cast<Representation>(std::clamp(m_representation->currentIndex(), 0, RepresentationCount - 1));
}

void CodeDiffView::setRepresentation(Representation r)
{
    m_representation->setCurrentIndex(r);
}

QString CodeDiffView::leftTitle() const
{
    ensureFresh();
    return m_leftTitle->text();
}

QString CodeDiffView::rightTitle() const
{
    ensureFresh();
    return m_rightTitle->text();
}

QString CodeDiffView::summary() const
{
    ensureFresh();
    return m_summary->text();
}

int CodeDiffView::currentRow() const
{
    ensureFresh();
    return m_left->textCursor().blockNumber();
}

void CodeDiffView::moveToRow(int row)
{
    const QTextBlock block = m_left->document()->findBlockByNumber(row);
    if (!block.isValid())
        return;
    m_left->setTextCursor(QTextCursor(block)); // the right pane's cursor follows
    m_left->centerCursor();
    m_left->horizontalScrollBar()->setValue(0);
    m_syncing = true; // whatever the cursor moves did to the right pane, it shows the left's rows
    m_right->verticalScrollBar()->setValue(m_left->verticalScrollBar()->value());
    m_right->horizontalScrollBar()->setValue(0);
    m_syncing = false;
    updateNavigation();
}

bool CodeDiffView::goToChange(int hunk)
{
    ensureFresh();
    if (hunk < 0 || hunk >= static_cast<int>(m_diff.hunks.size())) {
        updateNavigation();
        return false;
    }
    moveToRow(m_diff.hunks[std::size_t(hunk)].firstRow);
    return true;
}

bool CodeDiffView::nextChange()
{
    ensureFresh();
    const int row = currentRow();
    for (std::size_t h = 0; h < m_diff.hunks.size(); ++h)
        if (m_diff.hunks[h].firstRow > row)
            return goToChange(static_cast<int>(h));
    return false;
}

bool CodeDiffView::previousChange()
{
    ensureFresh();
    const int row = currentRow();
    for (std::size_t h = m_diff.hunks.size(); h-- > 0;)
        if (m_diff.hunks[h].firstRow < row)
            return goToChange(static_cast<int>(h));
    return false;
}

int CodeDiffView::currentChange() const
{
    ensureFresh();
    const int row = currentRow();
    const int h = m_diff.hunkAtOrAfter(row);
    return h >= 0 && m_diff.hunks[std::size_t(h)].firstRow <= row ? h : -1;
}

void CodeDiffView::updateNavigation()
{
    const int row = currentRow();
    bool before = false, after = false;
    for (const DiffHunk &h : m_diff.hunks) {
        before = before || h.firstRow < row;
        after = after || h.firstRow > row;
    }
    m_previousAction->setEnabled(before);
    m_nextAction->setEnabled(after);
}

} // namespace stitch::views
