#pragma once
// How long the GUI thread's event loop went without running: an event-loop watchdog.
//   start -> a 2 ms timer on the watched thread; each tick measures the time since the last one
//   -> the longest gap beyond the interval is the longest stall (per named phase)
// The studio's rule is that nothing blocks the GUI thread past 50 ms: the walk test
// (tests/views/tst_walk.cpp) measures it while it opens, optimizes, steps, runs and saves, and the
// benchmark (scripts/bench/studio_walk.sh) reports the figures (docs/PERFORMANCE.md).
// STITCHCUDA_STALL_LOG=1 makes the studio print each stall past 50 ms with the phase it was in.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <map>

namespace stitch::views {

class StallMonitor final : public QObject {
    Q_OBJECT
public:
    explicit StallMonitor(QObject *parent = nullptr);

    void start();
    void stop();
    /// Later stalls count towards `phase` ("open", "optimize", ...); the first phase is "start".
    void setPhase(const QString &phase);
    QString phase() const { return m_phase; }
    /// The longest stall so far, in ms, over every phase or one of them (0 for a phase never entered).
    double longestMs() const;
    double longestMs(const QString &phase) const;
    /// Phase -> its longest stall, in ms.
    const std::map<QString, double> &byPhase() const { return m_longest; }
    /// Stalls longer than this are logged with qWarning (0: none are).
    void setLogThresholdMs(double ms) { m_logThresholdMs = ms; }

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_lastNs = 0;
    QString m_phase = QStringLiteral("start");
    std::map<QString, double> m_longest;
    double m_logThresholdMs = 0;
};

} // namespace stitch::views
