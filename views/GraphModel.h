#pragma once
// The computation graph the Parse agent lifted from the open file, as a tree.
//   editor text -> frontend::liftFile (worker) -> GraphModel -> Graph dock -> click selects source
// Groups: sizes, tensors, operations (tensor-expression form), opaque kernels, launches, and the
// diagnostics that stopped or qualified the lift. Every item that came from the source carries its
// range so the view can highlight it.

#include "core/common/Result.h"
#include "core/frontend/Lift.h"

#include <QAbstractItemModel>

#include <memory>
#include <vector>

namespace stitch::views {

class GraphModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Role {
        BeginLineRole = Qt::UserRole + 1, ///< int, 1-based (0: no location)
        BeginColumnRole,
        EndLineRole,
        EndColumnRole,
    };
    enum Column { TextColumn, LocationColumn, ColumnCount };

    explicit GraphModel(QObject *parent = nullptr);
    ~GraphModel() override;

    /// Shows a lifted program, or the error that stopped lifting (with its diagnostics).
    void setLiftResult(const Result<frontend::LiftedProgram> &result);
    void clear();

    /// One line for the panel's header: "3 ops · 2 inputs · 1 output" or the error.
    QString summary() const { return m_summary; }
    bool hasGraph() const { return m_hasGraph; }
    /// The lift's located messages for the Problems dock: what stopped it (the error itself when it
    /// has no diagnostics), or the warnings and notes of a lifted program.
    const std::vector<Diagnostic> &diagnostics() const { return m_diagnostics; }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Item {
        QString text;
        QString toolTip;
        SourceLocation begin;
        SourceLocation end;
        bool isGroup = false;
        bool isError = false;
        Item *parent = nullptr;
        std::vector<std::unique_ptr<Item>> children;
    };
    Item *itemFor(const QModelIndex &index) const;
    Item *addGroup(const QString &title);
    static Item *addChild(Item *group, QString text, SourceLocation begin = {}, SourceLocation end = {});

    Item m_root;
    QString m_summary;
    bool m_hasGraph = false;
    std::vector<Diagnostic> m_diagnostics;
    std::string m_sourceFile; ///< the lifted file: items located in a header it includes are not in the editor
};

} // namespace stitch::views
