// MainWindow's Rubric dock: the newest lift, scored under its default schedule on a worker.
//   m_lifted (runLift) + architecture -> defaultSchedule -> rubric::scoreSchedule (NVRTC through
//   m_rubricCache) -> RubricPanel
#include "views/MainWindow.h"
#include "views/RubricPanel.h"

#include "core/frontend/Lift.h"
#include "core/rubric/Rubric.h"
#include "core/schedule/Space.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

namespace stitch::views {

namespace {

using ScoreResult = std::shared_ptr<const Result<rubric::ScheduleScore>>;

/// Why the lift cannot be scored as it stands, or an empty string when it can.
QString whyNotScored(const Result<frontend::LiftedProgram> *lifted, const ArchLimits *arch, const QString &archName)
{
    if (!lifted)
        return MainWindow::tr("Open a tensor-expression file or a liftable CUDA program to score it.");
    if (!lifted->ok())
        return MainWindow::tr("Not scored: the program was not lifted (%1).")
            .arg(QString::fromStdString(lifted->error().message));
    if (!arch)
        return MainWindow::tr("Not scored: %1 is not in the architecture database.").arg(archName);
    const frontend::LiftedProgram &p = **lifted;
    if (p.graph.ops().empty())
        return MainWindow::tr("Not scored: the graph has no operations.");
    for (const std::string &name : p.graph.sizeVars()) {
        if (!p.sizes.count(name))
            return MainWindow::tr("Not scored: size '%1' has no value in the source; the rubric scores concrete sizes "
                                  "(give it one, e.g. `size %1 = 1024`, or use `stitchcuda rubric --size %1=...`).")
                .arg(QString::fromStdString(name));
    }
    return {};
}

} // namespace

void MainWindow::runRubric()
{
    if (m_rubricRunning) { // the running job's result is stale once it lands: one more run then
        m_rubricPending = true;
        return;
    }
    const QString archName = architecture();
    const ArchLimits *arch = m_database.arch(archName.toStdString());
    const QString why = whyNotScored(m_lifted.get(), arch, archName);
    if (!why.isEmpty()) {
        m_rubricPanel->setMessage(why);
        emit rubricUpdated();
        return;
    }
    if (!m_rubricCache)
        m_rubricCache = std::make_shared<rubric::CompileCache>();
    if (!m_rubric)
        m_rubric = std::make_shared<const rubric::Rubric>();
    m_rubricPanel->setMessage(tr("Scoring the default schedule for %1 (generating, compiling with NVRTC)...").arg(archName));
    m_rubricRunning = true;
    auto *watcher = new QFutureWatcher<ScoreResult>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_rubricRunning = false;
        if (m_rubricPending) {
            m_rubricPending = false;
            runRubric();
            return;
        }
        m_rubricPanel->setResult(watcher->result());
        emit rubricUpdated();
    });
    watcher->setFuture(QtConcurrent::run([lifted = m_lifted, arch, cache = m_rubricCache, rubric = m_rubric]() -> ScoreResult {
        const frontend::LiftedProgram &p = **lifted;
        const schedule::Problem problem{p.graph, p.sizes, *arch, schedule::Precision::FP32};
        auto sched = schedule::defaultSchedule(problem);
        if (!sched.ok())
            return std::make_shared<const Result<rubric::ScheduleScore>>(sched.error());
        return std::make_shared<const Result<rubric::ScheduleScore>>(
            rubric::scoreSchedule(*rubric, problem, *sched, cache.get()));
    }));
}

} // namespace stitch::views
