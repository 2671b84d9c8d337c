#pragma once
// The project's measurements: every program a GPU timed in a Run of this project, kept in the
// .stitchproj and shown in the Run dock's History tab, newest first. Estimates are not measurements
// and never enter it.
//   Run (F5) on a GPU -> RunReport -> measurementsOf -> ProjectController::addMeasurements
//   ProjectController::measurementsChanged -> RunHistoryModel -> the History tab

#include "core/storage/ProjectFile.h"

#include <QAbstractTableModel>

#include <string>
#include <vector>

namespace stitch::views {

struct RunReport;

/// The programs of `report` a GPU timed, as project measurements stamped `when` (ISO 8601); none
/// for a report of the performance model's estimates.
std::vector<storage::ProjectMeasurement> measurementsOf(const RunReport &report, const std::string &when);

class RunHistoryModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { When, Program, Time, Verified, Gpu, Arch, ColumnCount };

    explicit RunHistoryModel(QObject *parent = nullptr);

    /// In the project's order (oldest first); the model shows the newest first.
    void setMeasurements(std::vector<storage::ProjectMeasurement> measurements);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<storage::ProjectMeasurement> m_rows; ///< newest first
};

} // namespace stitch::views
