#include "RubricRadar.h"

#include <QCategoryAxis>
#include <QCursor>
#include <QHelpEvent>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPolarChart>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace stitch::views {

namespace {

constexpr double kMaxScore = 5;
constexpr double kHoverPixels = 6; ///< how far from a spoke the pointer may be to hover it

QPen seriesPen(RadarSeries::Role role)
{
    // Distinct hues that stay apart for the common colour-vision deficiencies (blue / orange / grey).
    switch (role) {
    case RadarSeries::Role::AsWritten:
        return QPen(QColor(0xd3, 0x5f, 0x00), 2, Qt::DashLine);
    case RadarSeries::Role::Previous:
        return QPen(QColor(0x75, 0x75, 0x75), 1.5, Qt::SolidLine);
    case RadarSeries::Role::Current:
        break;
    }
    return QPen(QColor(0x1f, 0x6f, 0xc4), 2.5, Qt::SolidLine);
}

} // namespace

RubricRadar::RubricRadar(QWidget *parent)
    : QChartView(new QPolarChart, parent), m_chart(static_cast<QPolarChart *>(chart()))
{
    setObjectName(QStringLiteral("rubricRadar"));
    setRenderHint(QPainter::Antialiasing);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chart->setBackgroundRoundness(0);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->legend()->setShowToolTips(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_chart->legend()->setFont(small);
    m_chart->setTitleFont(small);
    setMouseTracking(true);
    clear();
}

QLineSeries *RubricRadar::line(RadarSeries::Role role) const
{
    const qsizetype i = m_roles.indexOf(role);
    return i < 0 ? nullptr : m_lines[i];
}

QList<double> RubricRadar::values(const QLineSeries *line)
{
    QList<double> out;
    if (!line)
        return out;
    const QList<QPointF> points = line->points();
    for (qsizetype i = 0; i + 1 < points.size(); ++i) // the last point closes the polygon
        out << points[i].y();
    return out;
}

void RubricRadar::setData(const QStringList &spokes, const std::vector<RadarSeries> &series, const QStringList &tips,
                          const QString &placeholder)
{
    m_tips = tips;
    const qsizetype n = spokes.size();
    std::vector<const RadarSeries *> drawn;
    for (const RadarSeries &s : series)
        if (s.values.size() == static_cast<std::size_t>(n))
            drawn.push_back(&s);
    if (n < 3 || series.empty()) {
        removeSeries();
        removeAxes();
        m_placeholder = !placeholder.isEmpty()     ? placeholder
                        : n == 0 || series.empty() ? tr("No scores")
                                                   : tr("Too few dimensions for a radar");
        m_chart->setTitle(m_placeholder);
        m_chart->legend()->hide();
        setToolTip(m_placeholder);
        return;
    }
    if (!m_placeholder.isEmpty()) {
        m_placeholder.clear();
        m_chart->setTitle({});
        setToolTip({}); // each spoke has its own (viewportEvent)
    }
    // Stepping through the agents changes the scores, rarely the spokes or which series are drawn:
    // the axes and lines are kept and only their points replaced (building them anew took Qt Charts
    // 3-5 ms a step).
    if (spokes != m_spokes || m_chart->axes().isEmpty()) {
        removeSeries();
        removeAxes();
        addAxes(spokes);
    }
    bool sameRoles = m_lines.size() == static_cast<qsizetype>(drawn.size());
    for (std::size_t i = 0; sameRoles && i < drawn.size(); ++i)
        sameRoles = m_roles[static_cast<qsizetype>(i)] == drawn[i]->role;
    if (!sameRoles) {
        removeSeries();
        for (const RadarSeries *s : drawn)
            addLine(s->role);
    }
    for (std::size_t i = 0; i < drawn.size(); ++i) {
        QLineSeries *line = m_lines[static_cast<qsizetype>(i)];
        if (line->name() != drawn[i]->name)
            line->setName(drawn[i]->name); // "after step 3" becomes "after step 4"
        QList<QPointF> points;
        points.reserve(n + 1);
        for (qsizetype k = 0; k < n; ++k)
            points << QPointF(static_cast<double>(k),
                              std::clamp(drawn[i]->values[static_cast<std::size_t>(k)], 0.0, kMaxScore));
        points << QPointF(static_cast<double>(n), points.front().y()); // closes the polygon
        line->replace(points);
    }
    m_chart->legend()->setVisible(!m_lines.isEmpty());
}

void RubricRadar::removeSeries()
{
    m_chart->removeAllSeries();
    m_lines.clear();
    m_roles.clear();
}

void RubricRadar::removeAxes()
{
    for (QAbstractAxis *axis : m_chart->axes()) {
        m_chart->removeAxis(axis);
        delete axis;
    }
    m_spokes.clear();
}

void RubricRadar::addAxes(const QStringList &spokes)
{
    m_spokes = spokes;
    const qsizetype n = spokes.size();
    // Spoke i sits at angular value i of [0, n): a category boundary, labelled on the value, is a
    // spoke line with the dimension's name at its tip.
    auto *angular = new QCategoryAxis;
    angular->setRange(0, static_cast<double>(n));
    angular->setStartValue(0);
    angular->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    for (qsizetype i = 0; i < n; ++i)
        angular->append(spokes[i], static_cast<double>(i));
    auto *radial = new QValueAxis;
    radial->setRange(0, kMaxScore);
    radial->setTickCount(static_cast<int>(kMaxScore) + 1); // rings at 1..5 (0 is the centre)
    radial->setLabelFormat(QStringLiteral("%d"));
    m_chart->addAxis(angular, QPolarChart::PolarOrientationAngular);
    m_chart->addAxis(radial, QPolarChart::PolarOrientationRadial);
    colourAxes();
}

// The axes outlive a step now, so they follow the palette (a light or dark theme) themselves.
void RubricRadar::colourAxes()
{
    for (QAbstractAxis *axis : m_chart->axes()) {
        axis->setGridLineColor(palette().color(QPalette::Mid));
        axis->setLabelsColor(
            palette().color(qobject_cast<QCategoryAxis *>(axis) ? QPalette::WindowText : QPalette::PlaceholderText));
    }
}

void RubricRadar::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        colourAxes();
}

void RubricRadar::addLine(RadarSeries::Role role)
{
    auto *line = new QLineSeries;
    line->setPen(seriesPen(role));
    line->setPointsVisible(true);
    line->setMarkerSize(role == RadarSeries::Role::Current ? 7 : 5);
    m_chart->addSeries(line);
    for (QAbstractAxis *axis : m_chart->axes())
        line->attachAxis(axis);
    // A point hovered shows its dimension at once (the spoke's own tooltip waits for the delay).
    connect(line, &QXYSeries::hovered, this, [this](const QPointF &point, bool state) {
        if (!state || m_spokes.isEmpty())
            return;
        const int spoke = static_cast<int>(std::lround(point.x())) % static_cast<int>(m_spokes.size());
        QToolTip::showText(QCursor::pos(), spokeToolTip(spoke), viewport());
    });
    m_lines << line;
    m_roles << role;
}

QString RubricRadar::spokeToolTip(int spoke) const
{
    return spoke >= 0 && spoke < m_tips.size() ? m_tips[spoke] : QString();
}

QPointF RubricRadar::spokeScenePoint(int spoke, double score) const
{
    // QPolarChart draws its circle in the plot area's largest centred square, angle 0 up, clockwise.
    const QRectF area = m_chart->plotArea();
    const double r = std::min(area.width(), area.height()) / 2 * std::clamp(score, 0.0, kMaxScore) / kMaxScore;
    const double angle = 2 * std::numbers::pi * spoke / static_cast<double>(std::max<qsizetype>(1, m_spokes.size()));
    return m_chart->mapToScene(area.center() + QPointF(r * std::sin(angle), -r * std::cos(angle)));
}

QPoint RubricRadar::spokePosition(int spoke, double score) const
{
    return mapFromScene(spokeScenePoint(spoke, score));
}

int RubricRadar::spokeAt(const QPoint &pos) const
{
    const qsizetype n = m_spokes.size();
    if (n < 3)
        return -1;
    const QPointF centre = mapFromScene(spokeScenePoint(0, 0));
    const double radius = QLineF(centre, QPointF(mapFromScene(spokeScenePoint(0, kMaxScore)))).length();
    const QPointF v = QPointF(pos) - centre;
    const double distance = std::hypot(v.x(), v.y());
    if (distance < kHoverPixels || distance > radius + kHoverPixels) // the centre belongs to every spoke
        return -1;
    const double step = 2 * std::numbers::pi / static_cast<double>(n);
    double angle = std::atan2(v.x(), -v.y());
    if (angle < 0)
        angle += 2 * std::numbers::pi;
    const int spoke = static_cast<int>(std::lround(angle / step)) % static_cast<int>(n);
    const double off = distance * std::abs(std::sin(angle - spoke * step)); // pixels from the spoke's line
    return off <= kHoverPixels ? spoke : -1;
}

bool RubricRadar::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto *help = static_cast<QHelpEvent *>(event);
        const int spoke = spokeAt(help->pos());
        if (spoke >= 0)
            QToolTip::showText(help->globalPos(), spokeToolTip(spoke), viewport());
        else if (!m_placeholder.isEmpty())
            QToolTip::showText(help->globalPos(), m_placeholder, viewport());
        else
            QToolTip::hideText();
        return true;
    }
    return QChartView::viewportEvent(event);
}

} // namespace stitch::views
