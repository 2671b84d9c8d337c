#pragma once
// Retraining in the studio: agents::retrain on a worker thread, its progress and curves on the GUI
// thread, and which agents Optimize uses afterwards.
//   Agents dock (Retrain with my overrides) -> RetrainController::start(trace with pins)
//     -> agents::retrain (worker; a copy of the agents in use, written to the user's folder)
//     -> stageChanged / updated(row) queued -> finished(report) | failed | cancelled
//   MainWindow::optimize -> agentsInUse(arch): the retrained copy, or empty for the shipped agents
// One run at a time; starting again cancels the run in flight and drops its outcome. The shipped
// checkpoint is never written: the retrained agents go to agentsDirectory().

#include "core/agents/Retraining.h"
#include "views/MetaTypes.h"

#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

Q_DECLARE_METATYPE(stitch::agents::TrainProgress)
Q_DECLARE_METATYPE(std::shared_ptr<const stitch::agents::RetrainReport>)

namespace stitch::views {

struct RetrainRequest {
    agents::Trace trace;     ///< the last Optimize's trace, with its pins
    QString traceName;       ///< names the trace in errors (the document's name)
    int updates = 8;         ///< PPO updates (each of episodesPerUpdate episodes)
    int episodesPerUpdate = 16;
    quint64 seed = 1;
    bool heldOut = false;    ///< the held-out figure before and after (its baselines take minutes the first time)
};

class RetrainController final : public QObject {
    Q_OBJECT
public:
    explicit RetrainController(QObject *parent = nullptr);
    /// Cancels the run in flight and waits for its worker to end.
    ~RetrainController() override;

    /// Where retrained agents (`<arch>-retrained.agents`) and their curves (`.csv`) are written;
    /// by default QStandardPaths' AppDataLocation + "/agents".
    void setAgentsDirectory(const QString &dir) { m_directory = dir; }
    QString agentsDirectory() const { return m_directory; }
    static QString defaultAgentsDirectory();

    /// The checkpoint Optimize uses for `arch`: the retrained copy once a retraining succeeded,
    /// else empty (the shipped agents, agents::findCheckpoint).
    QString agentsInUse(const QString &arch) const { return m_inUse.value(arch); }
    /// The architectures whose Optimize uses a retrained copy.
    QStringList retrainedArchitectures() const { return m_inUse.keys(); }
    /// Back to the shipped agents for `arch` (the retrained file stays where it is).
    void useShippedAgents(const QString &arch);

    /// Starts retraining from the agents in use for the trace's architecture; returns the run's id,
    /// or 0 with `error` set when it cannot start (no trained agents, no folder to write to, a
    /// target that is the shipped checkpoint). An earlier run is cancelled and its outcome dropped.
    quint64 start(const RetrainRequest &request, QString *error = nullptr);
    void cancel();
    bool isRunning() const { return m_running != nullptr; }
    /// Blocks until no run is in flight; its outcome is dropped (shutdown).
    void waitForIdle();

signals:
    void stageChanged(quint64 runId, const QString &stage);
    /// One PPO update done: its rewards and losses (the CSV's row).
    void updated(quint64 runId, const stitch::agents::TrainProgress &row);
    /// `checkpoint`: the retrained agents, now in use for `arch`; `csv`: their curves.
    void finished(quint64 runId, std::shared_ptr<const stitch::agents::RetrainReport> report, const QString &arch,
                  const QString &checkpoint, const QString &csv);
    void failed(quint64 runId, const QString &message);
    void cancelled(quint64 runId);
    /// The agents Optimize uses for `arch` changed (retrained, or back to the shipped ones).
    void agentsInUseChanged(const QString &arch, const QString &checkpoint);

private:
    struct Run;
    std::shared_ptr<Run> m_running;
    quint64 m_nextId = 1;
    QString m_directory;
    QMap<QString, QString> m_inUse; ///< arch -> retrained checkpoint
};

} // namespace stitch::views
