#include "views/RunModels.h"

#include "views/Text.h"

#include <QColor>

#include <cmath>

namespace stitch::views {

namespace {

QString errorText(double v)
{
    return std::isfinite(v) ? QString::number(v, 'g', 3) : QStringLiteral("nan");
}

QString programTitle(const ProgramRun &run)
{
    return qs(run.name);
}

} // namespace

QString timeSource(const ProgramRun &run)
{
    if (!run.result)
        return QObject::tr("not run: %1").arg(qs(run.error));
    const runner::JobResult &r = *run.result;
    if (r.estimated)
        return QObject::tr("ESTIMATED by %1, not measured (%2)").arg(qs(r.estimateSource), qs(r.device.name));
    return QObject::tr("measured on %1 (%2)%3%4")
        .arg(qs(r.device.name), qs(r.device.arch),
             r.fromCache ? QObject::tr(", from the cache (%1)").arg(qs(r.measuredAt)) : QString(),
             r.library.empty() ? QString() : QObject::tr(", %1").arg(qs(r.library)));
}

// ------------------------------------------------------------------------------------------------
// RunTimesModel

RunTimesModel::RunTimesModel(QObject *parent) : QAbstractTableModel(parent) {}

void RunTimesModel::setReport(std::shared_ptr<const RunReport> report)
{
    beginResetModel();
    m_report = std::move(report);
    endResetModel();
}

int RunTimesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_report ? 0 : static_cast<int>(m_report->programs.size());
}

int RunTimesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunTimesModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const ProgramRun &run = m_report->programs[static_cast<std::size_t>(index.row())];
    const runner::Timing *t = run.timing();
    const bool estimated = run.estimated();
    const QString mark = estimated ? tr(" (estimated)") : QString();
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case ProgramColumn: return programTitle(run);
        case MedianColumn: return t ? qs(runMsText(t->medianMs)) + mark : tr("-");
        case MinColumn: return t && !estimated ? qs(runMsText(t->minMs)) : tr("-");
        case MaxColumn: return t && !estimated ? qs(runMsText(t->maxMs)) : tr("-");
        case RunsColumn: return t && !estimated ? QString::number(t->samplesMs.size()) : tr("-");
        case VerifiedColumn:
            if (!run.result)
                return run.role == ProgramRun::Role::Library && !m_report->gpu ? tr("not run (no GPU)") : tr("not run");
            if (estimated)
                return tr("not verified (no GPU)");
            if (!run.result->verification)
                return tr("no reference");
            if (!run.result->verification->verified)
                return tr("WRONG ANSWER");
            return run.result->verification->unchecked.empty()
                       ? tr("verified")
                       : tr("verified, %1 unchecked").arg(run.result->verification->unchecked.size());
        case SourceColumn: return timeSource(run);
        }
    } else if (role == Qt::ToolTipRole) {
        QString tip = timeSource(run);
        if (!run.note.empty())
            tip += QLatin1Char('\n') + qs(run.note);
        if (!run.error.empty() && run.result)
            tip += QLatin1Char('\n') + qs(run.error);
        return tip;
    } else if (role == Qt::ForegroundRole) {
        // Without a GPU the library reference has no time by design (no model of cuBLAS): not a failure.
        if (!run.result && run.role == ProgramRun::Role::Library && !m_report->gpu)
            return QColor(Qt::darkYellow);
        if (!run.result || (run.result->verification && !run.result->verification->verified))
            return QColor(Qt::red);
        if (estimated)
            return QColor(Qt::darkYellow);
    } else if (role == Qt::TextAlignmentRole && index.column() >= MedianColumn && index.column() <= RunsColumn) {
        return int(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant RunTimesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ProgramColumn: return tr("Program");
    case MedianColumn: return tr("Median");
    case MinColumn: return tr("Min");
    case MaxColumn: return tr("Max");
    case RunsColumn: return tr("Runs");
    case VerifiedColumn: return tr("Verification");
    case SourceColumn: return tr("Source");
    }
    return {};
}

// ------------------------------------------------------------------------------------------------
// RunVerificationModel

RunVerificationModel::RunVerificationModel(QObject *parent) : QAbstractTableModel(parent) {}

void RunVerificationModel::setReport(std::shared_ptr<const RunReport> report)
{
    beginResetModel();
    m_rows.clear();
    for (const ProgramRun &run : report ? report->programs : std::vector<ProgramRun>{}) {
        const QString program = programTitle(run);
        if (!run.result) {
            const bool noGpu = run.role == ProgramRun::Role::Library && !report->gpu; // no model of cuBLAS: by design
            Row row{program, tr("-"), noGpu ? tr("not run (no GPU)") : tr("not run")};
            row.tooltip = qs(run.error);
            row.failed = !noGpu;
            m_rows.push_back(std::move(row));
            continue;
        }
        if (run.result->estimated) {
            m_rows.push_back({program, tr("-"), tr("not verified: estimated, no GPU"), {}, {}, {}, {},
                              timeSource(run), false});
            continue;
        }
        if (!run.result->verification) {
            m_rows.push_back({program, tr("-"), tr("no reference to verify against"), {}, {}, {}, {}, {}, false});
            continue;
        }
        const runner::Verification &v = *run.result->verification;
        const QString against = v.reference == "gpu" ? tr("the original program on the GPU") : tr("the CPU interpreter");
        for (const runner::OutputCheck &o : v.outputs) {
            QString tip = tr("%1 against %2 (%3, tolerance %4 on ||out - ref|| / ||ref||)")
                              .arg(qs(o.buffer), against, qs(v.precision))
                              .arg(v.tolerance, 0, 'g', 3);
            for (const auto &m : o.firstMismatches)
                tip += tr("\n[%1] got %2, expected %3").arg(m.index).arg(m.got, 0, 'g', 8).arg(m.expected, 0, 'g', 8);
            m_rows.push_back({program, qs(o.buffer), o.passed ? tr("verified") : tr("FAILED"), errorText(o.relativeError),
                              errorText(o.maxAbsError),
                              tr("%1 of %2").arg(o.mismatchCount).arg(o.elements), QString::number(o.unwrittenCount), tip,
                              !o.passed});
        }
        for (const std::string &u : v.unchecked)
            m_rows.push_back({program, qs(u), tr("unchecked"), {}, {}, {}, {},
                              tr("%1 is written by a kernel carried unchanged (or computed from what one wrote): the CPU "
                                 "interpreter cannot compute it, so it is not checked")
                                  .arg(qs(u)),
                              false});
    }
    endResetModel();
}

int RunVerificationModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunVerificationModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunVerificationModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const Row &r = m_rows[static_cast<std::size_t>(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case ProgramColumn: return r.program;
        case OutputColumn: return r.output;
        case ResultColumn: return r.result;
        case RelativeErrorColumn: return r.relative;
        case MaxErrorColumn: return r.maxError;
        case MismatchColumn: return r.mismatches;
        case UnwrittenColumn: return r.unwritten;
        }
    } else if (role == Qt::ToolTipRole) {
        return r.tooltip;
    } else if (role == Qt::ForegroundRole && r.failed) {
        return QColor(Qt::red);
    }
    return {};
}

QVariant RunVerificationModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ProgramColumn: return tr("Program");
    case OutputColumn: return tr("Output");
    case ResultColumn: return tr("Result");
    case RelativeErrorColumn: return tr("Rel. error");
    case MaxErrorColumn: return tr("Max abs error");
    case MismatchColumn: return tr("Mismatches");
    case UnwrittenColumn: return tr("Never written");
    }
    return {};
}

// ------------------------------------------------------------------------------------------------
// RunMetricsModel

RunMetricsModel::RunMetricsModel(QObject *parent) : QAbstractTableModel(parent) {}

void RunMetricsModel::setReport(std::shared_ptr<const RunReport> report)
{
    beginResetModel();
    m_rows.clear();
    for (const ProgramRun &run : report ? report->programs : std::vector<ProgramRun>{})
        for (const MetricRow &m : run.metrics)
            m_rows.push_back({programTitle(run), m});
    endResetModel();
}

int RunMetricsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunMetricsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

int RunMetricsModel::measuredRows() const
{
    int n = 0;
    for (const Row &r : m_rows)
        n += r.metric.measured ? 1 : 0;
    return n;
}

QVariant RunMetricsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const Row &r = m_rows[static_cast<std::size_t>(index.row())];
    const QString source = r.metric.measured ? tr("CUPTI (measured)") : tr("static rubric (the model's evidence, not measured)");
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case ProgramColumn: return r.program;
        case KernelColumn: return qs(r.metric.kernel);
        case QuantityColumn: return qs(r.metric.quantity);
        case ValueColumn: return qs(r.metric.value);
        case SourceColumn: return source;
        }
    } else if (role == Qt::ToolTipRole) {
        return tr("%1 of %2 (%3): %4").arg(qs(r.metric.quantity), qs(r.metric.kernel), source, qs(r.metric.value));
    } else if (role == Qt::ForegroundRole && !r.metric.measured) {
        return QColor(Qt::darkYellow);
    }
    return {};
}

QVariant RunMetricsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ProgramColumn: return tr("Program");
    case KernelColumn: return tr("Kernel");
    case QuantityColumn: return tr("Quantity");
    case ValueColumn: return tr("Value");
    case SourceColumn: return tr("Source");
    }
    return {};
}

} // namespace stitch::views
