#pragma once
// The Rubric dock's radar: a Qt Charts polar chart, one spoke per rubric dimension (0-5, rings at
// 1..5), one closed line per series (the program as written dashed, the previous agent step, the
// current schedule), a legend, and per dimension a tooltip on its spoke and its points.
//   RubricPanel (as written, the agents' step, the scored schedule) -> RubricRadar::setData -> QPolarChart
// The widget draws what it is given; RubricPanel decides which scores those are.

#include <QChartView>
#include <QString>
#include <QStringList>

#include <vector>

QT_BEGIN_NAMESPACE
class QLineSeries;
class QPolarChart;
QT_END_NAMESPACE

namespace stitch::views {

/// One polygon of the radar: a score per spoke.
struct RadarSeries {
    enum class Role { AsWritten, Previous, Current };
    Role role = Role::Current;
    QString name;               ///< the legend's text
    std::vector<double> values; ///< 0-5, one per spoke
};

class RubricRadar final : public QChartView {
    Q_OBJECT
public:
    explicit RubricRadar(QWidget *parent = nullptr);

    /// Draws `series` over `spokes` (labels, first one up, clockwise); `tips` holds each spoke's
    /// tooltip. A series whose value count is not the spoke count is left out. No spokes, or fewer
    /// than three, shows `placeholder` instead of a chart.
    void setData(const QStringList &spokes, const std::vector<RadarSeries> &series, const QStringList &tips,
                 const QString &placeholder = {});
    void clear(const QString &placeholder = {}) { setData({}, {}, {}, placeholder); }

    QPolarChart *polarChart() const { return m_chart; }
    QStringList spokes() const { return m_spokes; }
    /// The drawn series in legend order; each is closed (its last point repeats its first).
    QList<QLineSeries *> lines() const { return m_lines; }
    /// The series drawn with `role`, or null.
    QLineSeries *line(RadarSeries::Role role) const;
    /// A series' score per spoke (its points without the closing one).
    static QList<double> values(const QLineSeries *line);
    QString placeholder() const { return m_placeholder; }

    /// The tooltip of spoke `spoke` (empty out of range).
    QString spokeToolTip(int spoke) const;
    /// The spoke under `pos` (viewport coordinates: on its line or within a few pixels of one of
    /// its points), or -1.
    int spokeAt(const QPoint &pos) const;
    /// Where `score` lies on spoke `spoke`, in viewport coordinates (tests hover there).
    QPoint spokePosition(int spoke, double score) const;

    QSize sizeHint() const override { return {360, 320}; }
    QSize minimumSizeHint() const override { return {220, 200}; }

protected:
    bool viewportEvent(QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    QPointF spokeScenePoint(int spoke, double score) const;
    void removeSeries();
    void removeAxes();
    void addAxes(const QStringList &spokes);
    void colourAxes();
    void addLine(RadarSeries::Role role);

    QPolarChart *m_chart;
    QStringList m_spokes;
    QStringList m_tips;
    QList<QLineSeries *> m_lines;
    QList<RadarSeries::Role> m_roles;
    QString m_placeholder;
};

} // namespace stitch::views
