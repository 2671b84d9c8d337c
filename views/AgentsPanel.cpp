#include "views/AgentsPanel.h"

#include "views/AgentsModel.h"
#include "views/WrapLabel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace stitch::views {

AgentsPanel::AgentsPanel(QWidget *parent)
    : QWidget(parent), m_model(new AgentsModel(this)), m_summary(new QLabel(this)), m_timeline(new QTableView(this)),
      m_back(new QToolButton(this)), m_forward(new QToolButton(this)), m_codeChanges(new QToolButton(this)), m_rationale(new QLabel(this)),
      m_options(new QTreeWidget(this)), m_override(new QPushButton(tr("Override"), this)), m_pins(new QLabel(this)),
      m_clearPins(new QPushButton(tr("Clear overrides"), this)),
      m_retrain(new QPushButton(tr("Retrain with my overrides"), this))
{
    m_retrain->setObjectName(QStringLiteral("retrainButton"));
    m_retrain->setToolTip(tr("Teach the agents your pinned values where they won, in the background (the Training "
                             "dock shows the curves); Optimize then uses the retrained copy, never the shipped agents"));
    m_retrain->setVisible(false);
    connect(m_retrain, &QPushButton::clicked, this, &AgentsPanel::retrainRequested);
    m_override->setToolTip(tr("Pin the selected value and let the agents decide the rest around it"));
    m_override->setEnabled(false);
    connect(m_override, &QPushButton::clicked, this, [this] {
        const agents::TraceDecision *d = m_model->decisionAt(selectedStep());
        QTreeWidgetItem *item = m_options->currentItem();
        if (!d || !item)
            return;
        const int option = m_options->indexOfTopLevelItem(item);
        if (option < 0 || option >= static_cast<int>(d->options.size()) || !d->options[static_cast<std::size_t>(option)].legal)
            return;
        Q_EMIT overrideRequested(QString::fromStdString(d->id + "=" + d->options[static_cast<std::size_t>(option)].text));
    });
    connect(m_clearPins, &QPushButton::clicked, this, &AgentsPanel::clearOverridesRequested);
    m_pins->setObjectName(QStringLiteral("pinsLabel"));
    wrapWithinDock(m_pins);
    m_clearPins->setVisible(false);
    m_pins->setVisible(false);
    wrapWithinDock(m_summary);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_back->setText(tr("Back"));
    m_back->setToolTip(tr("The previous decision (Alt+Left)"));
    m_back->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    m_forward->setText(tr("Forward"));
    m_forward->setToolTip(tr("The next decision (Alt+Right)"));
    m_forward->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Right));
    connect(m_back, &QToolButton::clicked, this, &AgentsPanel::stepBack);
    connect(m_forward, &QToolButton::clicked, this, &AgentsPanel::stepForward);
    m_codeChanges->setObjectName(QStringLiteral("codeChangesButton"));
    m_codeChanges->setText(tr("Code Changes"));
    m_codeChanges->setToolTip(tr("What this step changed in the program, side by side in the Code view (or double-click the step)"));
    m_codeChanges->setEnabled(false);
    connect(m_codeChanges, &QToolButton::clicked, this, [this] { Q_EMIT codeChangesRequested(selectedStep()); });

    m_timeline->setModel(m_model);
    m_timeline->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_timeline->setSelectionMode(QAbstractItemView::SingleSelection);
    m_timeline->verticalHeader()->hide();
    m_timeline->horizontalHeader()->setStretchLastSection(true);
    m_timeline->setWordWrap(false);
    connect(m_timeline->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showStep(current.isValid() ? current.row() : -1); });
    connect(m_timeline, &QAbstractItemView::doubleClicked, this, [this](const QModelIndex &index) {
        if (index.isValid() && index.row() > 0)
            Q_EMIT codeChangesRequested(index.row());
    });

    wrapWithinDock(m_rationale);
    m_rationale->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_options->setColumnCount(OptionColumnCount);
    m_options->setHeaderLabels({tr("Value"), tr("p"), tr("Time with it"), tr("Why not")});
    m_options->setRootIsDecorated(false);
    m_options->setUniformRowHeights(true);

    auto *steps = new QHBoxLayout;
    steps->addWidget(m_back);
    steps->addWidget(m_forward);
    steps->addStretch();
    steps->addWidget(m_codeChanges);
    auto *top = new QWidget(this);
    auto *topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(m_summary);
    topLayout->addLayout(steps);
    topLayout->addWidget(m_timeline);
    auto *inspector = new QWidget(this);
    auto *inspectorLayout = new QVBoxLayout(inspector);
    inspectorLayout->setContentsMargins(0, 0, 0, 0);
    inspectorLayout->addWidget(m_rationale);
    inspectorLayout->addWidget(m_options);
    auto *overrides = new QHBoxLayout;
    overrides->addWidget(m_override);
    overrides->addWidget(m_pins, 1);
    overrides->addWidget(m_clearPins);
    overrides->addWidget(m_retrain);
    inspectorLayout->addLayout(overrides);
    connect(m_options, &QTreeWidget::currentItemChanged, this, &AgentsPanel::updateOverrideButton);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(inspector);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(split);
    setMessage(tr("Press Optimize (Ctrl+R): the agents decide the schedule of the open file, step by step."));
}

void AgentsPanel::setMessage(const QString &text)
{
    m_result.reset();
    m_model->setTrace(nullptr);
    m_summary->setText(text);
    m_rationale->clear();
    m_options->clear();
    m_back->setEnabled(false);
    m_forward->setEnabled(false);
    m_codeChanges->setEnabled(false);
    updateRetrainButton();
}

void AgentsPanel::setRetraining(bool running)
{
    m_retraining = running;
    updateRetrainButton();
}

void AgentsPanel::updateRetrainButton()
{
    const bool pinned = m_result && !m_result->trace.pins.empty();
    // Shown with every result, so that it is found; it needs an override to learn from.
    m_retrain->setVisible(m_result != nullptr);
    m_retrain->setEnabled(pinned && !m_retraining);
}

void AgentsPanel::setResult(std::shared_ptr<const agents::SourceResult> result)
{
    m_result = std::move(result);
    if (!m_result) {
        setMessage(tr("No result."));
        return;
    }
    const agents::Trace &t = m_result->trace;
    // Shares the result's lifetime: the model reads the trace the result holds.
    m_model->setTrace(std::shared_ptr<const agents::Trace>(m_result, &m_result->trace));
    m_announcedRow = -1;
    updateRetrainButton();
    m_timeline->resizeColumnsToContents();
    // The input's own code where the model times it (a .cu), else its lifted form's generic schedule.
    const double inputMs = t.asWrittenMs ? *t.asWrittenMs : t.inputMs;
    m_summary->setText(tr("%1: %2 decisions by %3; %4, input as written %5 (%6x)%7%8")
                           .arg(QString::fromStdString(t.source))
                           .arg(t.decisions.size())
                           .arg(QString::fromStdString(m_result->policy), formatMs(t.finalMs), formatMs(inputMs))
                           .arg(inputMs / std::max(t.finalMs, 1e-12), 0, 'f', 2)
                           .arg(t.finalMeasured ? tr(", measured")
                                : t.finalCompiled ? tr(", by the model (NVRTC build)")
                                                  : tr(", estimated"))
                           .arg(t.keptInput ? tr(". Kept the input as written (Stitch's notes say why)") : QString()));
    selectStep(m_model->rowCount() - 1);
}

bool AgentsPanel::selectStep(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        return false;
    m_timeline->setCurrentIndex(m_model->index(row, 0));
    showStep(row);
    return true;
}

int AgentsPanel::selectedStep() const
{
    const QModelIndex i = m_timeline->currentIndex();
    return i.isValid() ? i.row() : -1;
}

void AgentsPanel::setPins(const QStringList &pins)
{
    QString shown = pins.join(QStringLiteral(", "));
    // Break chances inside "agent.parameter@kernel=value" (a zero-width space after '.' and '@'), so
    // the wrapped line breaks there rather than at the dock's edge.
    shown.replace(QLatin1Char('.'), QStringLiteral(".\u200B")).replace(QLatin1Char('@'), QStringLiteral("@\u200B"));
    m_pins->setText(pins.isEmpty() ? QString() : tr("Pinned: %1").arg(shown));
    m_pins->setToolTip(pins.isEmpty() ? QString() : tr("Pinned: %1").arg(pins.join(QStringLiteral(", "))));
    m_pins->setVisible(!pins.isEmpty());
    m_clearPins->setVisible(!pins.isEmpty());
}

bool AgentsPanel::selectOption(int option)
{
    if (!m_model->decisionAt(selectedStep()) || option < 0 || option >= m_options->topLevelItemCount())
        return false;
    m_options->setCurrentItem(m_options->topLevelItem(option));
    return true;
}

void AgentsPanel::updateOverrideButton()
{
    const agents::TraceDecision *d = m_model->decisionAt(selectedStep());
    const int option = m_options->currentItem() ? m_options->indexOfTopLevelItem(m_options->currentItem()) : -1;
    m_override->setEnabled(d && option >= 0 && option < static_cast<int>(d->options.size()) && option != d->chosen &&
                           d->options[static_cast<std::size_t>(option)].legal);
}

void AgentsPanel::stepForward() { selectStep(selectedStep() + 1); }

void AgentsPanel::stepBack() { selectStep(std::max(selectedStep() - 1, 0)); }

QString AgentsPanel::summary() const { return m_summary->text(); }

QString AgentsPanel::rationale() const { return m_rationale->text(); }

void AgentsPanel::showStep(int row)
{
    fillInspector(row);
    if (row >= 0 && row != m_announcedRow) {
        m_announcedRow = row;
        Q_EMIT stepShown(row);
    }
}

void AgentsPanel::fillInspector(int row)
{
    m_options->clear();
    m_override->setEnabled(false);
    m_back->setEnabled(row > 0);
    m_forward->setEnabled(row >= 0 && row + 1 < m_model->rowCount());
    m_codeChanges->setEnabled(row > 0 && m_model->trace()); // Parse changed no code
    if (row < 0 || !m_model->trace()) {
        m_rationale->clear();
        return;
    }
    const agents::TraceDecision *d = m_model->decisionAt(row);
    if (!d) { // Parse or Stitch: what the stage did, sentence by sentence
        const agents::Trace &t = *m_model->trace();
        const agents::TraceStage &s = row == 0 ? t.parse : t.integrate;
        QString text = QString::fromStdString(s.summary);
        for (const auto &n : s.notes)
            text += QStringLiteral("\n• ") + QString::fromStdString(n);
        m_rationale->setText(text);
        return;
    }
    m_rationale->setText(QString::fromStdString(d->rationale));
    for (std::size_t i = 0; i < d->options.size(); ++i) {
        const agents::TraceOption &o = d->options[i];
        auto *item = new QTreeWidgetItem(m_options);
        const bool chosen = static_cast<int>(i) == d->chosen;
        item->setText(ValueColumn, QString::fromStdString(o.text) + (chosen ? tr("  ◀ chosen") : QString()));
        item->setText(ProbabilityColumn, o.legal ? QString::number(o.probability, 'f', 3) : QStringLiteral("-"));
        item->setText(TimeColumn, o.estimatedMs ? formatMs(*o.estimatedMs) : QStringLiteral("-"));
        item->setText(ReasonColumn, o.legal ? QString() : QString::fromStdString(o.why));
        item->setToolTip(ReasonColumn, QString::fromStdString(o.why));
        item->setTextAlignment(ProbabilityColumn, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(TimeColumn, Qt::AlignRight | Qt::AlignVCenter);
        if (!o.legal)
            item->setForeground(ValueColumn, palette().brush(QPalette::Disabled, QPalette::Text));
        if (chosen) {
            QFont f = item->font(ValueColumn);
            f.setBold(true);
            item->setFont(ValueColumn, f);
        }
    }
    for (int c = 0; c < OptionColumnCount - 1; ++c)
        m_options->resizeColumnToContents(c);
    updateOverrideButton();
}

} // namespace stitch::views
