#pragma once
// Located messages from the core for the Problems dock, from each place they come from.
//   CompileController (NVRTC), the lift (Parse agent), Optimize, a project file
//     -> DiagnosticsModel (one list per origin, shown together) -> QTreeView -> CodeEditor::goToLocation
// An Error without located diagnostics (NVRTC missing, bad option) still becomes one row, so a
// failure is never silent. Each origin's rows are replaced on their own: a new compile keeps the
// lift's rows.

#include "core/common/Result.h"

#include <QAbstractTableModel>

#include <map>
#include <vector>

namespace stitch::views {

class DiagnosticsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { SeverityColumn, LocationColumn, MessageColumn, OriginColumn, ColumnCount };
    /// Where the rows came from, in the order they are listed within a severity.
    enum class Origin { Compile, Lift, Optimize, Project };
    enum Role {
        LineRole = Qt::UserRole + 1, ///< int, 1-based, 0 when unknown
        ColumnRole,                  ///< int, 1-based, 0 when unknown
        SeverityRole,                ///< int(stitch::Severity)
        FileRole,                    ///< QString, the location's file as the core named it
        OriginRole,                  ///< int(Origin)
    };

    explicit DiagnosticsModel(QObject *parent = nullptr);

    /// The compiler's rows (Origin::Compile).
    void setDiagnostics(std::vector<Diagnostic> diagnostics)
    {
        setDiagnostics(Origin::Compile, std::move(diagnostics));
    }
    /// Rows for a failed compile: its diagnostics, or the error itself when it has none.
    void setError(const Error &error) { setError(Origin::Compile, error); }
    /// Replaces the rows of one origin.
    void setDiagnostics(Origin origin, std::vector<Diagnostic> diagnostics);
    /// An error's diagnostics as `origin`'s rows, or the error itself when it has none.
    void setError(Origin origin, const Error &error);
    void clear(Origin origin) { setDiagnostics(origin, {}); }
    /// Every origin's rows.
    void clear();

    /// Every row, in display order.
    const std::vector<Diagnostic> &diagnostics() const { return m_diagnostics; }
    const Diagnostic *diagnostic(const QModelIndex &index) const;
    Origin origin(const QModelIndex &index) const;
    int count(Severity severity) const;
    int count(Origin origin, Severity severity) const;
    /// What the editor underlines: errors and warnings located in `file` (compared by file name, as
    /// the compiler names the open file), or without a file.
    std::vector<Diagnostic> editorMarks(const QString &file) const;
    static QString originName(Origin origin);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void rebuild();

    std::map<Origin, std::vector<Diagnostic>> m_byOrigin;
    std::vector<Diagnostic> m_diagnostics; ///< every origin's, sorted
    std::vector<Origin> m_origins;         ///< per row of m_diagnostics
};

} // namespace stitch::views
