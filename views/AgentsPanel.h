#pragma once
// The Agents dock: the timeline of the last Optimize (Parse, every decision, Stitch) and, for the
// selected decision, the inspector: every value with its probability, the model's time with it,
// whether it was legal and why not, and the rationale sentence.
//   OptimizeController::finished -> AgentsPanel::setResult -> AgentsModel + inspector

#include "core/agents/Session.h"

#include <QWidget>

#include <memory>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
class QTableView;
class QToolButton;
class QTreeWidget;
QT_END_NAMESPACE

namespace stitch::views {

class AgentsModel;

class AgentsPanel final : public QWidget {
    Q_OBJECT
public:
    enum OptionColumn { ValueColumn, ProbabilityColumn, TimeColumn, ReasonColumn, OptionColumnCount };

    explicit AgentsPanel(QWidget *parent = nullptr);

    void setResult(std::shared_ptr<const agents::SourceResult> result);
    /// Nothing to show, and why (before the first Optimize, while one runs, after a failure).
    void setMessage(const QString &text);

    /// Selects a timeline row (0: Parse; the last: Stitch); false when out of range.
    bool selectStep(int row);
    int selectedStep() const;
    void stepForward();
    void stepBack();

    AgentsModel *model() const { return m_model; }
    /// The result shown (null before the first Optimize and after a failure).
    const agents::SourceResult *result() const { return m_result.get(); }
    std::shared_ptr<const agents::SourceResult> sharedResult() const { return m_result; }
    QTableView *timeline() const { return m_timeline; }
    QTreeWidget *options() const { return m_options; }
    QString summary() const;
    QString rationale() const;
    QPushButton *overrideButton() const { return m_override; }
    QToolButton *codeChangesButton() const { return m_codeChanges; }
    /// "Retrain with my overrides": enabled when the result shown was made with pins and no
    /// retraining runs (setRetraining).
    QPushButton *retrainButton() const { return m_retrain; }
    void setRetraining(bool running);
    /// The pins the last run was made with (shown, and cleared by "Clear overrides").
    void setPins(const QStringList &pins);
    /// Picks option `option` of the selected decision in the inspector (what a click does); false
    /// when no decision is selected or there is no such option.
    bool selectOption(int option);

signals:
    /// Pin the selected decision to the selected value and run the agents again around it:
    /// "AGENT.DECISION@GROUP=VALUE" (agents::parsePin's syntax).
    void overrideRequested(const QString &pin);
    void clearOverridesRequested();
    /// Teach the agents the pinned values of the result shown (the Training dock shows the run).
    void retrainRequested();
    /// The timeline row shown now (a new selection, or a new result): the other docks follow it.
    void stepShown(int row);
    /// Show what the step at timeline row `row` changed in the program (the Code view): the
    /// "Code Changes" button, or a double click on the step.
    void codeChangesRequested(int row);

private:
    void showStep(int row);
    void fillInspector(int row);
    void updateOverrideButton();
    void updateRetrainButton();

    std::shared_ptr<const agents::SourceResult> m_result;
    AgentsModel *m_model;
    QLabel *m_summary;
    QTableView *m_timeline;
    QToolButton *m_back, *m_forward, *m_codeChanges;
    QLabel *m_rationale;
    QTreeWidget *m_options;
    QPushButton *m_override;
    QLabel *m_pins;
    QPushButton *m_clearPins;
    QPushButton *m_retrain;
    bool m_retraining = false;
    int m_announcedRow = -1; ///< the row stepShown last named (once per selection)
};

} // namespace stitch::views
