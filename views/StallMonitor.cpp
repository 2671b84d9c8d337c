#include "views/StallMonitor.h"

#include <QtGlobal>

#include <algorithm>

namespace stitch::views {

namespace {
constexpr int kIntervalMs = 2;
} // namespace

StallMonitor::StallMonitor(QObject *parent) : QObject(parent)
{
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(kIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &StallMonitor::tick);
}

void StallMonitor::start()
{
    m_clock.start();
    m_lastNs = 0;
    m_longest.try_emplace(m_phase, 0.0);
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
}

void StallMonitor::tick()
{
    if (!m_clock.isValid())
        return;
    const qint64 now = m_clock.nsecsElapsed();
    const double gapMs = static_cast<double>(now - m_lastNs) / 1e6 - kIntervalMs;
    m_lastNs = now;
    double &longest = m_longest[m_phase];
    longest = std::max(longest, gapMs);
    if (m_logThresholdMs > 0 && gapMs > m_logThresholdMs)
        qWarning("stitchcuda-studio: the GUI thread stalled %.0f ms (%s)", gapMs, qPrintable(m_phase));
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
