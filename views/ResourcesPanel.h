#pragma once
// The Resources dock: block-size spin box over the per-kernel resources table.
//   KernelResourcesModel (+ block size from the spin box) -> sortable QTableView

#include <QWidget>

QT_BEGIN_NAMESPACE
class QLabel;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;
QT_END_NAMESPACE

namespace stitch::views {

class KernelResourcesModel;

class ResourcesPanel final : public QWidget {
    Q_OBJECT
public:
    explicit ResourcesPanel(KernelResourcesModel *model, QWidget *parent = nullptr);

    QSpinBox *blockSizeSpinBox() const { return m_blockSize; }
    QTableView *table() const { return m_table; }
    /// One line above the table: what was compiled, or why nothing is shown.
    void setSummary(const QString &text);
    QString summary() const;

signals:
    /// A row was double-clicked or activated: the kernel's (demangled) name.
    void kernelActivated(const QString &name);

private:
    KernelResourcesModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QSpinBox *m_blockSize;
    QLabel *m_summary;
    QTableView *m_table;
};

} // namespace stitch::views
