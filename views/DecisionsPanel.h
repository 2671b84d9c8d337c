#pragma once
// The Decisions dock: the schedule the Rubric dock scored, decision by decision, for each kernel
// group: the agent that owns it (parallel mapping, memory access, instruction scheduling), its
// value, and every other value with why it is illegal given the other decisions. Picking another
// value overrides the decision; the window then generates, compiles and scores the new schedule.
//   rubric::describeDecisions (worker, MainWindow) -> DecisionsPanel -> decisionChanged -> MainWindow

#include "core/rubric/Alternatives.h"

#include <QWidget>

#include <string>
#include <vector>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;
QT_END_NAMESPACE

namespace stitch::views {

using rubric::DecisionRow;
using rubric::GroupDecisions;

class DecisionsPanel final : public QWidget {
    Q_OBJECT
public:
    enum Column { DecisionColumn, AgentColumn, ValueColumn, ColumnCount };

    explicit DecisionsPanel(QWidget *parent = nullptr);

    /// Shows the scored schedule's decisions; `overridden` lists "group.key" the user has set.
    void setDecisions(std::vector<GroupDecisions> groups, const std::vector<std::string> &overridden);
    /// Nothing to show, and why.
    void setMessage(const QString &text);

    const std::vector<GroupDecisions> &decisions() const { return m_groups; }
    QString summary() const;
    QTreeWidget *tree() const { return m_tree; }
    QPushButton *resetButton() const { return m_reset; }
    /// Picks `value` for `key` of group `group` as the value box does (false: no such decision or
    /// value, or the value is illegal).
    bool choose(int group, const QString &key, int value);

signals:
    void decisionChanged(int group, const QString &key, int value);
    /// Back to the default schedule (every override dropped).
    void resetRequested();

private:
    QLabel *m_summary;
    QPushButton *m_reset;
    QTreeWidget *m_tree;
    std::vector<GroupDecisions> m_groups;
};

} // namespace stitch::views
