#include "views/GeneratedPanel.h"

#include "views/CodeEditor.h"
#include "views/SyntaxRepository.h"
#include "views/WrapLabel.h"

#include "core/common/TextDiff.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>

namespace stitch::views {

namespace {

const QColor kRemoved(255, 205, 205);
const QColor kAdded(205, 240, 205);
const QColor kChanged(255, 240, 190);
const QColor kChangedText(255, 205, 120);

} // namespace

GeneratedPanel::GeneratedPanel(SyntaxRepository &syntax, QWidget *parent)
    : QWidget(parent), m_previous(new CodeEditor(syntax, this)), m_current(new CodeEditor(syntax, this)),
      m_compare(new QCheckBox(tr("Beside the previous schedule's"), this)), m_summary(new QLabel(this))
{
    for (CodeEditor *e : {m_previous, m_current}) {
        e->setReadOnly(true);
        e->setDefinition(syntax.cudaDefinition());
        e->setLineWrapMode(QPlainTextEdit::NoWrap);
    }
    m_previous->setObjectName(QStringLiteral("previousProgram"));
    m_current->setObjectName(QStringLiteral("generatedView"));
    m_current->setPlaceholderText(tr("The CUDA program generated for the scored schedule appears here."));
    m_compare->setChecked(true);
    m_compare->setToolTip(tr("Show the program generated before this one beside it, changed lines marked"));
    wrapWithinDock(m_summary);
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_previous);
    split->addWidget(m_current);
    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_compare);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(split);
    // The two sides scroll together: their rows are aligned.
    connect(m_previous->verticalScrollBar(), &QScrollBar::valueChanged, m_current->verticalScrollBar(),
            &QScrollBar::setValue);
    connect(m_current->verticalScrollBar(), &QScrollBar::valueChanged, m_previous->verticalScrollBar(),
            &QScrollBar::setValue);
    connect(m_compare, &QCheckBox::toggled, this, &GeneratedPanel::refresh);
    refresh();
}

void GeneratedPanel::setProgram(const QString &source)
{
    if (source != m_currentSource) {
        if (!m_currentSource.isEmpty())
            m_previousSource = m_currentSource;
        m_currentSource = source;
    }
    refresh();
}

void GeneratedPanel::setMessage(const QString &text)
{
    m_stale = false; // the message replaces a refresh still waiting
    if (!m_currentSource.isEmpty())
        m_previousSource = m_currentSource;
    m_currentSource.clear();
    m_previous->setVisible(false); // nothing to compare with
    m_current->setLineNumbers({});
    m_current->setMarks({}, {}, {});
    m_current->replaceText(QStringLiteral("// %1").arg(text));
    m_summary->setText(text);
}

CodeEditor *GeneratedPanel::current() const
{
    ensureFresh();
    return m_current;
}

CodeEditor *GeneratedPanel::previous() const
{
    ensureFresh();
    return m_previous;
}

void GeneratedPanel::ensureFresh() const
{
    if (m_stale)
        const_cast<GeneratedPanel *>(this)->refreshNow();
}

void GeneratedPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    ensureFresh();
}

void GeneratedPanel::refresh()
{
    // The diff of two programs of hundreds of lines and their highlighting are tens of
    // milliseconds on the GUI thread: not spent for a panel no one sees (every step of the Agents
    // dock and every rescoring sets a program).
    if (!isVisible()) {
        m_stale = true;
        return;
    }
    refreshNow();
}

void GeneratedPanel::refreshNow()
{
    m_stale = false;
    const bool compare = m_compare->isChecked() && !m_previousSource.isEmpty() && !m_currentSource.isEmpty();
    m_previous->setVisible(compare);
    if (!compare) {
        m_current->setLineNumbers({});
        m_current->setMarks({}, {}, {});
        m_current->replaceText(m_currentSource);
        const int lines = m_currentSource.isEmpty() ? 0 : int(splitLines(m_currentSource.toStdString()).size());
        m_summary->setText(m_currentSource.isEmpty() ? tr("No program yet.") : tr("%1 lines generated.").arg(lines));
        return;
    }
    // Rows aligned, each side numbered with its own lines, the changed characters marked too.
    const TextDiff diff = diffTexts(m_previousSource.toStdString(), m_currentSource.toStdString());
    const auto &right = diff.right;
    QStringList leftText, rightText;
    QList<QPair<int, QColor>> leftMarks, rightMarks;
    QList<CodeEditor::TextHighlight> leftChars, rightChars;
    QList<int> leftNumbers, rightNumbers;
    const int changed = diff.changedRows, removed = diff.removedRows, added = diff.addedRows;
    const auto position = [](const std::string &line, int byte) {
        return static_cast<int>(QString::fromUtf8(line.data(), std::clamp<qsizetype>(byte, 0, qsizetype(line.size()))).size());
    };
    for (std::size_t r = 0; r < diff.rows.size(); ++r) {
        const DiffRow &row = diff.rows[r];
        const int number = static_cast<int>(r) + 1;
        leftText << (row.left >= 0 ? QString::fromStdString(diff.left[std::size_t(row.left)]) : QString());
        rightText << (row.right >= 0 ? QString::fromStdString(right[std::size_t(row.right)]) : QString());
        leftNumbers << row.left + 1;
        rightNumbers << row.right + 1;
        switch (row.kind) {
        case DiffRow::Kind::Same: break;
        case DiffRow::Kind::Changed:
            leftMarks.append({number, kChanged});
            rightMarks.append({number, kChanged});
            for (const TextRange &t : diff.changes[r].left) {
                const std::string &line = diff.left[std::size_t(row.left)];
                leftChars.append({number, position(line, t.begin), position(line, t.end) - position(line, t.begin), kChangedText});
            }
            for (const TextRange &t : diff.changes[r].right) {
                const std::string &line = right[std::size_t(row.right)];
                rightChars.append({number, position(line, t.begin), position(line, t.end) - position(line, t.begin), kChangedText});
            }
            break;
        case DiffRow::Kind::Removed: leftMarks.append({number, kRemoved}); break;
        case DiffRow::Kind::Added: rightMarks.append({number, kAdded}); break;
        }
    }
    m_current->replaceText(rightText.join(QLatin1Char('\n'))); // the side coloured first
    m_previous->replaceText(leftText.join(QLatin1Char('\n')));
    m_previous->setLineNumbers(leftNumbers);
    m_current->setLineNumbers(rightNumbers);
    m_previous->setMarks(leftMarks, leftChars, {});
    m_current->setMarks(rightMarks, rightChars, {});
    m_summary->setText(changed + removed + added == 0
                           ? tr("The same program as before (%1 lines).").arg(right.size())
                           : tr("Left: the previous program; right: this one. %1 changed, %2 removed, %3 added "
                                "line(s); rows are aligned (blank rows fill the gaps).")
                                 .arg(changed)
                                 .arg(removed)
                                 .arg(added));
}

QString GeneratedPanel::summary() const
{
    ensureFresh();
    return m_summary->text();
}

} // namespace stitch::views
