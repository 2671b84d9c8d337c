#include "views/KernelResourcesModel.h"

#include <QColor>

namespace stitch::views {

namespace {

QString bytes(int value)
{
    return KernelResourcesModel::tr("%1 B").arg(value);
}

} // namespace

KernelResourcesModel::KernelResourcesModel(const ArchDatabase &database, QObject *parent)
    : QAbstractTableModel(parent), m_database(database)
{
}

void KernelResourcesModel::setKernels(std::vector<cuda::KernelResources> kernels, const QString &arch)
{
    beginResetModel();
    m_kernels = std::move(kernels);
    m_arch = arch;
    recomputeOccupancy();
    endResetModel();
}

void KernelResourcesModel::clear()
{
    setKernels({}, m_arch);
}

void KernelResourcesModel::setBlockSize(int threadsPerBlock)
{
    if (threadsPerBlock == m_blockSize)
        return;
    m_blockSize = threadsPerBlock;
    recomputeOccupancy();
    if (!m_kernels.empty())
        emit dataChanged(index(0, OccupancyColumn), index(rowCount() - 1, OccupancyColumn));
    emit headerDataChanged(Qt::Horizontal, OccupancyColumn, OccupancyColumn);
}

void KernelResourcesModel::recomputeOccupancy()
{
    m_occupancy.clear();
    const ArchLimits *limits = m_database.arch(m_arch.toStdString());
    for (const auto &k : m_kernels) {
        if (!limits) {
            m_occupancy.emplace_back(
                makeError(ErrorKind::Unsupported, m_arch.toStdString() + " is not in the architecture database"));
            continue;
        }
        m_occupancy.push_back(computeOccupancy(*limits, m_blockSize, k.registers, k.sharedBytes));
    }
}

const cuda::KernelResources *KernelResourcesModel::kernel(int row) const
{
    if (row < 0 || row >= rowCount())
        return nullptr;
    return &m_kernels[static_cast<std::size_t>(row)];
}

const Result<Occupancy> &KernelResourcesModel::occupancy(int row) const
{
    Q_ASSERT(row >= 0 && row < rowCount());
    return m_occupancy[static_cast<std::size_t>(row)];
}

int KernelResourcesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_kernels.size());
}

int KernelResourcesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelResourcesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return displayData(row, column);
    case SortRole:
        return sortData(row, column);
    case Qt::ToolTipRole:
        return toolTip(row, column);
    case Qt::TextAlignmentRole:
        if (column == KernelColumn)
            return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole: {
        const auto &k = m_kernels[static_cast<std::size_t>(row)];
        if (column == SpillsColumn && (k.spillStoreBytes > 0 || k.spillLoadBytes > 0))
            return QColor(0xc0, 0x60, 0x00);
        if (column == OccupancyColumn && !occupancy(row).ok())
            return QColor(0xc0, 0x20, 0x20);
        break;
    }
    }
    return {};
}

QVariant KernelResourcesModel::displayData(int row, int column) const
{
    const auto &k = m_kernels[static_cast<std::size_t>(row)];
    switch (column) {
    case KernelColumn:
        return QString::fromStdString(k.name.empty() ? k.mangledName : k.name);
    case RegistersColumn:
        return k.registers;
    case SharedMemoryColumn:
        return bytes(k.sharedBytes);
    case StackColumn:
        return bytes(k.stackFrameBytes);
    case SpillsColumn:
        if (k.spillStoreBytes < 0)
            return tr("n/a");
        return tr("%1 / %2 B").arg(k.spillStoreBytes).arg(k.spillLoadBytes);
    case ConstantMemoryColumn:
        return k.constantBytes < 0 ? tr("n/a") : bytes(k.constantBytes);
    case BarriersColumn:
        return k.barriers;
    case OccupancyColumn: {
        const auto &occ = occupancy(row);
        if (!occ.ok())
            return occ.error().kind == ErrorKind::ResourceLimit ? tr("cannot launch") : tr("n/a");
        return tr("%1 %").arg(occ->occupancy * 100.0, 0, 'f', 0);
    }
    }
    return {};
}

QVariant KernelResourcesModel::sortData(int row, int column) const
{
    const auto &k = m_kernels[static_cast<std::size_t>(row)];
    switch (column) {
    case KernelColumn:
        return QString::fromStdString(k.name);
    case RegistersColumn:
        return k.registers;
    case SharedMemoryColumn:
        return k.sharedBytes;
    case StackColumn:
        return k.stackFrameBytes;
    case SpillsColumn:
        return k.spillStoreBytes + k.spillLoadBytes;
    case ConstantMemoryColumn:
        return k.constantBytes;
    case BarriersColumn:
        return k.barriers;
    case OccupancyColumn: {
        const auto &occ = occupancy(row);
        return occ.ok() ? occ->occupancy : -1.0;
    }
    }
    return {};
}

QString KernelResourcesModel::toolTip(int row, int column) const
{
    const auto &k = m_kernels[static_cast<std::size_t>(row)];
    switch (column) {
    case KernelColumn:
        return QString::fromStdString(k.mangledName);
    case SpillsColumn:
        if (k.spillStoreBytes < 0)
            return tr("NVRTC gave no ptxas report for this compile; the resources come from the machine code, "
                      "which does not record spills");
        return tr("Spill stores: %1 B, spill loads: %2 B per thread").arg(k.spillStoreBytes).arg(k.spillLoadBytes);
    case StackColumn:
        return tr("Stack frame per thread; local memory: %1 B").arg(k.localBytes);
    case ConstantMemoryColumn:
        if (k.constantBytes < 0)
            return tr("This compiler's ptxas report does not include constant memory");
        return tr("Constant memory used, all banks");
    case OccupancyColumn: {
        const auto &occ = occupancy(row);
        if (!occ.ok())
            return QString::fromStdString(occ.error().message);
        return tr("Limited by %1 at %2 threads per block on %3\n"
                  "%4 blocks, %5 warps per SM\n"
                  "Block limits: registers %6, shared memory %7, warps %8, blocks %9")
            .arg(QString::fromStdString(occ->limiter))
            .arg(m_blockSize)
            .arg(m_arch)
            .arg(occ->activeBlocksPerSm)
            .arg(occ->activeWarpsPerSm)
            .arg(occ->blocksLimitRegisters)
            .arg(occ->blocksLimitSharedMemory)
            .arg(occ->blocksLimitWarps)
            .arg(occ->blocksLimitBlocks);
    }
    default:
        return {};
    }
}

QVariant KernelResourcesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case KernelColumn:
            return tr("Kernel");
        case RegistersColumn:
            return tr("Registers");
        case SharedMemoryColumn:
            return tr("Shared mem");
        case StackColumn:
            return tr("Stack");
        case SpillsColumn:
            return tr("Spills (st/ld)");
        case ConstantMemoryColumn:
            return tr("Constant");
        case BarriersColumn:
            return tr("Barriers");
        case OccupancyColumn:
            return tr("Occupancy @%1").arg(m_blockSize);
        }
    } else if (role == Qt::ToolTipRole) {
        switch (section) {
        case RegistersColumn:
            return tr("Registers per thread");
        case SharedMemoryColumn:
            return tr("Static shared memory per block");
        case ConstantMemoryColumn:
            return tr("Constant memory, all banks");
        case BarriersColumn:
            return tr("Named barriers");
        case OccupancyColumn:
            return tr("Theoretical occupancy at %1 threads per block (active warps / maximum warps per SM)")
                .arg(m_blockSize);
        }
    }
    return {};
}

} // namespace stitch::views
