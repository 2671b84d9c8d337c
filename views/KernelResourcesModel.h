#pragma once
// Per-kernel resources and theoretical occupancy for the Resources dock.
//   CompileResult.kernels + ArchDatabase limits + user block size -> computeOccupancy -> table rows
// Occupancy is recomputed here, not in the compile job, because the block size is a view
// setting that changes without recompiling.

#include "core/arch/ArchDatabase.h"
#include "core/cuda/NvrtcCompiler.h"

#include <QAbstractTableModel>

#include <vector>

namespace stitch::views {

class KernelResourcesModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        KernelColumn,
        RegistersColumn,
        SharedMemoryColumn,
        StackColumn,
        SpillsColumn,
        ConstantMemoryColumn,
        BarriersColumn,
        OccupancyColumn,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole + 1, ///< the raw number behind a formatted cell
    };

    /// `database` must outlive the model.
    explicit KernelResourcesModel(const ArchDatabase &database, QObject *parent = nullptr);

    void setKernels(std::vector<cuda::KernelResources> kernels, const QString &arch);
    void clear();
    void setBlockSize(int threadsPerBlock);
    int blockSize() const { return m_blockSize; }
    QString architecture() const { return m_arch; }

    const cuda::KernelResources *kernel(int row) const;
    /// Occupancy of a row at the current block size, or why there is none.
    const Result<Occupancy> &occupancy(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void recomputeOccupancy();
    QVariant displayData(int row, int column) const;
    QVariant sortData(int row, int column) const;
    QString toolTip(int row, int column) const;

    const ArchDatabase &m_database;
    std::vector<cuda::KernelResources> m_kernels;
    std::vector<Result<Occupancy>> m_occupancy;
    QString m_arch;
    int m_blockSize = 256;
};

} // namespace stitch::views
