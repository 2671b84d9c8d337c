#include "views/KernelOutlineModel.h"

#include "views/OutlineIcons.h"

namespace stitch::views {

namespace {

// Top-level rows carry id 0; a child carries its parent's row + 1.
constexpr quintptr TopLevelId = 0;

std::string outlineKey(const frontend::SourceIndex &index)
{
    std::string key;
    for (const auto &k : index.kernels) {
        key += k.qualifier + ' ' + k.name + '@' + std::to_string(k.nameLocation.line) + ':' +
               std::to_string(k.nameLocation.column) + '(';
        for (const auto &p : k.parameters)
            key += p.type + ' ' + p.name + ',';
        key += ")" + std::to_string(k.hasSharedMemory) + std::to_string(k.hasSyncThreads) + ';';
    }
    for (const auto &l : index.launches)
        key += l.kernel + "<<<" + l.grid + ',' + l.block + ">>>@" + std::to_string(l.location.line) + ':' +
               std::to_string(l.location.column) + ';';
    return key;
}

QString parameterText(const frontend::KernelParameter &p)
{
    QString type = QString::fromStdString(p.type);
    const QString name = QString::fromStdString(p.name);
    if (name.isEmpty())
        return type;
    return type.endsWith(QLatin1Char('*')) || type.endsWith(QLatin1Char('&')) ? type + name
                                                                              : type + QLatin1Char(' ') + name;
}

} // namespace

KernelOutlineModel::KernelOutlineModel(QObject *parent) : QAbstractItemModel(parent) {}

bool KernelOutlineModel::setIndex(frontend::SourceIndex index)
{
    if (outlineKey(index) == outlineKey(m_index)) {
        m_index.syntaxErrors = std::move(index.syntaxErrors);
        return false;
    }
    beginResetModel();
    m_index = std::move(index);
    endResetModel();
    return true;
}

int KernelOutlineModel::topLevelCount() const
{
    return static_cast<int>(m_index.kernels.size()) + (m_index.launches.empty() ? 0 : 1);
}

bool KernelOutlineModel::isLaunchGroup(int topRow) const
{
    return topRow == static_cast<int>(m_index.kernels.size()) && !m_index.launches.empty();
}

QModelIndex KernelOutlineModel::index(int row, int column, const QModelIndex &parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, TopLevelId);
    return createIndex(row, column, static_cast<quintptr>(parent.row()) + 1);
}

QModelIndex KernelOutlineModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == TopLevelId)
        return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, TopLevelId);
}

int KernelOutlineModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return topLevelCount();
    if (parent.internalId() != TopLevelId || parent.column() != 0)
        return 0;
    if (isLaunchGroup(parent.row()))
        return static_cast<int>(m_index.launches.size());
    return static_cast<int>(m_index.kernels[static_cast<std::size_t>(parent.row())].parameters.size());
}

int KernelOutlineModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

KernelOutlineModel::ItemKind KernelOutlineModel::kindOf(const QModelIndex &index) const
{
    if (index.internalId() == TopLevelId) {
        if (isLaunchGroup(index.row()))
            return ItemKind::LaunchGroup;
        const auto &k = m_index.kernels[static_cast<std::size_t>(index.row())];
        return k.qualifier == "__global__" ? ItemKind::Kernel : ItemKind::DeviceFunction;
    }
    return isLaunchGroup(static_cast<int>(index.internalId() - 1)) ? ItemKind::LaunchSite : ItemKind::Parameter;
}

SourceLocation KernelOutlineModel::locationOf(const QModelIndex &index) const
{
    switch (kindOf(index)) {
    case ItemKind::Kernel:
    case ItemKind::DeviceFunction:
        return m_index.kernels[static_cast<std::size_t>(index.row())].nameLocation;
    case ItemKind::Parameter:
        // Parameters have no location of their own in the index; their kernel's is close enough.
        return m_index.kernels[index.internalId() - 1].nameLocation;
    case ItemKind::LaunchSite:
        return m_index.launches[static_cast<std::size_t>(index.row())].location;
    case ItemKind::LaunchGroup:
        break;
    }
    return {};
}

QString KernelOutlineModel::displayText(const QModelIndex &index) const
{
    switch (kindOf(index)) {
    case ItemKind::Kernel:
    case ItemKind::DeviceFunction:
        return QString::fromStdString(m_index.kernels[static_cast<std::size_t>(index.row())].name);
    case ItemKind::Parameter: {
        const auto &k = m_index.kernels[index.internalId() - 1];
        return parameterText(k.parameters[static_cast<std::size_t>(index.row())]);
    }
    case ItemKind::LaunchGroup:
        return tr("Launch sites");
    case ItemKind::LaunchSite: {
        const auto &l = m_index.launches[static_cast<std::size_t>(index.row())];
        return QStringLiteral("%1<<<%2, %3>>>")
            .arg(QString::fromStdString(l.kernel), QString::fromStdString(l.grid), QString::fromStdString(l.block));
    }
    }
    return {};
}

QString KernelOutlineModel::toolTip(const QModelIndex &index) const
{
    const ItemKind kind = kindOf(index);
    if (kind != ItemKind::Kernel && kind != ItemKind::DeviceFunction)
        return displayText(index);
    const auto &k = m_index.kernels[static_cast<std::size_t>(index.row())];
    QStringList params;
    for (const auto &p : k.parameters)
        params << parameterText(p);
    QString tip = QStringLiteral("%1 %2(%3)")
                      .arg(QString::fromStdString(k.qualifier), QString::fromStdString(k.name),
                           params.join(QStringLiteral(", ")));
    if (k.hasSharedMemory)
        tip += QLatin1Char('\n') + tr("declares __shared__ memory");
    if (k.hasSyncThreads)
        tip += QLatin1Char('\n') + tr("calls __syncthreads()");
    return tip;
}

QVariant KernelOutlineModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == NameColumn)
            return displayText(index);
        if (const auto loc = locationOf(index); loc.known() && kindOf(index) != ItemKind::Parameter)
            return loc.line;
        return {};
    case Qt::DecorationRole:
        if (index.column() == NameColumn)
            return outlineIcon(static_cast<int>(kindOf(index)));
        return {};
    case Qt::ToolTipRole:
        return toolTip(index);
    case LineRole:
        return locationOf(index).line;
    case ColumnRole:
        return locationOf(index).column;
    case KindRole:
        return static_cast<int>(kindOf(index));
    }
    return {};
}

QVariant KernelOutlineModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == NameColumn ? tr("Symbol") : tr("Line");
}

} // namespace stitch::views
