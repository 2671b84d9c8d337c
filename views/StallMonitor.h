#pragma once
// How long the GUI thread's event loop went without running: an event-loop watchdog.
//   start -> a 2 ms timer on the watched thread; each tick measures the time since the last one
//   -> the longest gap beyond the interval is the longest stall (per named phase)
// The studio's rule is that nothing blocks the GUI thread past 50 ms: the walk test
// (tests/views/tst_walk.cpp) measures it while it opens, optimizes, steps, runs and saves, and the
// benchmark (scripts/bench/studio_walk.sh) reports the figures (docs/PERFORMANCE.md).
// STITCHCUDA_STALL_LOG=1 makes the studio (and the walk) print each stall past 50 ms with the phase
// it was in, how much of it the GUI thread spent on the CPU (the rest it waited: a lock, a join,
// or other processes had the cores) and the event whose handling ran longest in it.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <map>

namespace stitch::views {

class StallMonitor final : public QObject {
    Q_OBJECT
public:
    /// One stall: its length, the GUI thread's CPU time in it, and the longest-running event in it
    /// ("QEvent::MetaCall to stitch::views::RetrainController", when events are traced).
    struct Stall {
        double ms = 0;
        double cpuMs = 0;
        QString event;
        double eventMs = 0;
    };

    explicit StallMonitor(QObject *parent = nullptr);
    ~StallMonitor() override;

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
    /// Phase -> its longest stall, with what the thread did in it.
    const std::map<QString, Stall> &longestStalls() const { return m_stalls; }
    /// Stalls longer than this are logged with qWarning (0: none are); logging traces events too.
    void setLogThresholdMs(double ms);
    /// Watches which event each stall was spent in (an application event filter).
    void setTraceEvents(bool on);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void tick();
    void noteEventSpan(qint64 now);

    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_lastNs = 0;
    qint64 m_lastCpuNs = 0;
    QString m_phase = QStringLiteral("start");
    std::map<QString, double> m_longest;
    std::map<QString, Stall> m_stalls;
    double m_logThresholdMs = 0;
    bool m_traceEvents = false;
    // The event being handled (the last one to start) and the longest span since the last tick.
    qint64 m_eventStartNs = -1;
    int m_eventType = 0;
    const char *m_eventClass = nullptr; ///< the receiver's class (static text)
    QString m_eventObject;              ///< the receiver's object name
    const char *m_eventParentClass = nullptr; ///< for Qt's inner widgets (a viewport): whose
    QString m_eventParentObject;
    double m_spanMs = 0;
    QString m_spanEvent;
};

} // namespace stitch::views
