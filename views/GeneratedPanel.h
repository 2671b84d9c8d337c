#pragma once
// The Generated dock: the CUDA program of the scored schedule, and beside it the previous one with
// what changed marked line by line (an override of block_k, say: its tiles, loops and launch).
//   ScheduleScore::program.source -> setProgram -> diffTexts (core/common/TextDiff.h) -> two CodeEditors

#include <QWidget>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QLabel;
QT_END_NAMESPACE

namespace stitch::views {

class CodeEditor;
class SyntaxRepository;

class GeneratedPanel final : public QWidget {
    Q_OBJECT
public:
    /// `syntax` must outlive the panel.
    explicit GeneratedPanel(SyntaxRepository &syntax, QWidget *parent = nullptr);

    /// The newly scored schedule's program; the one shown before becomes the previous one (unless
    /// it is the same text).
    void setProgram(const QString &source);
    /// No program, and why (shown as a comment in the current view; the previous one is kept).
    void setMessage(const QString &text);

    /// The current program (with blank filler rows where the previous had lines, when comparing).
    CodeEditor *current() const;
    CodeEditor *previous() const;
    QCheckBox *compareBox() const { return m_compare; }
    QString summary() const;
    QString currentSource() const { return m_currentSource; }

protected:
    void showEvent(QShowEvent *event) override;

private:
    /// Shows the programs now, or, while the panel is hidden (a tab behind another), when it shows.
    void refresh();
    void refreshNow();
    /// A refresh waits for the panel to show: the views' accessors bring it forward.
    void ensureFresh() const;

    CodeEditor *m_previous;
    CodeEditor *m_current;
    QCheckBox *m_compare;
    QLabel *m_summary;
    QString m_previousSource;
    QString m_currentSource;
    bool m_stale = false;
};

} // namespace stitch::views
