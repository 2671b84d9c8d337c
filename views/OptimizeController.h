#pragma once
// Optimize in the studio: the agents on a worker thread, progress and cancel on the GUI thread.
//   MainWindow (Ctrl+R) -> OptimizeController::start -> agents::SourceOptimizer (worker)
//                       -> progress(...) queued -> finished(result) | failed(error) | cancelled()
// One run at a time; starting again cancels the run in flight and drops its outcome.

#include "core/agents/Session.h"
#include "views/MetaTypes.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

namespace stitch::views {

class OptimizeController final : public QObject {
    Q_OBJECT
public:
    explicit OptimizeController(QObject *parent = nullptr);
    /// Cancels the run in flight and waits for its worker to end.
    ~OptimizeController() override;

    /// Starts a run; returns its id. Any earlier run is cancelled and its outcome dropped.
    quint64 start(const agents::SourceRequest &request);
    void cancel();
    bool isRunning() const { return m_running != nullptr; }
    /// Blocks until no run is in flight; its outcome is dropped (shutdown).
    void waitForIdle();

signals:
    void progress(quint64 runId, const QString &stage, const QString &agent, int decisions, int candidates, int budget);
    void finished(quint64 runId, std::shared_ptr<const stitch::agents::SourceResult> result);
    /// `error` as the core gave it (located diagnostics for the Problems dock); `message` its text.
    void failed(quint64 runId, const QString &message, const stitch::Error &error);
    void cancelled(quint64 runId);

private:
    struct Run;
    std::shared_ptr<Run> m_running;
    quint64 m_nextId = 1;
};

} // namespace stitch::views
