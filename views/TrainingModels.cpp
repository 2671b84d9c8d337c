#include "views/TrainingModels.h"

#include <cmath>
#include <limits>

namespace stitch::views {

TrainingCurveModel::TrainingCurveModel(QObject *parent) : QAbstractTableModel(parent) {}

void TrainingCurveModel::setRows(std::vector<agents::TrainProgress> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

void TrainingCurveModel::appendRow(const agents::TrainProgress &row)
{
    const int at = rowCount();
    beginInsertRows({}, at, at);
    m_rows.push_back(row);
    endInsertRows();
}

int TrainingCurveModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int TrainingCurveModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

double TrainingCurveModel::value(int row, int column) const
{
    if (row < 0 || row >= rowCount())
        return std::numeric_limits<double>::quiet_NaN();
    const agents::TrainProgress &r = m_rows[static_cast<std::size_t>(row)];
    switch (column) {
    case UpdateColumn:
        return r.update;
    case EpisodeColumn:
        return r.episode;
    case RewardColumn:
        return r.meanFinalReward;
    case ReturnColumn:
        return r.meanReturn;
    case PolicyLossColumn:
        return r.stats.policyLoss;
    case ValueLossColumn:
        return r.stats.valueLoss;
    case EntropyColumn:
        return r.stats.entropy;
    case HeldOutColumn:
        return r.heldOut ? r.heldOut->geomean : std::numeric_limits<double>::quiet_NaN();
    default:
        return std::numeric_limits<double>::quiet_NaN();
    }
}

QVariant TrainingCurveModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    if (role == Qt::TextAlignmentRole)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    const double v = value(index.row(), index.column());
    if (std::isnan(v))
        return QString();
    if (index.column() == UpdateColumn || index.column() == EpisodeColumn)
        return static_cast<int>(v);
    return QString::number(v, 'f', index.column() == HeldOutColumn ? 3 : 4);
}

QVariant TrainingCurveModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case UpdateColumn:
        return tr("Update");
    case EpisodeColumn:
        return tr("Episode");
    case RewardColumn:
        return tr("Final reward");
    case ReturnColumn:
        return tr("Return");
    case PolicyLossColumn:
        return tr("Policy loss");
    case ValueLossColumn:
        return tr("Value loss");
    case EntropyColumn:
        return tr("Entropy");
    case HeldOutColumn:
        return tr("Held out");
    default:
        return {};
    }
}

PinnedProbabilityModel::PinnedProbabilityModel(QObject *parent) : QAbstractTableModel(parent) {}

void PinnedProbabilityModel::setPins(std::vector<agents::PinnedOutcome> pins)
{
    beginResetModel();
    m_pins = std::move(pins);
    endResetModel();
}

int PinnedProbabilityModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_pins.size());
}

int PinnedProbabilityModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant PinnedProbabilityModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const agents::PinnedOutcome &p = m_pins[static_cast<std::size_t>(index.row())];
    const int column = index.column();
    if (role == NumberRole) {
        if (column == BeforeColumn)
            return p.before;
        if (column == AfterColumn)
            return p.after;
        if (column == ChangeColumn)
            return p.after - p.before;
        return {};
    }
    if (role == Qt::TextAlignmentRole && column >= BeforeColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && column == OutcomeColumn)
        return p.won ? tr("Your value's program (%1 ms) beats the agents' own (%2 ms) by the model: the agents were "
                          "taught to choose it")
                           .arg(p.pinnedMs, 0, 'g', 4)
                           .arg(p.agentsMs, 0, 'g', 4)
                     : tr("Your value's program (%1 ms) does not beat the agents' own (%2 ms) by the model: not "
                          "taught, only PPO moved it")
                           .arg(p.pinnedMs, 0, 'g', 4)
                           .arg(p.agentsMs, 0, 'g', 4);
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case DecisionColumn:
        return QString::fromStdString(p.decision);
    case ValueColumn:
        return QString::fromStdString(p.value);
    case OutcomeColumn:
        return p.won ? tr("won: learnt") : tr("lost: not learnt");
    case BeforeColumn:
        return QString::number(p.before, 'f', 3);
    case AfterColumn:
        return QString::number(p.after, 'f', 3);
    case ChangeColumn:
        return QStringLiteral("%1%2").arg(p.after >= p.before ? QStringLiteral("+") : QString()).arg(p.after - p.before, 0, 'f', 3);
    default:
        return {};
    }
}

QVariant PinnedProbabilityModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case DecisionColumn:
        return tr("Decision");
    case ValueColumn:
        return tr("Pinned value");
    case OutcomeColumn:
        return tr("Your program");
    case BeforeColumn:
        return tr("p before");
    case AfterColumn:
        return tr("p after");
    case ChangeColumn:
        return tr("Change");
    default:
        return {};
    }
}

} // namespace stitch::views
