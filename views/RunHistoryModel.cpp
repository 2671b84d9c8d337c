#include "views/RunHistoryModel.h"

#include "views/RunJobs.h"
#include "views/Text.h"

#include <QDateTime>

#include <algorithm>

namespace stitch::views {

std::vector<storage::ProjectMeasurement> measurementsOf(const RunReport &report, const std::string &when)
{
    std::vector<storage::ProjectMeasurement> out;
    if (!report.gpu)
        return out;
    for (const ProgramRun &run : report.programs) {
        const runner::Timing *timing = run.timing();
        if (!timing || run.estimated())
            continue;
        storage::ProjectMeasurement m;
        m.program = run.name;
        m.arch = report.arch;
        m.gpu = report.device;
        m.ms = timing->medianMs;
        m.verified = run.result->verification && run.result->verification->verified;
        m.when = when;
        out.push_back(std::move(m));
    }
    return out;
}

RunHistoryModel::RunHistoryModel(QObject *parent) : QAbstractTableModel(parent) {}

void RunHistoryModel::setMeasurements(std::vector<storage::ProjectMeasurement> measurements)
{
    beginResetModel();
    m_rows = std::move(measurements);
    // A project lists them as they were taken; the newest matters most. Stable: one run's rows keep
    // their order (the program before, then the optimized one).
    std::stable_sort(
        m_rows.begin(), m_rows.end(),
        [](const storage::ProjectMeasurement &a, const storage::ProjectMeasurement &b) { return a.when > b.when; });
    endResetModel();
}

int RunHistoryModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunHistoryModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunHistoryModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const storage::ProjectMeasurement &m = m_rows[std::size_t(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case When: {
            const QDateTime at = QDateTime::fromString(qs(m.when), Qt::ISODate);
            return at.isValid() ? QLocale().toString(at.toLocalTime(), QLocale::ShortFormat) : qs(m.when);
        }
        case Program:
            return qs(m.program);
        case Time:
            return qs(runMsText(m.ms));
        case Verified:
            return m.verified ? tr("yes") : tr("no");
        case Gpu:
            return qs(m.gpu);
        case Arch:
            return qs(m.arch);
        default:
            return {};
        }
    }
    if (role == Qt::UserRole && index.column() == Time)
        return m.ms;
    if (role == Qt::TextAlignmentRole && index.column() == Time)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole)
        return tr("%1 on %2 (%3), %4: %5")
            .arg(qs(m.program), qs(m.gpu), qs(m.arch), qs(m.when),
                 m.verified ? tr("verified") : tr("not verified (the Run dock said why when it ran)"));
    return {};
}

QVariant RunHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case When:
        return tr("When");
    case Program:
        return tr("Program");
    case Time:
        return tr("Median");
    case Verified:
        return tr("Verified");
    case Gpu:
        return tr("GPU");
    case Arch:
        return tr("Arch");
    default:
        return {};
    }
}

} // namespace stitch::views
