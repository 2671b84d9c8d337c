#pragma once
// The Rubric dock: every rubric dimension of the open program under its schedule (the default, the
// user's, or an agents' step) as a table (score, the sentence for a learner, the evidence as
// tooltip), and a radar of the six dimensions the agents read: the program as written, the agents'
// previous step and the current schedule overlaid; for the whole program or one kernel.
//   lifted graph + arch -> rubric::scoreSchedule, scoreAsWritten (worker, MainWindow) -> RubricModel
//   -> table;  + the trace's step (MainWindow::showAgentStep) -> RubricRadar
// Scores are static (docs/RUBRIC.md); the predicted time is the performance model's estimate.

#include "core/rubric/Rubric.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>
#include <optional>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QTreeView;
QT_END_NAMESPACE

namespace stitch::views {

class RubricRadar;

/// One scope's scores (the program, or one kernel) as rows: dimension, score, sentence.
class RubricModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { DimensionColumn, ScoreColumn, SentenceColumn, ColumnCount };
    enum Role { ScoreRole = Qt::UserRole + 1, HardViolationRole };

    using QAbstractTableModel::QAbstractTableModel;

    /// Shows `scores` (a RubricReport's program scores or one kernel's).
    void setScores(std::vector<rubric::RubricScore> scores);
    const std::vector<rubric::RubricScore> &scores() const { return m_scores; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<rubric::RubricScore> m_scores;
};

/// The program as written on the radar's dimensions (agents::kStaticDimensions, in that order): for
/// a .cu, rubric::scoreAsWritten's program scores; a dimension it cannot give, and every dimension of
/// a .te, the generic schedule's (rubric::genericSchedule), marked as such. A dimension that applies
/// to no kernel (bank conflicts without shared memory) counts 5, as the agents' scores count it
/// (agents::Score::dimensions), so the series compares with the trace's.
struct AsWrittenScores {
    enum class Source { Code, GenericSchedule, DoesNotApply };
    std::vector<rubric::RubricScore> scores; ///< one per dimension; empty when none could be scored
    std::vector<Source> sources;             ///< per dimension: where its score comes from
    QString note;                            ///< why the generic schedule stands in, where it does
};

/// The Agents dock's selected step as the trace recorded it (TraceDecision's dimensions before and
/// after), in agents::kStaticDimensions order.
struct AgentStepScores {
    QString previousName; ///< "before step 3"
    std::vector<double> previous;
    QString currentName; ///< "after step 3"; empty: the current series is the scored schedule (Stitch)
    std::vector<double> current;
};

class RubricPanel final : public QWidget {
    Q_OBJECT
public:
    explicit RubricPanel(QWidget *parent = nullptr);

    /// A scored program (the scope box lists the program and each kernel), or the error that
    /// stopped scoring; `whose` names the schedule scored ("default schedule", "your schedule",
    /// "the agents' schedule after step 3").
    void setResult(std::shared_ptr<const Result<rubric::ScheduleScore>> result, const QString &whose);
    /// Nothing to score, and why (no graph, sizes missing, an unknown architecture, scoring). The
    /// radar keeps the program as written and the agents' step (set apart, below).
    void setMessage(const QString &text);
    /// The program as written for the radar (null: none, e.g. the program was not lifted).
    void setAsWritten(std::shared_ptr<const AsWrittenScores> asWritten);
    /// The agents' step the schedule comes from (nullopt: the schedule is the default or the user's).
    void setStep(std::optional<AgentStepScores> step);

    QString summary() const;
    /// The scored program shown (null before the first scoring) and whose schedule it is.
    const Result<rubric::ScheduleScore> *result() const { return m_result.get(); }
    QString whose() const { return m_whose; }
    RubricModel *model() const { return m_model; }
    RubricRadar *radar() const { return m_radar; }
    QComboBox *scopeBox() const { return m_scope; }
    QTreeView *table() const { return m_table; }

private:
    void showScope(int index);
    /// Draws the radar for the scope shown, from the table's scores, the program as written and the step.
    void updateRadar();
    /// Spoke `dimension`'s tooltip: each series' score, the table's sentence and evidence.
    QString dimensionToolTip(const std::string &dimension, const QStringList &seriesLines) const;

    std::shared_ptr<const Result<rubric::ScheduleScore>> m_result;
    QString m_whose; ///< the schedule the table scores ("default schedule", "the agents' schedule after step 3")
    std::shared_ptr<const AsWrittenScores> m_asWritten;
    std::optional<AgentStepScores> m_step;
    QLabel *m_summary;
    QComboBox *m_scope;
    RubricRadar *m_radar;
    RubricModel *m_model;
    QTreeView *m_table;
};

} // namespace stitch::views
