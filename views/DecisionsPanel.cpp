#include "DecisionsPanel.h"

#include "views/Text.h"
#include "views/WrapLabel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace stitch::views {

DecisionsPanel::DecisionsPanel(QWidget *parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_reset(new QPushButton(tr("Default schedule"), this)),
      m_tree(new QTreeWidget(this))
{
    wrapWithinDock(m_summary);
    m_reset->setToolTip(tr("Drop every override and score the default schedule again"));
    m_reset->setEnabled(false);
    m_tree->setColumnCount(ColumnCount);
    m_tree->setHeaderLabels({tr("Decision"), tr("Agent's area"), tr("Value")});
    m_tree->headerItem()->setToolTip(AgentColumn, tr("The agent that owns this decision; in the studio every default "
                                                     "still comes from the measured heuristics (the trained agents decide "
                                                     "in `stitchcuda optimize`)"));
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setSectionResizeMode(DecisionColumn, QHeaderView::ResizeToContents);
    m_tree->header()->setSectionResizeMode(AgentColumn, QHeaderView::ResizeToContents);
    m_tree->header()->setStretchLastSection(true);
    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_reset);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_tree);
    connect(m_reset, &QPushButton::clicked, this, &DecisionsPanel::resetRequested);
    setMessage(tr("The decisions of the scored schedule appear here."));
}

void DecisionsPanel::setMessage(const QString &text)
{
    m_groups.clear();
    m_tree->clear();
    m_summary->setText(text);
}

void DecisionsPanel::setDecisions(std::vector<GroupDecisions> groups, const std::vector<std::string> &overridden)
{
    m_groups = std::move(groups);
    m_tree->clear();
    int decisions = 0;
    for (int gi = 0; gi < static_cast<int>(m_groups.size()); ++gi) {
        const GroupDecisions &g = m_groups[static_cast<std::size_t>(gi)];
        auto *top = new QTreeWidgetItem(
            m_tree, {std::isfinite(g.estimatedMs) && g.estimatedMs > 0
                         ? tr("%1 [%2]: estimated %3 us as it is; each other value's estimate is in its list")
                               .arg(qs(g.name), qs(g.strategy))
                               .arg(g.estimatedMs * 1e3, 0, 'f', 1)
                         : tr("%1 [%2]").arg(qs(g.name), qs(g.strategy))});
        top->setFirstColumnSpanned(true);
        for (const DecisionRow &row : g.rows) {
            ++decisions;
            const bool isOverride =
                std::find(overridden.begin(), overridden.end(), g.name + "." + row.key) != overridden.end();
            auto *item = new QTreeWidgetItem(top, {qs(row.key) + (isOverride ? tr(" (yours)") : QString()),
                                                   spacedName(row.category)});
            item->setToolTip(DecisionColumn, qs(row.help));
            auto *box = new QComboBox(m_tree);
            box->setObjectName(qs(g.name + "." + row.key));
            auto *model = qobject_cast<QStandardItemModel *>(box->model());
            int illegal = 0;
            for (std::size_t oi = 0; oi < row.options.size(); ++oi) {
                const auto &o = row.options[oi];
                const double ms = oi < row.estimatedMs.size() ? row.estimatedMs[oi] : std::nan("");
                QString text = o.legal ? qs(o.text) : tr("%1 (illegal)").arg(qs(o.text));
                if (o.legal && o.value != row.value && std::isfinite(ms) && g.estimatedMs > 0)
                    text += tr("  %1 us (%2%3%)")
                                .arg(ms * 1e3, 0, 'f', 1)
                                .arg(ms >= g.estimatedMs ? QStringLiteral("+") : QString())
                                .arg((ms / g.estimatedMs - 1) * 100, 0, 'f', 0);
                box->addItem(text, o.value);
                if (!o.legal) {
                    ++illegal;
                    box->setItemData(box->count() - 1, qs(o.why), Qt::ToolTipRole);
                    if (model && o.value != row.value)
                        model->item(box->count() - 1)->setEnabled(false);
                }
            }
            box->setCurrentIndex(box->findData(row.value));
            box->setToolTip((illegal ? tr("%1 of %2 values are illegal given the other decisions (hover one for why).")
                                           .arg(illegal)
                                           .arg(row.options.size())
                                     : tr("Every value is legal given the other decisions.")) +
                            tr("\nTimes: the performance model's estimate for the schedule with that value instead "
                               "(registers estimated, not compiled), against this value's."));
            m_tree->setItemWidget(item, ValueColumn, box);
            connect(box, &QComboBox::activated, this, [this, gi, key = qs(row.key), box](int index) {
                emit decisionChanged(gi, key, box->itemData(index).toInt());
            });
        }
    }
    m_tree->expandAll();
    m_reset->setEnabled(!overridden.empty());
    m_summary->setText(overridden.empty()
                           ? tr("Default schedule (the heuristics, checked by the performance model; Optimize runs the agents): %1 decisions in %2 kernel(s). "
                                 "Pick another value to override one.")
                                 .arg(decisions)
                                 .arg(m_groups.size())
                           : tr("Your schedule: %1 decision(s) overridden.").arg(overridden.size()));
}

bool DecisionsPanel::choose(int group, const QString &key, int value)
{
    if (group < 0 || group >= static_cast<int>(m_groups.size()))
        return false;
    const GroupDecisions &g = m_groups[static_cast<std::size_t>(group)];
    auto *box = m_tree->findChild<QComboBox *>(qs(g.name) + QLatin1Char('.') + key);
    if (!box)
        return false;
    const int index = box->findData(value);
    auto *model = qobject_cast<QStandardItemModel *>(box->model());
    if (index < 0 || (model && !model->item(index)->isEnabled()))
        return false;
    box->setCurrentIndex(index);
    emit box->activated(index);
    return true;
}

QString DecisionsPanel::summary() const
{
    return m_summary->text();
}

} // namespace stitch::views
