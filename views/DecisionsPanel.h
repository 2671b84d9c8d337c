#pragma once
// The Decisions dock: the schedule the Rubric dock scored, decision by decision, for each kernel
// group: the agent that owns it (parallel mapping, memory access, instruction scheduling), its
// value, and every other value with why it is illegal given the other decisions. Picking another
// value overrides the decision; the window then generates, compiles and scores the new schedule.
//   schedule + legalValues (worker, MainWindow) -> DecisionsPanel -> decisionChanged -> MainWindow

#include "core/rubric/Rubric.h"
#include "core/schedule/Space.h"

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

/// One decision of one group, with its candidate values judged against the others.
struct DecisionRow {
    std::string key;
    std::string category; ///< categoryName: the agent that decides it
    std::string help;
    int value = 0;
    std::vector<schedule::ValueOption> options;
    /// The performance model's time for the schedule with each option instead (same order; NaN
    /// where the option is illegal or nothing could be generated), registers estimated, as for
    /// GroupDecisions::estimatedMs: the rubric of the alternatives.
    std::vector<double> estimatedMs;
};

struct GroupDecisions {
    std::string name;     ///< the kernel
    std::string strategy; ///< strategyName
    std::vector<DecisionRow> rows;
    double estimatedMs = 0; ///< the schedule as it is, on the same terms as the alternatives
};

/// Every decision of every group of `schedule` with its legal values for `problem` (a group the
/// analysis rejects is left out); with `rubric`, each legal alternative's predicted time too (one
/// generation and static score per alternative, no NVRTC).
std::vector<GroupDecisions> describeDecisions(const schedule::Schedule &schedule, const schedule::Problem &problem,
                                              const rubric::Rubric *rubric = nullptr);

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
