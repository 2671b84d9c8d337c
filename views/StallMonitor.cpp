#include "views/StallMonitor.h"

#include <QCoreApplication>
#include <QEvent>
#include <QMetaEnum>
#include <QtGlobal>

#include <algorithm>
#include <ctime>

namespace stitch::views {

namespace {
constexpr int kIntervalMs = 2;

// The calling thread's CPU time: a stall with little of it was spent waiting, not computing.
qint64 threadCpuNs()
{
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return static_cast<qint64>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

QString eventName(int type)
{
    const char *name = QMetaEnum::fromType<QEvent::Type>().valueToKey(type);
    return name ? QString::fromLatin1(name) : QString::number(type);
}
} // namespace

StallMonitor::StallMonitor(QObject *parent) : QObject(parent)
{
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(kIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &StallMonitor::tick);
}

StallMonitor::~StallMonitor()
{
    setTraceEvents(false);
}

void StallMonitor::start()
{
    m_clock.start();
    m_lastNs = 0;
    m_lastCpuNs = threadCpuNs();
    m_eventStartNs = -1;
    m_spanMs = 0;
    m_longest.try_emplace(m_phase, 0.0);
    m_stalls.try_emplace(m_phase);
    m_timer.start();
}

void StallMonitor::stop()
{
    tick(); // a stall that was running when the watch ended counts too
    m_timer.stop();
}

void StallMonitor::setPhase(const QString &phase)
{
    tick(); // what ran until now belongs to the phase that ends
    m_phase = phase;
    m_longest.try_emplace(m_phase, 0.0);
    m_stalls.try_emplace(m_phase);
}

void StallMonitor::setLogThresholdMs(double ms)
{
    m_logThresholdMs = ms;
    setTraceEvents(ms > 0);
}

void StallMonitor::setTraceEvents(bool on)
{
    if (on == m_traceEvents || !QCoreApplication::instance())
        return;
    m_traceEvents = on;
    if (on)
        QCoreApplication::instance()->installEventFilter(this);
    else
        QCoreApplication::instance()->removeEventFilter(this);
}

void StallMonitor::noteEventSpan(qint64 now)
{
    if (m_eventStartNs < 0)
        return;
    const double ms = static_cast<double>(now - m_eventStartNs) / 1e6;
    if (ms > m_spanMs) {
        m_spanMs = ms;
        const auto name = [](const char *cls, const QString &object) {
            return QString::fromLatin1(cls) + (object.isEmpty() ? QString() : QStringLiteral(" '%1'").arg(object));
        };
        m_spanEvent = QStringLiteral("%1 to %2").arg(eventName(m_eventType), name(m_eventClass, m_eventObject));
        if (m_eventParentClass)
            m_spanEvent += QStringLiteral(" in %1").arg(name(m_eventParentClass, m_eventParentObject));
    }
}

bool StallMonitor::eventFilter(QObject *watched, QEvent *event)
{
    // The time from one event's start to the next one's is (nested events aside) its handling.
    if (m_clock.isValid() && watched && watched->thread() == thread()) {
        const qint64 now = m_clock.nsecsElapsed();
        noteEventSpan(now);
        m_eventStartNs = now;
        m_eventType = event->type();
        m_eventClass = watched->metaObject()->className();
        m_eventObject = watched->objectName();
        // A viewport, a scroll bar, a title button: the widget it belongs to says more.
        const QObject *parent = watched->parent();
        const bool inner = m_eventObject.isEmpty() || m_eventObject.startsWith(QLatin1String("qt_"));
        m_eventParentClass = inner && parent ? parent->metaObject()->className() : nullptr;
        m_eventParentObject = inner && parent ? parent->objectName() : QString();
    }
    return false;
}

void StallMonitor::tick()
{
    if (!m_clock.isValid())
        return;
    const qint64 now = m_clock.nsecsElapsed();
    const qint64 cpu = threadCpuNs();
    const double gapMs = static_cast<double>(now - m_lastNs) / 1e6 - kIntervalMs;
    const double cpuMs = static_cast<double>(cpu - m_lastCpuNs) / 1e6;
    m_lastNs = now;
    m_lastCpuNs = cpu;
    noteEventSpan(now);
    const QString event = m_spanEvent;
    const double eventMs = m_spanMs;
    m_spanMs = 0;
    m_spanEvent.clear();
    m_eventStartNs = -1; // the tick's own timer event starts the next window

    double &longest = m_longest[m_phase];
    if (gapMs > longest)
        m_stalls[m_phase] = Stall{gapMs, cpuMs, event, eventMs};
    longest = std::max(longest, gapMs);
    if (m_logThresholdMs > 0 && gapMs > m_logThresholdMs)
        qWarning("stitchcuda-studio: the GUI thread stalled %.0f ms (%s), %.0f ms of it on the CPU; longest event: "
                 "%s (%.0f ms)",
                 gapMs, qPrintable(m_phase), cpuMs, event.isEmpty() ? "not traced" : qPrintable(event), eventMs);
}

double StallMonitor::longestMs() const
{
    double longest = 0;
    for (const auto &[phase, ms] : m_longest)
        longest = std::max(longest, ms);
    return longest;
}

double StallMonitor::longestMs(const QString &phase) const
{
    auto it = m_longest.find(phase);
    return it == m_longest.end() ? 0.0 : it->second;
}

} // namespace stitch::views
