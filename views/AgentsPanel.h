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
    QTableView *timeline() const { return m_timeline; }
    QTreeWidget *options() const { return m_options; }
    QString summary() const;
    QString rationale() const;

private:
    void showStep(int row);

    std::shared_ptr<const agents::SourceResult> m_result;
    AgentsModel *m_model;
    QLabel *m_summary;
    QTableView *m_timeline;
    QToolButton *m_back, *m_forward;
    QLabel *m_rationale;
    QTreeWidget *m_options;
};

} // namespace stitch::views
