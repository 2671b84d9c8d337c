#include "views/DiagnosticsModel.h"

#include <QApplication>
#include <QFileInfo>
#include <QStyle>

#include <algorithm>

namespace stitch::views {

namespace {

QString severityText(Severity severity)
{
    switch (severity) {
    case Severity::Error:
        return DiagnosticsModel::tr("Error");
    case Severity::Warning:
        return DiagnosticsModel::tr("Warning");
    case Severity::Note:
        return DiagnosticsModel::tr("Note");
    }
    return {};
}

QIcon severityIcon(Severity severity)
{
    // Models can live without a QApplication (core-only tools, some tests).
    if (!qobject_cast<QApplication *>(QCoreApplication::instance()))
        return {};
    auto *style = QApplication::style();
    switch (severity) {
    case Severity::Error:
        return style->standardIcon(QStyle::SP_MessageBoxCritical);
    case Severity::Warning:
        return style->standardIcon(QStyle::SP_MessageBoxWarning);
    case Severity::Note:
        return style->standardIcon(QStyle::SP_MessageBoxInformation);
    }
    return {};
}

QString locationText(const SourceLocation &location)
{
    QString text = QFileInfo(QString::fromStdString(location.file)).fileName();
    if (location.line > 0) {
        text += QLatin1Char(':') + QString::number(location.line);
        if (location.column > 0)
            text += QLatin1Char(':') + QString::number(location.column);
    }
    return text;
}

} // namespace

DiagnosticsModel::DiagnosticsModel(QObject *parent) : QAbstractTableModel(parent) {}

void DiagnosticsModel::setDiagnostics(Origin origin, std::vector<Diagnostic> diagnostics)
{
    m_byOrigin[origin] = std::move(diagnostics);
    rebuild();
}

void DiagnosticsModel::rebuild()
{
    std::vector<std::pair<Diagnostic, Origin>> rows;
    for (const auto &[origin, list] : m_byOrigin) {
        for (const Diagnostic &d : list)
            rows.emplace_back(d, origin);
    }
    // Errors first, the compiler's before the others' (NVRTC decides what is valid CUDA), then by
    // position: the first row is what to fix first.
    std::stable_sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
        if (a.first.severity != b.first.severity)
            return a.first.severity < b.first.severity;
        if (a.second != b.second)
            return a.second < b.second;
        if (a.first.location.line != b.first.location.line)
            return a.first.location.line < b.first.location.line;
        return a.first.location.column < b.first.location.column;
    });
    beginResetModel();
    m_diagnostics.clear();
    m_origins.clear();
    for (auto &[d, origin] : rows) {
        m_diagnostics.push_back(std::move(d));
        m_origins.push_back(origin);
    }
    endResetModel();
}

void DiagnosticsModel::setError(Origin origin, const Error &error)
{
    if (!error.diagnostics.empty()) {
        setDiagnostics(origin, error.diagnostics);
        return;
    }
    Diagnostic diagnostic;
    diagnostic.severity = Severity::Error;
    diagnostic.location = error.location.value_or(SourceLocation{});
    diagnostic.message = std::string(errorKindName(error.kind)) + ": " + error.message;
    setDiagnostics(origin, {diagnostic});
}

void DiagnosticsModel::clear()
{
    m_byOrigin.clear();
    rebuild();
}

const Diagnostic *DiagnosticsModel::diagnostic(const QModelIndex &index) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return nullptr;
    return &m_diagnostics[static_cast<std::size_t>(index.row())];
}

DiagnosticsModel::Origin DiagnosticsModel::origin(const QModelIndex &index) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return Origin::Compile;
    return m_origins[static_cast<std::size_t>(index.row())];
}

int DiagnosticsModel::count(Severity severity) const
{
    return static_cast<int>(std::count_if(m_diagnostics.begin(), m_diagnostics.end(),
                                          [severity](const Diagnostic &d) { return d.severity == severity; }));
}

int DiagnosticsModel::count(Origin origin, Severity severity) const
{
    const auto it = m_byOrigin.find(origin);
    if (it == m_byOrigin.end())
        return 0;
    return static_cast<int>(std::count_if(it->second.begin(), it->second.end(),
                                          [severity](const Diagnostic &d) { return d.severity == severity; }));
}

std::vector<Diagnostic> DiagnosticsModel::editorMarks(const QString &file) const
{
    // Notes (host code left out of the device compile) belong in Problems, but underlining every
    // #include and main() in the editor would bury real errors.
    const QString name = QFileInfo(file).fileName();
    std::vector<Diagnostic> marks;
    for (const Diagnostic &d : m_diagnostics) {
        const QString where = QFileInfo(QString::fromStdString(d.location.file)).fileName();
        if (d.severity != Severity::Note && (where.isEmpty() || where == name))
            marks.push_back(d);
    }
    return marks;
}

QString DiagnosticsModel::originName(Origin origin)
{
    switch (origin) {
    case Origin::Compile:
        return tr("Compile");
    case Origin::Lift:
        return tr("Lift");
    case Origin::Optimize:
        return tr("Optimize");
    case Origin::Project:
        return tr("Project");
    }
    return {};
}

int DiagnosticsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_diagnostics.size());
}

int DiagnosticsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiagnosticsModel::data(const QModelIndex &index, int role) const
{
    const Diagnostic *d = diagnostic(index);
    if (!d)
        return {};
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case SeverityColumn:
            return severityText(d->severity);
        case LocationColumn:
            return locationText(d->location);
        case MessageColumn:
            return QString::fromStdString(d->message);
        case OriginColumn:
            return originName(origin(index));
        }
        break;
    case Qt::DecorationRole:
        if (index.column() == SeverityColumn)
            return severityIcon(d->severity);
        break;
    case Qt::ToolTipRole:
        return QString::fromStdString(d->toString());
    case LineRole:
        return d->location.line;
    case ColumnRole:
        return d->location.column;
    case SeverityRole:
        return static_cast<int>(d->severity);
    case FileRole:
        return QString::fromStdString(d->location.file);
    case OriginRole:
        return static_cast<int>(origin(index));
    }
    return {};
}

QVariant DiagnosticsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SeverityColumn:
        return tr("Severity");
    case LocationColumn:
        return tr("Location");
    case MessageColumn:
        return tr("Message");
    case OriginColumn:
        return tr("Source");
    }
    return {};
}

} // namespace stitch::views
