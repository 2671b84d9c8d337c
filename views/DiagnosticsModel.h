#pragma once
// Compiler messages for the Problems dock.
//   CompileController finished/failed -> DiagnosticsModel -> QTreeView -> CodeEditor::goToLocation
// An Error without located diagnostics (NVRTC missing, bad option) still becomes one row, so a
// failure is never silent.

#include "core/common/Result.h"

#include <QAbstractTableModel>

#include <vector>

namespace stitch::views {

class DiagnosticsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { SeverityColumn, LocationColumn, MessageColumn, ColumnCount };
    enum Role {
        LineRole = Qt::UserRole + 1, ///< int, 1-based, 0 when unknown
        ColumnRole,                  ///< int, 1-based, 0 when unknown
        SeverityRole,                ///< int(stitch::Severity)
    };

    explicit DiagnosticsModel(QObject *parent = nullptr);

    void setDiagnostics(std::vector<Diagnostic> diagnostics);
    /// Rows for a failed compile: its diagnostics, or the error itself when it has none.
    void setError(const Error &error);
    void clear();

    const std::vector<Diagnostic> &diagnostics() const { return m_diagnostics; }
    const Diagnostic *diagnostic(const QModelIndex &index) const;
    int count(Severity severity) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<Diagnostic> m_diagnostics;
};

} // namespace stitch::views
