#pragma once
// The Training dock's tables: a training run's curves, one row per PPO update (a live retraining's
// or a CSV's), and after a retraining each pinned value's probability before and after.
//   RetrainController::updated / agents::readTrainingLog -> TrainingCurveModel -> the charts
//   RetrainController::finished (RetrainReport::pins)    -> PinnedProbabilityModel -> the table

#include "core/agents/Retraining.h"

#include <QAbstractTableModel>

#include <vector>

namespace stitch::views {

class TrainingCurveModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        UpdateColumn,
        EpisodeColumn,
        RewardColumn,      ///< mean final reward: ln(speedup over the input)
        ReturnColumn,
        PolicyLossColumn,
        ValueLossColumn,
        EntropyColumn,
        HeldOutColumn,     ///< greedy / search baseline on the held-out problems, where measured
        ColumnCount
    };

    explicit TrainingCurveModel(QObject *parent = nullptr);

    void setRows(std::vector<agents::TrainProgress> rows);
    void appendRow(const agents::TrainProgress &row);
    void clear() { setRows({}); }
    const std::vector<agents::TrainProgress> &rows() const { return m_rows; }
    /// A curve's value at a row (the column's number; NaN where a row has none, e.g. held out).
    double value(int row, int column) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<agents::TrainProgress> m_rows;
};

class PinnedProbabilityModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { DecisionColumn, ValueColumn, OutcomeColumn, BeforeColumn, AfterColumn, ChangeColumn, ColumnCount };
    enum Role { NumberRole = Qt::UserRole + 1 }; ///< the probability (before, after, change) as a double

    explicit PinnedProbabilityModel(QObject *parent = nullptr);

    void setPins(std::vector<agents::PinnedOutcome> pins);
    const std::vector<agents::PinnedOutcome> &pins() const { return m_pins; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<agents::PinnedOutcome> m_pins;
};

} // namespace stitch::views
