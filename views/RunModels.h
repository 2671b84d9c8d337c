#pragma once
// The Run dock's tables over one RunReport (views/RunJobs.h): times, verification, metrics.
//   RunController::finished -> RunPanel::setReport -> RunTimesModel / RunVerificationModel / RunMetricsModel
// Every figure the model estimated says so in its cell, its Source column and its tooltip.

#include "views/RunJobs.h"

#include <QAbstractTableModel>

#include <memory>

namespace stitch::views {

/// One row per program: its time (median, spread) measured on the GPU or estimated by the model.
class RunTimesModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ProgramColumn, MedianColumn, MinColumn, MaxColumn, RunsColumn, VerifiedColumn, SourceColumn, ColumnCount };
    explicit RunTimesModel(QObject *parent = nullptr);
    void setReport(std::shared_ptr<const RunReport> report);
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const RunReport> m_report;
};

/// One row per program and output: verified, its errors, or why it was not checked.
class RunVerificationModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ProgramColumn, OutputColumn, ResultColumn, RelativeErrorColumn, MaxErrorColumn, MismatchColumn,
                  UnwrittenColumn, ColumnCount };
    explicit RunVerificationModel(QObject *parent = nullptr);
    void setReport(std::shared_ptr<const RunReport> report);
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    struct Row {
        QString program, output, result, relative, maxError, mismatches, unwritten, tooltip;
        bool failed = false;
    };
    const std::vector<Row> &rows() const { return m_rows; }

private:
    std::vector<Row> m_rows;
};

/// One row per program, kernel and quantity: CUPTI's counters when measured, beside the static
/// rubric's evidence (the numbers the model reads), each labelled with where it comes from.
class RunMetricsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ProgramColumn, KernelColumn, QuantityColumn, ValueColumn, SourceColumn, ColumnCount };
    explicit RunMetricsModel(QObject *parent = nullptr);
    void setReport(std::shared_ptr<const RunReport> report);
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    int measuredRows() const; ///< rows from CUPTI

private:
    struct Row {
        QString program;
        MetricRow metric;
    };
    std::vector<Row> m_rows;
};

/// "measured on NVIDIA H200" or "ESTIMATED by the StitchCUDA performance model ...".
QString timeSource(const ProgramRun &run);

} // namespace stitch::views
