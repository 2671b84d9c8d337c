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

void DiagnosticsModel::setDiagnostics(std::vector<Diagnostic> diagnostics)
{
    // Errors first, then by position: the first row is what to fix first.
    std::stable_sort(diagnostics.begin(), diagnostics.end(), [](const Diagnostic &a, const Diagnostic &b) {
        if (a.severity != b.severity)
            return a.severity < b.severity;
        if (a.location.line != b.location.line)
            return a.location.line < b.location.line;
        return a.location.column < b.location.column;
    });
    beginResetModel();
    m_diagnostics = std::move(diagnostics);
    endResetModel();
}

void DiagnosticsModel::setError(const Error &error)
{
    if (!error.diagnostics.empty()) {
        setDiagnostics(error.diagnostics);
        return;
    }
    Diagnostic diagnostic;
    diagnostic.severity = Severity::Error;
    diagnostic.location = error.location.value_or(SourceLocation{});
    diagnostic.message = std::string(errorKindName(error.kind)) + ": " + error.message;
    setDiagnostics({diagnostic});
}

void DiagnosticsModel::clear()
{
    setDiagnostics({});
}

const Diagnostic *DiagnosticsModel::diagnostic(const QModelIndex &index) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return nullptr;
    return &m_diagnostics[static_cast<std::size_t>(index.row())];
}

int DiagnosticsModel::count(Severity severity) const
{
    return static_cast<int>(std::count_if(m_diagnostics.begin(), m_diagnostics.end(),
                                          [severity](const Diagnostic &d) { return d.severity == severity; }));
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
    }
    return {};
}

} // namespace stitch::views
