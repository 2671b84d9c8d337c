#pragma once
// Outline of the open file: kernels with their parameters, and kernel launch sites.
//   editor text -> frontend::indexCudaSource (tree-sitter) -> KernelOutlineModel -> Outline dock
// Two levels: kernels (children: parameters) and one "Launch sites" group (children: launches).

#include "core/frontend/CudaSourceIndex.h"

#include <QAbstractItemModel>

namespace stitch::views {

class KernelOutlineModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum class ItemKind { Kernel, DeviceFunction, Parameter, LaunchGroup, LaunchSite };
    enum Role {
        LineRole = Qt::UserRole + 1, ///< int, 1-based line to jump to (0: none)
        ColumnRole,                  ///< int, 1-based column
        KindRole,                    ///< int(ItemKind)
    };
    enum Column { NameColumn, LineColumn, ColumnCount };

    explicit KernelOutlineModel(QObject *parent = nullptr);

    /// Replaces the outline. Returns false (and keeps the tree, so views keep their expansion
    /// state) when the outline is unchanged.
    bool setIndex(frontend::SourceIndex index);
    const frontend::SourceIndex &sourceIndex() const { return m_index; }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    int topLevelCount() const;
    bool isLaunchGroup(int topRow) const;
    ItemKind kindOf(const QModelIndex &index) const;
    SourceLocation locationOf(const QModelIndex &index) const;
    QString displayText(const QModelIndex &index) const;
    QString toolTip(const QModelIndex &index) const;

    frontend::SourceIndex m_index;
};

} // namespace stitch::views
