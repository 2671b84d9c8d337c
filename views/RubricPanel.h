#pragma once
// The Rubric dock: every rubric dimension of the open program under its default schedule, as a
// radar chart and a table (score, the sentence for a learner, the evidence as tooltip), for the
// whole program or one kernel.
//   lifted graph + arch -> rubric::scoreSchedule (worker, MainWindow) -> RubricModel -> RadarChart / table
// Scores are static (docs/RUBRIC.md); the predicted time is the performance model's estimate.

#include "core/rubric/Rubric.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QTreeView;
QT_END_NAMESPACE

namespace stitch::views {

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

/// A radar (spider) chart: one spoke per dimension, rings at scores 1-5, the scores as a polygon;
/// a hard violation's spoke is drawn red.
class RadarChart final : public QWidget {
    Q_OBJECT
public:
    explicit RadarChart(QWidget *parent = nullptr);
    void setScores(const std::vector<rubric::RubricScore> &scores);
    /// The polygon's vertices in widget coordinates, spoke by spoke (for tests).
    QList<QPointF> vertices() const;
    QSize sizeHint() const override { return {320, 280}; }
    QSize minimumSizeHint() const override { return {200, 180}; }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QPointF spokePoint(int spoke, double score) const;
    QPointF centre() const;
    double radius() const;

    std::vector<rubric::RubricScore> m_scores;
};

class RubricPanel final : public QWidget {
    Q_OBJECT
public:
    explicit RubricPanel(QWidget *parent = nullptr);

    /// A scored program (the scope box lists the program and each kernel), or the error that
    /// stopped scoring; `whose` names the schedule scored ("default schedule", "your schedule",
    /// "the agents' schedule after step 3").
    void setResult(std::shared_ptr<const Result<rubric::ScheduleScore>> result, const QString &whose);
    /// Nothing to score, and why (no graph, sizes missing, an unknown architecture, scoring).
    void setMessage(const QString &text);

    QString summary() const;
    RubricModel *model() const { return m_model; }
    RadarChart *chart() const { return m_chart; }
    QComboBox *scopeBox() const { return m_scope; }
    QTreeView *table() const { return m_table; }

private:
    void showScope(int index);

    std::shared_ptr<const Result<rubric::ScheduleScore>> m_result;
    QLabel *m_summary;
    QComboBox *m_scope;
    RadarChart *m_chart;
    RubricModel *m_model;
    QTreeView *m_table;
};

} // namespace stitch::views
