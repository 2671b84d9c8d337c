#pragma once
// The Code view in the studio's central area: two programs side by side, rows aligned (hatched
// filler rows where a side has no line), changed lines tinted, changed characters inside them
// marked, both panes scrolling together, next / previous change (Alt+Down / Alt+Up).
//   CodeDiffController (what to compare, worker) -> setDiff(TextDiff) -> two read-only CodeEditors
// The highlighting follows the palette: Breeze Light or Dark (SyntaxRepository::themeFor), with
// tints to match.

#include "core/common/TextDiff.h"

#include <QWidget>

#include <optional>

QT_BEGIN_NAMESPACE
class QAction;
class QComboBox;
class QLabel;
class QToolButton;
QT_END_NAMESPACE

namespace stitch::views {

class CodeEditor;
class SyntaxRepository;

class CodeDiffView final : public QWidget {
    Q_OBJECT
public:
    /// What the two panes hold (the highlighting definition).
    enum class Language { Cuda, Ptx, Sass };
    /// What the Show box offers: the programs' CUDA, their PTX (NVRTC) or their SASS (cuobjdump).
    enum Representation { CudaSource, PtxCode, SassCode, RepresentationCount };

    /// `syntax` must outlive the view.
    explicit CodeDiffView(SyntaxRepository &syntax, QWidget *parent = nullptr);

    /// Shows a diff of two texts: `left` titled `leftTitle`, and so on. Goes to the first change.
    /// While the view is hidden (the Code tab behind the source) the panes are filled when it is
    /// shown, or when an accessor below is called: filling and highlighting two programs of hundreds
    /// of lines is tens of milliseconds on the GUI thread, and each Optimize, step and override sets one.
    void setDiff(const QString &leftTitle, const QString &rightTitle, TextDiff diff, Language language);
    /// The same, diffing here (small texts; the controller diffs on its worker).
    void setTexts(const QString &leftTitle, const QString &left, const QString &rightTitle, const QString &right,
                  Language language);
    /// Nothing to compare, and why; the panes are emptied.
    void setMessage(const QString &text);
    /// A line above the panes (work in progress); the diff shown stays.
    void setStatus(const QString &text);

    /// The Compare box: which pair of programs (e.g. as written / optimized, step / next step).
    void setComparisons(const QStringList &names, int current);
    int comparison() const;
    /// The Step box (enabled only for a step comparison): the steps that can be compared with the one before.
    void setSteps(const QStringList &names, int current);
    int step() const;
    void setStepsEnabled(bool enabled);
    /// The Show box's choice; `why` is the tooltip of an unavailable one (SASS without cuobjdump).
    void setRepresentationAvailable(Representation r, bool available, const QString &why = {});
    Representation representation() const;
    void setRepresentation(Representation r);

    const TextDiff &diff() const;
    CodeEditor *leftPane() const;
    CodeEditor *rightPane() const;
    QString leftTitle() const;
    QString rightTitle() const;
    QString summary() const;
    /// The row (0-based) of each pane's cursor; both panes keep it on the same row.
    int currentRow() const;

    /// Moves both panes to a hunk's first row; false when there is no such hunk.
    bool goToChange(int hunk);
    /// The next (previous) hunk after (before) the current row; false at the last (first).
    bool nextChange();
    bool previousChange();
    /// The hunk the current row is in, or -1.
    int currentChange() const;
    QAction *nextChangeAction() const { return m_nextAction; }
    QAction *previousChangeAction() const { return m_previousAction; }

signals:
    void comparisonChosen(int index);
    void stepChosen(int index);
    void representationChosen(int representation);
    /// A diff (or a message) is on screen.
    void shown();

protected:
    void changeEvent(QEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    void applyTheme();
    /// What setDiff does on screen (setDiff defers it while hidden).
    void applyDiff(const QString &leftTitle, const QString &rightTitle, TextDiff diff, Language language);
    /// A diff set while hidden: applied now.
    void ensureFresh() const;
    struct Pending {
        QString leftTitle, rightTitle;
        TextDiff diff;
        Language language;
    };
    /// Empties a pane: its marks, its numbers, its text (pending highlighting run first).
    void resetPane(CodeEditor *pane);
    void paintMarks();
    void updateNavigation();
    void moveToRow(int row);

    SyntaxRepository &m_syntax;
    CodeEditor *m_left;
    CodeEditor *m_right;
    QLabel *m_leftTitle;
    QLabel *m_rightTitle;
    QComboBox *m_comparisons;
    QComboBox *m_steps;
    QComboBox *m_representation;
    QToolButton *m_previousButton;
    QToolButton *m_nextButton;
    QAction *m_previousAction;
    QAction *m_nextAction;
    QLabel *m_summary;
    TextDiff m_diff;
    Language m_language = Language::Cuda;
    bool m_syncing = false;
    std::optional<Pending> m_pending; ///< set while hidden, applied when shown
};

} // namespace stitch::views
