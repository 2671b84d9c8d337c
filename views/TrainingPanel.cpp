#include "views/TrainingPanel.h"

#include "core/agents/TrainingLog.h"
#include "views/TrainingModels.h"
#include "views/WrapLabel.h"

#include <QChart>
#include <QChartView>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QPen>
#include <QPointer>
#include <QProgressBar>
#include <QScrollBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QValueAxis>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace stitch::views {

namespace {

using LogResult = std::shared_ptr<const Result<agents::TrainingLog>>;

QLineSeries *makeSeries(const QString &name, const QColor &color, Qt::PenStyle style = Qt::SolidLine)
{
    auto *s = new QLineSeries;
    s->setName(name);
    QPen pen(color);
    pen.setWidthF(1.6);
    pen.setStyle(style);
    s->setPen(pen);
    return s;
}

QValueAxis *makeAxis(const QString &title)
{
    auto *axis = new QValueAxis;
    axis->setTitleText(title);
    axis->setLabelFormat(QStringLiteral("%.3g"));
    return axis;
}

/// The range a set of values needs, padded so a flat curve is still visible.
void setRange(QValueAxis *axis, double lo, double hi)
{
    if (!(lo <= hi)) { // no values
        axis->setRange(0, 1);
        return;
    }
    const double pad = hi > lo ? (hi - lo) * 0.05 : std::max(std::abs(lo) * 0.1, 0.05);
    axis->setRange(lo - pad, hi + pad);
    axis->applyNiceNumbers();
}

} // namespace

TrainingPanel::TrainingPanel(QWidget *parent)
    : QWidget(parent), m_curves(new TrainingCurveModel(this)), m_pins(new PinnedProbabilityModel(this)),
      m_title(new QLabel(this)), m_status(new QLabel(this)), m_pinsTitle(new QLabel(this)), m_agents(new QLabel(this)),
      m_progress(new QProgressBar(this)), m_cancel(new QPushButton(tr("Cancel"), this)),
      m_open(new QPushButton(tr("Open Training Log…"), this)), m_useShipped(new QPushButton(tr("Use the Shipped Agents"), this)),
      m_updates(new QSpinBox(this)), m_episodes(new QSpinBox(this)),
      m_rewardChart(new QChart), m_lossChart(new QChart), m_rewardView(new QChartView(m_rewardChart, this)),
      m_lossView(new QChartView(m_lossChart, this)), m_rewardX(makeAxis(tr("update"))),
      m_rewardY(makeAxis(tr("reward"))), m_heldOutY(makeAxis(tr("held out"))),
      m_lossX(makeAxis(tr("update"))), m_lossY(makeAxis(tr("loss, entropy"))),
      m_valueLossY(makeAxis(tr("value loss"))),
      m_reward(makeSeries(tr("mean final reward (ln speedup)"), QColor(0x1f, 0x77, 0xb4))),
      m_return(makeSeries(tr("mean return"), QColor(0x7f, 0x7f, 0x7f), Qt::DashLine)),
      m_heldOut(makeSeries(tr("held out (right)"), QColor(0x2c, 0xa0, 0x2c))),
      m_policyLoss(makeSeries(tr("policy loss"), QColor(0xd6, 0x27, 0x28))),
      m_entropy(makeSeries(tr("entropy"), QColor(0x94, 0x67, 0xbd))),
      m_valueLoss(makeSeries(tr("value loss (right)"), QColor(0xff, 0x7f, 0x0e), Qt::DashLine)),
      m_pinsView(new QTableView(this)), m_redraw(new QTimer(this))
{
    m_rewardView->setObjectName(QStringLiteral("trainingRewardChart"));
    m_lossView->setObjectName(QStringLiteral("trainingLossChart"));
    m_open->setObjectName(QStringLiteral("openTrainingLogButton"));
    m_cancel->setObjectName(QStringLiteral("cancelTrainingButton"));
    m_open->setToolTip(tr("Show the curves of a training run from its CSV (stitchcuda train --csv, retrain --csv)"));
    m_cancel->setToolTip(tr("Stop the retraining after the update in progress; nothing is written"));
    m_useShipped->setToolTip(tr("Optimize with the shipped agents again (the retrained file is kept)"));
    m_cancel->setEnabled(false);
    m_useShipped->setVisible(false);
    m_progress->setVisible(false);
    m_progress->setMaximumWidth(220);
    wrapWithinDock(m_title);
    wrapWithinDock(m_status);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    wrapWithinDock(m_agents);
    m_agents->setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(m_cancel, &QPushButton::clicked, this, &TrainingPanel::cancelRequested);
    connect(m_open, &QPushButton::clicked, this, &TrainingPanel::openLogWithDialog);
    connect(m_useShipped, &QPushButton::clicked, this, &TrainingPanel::useShippedAgentsRequested);

    // Two charts sharing the update axis: rewards above, losses below (their scales differ by
    // orders of magnitude, so the value loss and the held-out figure get a right axis of their own).
    const auto setUp = [](QChart *chart, QValueAxis *x, QValueAxis *left, QValueAxis *right,
                          const QList<QLineSeries *> &onLeft, QLineSeries *onRight) {
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(left, Qt::AlignLeft);
        chart->addAxis(right, Qt::AlignRight);
        for (QLineSeries *s : onLeft) {
            chart->addSeries(s);
            s->attachAxis(x);
            s->attachAxis(left);
        }
        chart->addSeries(onRight);
        onRight->attachAxis(x);
        onRight->attachAxis(right);
        chart->legend()->setAlignment(Qt::AlignTop);
        chart->setMargins(QMargins(4, 4, 4, 4));
        x->setLabelFormat(QStringLiteral("%d"));
    };
    setUp(m_rewardChart, m_rewardX, m_rewardY, m_heldOutY, {m_reward, m_return}, m_heldOut);
    setUp(m_lossChart, m_lossX, m_lossY, m_valueLossY, {m_policyLoss, m_entropy}, m_valueLoss);
    for (QChartView *view : {m_rewardView, m_lossView}) {
        view->setRenderHint(QPainter::Antialiasing);
        view->setMinimumHeight(160);
    }

    m_pinsView->setModel(m_pins);
    m_pinsView->verticalHeader()->hide();
    m_pinsView->horizontalHeader()->setStretchLastSection(true);
    m_pinsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_pinsTitle->setText(tr("Each pinned value's probability at its decision, by the agents before and after:"));
    wrapWithinDock(m_pinsTitle);
    auto *pinsBox = new QWidget(this);
    auto *pinsLayout = new QVBoxLayout(pinsBox);
    pinsLayout->setContentsMargins(0, 0, 0, 0);
    pinsLayout->addWidget(m_pinsTitle);
    pinsLayout->addWidget(m_pinsView);
    pinsBox->setObjectName(QStringLiteral("trainingPinsBox"));
    pinsBox->setVisible(false);

    auto *top = new QHBoxLayout;
    top->addWidget(m_title, 1);
    top->addWidget(m_progress);
    top->addWidget(m_cancel);
    top->addWidget(m_open);
    // The next retraining's length: 8 updates of 16 episodes: 3 s for matmul.te here.
    m_updates->setRange(1, 2000);
    m_updates->setValue(8);
    m_updates->setObjectName(QStringLiteral("retrainUpdates"));
    m_updates->setToolTip(tr("PPO updates of the next Retrain with my overrides"));
    m_episodes->setRange(1, 256);
    m_episodes->setValue(16);
    m_episodes->setObjectName(QStringLiteral("retrainEpisodes"));
    m_episodes->setToolTip(tr("Episodes per update"));
    auto *size = new QHBoxLayout;
    size->addWidget(new QLabel(tr("Retrain for"), this));
    size->addWidget(m_updates);
    size->addWidget(new QLabel(tr("updates of"), this));
    size->addWidget(m_episodes);
    size->addWidget(new QLabel(tr("episodes"), this));
    size->addStretch();
    auto *agents = new QHBoxLayout;
    agents->addWidget(m_agents, 1);
    agents->addWidget(m_useShipped);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_rewardView);
    split->addWidget(m_lossView);
    split->addWidget(pinsBox);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(top);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);
    layout->addLayout(agents);
    layout->addLayout(size);

    m_redraw->setSingleShot(true);
    m_redraw->setInterval(150);
    connect(m_redraw, &QTimer::timeout, this, &TrainingPanel::redrawNow);
    m_title->setText(tr("No training run shown."));
    m_status->setText(tr("Retrain with my overrides (Agents dock) shows its curves here live; Open Training Log… "
                         "shows a run's CSV."));
    redrawNow();
}

TrainingPanel::~TrainingPanel() = default;

void TrainingPanel::beginRun(const QString &title, int updates)
{
    m_live = true;
    m_loadingJob = 0; // a log still being read no longer replaces the run
    m_curves->clear();
    m_pins->setPins({});
    m_pinsView->parentWidget()->setVisible(false);
    m_title->setText(title);
    m_status->setText(tr("Starting…"));
    m_progress->setRange(0, std::max(updates, 1));
    m_progress->setValue(0);
    m_progress->setVisible(true);
    m_cancel->setEnabled(true);
    m_open->setEnabled(false);
    redrawNow();
}

void TrainingPanel::setStage(const QString &stage)
{
    if (m_live)
        m_status->setText(tr("Retraining: %1…").arg(stage));
}

void TrainingPanel::addUpdate(const agents::TrainProgress &row)
{
    if (!m_live)
        return;
    m_curves->appendRow(row);
    m_progress->setValue(row.update);
    m_status->setText(tr("Update %1 of %2: mean final reward %3, policy loss %4, value loss %5, entropy %6")
                          .arg(row.update)
                          .arg(m_progress->maximum())
                          .arg(row.meanFinalReward, 0, 'f', 3)
                          .arg(row.stats.policyLoss, 0, 'f', 4)
                          .arg(row.stats.valueLoss, 0, 'f', 3)
                          .arg(row.stats.entropy, 0, 'f', 3));
    scheduleRedraw();
}

void TrainingPanel::endRun(const QString &message, const std::vector<agents::PinnedOutcome> &pins)
{
    m_live = false;
    m_progress->setVisible(false);
    m_cancel->setEnabled(false);
    m_open->setEnabled(true);
    m_status->setText(message);
    m_pins->setPins(pins);
    m_pinsView->parentWidget()->setVisible(!pins.empty());
    m_pinsView->resizeColumnsToContents();
    // The table as tall as its rows (a pin or two): the curves keep the rest of the height, which
    // Qt Charts needs for its axis labels (a short chart elides them to "...").
    int height = m_pinsView->horizontalHeader()->sizeHint().height() + 2 * m_pinsView->frameWidth();
    for (int row = 0; row < m_pins->rowCount(); ++row)
        height += m_pinsView->verticalHeader()->sectionSizeHint(row);
    height += m_pinsView->horizontalScrollBar()->sizeHint().height();
    m_pinsView->setMaximumHeight(height);
    m_pinsView->parentWidget()->setMaximumHeight(height + m_pinsTitle->heightForWidth(m_pinsView->width()) +
                                                 m_pinsView->parentWidget()->layout()->spacing());
    redrawNow();
}

void TrainingPanel::tell(const QString &message) { m_status->setText(message); }

bool TrainingPanel::openLog(const QString &path)
{
    if (m_live)
        return false;
    const quint64 job = m_nextJob++;
    m_loadingJob = job;
    m_status->setText(tr("Reading %1…").arg(QDir::toNativeSeparators(path)));
    auto *watcher = new QFutureWatcher<LogResult>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, job, path] {
        watcher->deleteLater();
        if (job != m_loadingJob)
            return; // a newer log, or a live run, replaced it
        m_loadingJob = 0;
        const LogResult result = watcher->result();
        if (!result || !*result) {
            const QString message = result ? QString::fromStdString(result->error().toString()) : tr("not read");
            m_status->setText(tr("Cannot show %1: %2").arg(QFileInfo(path).fileName(), message));
            Q_EMIT logFailed(path, message);
            return;
        }
        const agents::TrainingLog &log = result->value();
        m_pins->setPins({});
        m_pinsView->parentWidget()->setVisible(false);
        m_curves->setRows(log.rows);
        m_title->setText(tr("Training log %1").arg(QDir::toNativeSeparators(path)));
        const int rows = static_cast<int>(log.rows.size());
        m_status->setText(rows == 0 ? tr("The log has a header and no updates yet.")
                                    : tr("%1 updates, %2 episodes; last mean final reward %3%4")
                                          .arg(rows)
                                          .arg(log.rows.back().episode)
                                          .arg(log.rows.back().meanFinalReward, 0, 'f', 3)
                                          .arg(log.hasHeldOut ? tr("; held out on the right axis, where measured")
                                                              : QString()));
        redrawNow();
        Q_EMIT logLoaded(path, rows);
    });
    const std::string file = path.toStdString();
    watcher->setFuture(QtConcurrent::run([file]() -> LogResult {
        return std::make_shared<const Result<agents::TrainingLog>>(agents::readTrainingLog(file));
    }));
    return true;
}

void TrainingPanel::openLogWithDialog()
{
    if (m_live) {
        m_status->setText(tr("A retraining is running: cancel it to open a log."));
        return;
    }
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Training Log"), QDir::currentPath(),
                                                      tr("Training logs (*.csv *.csv.gz);;All files (*)"));
    if (!path.isEmpty())
        openLog(path);
}

void TrainingPanel::setAgentsInUse(const QString &text, bool retrained)
{
    m_agents->setText(text);
    m_useShipped->setVisible(retrained);
}

int TrainingPanel::retrainUpdates() const { return m_updates->value(); }

int TrainingPanel::retrainEpisodes() const { return m_episodes->value(); }

void TrainingPanel::setRetrainSize(int updates, int episodesPerUpdate)
{
    m_updates->setValue(updates);
    m_episodes->setValue(episodesPerUpdate);
}

QLineSeries *TrainingPanel::series(Curve curve) const
{
    switch (curve) {
    case Curve::Reward:
        return m_reward;
    case Curve::Return:
        return m_return;
    case Curve::HeldOut:
        return m_heldOut;
    case Curve::PolicyLoss:
        return m_policyLoss;
    case Curve::Entropy:
        return m_entropy;
    case Curve::ValueLoss:
        return m_valueLoss;
    }
    return nullptr;
}

QString TrainingPanel::title() const { return m_title->text(); }

QString TrainingPanel::status() const { return m_status->text(); }

QString TrainingPanel::agentsInUse() const { return m_agents->text(); }

void TrainingPanel::scheduleRedraw()
{
    // A live run adds a row per update; a burst of them costs one redraw.
    if (!m_redraw->isActive())
        m_redraw->start();
}

void TrainingPanel::redrawNow()
{
    m_redraw->stop();
    const int n = m_curves->rowCount();
    struct Extent {
        double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
        void add(const Extent &e)
        {
            lo = std::min(lo, e.lo);
            hi = std::max(hi, e.hi);
        }
    };
    const auto fill = [&](QLineSeries *series, int column) {
        Extent e;
        QList<QPointF> points;
        points.reserve(n);
        for (int i = 0; i < n; ++i) {
            const double v = m_curves->value(i, column);
            if (std::isnan(v))
                continue;
            points.append(QPointF(m_curves->value(i, TrainingCurveModel::UpdateColumn), v));
            e.lo = std::min(e.lo, v);
            e.hi = std::max(e.hi, v);
        }
        series->replace(points);
        return e;
    };
    Extent rewards = fill(m_reward, TrainingCurveModel::RewardColumn);
    rewards.add(fill(m_return, TrainingCurveModel::ReturnColumn));
    const Extent heldOut = fill(m_heldOut, TrainingCurveModel::HeldOutColumn);
    Extent losses = fill(m_policyLoss, TrainingCurveModel::PolicyLossColumn);
    losses.add(fill(m_entropy, TrainingCurveModel::EntropyColumn));
    const Extent valueLoss = fill(m_valueLoss, TrainingCurveModel::ValueLossColumn);
    setRange(m_rewardY, rewards.lo, rewards.hi);
    setRange(m_heldOutY, heldOut.lo, heldOut.hi);
    setRange(m_lossY, losses.lo, losses.hi);
    setRange(m_valueLossY, valueLoss.lo, valueLoss.hi);
    const double first = n ? m_curves->value(0, TrainingCurveModel::UpdateColumn) : 0;
    const double last = n ? m_curves->value(n - 1, TrainingCurveModel::UpdateColumn) : 1;
    for (QValueAxis *x : {m_rewardX, m_lossX}) {
        x->setRange(first, std::max(last, first + 1));
        // A short run (a retraining of a few updates): one tick per update, each a whole number;
        // nice numbers would put ticks between updates, which the "%d" labels cannot show.
        const double span = std::max(last, first + 1) - first;
        if (span <= 10)
            x->setTickCount(static_cast<int>(span) + 1);
        else
            x->applyNiceNumbers();
    }
    // The held-out axis only where the run measured it.
    const bool hasHeldOut = m_heldOut->count() > 0;
    m_heldOut->setVisible(hasHeldOut);
    m_heldOutY->setVisible(hasHeldOut);
    Q_EMIT chartsUpdated();
}

} // namespace stitch::views
