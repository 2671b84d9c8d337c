#pragma once
// The welcome page's two lists: the bundled examples and the recent files.
//   examples/ (installed share/stitchcuda/examples, else the source tree's) -> ExamplesModel
//   RecentFiles (the File menu's list, kept in QSettings) -> RecentFilesModel (follows its changes)

#include <QAbstractTableModel>
#include <QList>
#include <QString>

namespace stitch::views {

class RecentFiles;

/// Where the bundled examples are: `<prefix>/share/stitchcuda/examples` beside an installed
/// binary (`<prefix>/bin`), else the source tree's `examples/` this build came from; empty when
/// neither exists.
QString bundledExamplesDirectory();

/// What a source is, for the welcome page: "CUDA program", "tensor expressions", "project".
QString sourceKind(const QString &path);

/// A one-line description from a source's first comment line (`//` or `/* */` for CUDA, `#` for a
/// .te): its first sentence, without a trailing colon. Empty when the file opens with no comment.
QString exampleDescription(const QString &text);

/// One row per bundled example (*.cu and *.te of a folder): name, kind, description.
class ExamplesModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, KindColumn, DescriptionColumn, ColumnCount };
    enum Role { PathRole = Qt::UserRole + 1, DescriptionRole };

    struct Example {
        QString path, name, kind, description;
    };

    explicit ExamplesModel(QObject *parent = nullptr);

    /// Lists the examples of `directory` (CUDA programs first, then tensor expressions, each by
    /// name); an empty or missing folder lists none.
    void setDirectory(const QString &directory);
    QString directory() const { return m_directory; }
    const QList<Example> &examples() const { return m_examples; }
    QString path(const QModelIndex &index) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString m_directory;
    QList<Example> m_examples;
};

/// The recent files as a table (name, kind, folder), following RecentFiles: the same list the
/// File > Open Recent menu shows, read from and written to the same settings. A file that no
/// longer exists is listed as missing and disabled.
class RecentFilesModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, KindColumn, FolderColumn, ColumnCount };
    enum Role { PathRole = Qt::UserRole + 1 };

    explicit RecentFilesModel(RecentFiles &recent, QObject *parent = nullptr);

    QString path(const QModelIndex &index) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void reload();

    struct Entry {
        QString path;
        bool exists = false;
    };
    RecentFiles &m_recent;
    QList<Entry> m_entries;
};

} // namespace stitch::views
