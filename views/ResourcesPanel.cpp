#include "views/ResourcesPanel.h"

#include "views/KernelResourcesModel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace stitch::views {

ResourcesPanel::ResourcesPanel(KernelResourcesModel *model, QWidget *parent)
    : QWidget(parent), m_model(model), m_proxy(new QSortFilterProxyModel(this)), m_blockSize(new QSpinBox(this)),
      m_summary(new QLabel(this)), m_table(new QTableView(this))
{
    m_proxy->setSourceModel(model);
    m_proxy->setSortRole(KernelResourcesModel::SortRole);

    m_blockSize->setRange(1, 1024);
    m_blockSize->setValue(model->blockSize());
    m_blockSize->setSuffix(tr(" threads"));
    m_blockSize->setToolTip(tr("Threads per block assumed for the theoretical occupancy"));
    m_blockSize->setObjectName(QStringLiteral("blockSizeSpinBox"));
    connect(m_blockSize, &QSpinBox::valueChanged, model, &KernelResourcesModel::setBlockSize);

    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);

    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    auto *blockLabel = new QLabel(tr("Block size:"), this);
    blockLabel->setBuddy(m_blockSize);
    top->addWidget(blockLabel);
    top->addWidget(m_blockSize);

    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(KernelResourcesModel::KernelColumn, QHeaderView::Stretch);
    m_table->setObjectName(QStringLiteral("resourcesTable"));
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex &proxyIndex) {
        if (const auto *k = m_model->kernel(m_proxy->mapToSource(proxyIndex).row()))
            emit kernelActivated(QString::fromStdString(k->name));
    });

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_table);
}

void ResourcesPanel::setSummary(const QString &text)
{
    m_summary->setText(text);
}

QString ResourcesPanel::summary() const
{
    return m_summary->text();
}

} // namespace stitch::views
