#pragma once
// Run in the studio: one runner thread owns the runner::Runner (and so the worker process that owns
// the GPU), fed by a queue; the GUI thread gets signals only.
//   MainWindow (F5) -> RunController::run(RunInput) -> runner thread: runPrograms (RunJobs.h)
//                   -> progress(...) queued -> finished(report) | cancelled()
//   RunController::probe() -> runner thread: Runner::device() -> deviceProbed(status)
// A newer run cancels the one in flight (its worker is killed, its outcome dropped). A kernel that
// faults costs the worker process, never the studio.

#include "views/MetaTypes.h"
#include "views/RunJobs.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace stitch::views {

class RunController final : public QObject {
    Q_OBJECT
public:
    /// How the runner is made; tests point it at the fake worker or at a driver that is not there.
    struct Settings {
        runner::WorkerOptions worker;
        bool cache = true; ///< the measurement cache ($XDG_DATA_HOME/stitchcuda/measurements.db)
    };

    /// `database` must outlive the controller.
    explicit RunController(const ArchDatabase &database, QObject *parent = nullptr);
    /// Cancels what runs, stops the runner thread (and so the worker process).
    ~RunController() override;

    /// Replaces the runner (the next job starts a fresh worker with these settings).
    void setSettings(Settings settings);
    /// Asks the runner for its device (starting the worker); deviceProbed() answers.
    void probe();
    /// Starts a run; returns its id. A run in flight is cancelled and its outcome dropped (no signal).
    quint64 run(RunInput input);
    /// Cancels the run in flight: cancelled() follows at once, its outcome is dropped.
    void cancel();
    bool isRunning() const { return m_current != 0; }
    /// The last device the runner reported (after probe() or a run).
    const DeviceStatus *device() const { return m_device ? &*m_device : nullptr; }
    /// Blocks until the queue is empty and nothing runs (tests, shutdown); queued outcomes still arrive.
    void waitForIdle();

signals:
    void progress(quint64 runId, const QString &stage);
    void finished(quint64 runId, std::shared_ptr<const stitch::views::RunReport> report);
    void cancelled(quint64 runId);
    void deviceProbed();

private:
    struct Task {
        std::function<void(runner::Runner &)> work;
    };
    void enqueue(std::function<void(runner::Runner &)> work);
    void loop();
    void deliverDevice(const DeviceStatus &status);

    const ArchDatabase &m_database;
    std::mutex m_mutex;
    std::condition_variable m_wake, m_idle;
    std::deque<Task> m_queue;
    bool m_busy = false;
    bool m_stop = false;
    std::optional<Settings> m_newSettings; ///< taken by the runner thread before its next task
    std::shared_ptr<std::atomic<bool>> m_cancel; ///< of the run in flight
    quint64 m_current = 0;  ///< GUI thread: the run whose outcome is awaited (0: none)
    quint64 m_nextId = 1;
    std::optional<DeviceStatus> m_device;
    std::thread m_thread;   ///< last member: started after the others exist
};

} // namespace stitch::views

Q_DECLARE_METATYPE(std::shared_ptr<const stitch::views::RunReport>)
