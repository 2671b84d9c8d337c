#pragma once
// The agents' timeline: Parse, every decision in order, Stitch's integration (agents::Trace).
//   agents::SourceResult -> AgentsModel (table) -> AgentsPanel's timeline and inspector

#include "core/agents/Trace.h"

#include <QAbstractTableModel>

#include <memory>

namespace stitch::views {

class AgentsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StepColumn, AgentColumn, DecisionColumn, ChoiceColumn, ProbabilityColumn, TimeColumn, ColumnCount };
    enum Role { DecisionIndexRole = Qt::UserRole + 1 }; ///< index into trace().decisions, -1 for Parse and Stitch

    explicit AgentsModel(QObject *parent = nullptr);

    void setTrace(std::shared_ptr<const agents::Trace> trace);
    const agents::Trace *trace() const { return m_trace.get(); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// The decision a row shows, or null (Parse, Stitch, out of range).
    const agents::TraceDecision *decisionAt(int row) const;

private:
    std::shared_ptr<const agents::Trace> m_trace;
};

/// "133.3 us", "2.663 ms".
QString formatMs(double ms);

} // namespace stitch::views
