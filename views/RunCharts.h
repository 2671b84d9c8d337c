#pragma once
// The Run dock's charts (Qt Charts) over one RunReport (views/RunJobs.h).
//   RunTimeChart: a bar per program (the median), its spread (min to max) and every timed sample;
//   the library reference (cuBLAS) is a bar like the others when a GPU timed it
//   RooflineChart: log-log, the architecture's DRAM and compute ceilings (core/arch), each kernel a
//   point before (as written / generic schedule) and after (optimized), and cuBLAS's calls where
//   CUPTI timed them
// Figures the performance model estimated say so in the title, the series names and the tooltips.

#include "views/RunJobs.h"

#include <QChartView>

#include <memory>

QT_BEGIN_NAMESPACE
class QLineSeries;
class QScatterSeries;
class QBarSeries;
QT_END_NAMESPACE

namespace stitch::views {

class RunTimeChart final : public QChartView {
    Q_OBJECT
public:
    explicit RunTimeChart(QWidget *parent = nullptr);
    void setReport(std::shared_ptr<const RunReport> report);
    /// The bar's tooltip for program `index` (shown on hover): its time, spread and where it comes from.
    QString barToolTip(int index) const;
    QString title() const;
    QBarSeries *bars() const { return m_bars; }
    /// The min-to-max whiskers, one per measured program.
    const QList<QLineSeries *> &spreads() const { return m_spreads; }

private:
    std::shared_ptr<const RunReport> m_report;
    std::vector<int> m_programOfBar; ///< bar index -> report program (programs without a time have no bar)
    QBarSeries *m_bars = nullptr;
    QList<QLineSeries *> m_spreads;
};

class RooflineChart final : public QChartView {
    Q_OBJECT
public:
    explicit RooflineChart(QWidget *parent = nullptr);
    void setReport(std::shared_ptr<const RunReport> report);
    QString title() const;
    /// The ceilings drawn: DRAM bandwidth (a slope), the FP32 peak, and TF32 where the program uses it.
    const QList<QLineSeries *> &ceilings() const { return m_ceilings; }
    QScatterSeries *beforePoints() const { return m_before; }
    QScatterSeries *afterPoints() const { return m_after; }
    /// cuBLAS's GEMMs (one point for all its calls), when CUPTI timed its kernels; else null.
    QScatterSeries *libraryPoints() const { return m_library; }
    /// The tooltip of the kernel nearest to `value` (chart coordinates) in `series`.
    QString pointToolTip(QScatterSeries *series, const QPointF &value) const;
    /// Kernels that cannot be drawn on log axes (no FLOPs or no time), named with why.
    QStringList omitted() const { return m_omitted; }

private:
    void labelCeilings(QChart *chart);
    QScatterSeries *addPoints(const ProgramRun *run, const QString &what, const QColor &color);

    std::shared_ptr<const RunReport> m_report;
    QList<QLineSeries *> m_ceilings;
    QScatterSeries *m_before = nullptr;
    QScatterSeries *m_after = nullptr;
    QScatterSeries *m_library = nullptr;
    QStringList m_omitted;
    std::map<QScatterSeries *, std::vector<RooflinePoint>> m_points; ///< as drawn, in series order
    std::map<QScatterSeries *, const ProgramRun *> m_runs;
};

} // namespace stitch::views
