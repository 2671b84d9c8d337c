#include "views/AgentsModel.h"

#include <QBrush>
#include <QPalette>

namespace stitch::views {

QString formatMs(double ms)
{
    if (ms <= 0)
        return QStringLiteral("-");
    return QString::fromStdString(agents::msText(ms));
}

AgentsModel::AgentsModel(QObject *parent) : QAbstractTableModel(parent) {}

void AgentsModel::setTrace(std::shared_ptr<const agents::Trace> trace)
{
    beginResetModel();
    m_trace = std::move(trace);
    endResetModel();
}

int AgentsModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() || !m_trace)
        return 0;
    return static_cast<int>(m_trace->decisions.size()) + 2; // Parse, the decisions, Stitch
}

int AgentsModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

const agents::TraceDecision *AgentsModel::decisionAt(int row) const
{
    if (!m_trace || row < 1 || row > static_cast<int>(m_trace->decisions.size()))
        return nullptr;
    return &m_trace->decisions[static_cast<std::size_t>(row - 1)];
}

QVariant AgentsModel::data(const QModelIndex &index, int role) const
{
    if (!m_trace || !index.isValid() || index.row() >= rowCount())
        return {};
    const int row = index.row();
    const agents::TraceDecision *d = decisionAt(row);
    if (role == DecisionIndexRole)
        return d ? row - 1 : -1;
    const bool last = row == rowCount() - 1;
    if (role == Qt::ToolTipRole) {
        if (d)
            return QString::fromStdString(d->rationale);
        const agents::TraceStage &s = last ? m_trace->integrate : m_trace->parse;
        QString text = QString::fromStdString(s.summary);
        for (const auto &n : s.notes)
            text += QStringLiteral("\n") + QString::fromStdString(n);
        return text;
    }
    if (role == Qt::TextAlignmentRole && (index.column() == ProbabilityColumn || index.column() == TimeColumn))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && d && d->pinned && index.column() == ChoiceColumn)
        return QBrush(QPalette().color(QPalette::Link));
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case StepColumn:
        return row;
    case AgentColumn:
        return QString::fromUtf8(agents::agentTitle(d ? d->agent : last ? agents::AgentKind::Stitch : agents::AgentKind::Parse));
    case DecisionColumn:
        if (d)
            return QStringLiteral("%1 @ %2").arg(QString::fromStdString(d->key),
                                                 QString::fromStdString(d->key == "fuse" ? d->subject : d->group));
        return last ? tr("integrate") : tr("lift");
    case ChoiceColumn:
        if (d && d->chosen >= 0 && d->chosen < static_cast<int>(d->options.size()))
            return QString::fromStdString(d->options[static_cast<std::size_t>(d->chosen)].text) +
                   (d->pinned ? tr(" (pinned)") : QString());
        return QString::fromStdString(last ? m_trace->integrate.summary : m_trace->parse.summary);
    case ProbabilityColumn:
        if (d && d->chosen >= 0 && d->chosen < static_cast<int>(d->options.size()))
            return QString::number(d->options[static_cast<std::size_t>(d->chosen)].probability, 'f', 2);
        return {};
    case TimeColumn:
        if (d)
            return formatMs(d->msAfter);
        return last ? formatMs(m_trace->finalMs) : formatMs(m_trace->inputMs);
    default:
        return {};
    }
}

QVariant AgentsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case StepColumn: return tr("#");
    case AgentColumn: return tr("Agent");
    case DecisionColumn: return tr("Decision");
    case ChoiceColumn: return tr("Chosen");
    case ProbabilityColumn: return tr("p");
    case TimeColumn: return tr("Time after");
    default: return {};
    }
}

} // namespace stitch::views
