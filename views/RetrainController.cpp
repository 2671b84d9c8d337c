#include "views/RetrainController.h"

#include "core/agents/Checkpoints.h"
#include "views/BackgroundPriority.h"

#include <QDir>
#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>
#include <QStandardPaths>

#include <atomic>
#include <thread>

namespace stitch::views {

struct RetrainController::Run {
    quint64 id = 0;
    std::atomic<bool> cancel{false};
    std::thread worker;
};

namespace {

bool samePath(const QString &a, const QString &b)
{
    const QFileInfo fa(a), fb(b);
    if (fa.exists() && fb.exists())
        return fa.canonicalFilePath() == fb.canonicalFilePath();
    return fa.absoluteFilePath() == fb.absoluteFilePath();
}

} // namespace

RetrainController::RetrainController(QObject *parent) : QObject(parent), m_directory(defaultAgentsDirectory())
{
    qRegisterMetaType<stitch::agents::TrainProgress>();
    qRegisterMetaType<std::shared_ptr<const stitch::agents::RetrainReport>>();
}

RetrainController::~RetrainController()
{
    cancel();
    waitForIdle();
}

QString RetrainController::defaultAgentsDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/agents");
}

void RetrainController::useShippedAgents(const QString &arch)
{
    if (m_inUse.remove(arch) > 0)
        Q_EMIT agentsInUseChanged(arch, QString());
}

quint64 RetrainController::start(const RetrainRequest &request, QString *error)
{
    const auto refuse = [error](const QString &why) -> quint64 {
        if (error)
            *error = why;
        return 0;
    };
    const QString arch = QString::fromStdString(request.trace.arch);
    if (request.updates < 1)
        return refuse(tr("at least one update is needed"));
    // The agents in use: a retrained copy, else the shipped checkpoint (never written).
    QString start = agentsInUse(arch);
    std::string note;
    const auto shipped = agents::findCheckpoint(request.trace.arch, &note);
    if (start.isEmpty()) {
        if (!shipped)
            return refuse(tr("there are no trained agents for %1 to retrain (resources/agents)").arg(arch));
        start = QString::fromStdString(*shipped);
    }
    if (m_directory.isEmpty() || !QDir().mkpath(m_directory))
        return refuse(tr("cannot create the folder for retrained agents: %1").arg(m_directory));
    const QString out = QDir(m_directory).filePath(arch + QStringLiteral("-retrained.agents"));
    const QString csv = QDir(m_directory).filePath(arch + QStringLiteral("-retrained.csv"));
    if (shipped && samePath(out, QString::fromStdString(*shipped)))
        return refuse(tr("%1 is the shipped checkpoint: retrained agents are never written over it").arg(out));

    cancel();
    waitForIdle();
    auto run = std::make_shared<Run>();
    run->id = m_nextId++;
    m_running = run;
    agents::RetrainOptions options;
    options.loaded.push_back({request.traceName.toStdString(), request.trace});
    options.checkpoint = start.toStdString();
    options.out = out.toStdString();
    options.csv = csv.toStdString();
    options.arch = request.trace.arch;
    options.updates = request.updates;
    options.episodesPerUpdate = request.episodesPerUpdate;
    options.seed = request.seed;
    options.heldOut = request.heldOut;

    QPointer<RetrainController> self(this);
    // Delivers `f` on the GUI thread only while this run is still the current one.
    auto post = [self, id = run->id](auto f) {
        if (!self)
            return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, id, f] {
                if (self && self->m_running && self->m_running->id == id)
                    f(self.data());
            },
            Qt::QueuedConnection);
    };
    run->worker = std::thread([run, options, post, arch, out, csv] {
        lowerThisThreadsPriority(); // the GUI thread keeps a core
        const quint64 id = run->id;
        auto report = agents::retrain(
            options,
            [&post, id](const agents::RetrainProgress &p) {
                if (p.stage == agents::RetrainStage::Update) {
                    post([id, row = p.row](RetrainController *c) { Q_EMIT c->updated(id, row); });
                } else {
                    const QString stage = QString::fromUtf8(agents::retrainStageName(p.stage));
                    post([id, stage](RetrainController *c) { Q_EMIT c->stageChanged(id, stage); });
                }
            },
            &run->cancel);
        std::shared_ptr<const agents::RetrainReport> done;
        QString message;
        const bool wasCancelled = !report && report.error().kind == ErrorKind::Cancelled;
        if (report)
            done = std::make_shared<const agents::RetrainReport>(std::move(*report));
        else
            message = QString::fromStdString(report.error().toString());
        post([id, done, message, wasCancelled, arch, out, csv](RetrainController *c) {
            auto finishedRun = c->m_running;
            c->m_running.reset();
            if (finishedRun->worker.joinable())
                finishedRun->worker.join();
            if (done) {
                c->m_inUse[arch] = out;
                Q_EMIT c->finished(id, done, arch, out, csv);
                Q_EMIT c->agentsInUseChanged(arch, out);
            } else if (wasCancelled) {
                Q_EMIT c->cancelled(id);
            } else {
                Q_EMIT c->failed(id, message);
            }
        });
    });
    return run->id;
}

void RetrainController::cancel()
{
    if (m_running)
        m_running->cancel = true;
}

void RetrainController::waitForIdle()
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
