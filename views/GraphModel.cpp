#include "views/GraphModel.h"
#include "views/Text.h"

#include <QBrush>
#include <QFont>
#include <QPalette>

namespace stitch::views {

namespace {

QString plural(std::size_t n, const char *one, const char *many)
{
    return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many));
}

} // namespace

GraphModel::GraphModel(QObject *parent) : QAbstractItemModel(parent) {}
GraphModel::~GraphModel() = default;

GraphModel::Item *GraphModel::addGroup(const QString &title)
{
    auto item = std::make_unique<Item>();
    item->text = title;
    item->isGroup = true;
    item->parent = &m_root;
    m_root.children.push_back(std::move(item));
    return m_root.children.back().get();
}

GraphModel::Item *GraphModel::addChild(Item *group, QString text, SourceLocation begin, SourceLocation end)
{
    auto item = std::make_unique<Item>();
    item->text = std::move(text);
    item->begin = std::move(begin);
    item->end = std::move(end);
    item->parent = group;
    group->children.push_back(std::move(item));
    return group->children.back().get();
}

void GraphModel::clear()
{
    beginResetModel();
    m_root.children.clear();
    m_summary.clear();
    m_hasGraph = false;
    m_diagnostics.clear();
    endResetModel();
}

void GraphModel::setLiftResult(const Result<frontend::LiftedProgram> &result)
{
    beginResetModel();
    m_root.children.clear();
    m_hasGraph = result.ok();
    m_sourceFile = result.ok() ? result->sourceFile : std::string();
    m_diagnostics = result.ok() ? result->diagnostics : result.error().diagnostics;
    if (!result) {
        const Error &e = result.error();
        if (e.diagnostics.empty())
            m_diagnostics.push_back(Diagnostic{Severity::Error, e.location.value_or(SourceLocation{}),
                                               std::string(errorKindName(e.kind)) + ": " + e.message});
        // Malformed input is an error; a program the lifter cannot model (unsupported) is only a
        // warning in Problems: NVRTC, not the lifter, decides what is valid CUDA.
        if (e.kind != ErrorKind::Parse) {
            for (Diagnostic &d : m_diagnostics) {
                if (d.severity == Severity::Error)
                    d.severity = Severity::Warning;
            }
        }
        m_summary = tr("Not lifted: %1").arg(qs(e.message));
        Item *group = addGroup(tr("Why the graph could not be built"));
        if (e.diagnostics.empty()) {
            Item *item = addChild(group, qs(e.message), e.location.value_or(SourceLocation{}));
            item->isError = true;
        }
        for (const auto &d : e.diagnostics) {
            Item *item = addChild(group, qs(d.message), d.location);
            item->isError = d.severity == Severity::Error;
        }
        endResetModel();
        return;
    }

    const frontend::LiftedProgram &p = *result;
    const ir::Graph &g = p.graph;
    if (!p.sizes.empty()) {
        Item *sizes = addGroup(tr("Sizes"));
        for (const auto &[name, value] : p.sizes)
            addChild(sizes, QStringLiteral("%1 = %2").arg(qs(name)).arg(value));
    }
    std::size_t inputs = 0, outputs = 0;
    Item *tensors = addGroup(tr("Tensors"));
    for (const auto &t : g.tensors()) {
        const char *role = t.role == ir::TensorRole::Input    ? "input"
                           : t.role == ir::TensorRole::Output ? "output"
                                                              : "intermediate";
        inputs += t.role == ir::TensorRole::Input;
        outputs += t.role == ir::TensorRole::Output;
        Item *item = addChild(tensors, QStringLiteral("%1  (%2)").arg(qs(t.toString()), QLatin1String(role)));
        item->toolTip = tr("%1 tensor").arg(QLatin1String(role));
    }
    Item *ops = addGroup(tr("Operations"));
    for (const auto &op : g.ops()) {
        SourceLocation begin, end;
        if (op.source) {
            begin = op.source->begin;
            end = op.source->end;
        }
        Item *item = addChild(ops, qs(op.toString()), begin, end);
        item->toolTip = tr("op %1 over %2").arg(qs(op.name), qs(op.domainString()));
    }
    if (!p.opaque.empty()) {
        Item *opaque = addGroup(tr("Opaque kernels (kept as written)"));
        for (const auto &k : p.opaque) {
            Item *item = addChild(opaque, QStringLiteral("%1: %2").arg(qs(k.name), qs(k.why.message)),
                                  k.why.location.known() ? k.why.location : k.range.begin, k.range.end);
            item->isError = true;
        }
    }
    if (!p.launches.empty()) {
        Item *launches = addGroup(tr("Launches"));
        for (const auto &l : p.launches) {
            QString ops;
            for (const auto &o : l.ops)
                ops += (ops.isEmpty() ? QString() : QStringLiteral(", ")) + qs(o);
            addChild(launches,
                     QStringLiteral("%1<<<%2, %3>>>  →  %4")
                         .arg(qs(l.kernel), qs(l.grid), qs(l.block), ops.isEmpty() ? tr("opaque") : ops),
                     l.location);
        }
    }
    if (!p.diagnostics.empty()) {
        Item *notes = addGroup(tr("Diagnostics"));
        for (const auto &d : p.diagnostics)
            addChild(notes, QStringLiteral("%1: %2").arg(QLatin1String(severityName(d.severity)), qs(d.message)),
                     d.location);
    }
    m_summary = QStringLiteral("%1 · %2 · %3")
                    .arg(plural(g.ops().size(), "op", "ops"), plural(inputs, "input", "inputs"),
                         plural(outputs, "output", "outputs"));
    if (!p.opaque.empty())
        m_summary += QStringLiteral(" · ") + plural(p.opaque.size(), "opaque kernel", "opaque kernels");
    endResetModel();
}

GraphModel::Item *GraphModel::itemFor(const QModelIndex &index) const
{
    return index.isValid() ? static_cast<Item *>(index.internalPointer()) : const_cast<Item *>(&m_root);
}

QModelIndex GraphModel::index(int row, int column, const QModelIndex &parent) const
{
    if (column < 0 || column >= ColumnCount || row < 0)
        return {};
    const Item *p = itemFor(parent);
    if (row >= static_cast<int>(p->children.size()))
        return {};
    return createIndex(row, column, p->children[static_cast<std::size_t>(row)].get());
}

QModelIndex GraphModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    const Item *item = itemFor(child);
    const Item *p = item->parent;
    if (!p || p == &m_root)
        return {};
    const Item *grand = p->parent;
    for (std::size_t i = 0; i < grand->children.size(); ++i)
        if (grand->children[i].get() == p)
            return createIndex(static_cast<int>(i), 0, const_cast<Item *>(p));
    return {};
}

int GraphModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return static_cast<int>(itemFor(parent)->children.size());
}

int GraphModel::columnCount(const QModelIndex &) const { return ColumnCount; }

QVariant GraphModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid())
        return {};
    const Item *item = itemFor(index);
    // An op lifted from an included header is located there, not in the editor's file.
    const bool inEditor = item->begin.file.empty() || m_sourceFile.empty() || item->begin.file == m_sourceFile;
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == TextColumn)
            return item->text;
        if (item->begin.known() && inEditor)
            return QStringLiteral("%1:%2").arg(item->begin.line).arg(item->begin.column);
        if (item->begin.known())
            return qs(item->begin.toString());
        return {};
    case Qt::ToolTipRole:
        return item->toolTip.isEmpty() ? QVariant() : QVariant(item->toolTip);
    case Qt::FontRole:
        if (item->isGroup) {
            QFont f;
            f.setBold(true);
            return f;
        }
        if (index.column() == TextColumn && !item->isError) {
            QFont f(QStringLiteral("monospace"));
            f.setStyleHint(QFont::Monospace);
            return f;
        }
        return {};
    case Qt::ForegroundRole:
        return item->isError ? QVariant(QBrush(Qt::darkRed)) : QVariant();
    case BeginLineRole:
        return inEditor ? item->begin.line : 0;
    case BeginColumnRole:
        return inEditor ? item->begin.column : 0;
    case EndLineRole:
        return inEditor ? item->end.line : 0;
    case EndColumnRole:
        return inEditor ? item->end.column : 0;
    default:
        return {};
    }
}

QVariant GraphModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == TextColumn ? tr("Graph") : tr("Line:Col");
}

} // namespace stitch::views
