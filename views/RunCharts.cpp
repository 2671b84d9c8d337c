#include "views/RunCharts.h"

#include "views/RunModels.h"
#include "views/Text.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QCursor>
#include <QGraphicsSimpleTextItem>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace stitch::views {

namespace {

bool anyEstimated(const RunReport &report)
{
    for (const auto &p : report.programs)
        if (p.estimated())
            return true;
    return false;
}

QChart *freshChart(QChartView *view)
{
    auto *chart = new QChart;
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    QFont small = chart->legend()->font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    chart->legend()->setFont(small);
    QFont title = chart->titleFont(); // a dock is narrow: the title at the legend's size, bold
    title.setPointSizeF(small.pointSizeF());
    title.setBold(true);
    chart->setTitleFont(title);
    QChart *old = view->chart();
    view->setChart(chart);
    delete old;
    return chart;
}

// Axis labels and titles at the legend's size: the charts sit side by side in a dock.
void smallAxes(QChart *chart)
{
    const QFont small = chart->legend()->font();
    for (QAbstractAxis *axis : chart->axes()) {
        axis->setLabelsFont(small);
        axis->setTitleFont(small);
    }
}

QString gflopsText(double gflops)
{
    return gflops >= 1000 ? QObject::tr("%1 TFLOP/s").arg(gflops / 1000, 0, 'g', 3)
                          : QObject::tr("%1 GFLOP/s").arg(gflops, 0, 'g', 3);
}

} // namespace

// ------------------------------------------------------------------------------------------------
// RunTimeChart

RunTimeChart::RunTimeChart(QWidget *parent) : QChartView(new QChart, parent)
{
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(180);
    setReport(nullptr);
}

QString RunTimeChart::title() const
{
    return chart()->title();
}

void RunTimeChart::setReport(std::shared_ptr<const RunReport> report)
{
    m_report = std::move(report);
    m_programOfBar.clear();
    m_spreads.clear();
    QChart *chart = freshChart(this);
    m_bars = new QBarSeries;
    if (!m_report || m_report->programs.empty()) {
        chart->setTitle(tr("Time per program: Run (F5) after Optimize"));
        chart->addSeries(m_bars);
        return;
    }
    const bool estimated = anyEstimated(*m_report);
    chart->setTitle(estimated ? tr("Time per program: ESTIMATED")
                              : tr("Time per program on %1 (median, min to max)").arg(qs(m_report->device)));
    auto *set = new QBarSet(estimated ? tr("median (estimated)") : tr("median"));
    QStringList categories;
    double top = 0;
    for (std::size_t i = 0; i < m_report->programs.size(); ++i) {
        const ProgramRun &run = m_report->programs[i];
        const runner::Timing *t = run.timing();
        if (!t)
            continue;
        m_programOfBar.push_back(static_cast<int>(i));
        set->append(t->medianMs);
        categories << qs(run.name); // estimated or not: the title, the axis and the tooltip say
        top = std::max(top, run.estimated() ? t->medianMs : t->maxMs);
    }
    m_bars->append(set);
    chart->addSeries(m_bars);
    auto *x = new QBarCategoryAxis;
    x->append(categories);
    auto *y = new QValueAxis;
    y->setTitleText(estimated ? tr("ms (estimated)") : tr("ms"));
    y->setRange(0, top > 0 ? top * 1.15 : 1);
    y->setLabelFormat(QStringLiteral("%.3g"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    m_bars->attachAxis(x);
    m_bars->attachAxis(y);
    smallAxes(chart);
    // The spread of what was measured: a whisker from min to max and each run as a dot. An
    // estimate is one number and has none.
    QScatterSeries *samples = nullptr;
    for (std::size_t b = 0; b < m_programOfBar.size(); ++b) {
        const ProgramRun &run = m_report->programs[static_cast<std::size_t>(m_programOfBar[b])];
        const runner::Timing *t = run.timing();
        if (run.estimated() || !t)
            continue;
        auto *whisker = new QLineSeries;
        whisker->setName(tr("spread (min to max)"));
        whisker->append(static_cast<double>(b), t->minMs);
        whisker->append(static_cast<double>(b), t->maxMs);
        whisker->setPen(QPen(Qt::black, 2));
        chart->addSeries(whisker);
        whisker->attachAxis(x);
        whisker->attachAxis(y);
        if (!m_spreads.isEmpty()) // one legend entry for all whiskers
            for (QLegendMarker *marker : chart->legend()->markers(whisker))
                marker->setVisible(false);
        m_spreads << whisker;
        if (!samples) {
            samples = new QScatterSeries;
            samples->setName(tr("timed runs"));
            samples->setMarkerSize(5);
            samples->setColor(QColor(40, 40, 40, 120));
            samples->setBorderColor(Qt::transparent);
        }
        for (double s : t->samplesMs)
            samples->append(static_cast<double>(b), s);
    }
    if (samples) {
        chart->addSeries(samples);
        samples->attachAxis(x);
        samples->attachAxis(y);
    }
    connect(set, &QBarSet::hovered, this, [this](bool on, int index) {
        if (on)
            QToolTip::showText(QCursor::pos(), barToolTip(index), this);
        else
            QToolTip::hideText();
    });
}

QString RunTimeChart::barToolTip(int index) const
{
    if (!m_report || index < 0 || index >= static_cast<int>(m_programOfBar.size()))
        return {};
    const ProgramRun &run = m_report->programs[static_cast<std::size_t>(m_programOfBar[static_cast<std::size_t>(index)])];
    const runner::Timing *t = run.timing();
    if (!t)
        return {};
    QString tip = run.estimated() ? tr("%1: %2 ESTIMATED (not measured)").arg(qs(run.name), qs(runMsText(t->medianMs)))
                                  : tr("%1: median %2, min %3, max %4 over %5 runs")
                                        .arg(qs(run.name), qs(runMsText(t->medianMs)), qs(runMsText(t->minMs)),
                                             qs(runMsText(t->maxMs)))
                                        .arg(t->samplesMs.size());
    tip += QLatin1Char('\n') + timeSource(run);
    if (!run.note.empty())
        tip += QLatin1Char('\n') + qs(run.note);
    return tip;
}

// ------------------------------------------------------------------------------------------------
// RooflineChart

RooflineChart::RooflineChart(QWidget *parent) : QChartView(new QChart, parent)
{
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(220);
    setReport(nullptr);
}

QString RooflineChart::title() const
{
    return chart()->title();
}

// Each ceiling named on the plot, beside its line, in its colour: in a legend of five entries in a
// dock-wide chart Qt Charts elided them to "DRA..." and "FP32 ...". The slope's name sits below its
// lower end, a roof's above its right end; they move with the plot area.
void RooflineChart::labelCeilings(QChart *chart)
{
    QFont small = chart->legend()->font();
    std::vector<QGraphicsSimpleTextItem *> labels;
    for (QLineSeries *line : m_ceilings) {
        for (QLegendMarker *marker : chart->legend()->markers(line))
            marker->setVisible(false);
        auto *label = new QGraphicsSimpleTextItem(line->name(), chart);
        label->setFont(small);
        label->setBrush(line->pen().color());
        label->setZValue(10);
        labels.push_back(label);
    }
    auto place = [chart, labels, ceilings = m_ceilings] {
        for (std::size_t i = 0; i < labels.size(); ++i) {
            QLineSeries *line = ceilings[static_cast<qsizetype>(i)];
            const bool slope = i == 0;
            const QPointF end = chart->mapToPosition(slope ? line->at(0) : line->at(line->count() - 1), line);
            const QRectF box = labels[i]->boundingRect();
            const double x = slope ? end.x() + 4 : end.x() - box.width() - 4;
            // The slope rises to the right: its name goes below it, a roof's above it.
            labels[i]->setPos(std::max(chart->plotArea().left() + 2, x), slope ? end.y() + 2 : end.y() - box.height() - 2);
        }
    };
    connect(chart, &QChart::plotAreaChanged, chart, place);
    place();
}

QScatterSeries *RooflineChart::addPoints(const ProgramRun *run, const QString &what, const QColor &color)
{
    if (!run)
        return nullptr;
    auto *series = new QScatterSeries;
    const bool estimated = run->estimated() || std::any_of(run->kernels.begin(), run->kernels.end(),
                                                           [](const RooflinePoint &p) { return !p.measured; });
    // The legend is narrow: the program's name is in each point's tooltip.
    series->setName(estimated ? tr("%1 (estimated)").arg(what) : what);
    series->setColor(color);
    series->setMarkerSize(11);
    std::vector<RooflinePoint> drawn;
    for (const RooflinePoint &p : run->kernels) {
        if (p.intensity() <= 0 || p.gflops() <= 0) {
            m_omitted << tr("%1 (%2): %3").arg(qs(p.kernel), qs(run->name),
                                               p.flops <= 0 ? tr("no floating-point work") : tr("no time"));
            continue;
        }
        series->append(p.intensity(), p.gflops());
        drawn.push_back(p);
    }
    m_points[series] = std::move(drawn);
    m_runs[series] = run;
    connect(series, &QScatterSeries::hovered, this, [this, series](const QPointF &point, bool on) {
        if (on)
            QToolTip::showText(QCursor::pos(), pointToolTip(series, point), this);
        else
            QToolTip::hideText();
    });
    return series;
}

void RooflineChart::setReport(std::shared_ptr<const RunReport> report)
{
    m_report = std::move(report);
    m_ceilings.clear();
    m_omitted.clear();
    m_points.clear();
    m_runs.clear();
    m_before = m_after = m_library = nullptr;
    QChart *chart = freshChart(this);
    if (!m_report || m_report->peakGflops <= 0 || m_report->bandwidthGBs <= 0) {
        chart->setTitle(m_report ? tr("Roofline: no ceilings for %1 in the architecture database").arg(qs(m_report->arch))
                                 : tr("Roofline: Run (F5) after Optimize"));
        return;
    }
    const RunReport &r = *m_report;
    const bool estimated = anyEstimated(r) || std::any_of(r.programs.begin(), r.programs.end(), [](const ProgramRun &p) {
                               return std::any_of(p.kernels.begin(), p.kernels.end(),
                                                  [](const RooflinePoint &k) { return !k.measured; });
                           });
    QString gpuName = qs(r.gpuSpec); // "NVIDIA H200" -> "H200": the chart is narrow
    if (gpuName.startsWith(QStringLiteral("NVIDIA ")))
        gpuName.remove(0, 7);
    chart->setTitle(estimated ? tr("Roofline, %1 (%2): ESTIMATED").arg(gpuName, qs(r.arch))
                              : tr("Roofline, %1 (%2): measured").arg(gpuName, qs(r.arch)));
    m_before = addPoints(r.before(), tr("before"), QColor(200, 90, 40));
    m_after = addPoints(r.optimized(), tr("after"), QColor(30, 110, 200));
    if (const ProgramRun *library = r.library(); library && !library->kernels.empty())
        m_library = addPoints(library, tr("reference"), QColor(40, 150, 70));

    // The axes span the ceilings' ridge points and every kernel, a decade either side.
    const double roof = std::max(r.peakGflops, r.tensorGflops);
    double lo = std::numeric_limits<double>::max(), hi = 0, yLo = std::numeric_limits<double>::max();
    for (const auto &[series, points] : m_points)
        for (const RooflinePoint &p : points) {
            lo = std::min(lo, p.intensity());
            hi = std::max(hi, p.intensity());
            yLo = std::min(yLo, p.gflops());
        }
    const double ridge = r.peakGflops / r.bandwidthGBs, tensorRidge = roof / r.bandwidthGBs;
    lo = std::pow(10.0, std::floor(std::log10(std::min(lo, ridge / 10)))) ;
    hi = std::pow(10.0, std::ceil(std::log10(std::max(hi, tensorRidge * 10))));
    yLo = std::pow(10.0, std::floor(std::log10(std::min(yLo, r.bandwidthGBs * lo))));
    const double yHi = std::pow(10.0, std::ceil(std::log10(roof * 2)));

    auto ceiling = [&](const QString &name, const QColor &color, std::initializer_list<QPointF> points) {
        auto *line = new QLineSeries;
        line->setName(name);
        line->setPen(QPen(color, 2, Qt::DashLine));
        for (const QPointF &p : points)
            line->append(p);
        chart->addSeries(line);
        m_ceilings << line;
    };
    ceiling(tr("DRAM %1 TB/s").arg(r.bandwidthGBs / 1000, 0, 'f', 1), QColor(90, 90, 90),
            {QPointF(lo, r.bandwidthGBs * lo), QPointF(tensorRidge, roof)});
    ceiling(tr("FP32 %1").arg(gflopsText(r.peakGflops)), QColor(20, 20, 20), {QPointF(ridge, r.peakGflops), QPointF(hi, r.peakGflops)});
    if (r.tensorGflops > r.peakGflops)
        ceiling(tr("TF32 tensor %1").arg(gflopsText(r.tensorGflops)), QColor(120, 60, 160),
                {QPointF(tensorRidge, r.tensorGflops), QPointF(hi, r.tensorGflops)});
    for (auto *s : {m_before, m_after, m_library})
        if (s)
            chart->addSeries(s);

    auto *x = new QLogValueAxis;
    x->setBase(10);
    x->setTitleText(tr("arithmetic intensity (FLOP / DRAM byte)"));
    x->setLabelFormat(QStringLiteral("%g"));
    x->setRange(lo, hi);
    auto *y = new QLogValueAxis;
    y->setBase(10);
    y->setTitleText(estimated ? tr("GFLOP/s (estimated)") : tr("GFLOP/s achieved"));
    y->setLabelFormat(QStringLiteral("%g"));
    y->setRange(yLo, yHi);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (QAbstractSeries *s : chart->series()) {
        s->attachAxis(x);
        s->attachAxis(y);
    }
    smallAxes(chart);
    labelCeilings(chart);
    if (!m_omitted.isEmpty())
        setToolTip(tr("Not drawn on the log axes:\n%1").arg(m_omitted.join(QLatin1Char('\n'))));
    else
        setToolTip({});
}

QString RooflineChart::pointToolTip(QScatterSeries *series, const QPointF &value) const
{
    auto it = m_points.find(series);
    if (it == m_points.end() || it->second.empty())
        return {};
    const auto &points = it->second;
    std::size_t best = 0;
    double bestDistance = std::numeric_limits<double>::max();
    for (std::size_t i = 0; i < points.size(); ++i) { // nearest on the log axes
        const double dx = std::log10(points[i].intensity()) - std::log10(std::max(value.x(), 1e-30));
        const double dy = std::log10(points[i].gflops()) - std::log10(std::max(value.y(), 1e-30));
        if (dx * dx + dy * dy < bestDistance) {
            bestDistance = dx * dx + dy * dy;
            best = i;
        }
    }
    const RooflinePoint &p = points[best];
    const ProgramRun *run = m_runs.at(series);
    return tr("%1 (%2)\n%3 FLOP / byte (%4), %5 %6\ntime %7 %8%9")
        .arg(qs(p.kernel), qs(run->name))
        .arg(p.intensity(), 0, 'g', 3)
        .arg(p.bytesMeasured ? tr("DRAM bytes measured by CUPTI") : tr("bytes: every tensor once, the model's count"))
        .arg(gflopsText(p.gflops()), p.measured ? tr("achieved") : tr("ESTIMATED"))
        .arg(qs(runMsText(p.ms)), p.measured ? tr("measured (CUPTI)") : tr("estimated by the performance model"))
        .arg(p.bound.empty() ? QString() : tr("; the model says %1-bound").arg(qs(p.bound)));
}

} // namespace stitch::views
