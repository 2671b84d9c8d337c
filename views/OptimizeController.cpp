#include "views/OptimizeController.h"

#include "views/BackgroundPriority.h"

#include <QMetaObject>
#include <QPointer>

#include <thread>

namespace stitch::views {

struct OptimizeController::Run {
    quint64 id = 0;
    agents::SourceOptimizer optimizer;
    std::thread worker;
};

OptimizeController::OptimizeController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<const stitch::agents::SourceResult>>();
}

OptimizeController::~OptimizeController()
{
    cancel();
    waitForIdle();
}

quint64 OptimizeController::start(const agents::SourceRequest &request)
{
    cancel();
    waitForIdle();
    auto run = std::make_shared<Run>();
    run->id = m_nextId++;
    m_running = run;
    QPointer<OptimizeController> self(this);
    run->worker = std::thread([self, run, request] {
        lowerThisThreadsPriority(); // the GUI thread keeps a core
        const quint64 id = run->id;
        auto result = run->optimizer.run(request, [self, id](const agents::OptimizeProgress &p) {
            const QString stage = QString::fromStdString(p.stage), agent = QString::fromUtf8(agents::agentTitle(p.agent));
            if (!self)
                return;
            QMetaObject::invokeMethod(
                self.data(), [self, id, stage, agent, p] {
                    if (self && self->m_running && self->m_running->id == id)
                        Q_EMIT self->progress(id, stage, agent, p.decisions, p.candidates, p.budget);
                },
                Qt::QueuedConnection);
        });
        std::shared_ptr<const agents::SourceResult> done;
        QString message;
        Error error;
        bool wasCancelled = false;
        if (result)
            done = std::make_shared<const agents::SourceResult>(std::move(*result));
        else if (result.error().kind == ErrorKind::Cancelled)
            wasCancelled = true;
        else {
            error = result.error();
            message = QString::fromStdString(error.toString());
        }
        if (!self)
            return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, id, done, message, error, wasCancelled] {
                if (!self || !self->m_running || self->m_running->id != id)
                    return; // superseded: dropped
                auto finishedRun = self->m_running;
                self->m_running.reset();
                if (finishedRun->worker.joinable())
                    finishedRun->worker.join();
                if (done)
                    Q_EMIT self->finished(id, done);
                else if (wasCancelled)
                    Q_EMIT self->cancelled(id);
                else
                    Q_EMIT self->failed(id, message, error);
            },
            Qt::QueuedConnection);
    });
    return run->id;
}

void OptimizeController::cancel()
{
    if (m_running)
        m_running->optimizer.cancel();
}

void OptimizeController::waitForIdle()
{
    if (!m_running)
        return;
    auto run = m_running;
    if (run->worker.joinable())
        run->worker.join();
    // Its queued delivery finds no run of its id and drops the outcome.
    if (m_running == run)
        m_running.reset();
}

} // namespace stitch::views
