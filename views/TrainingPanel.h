#pragma once
// The Training dock: the reward and loss curves of a training run, live (a retraining started in
// the studio) or read from its CSV (`stitchcuda train --csv`, `retrain --csv`), with a progress bar
// and Cancel; after a retraining, each pinned value's probability before and after, and which
// agents Optimize uses now.
//   RetrainController (worker) -> beginRun / setStage / addUpdate / endRun -> TrainingCurveModel
//   Open Training Log... -> agents::readTrainingLog (worker) -> TrainingCurveModel
//   TrainingCurveModel -> (at most every 150 ms) Qt Charts line series: reward chart, loss chart

#include "core/agents/Retraining.h"

#include <QWidget>

#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTimer;
class QValueAxis;
QT_END_NAMESPACE

namespace stitch::views {

class PinnedProbabilityModel;
class TrainingCurveModel;

class TrainingPanel final : public QWidget {
    Q_OBJECT
public:
    /// The drawn curves: the rewards (and the held-out figure, right axis) on the first chart, the
    /// losses (the value loss on the right axis) on the second.
    enum class Curve { Reward, Return, HeldOut, PolicyLoss, Entropy, ValueLoss };

    explicit TrainingPanel(QWidget *parent = nullptr);
    ~TrainingPanel() override;

    // A live run (RetrainController's signals, routed by MainWindow).
    /// Clears the curves and the table and shows `title` with a progress bar over `updates`.
    void beginRun(const QString &title, int updates);
    void setStage(const QString &stage);
    void addUpdate(const agents::TrainProgress &row);
    /// The run ended with `message`; `pins` fills the before/after table (empty: hidden).
    void endRun(const QString &message, const std::vector<agents::PinnedOutcome> &pins = {});
    bool isLive() const { return m_live; }
    /// A line in the dock's status (why a request was refused), the curves left as they are.
    void tell(const QString &message);

    /// Reads a training CSV off the GUI thread; logLoaded or logFailed tells how it went (a
    /// damaged file: the located reason in the dock, the curves shown before kept). Refused while
    /// a live run is shown (false).
    bool openLog(const QString &path);
    /// Asks for a CSV (File > Open Training Log..., the dock's button) and opens it.
    void openLogWithDialog();
    bool isLoading() const { return m_loadingJob != 0; }

    /// How long the next retraining runs: PPO updates, and episodes per update.
    int retrainUpdates() const;
    int retrainEpisodes() const;
    void setRetrainSize(int updates, int episodesPerUpdate);

    /// Which agents Optimize uses now (shown under the curves); `retrained` offers the way back.
    void setAgentsInUse(const QString &text, bool retrained);

    TrainingCurveModel *curves() const { return m_curves; }
    PinnedProbabilityModel *pins() const { return m_pins; }
    QLineSeries *series(Curve curve) const;
    QChartView *rewardChart() const { return m_rewardView; }
    QChartView *lossChart() const { return m_lossView; }
    QTableView *pinsView() const { return m_pinsView; }
    QProgressBar *progressBar() const { return m_progress; }
    QPushButton *cancelButton() const { return m_cancel; }
    QPushButton *openButton() const { return m_open; }
    QPushButton *useShippedButton() const { return m_useShipped; }
    QString title() const;
    QString status() const;
    QString agentsInUse() const;
    /// Draws the curves now instead of at the next throttled redraw.
    void redrawNow();

signals:
    void cancelRequested();
    void useShippedAgentsRequested();
    void logLoaded(const QString &path, int rows);
    void logFailed(const QString &path, const QString &message);
    /// The charts show every row of curves() (after a throttled redraw).
    void chartsUpdated();

private:
    void scheduleRedraw();

    TrainingCurveModel *m_curves;
    PinnedProbabilityModel *m_pins;
    QLabel *m_title, *m_status, *m_pinsTitle, *m_agents;
    QProgressBar *m_progress;
    QPushButton *m_cancel, *m_open, *m_useShipped;
    QSpinBox *m_updates, *m_episodes;
    QChart *m_rewardChart, *m_lossChart;
    QChartView *m_rewardView, *m_lossView;
    QValueAxis *m_rewardX, *m_rewardY, *m_heldOutY, *m_lossX, *m_lossY, *m_valueLossY;
    QLineSeries *m_reward, *m_return, *m_heldOut, *m_policyLoss, *m_entropy, *m_valueLoss;
    QTableView *m_pinsView;
    QTimer *m_redraw;
    bool m_live = false;
    quint64 m_loadingJob = 0; ///< the log being read (0: none); an older one's result is dropped
    quint64 m_nextJob = 1;
};

} // namespace stitch::views
