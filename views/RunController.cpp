#include "views/RunController.h"

#include "core/storage/MeasurementStore.h"

#include <QMetaObject>
#include <QPointer>

namespace stitch::views {

namespace {

std::unique_ptr<runner::Runner> makeRunner(const RunController::Settings &settings, std::vector<std::string> &warnings)
{
    std::unique_ptr<storage::MeasurementStore> store;
    if (settings.cache) {
        auto opened = storage::MeasurementStore::open(storage::MeasurementStore::defaultPath());
        if (opened)
            store = std::move(*opened);
        else
            warnings.push_back("measurement cache unavailable, measuring without it: " + opened.error().message);
    }
    return std::make_unique<runner::Runner>(settings.worker, std::move(store));
}

} // namespace

RunController::RunController(const ArchDatabase &database, QObject *parent)
    : QObject(parent), m_database(database), m_newSettings(Settings{})
{
    qRegisterMetaType<std::shared_ptr<const stitch::views::RunReport>>();
    m_thread = std::thread([this] { loop(); });
}

RunController::~RunController()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_queue.clear();
        if (m_cancel)
            m_cancel->store(true);
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void RunController::setSettings(Settings settings)
{
    std::lock_guard lock(m_mutex);
    m_newSettings = std::move(settings);
}

void RunController::enqueue(std::function<void(runner::Runner &)> work)
{
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(Task{std::move(work)});
    }
    m_wake.notify_one();
}

void RunController::loop()
{
    std::unique_ptr<runner::Runner> runner;
    std::vector<std::string> warnings;
    for (;;) {
        Task task;
        {
            std::unique_lock lock(m_mutex);
            m_busy = false;
            m_idle.notify_all();
            m_wake.wait(lock, [this] { return m_stop || !m_queue.empty(); });
            if (m_stop)
                return; // the runner's destructor shuts the worker down
            task = std::move(m_queue.front());
            m_queue.pop_front();
            m_busy = true;
            if (m_newSettings) {
                runner.reset(); // the old worker goes before a new one starts
                runner = makeRunner(*m_newSettings, warnings);
                m_newSettings.reset();
            }
        }
        task.work(*runner);
    }
}

void RunController::waitForIdle()
{
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [this] { return m_queue.empty() && !m_busy; });
}

void RunController::deliverDevice(const DeviceStatus &status)
{
    m_device = status;
    Q_EMIT deviceProbed();
}

void RunController::probe()
{
    QPointer<RunController> self(this);
    enqueue([self](runner::Runner &runner) {
        const DeviceStatus status = probeDevice(runner);
        if (self)
            QMetaObject::invokeMethod(
                self.data(), [self, status] {
                    if (self)
                        self->deliverDevice(status);
                },
                Qt::QueuedConnection);
    });
}

quint64 RunController::run(RunInput input)
{
    const quint64 id = m_nextId++;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    {
        std::lock_guard lock(m_mutex);
        if (m_cancel) // superseded: its worker is stopped and its outcome dropped, without a signal
            m_cancel->store(true);
        m_cancel = flag;
    }
    m_current = id;
    QPointer<RunController> self(this);
    const ArchDatabase *database = &m_database;
    enqueue([self, id, flag, input = std::move(input), database](runner::Runner &runner) {
        auto report = std::make_shared<RunReport>(runPrograms(
            input, runner, *database, [flag] { return flag->load(); },
            [self, id](const std::string &stage) {
                if (!self)
                    return;
                QMetaObject::invokeMethod(
                    self.data(), [self, id, stage = QString::fromStdString(stage)] {
                        if (self && self->m_current == id)
                            Q_EMIT self->progress(id, stage);
                    },
                    Qt::QueuedConnection);
            }));
        const bool wasCancelled = flag->load();
        DeviceStatus status;
        status.gpu = report->gpu;
        if (report->gpu) {
            auto info = runner.device();
            if (info) {
                status.name = info->device.name;
                status.arch = info->device.arch;
            }
        } else {
            status.why = report->device.rfind("no GPU: ", 0) == 0 ? report->device.substr(8) : report->device;
        }
        if (!self)
            return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, id, report, wasCancelled, status] {
                if (!self)
                    return;
                if (!report->device.empty() && report->device != "nothing to run")
                    self->deliverDevice(status);
                if (self->m_current != id)
                    return; // superseded: dropped
                self->m_current = 0;
                if (wasCancelled)
                    Q_EMIT self->cancelled(id);
                else
                    Q_EMIT self->finished(id, report);
            },
            Qt::QueuedConnection);
    });
    return id;
}

void RunController::cancel()
{
    std::lock_guard lock(m_mutex);
    if (m_cancel)
        m_cancel->store(true);
    if (m_current) {
        // The cancelled run's outcome is dropped; tell the window now that it will not come.
        const quint64 id = m_current;
        m_current = 0;
        QMetaObject::invokeMethod(this, [this, id] { Q_EMIT cancelled(id); }, Qt::QueuedConnection);
    }
}

} // namespace stitch::views
