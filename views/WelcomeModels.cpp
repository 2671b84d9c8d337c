#include "views/WelcomeModels.h"

#include "views/RecentFiles.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>

namespace stitch::views {

namespace {

// An example's description is on its first lines: no need to read a whole file.
constexpr qint64 kHeadBytes = 4096;

bool isTensorExpressions(const QString &path)
{
    return QFileInfo(path).suffix().compare(QStringLiteral("te"), Qt::CaseInsensitive) == 0;
}

// The comment text of `line`, or a null string when the line is not a comment.
QString commentText(QString line)
{
    line = line.trimmed();
    if (line.startsWith(QStringLiteral("//")))
        return line.mid(2).remove(QRegularExpression(QStringLiteral("^[/!]+"))).trimmed();
    if (line.startsWith(QStringLiteral("/*"))) {
        line = line.mid(2);
        if (const int end = line.indexOf(QStringLiteral("*/")); end >= 0)
            line.truncate(end);
        return line.remove(QRegularExpression(QStringLiteral("^\\*+"))).trimmed();
    }
    // A .te comment; a CUDA directive (#include, #define) is not one.
    if (line == QStringLiteral("#") || line.startsWith(QStringLiteral("# ")))
        return line.mid(1).trimmed();
    return {};
}

} // namespace

QString bundledExamplesDirectory()
{
    const QDir installed(QCoreApplication::applicationDirPath() + QStringLiteral("/../share/stitchcuda/examples"));
    if (installed.exists())
        return installed.canonicalPath();
#ifdef STITCHCUDA_EXAMPLES_DIR
    const QDir source(QStringLiteral(STITCHCUDA_EXAMPLES_DIR));
    if (source.exists())
        return source.canonicalPath();
#endif
    return {};
}

QString sourceKind(const QString &path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QStringLiteral("te"))
        return QObject::tr("tensor expressions");
    if (suffix == QStringLiteral("stitchproj"))
        return QObject::tr("project");
    if (suffix == QStringLiteral("cu") || suffix == QStringLiteral("cuh"))
        return QObject::tr("CUDA program");
    return QObject::tr("source");
}

QString exampleDescription(const QString &text)
{
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        if (line.trimmed().isEmpty())
            continue;
        QString comment = commentText(line);
        if (comment.isNull())
            return {};
        if (comment.isEmpty())
            continue; // a bare `//` or `#` above the text
        // Its first sentence: the line may run on into the next one.
        if (const int end = comment.indexOf(QStringLiteral(". ")); end >= 0)
            comment.truncate(end + 1);
        while (comment.endsWith(QLatin1Char(':')) || comment.endsWith(QLatin1Char(',')))
            comment.chop(1);
        return comment.trimmed();
    }
    return {};
}

ExamplesModel::ExamplesModel(QObject *parent) : QAbstractTableModel(parent) {}

void ExamplesModel::setDirectory(const QString &directory)
{
    beginResetModel();
    m_directory = directory;
    m_examples.clear();
    if (!directory.isEmpty()) {
        const QFileInfoList files = QDir(directory).entryInfoList(
            {QStringLiteral("*.cu"), QStringLiteral("*.te")}, QDir::Files | QDir::Readable, QDir::Name);
        for (const QFileInfo &info : files) {
            QFile file(info.absoluteFilePath());
            if (!file.open(QIODevice::ReadOnly))
                continue;
            m_examples.append(Example{info.absoluteFilePath(), info.fileName(), sourceKind(info.fileName()),
                                      exampleDescription(QString::fromUtf8(file.read(kHeadBytes)))});
        }
        // CUDA programs first: what most people come with.
        std::stable_sort(m_examples.begin(), m_examples.end(), [](const Example &a, const Example &b) {
            return !isTensorExpressions(a.path) && isTensorExpressions(b.path);
        });
    }
    endResetModel();
}

QString ExamplesModel::path(const QModelIndex &index) const
{
    return index.isValid() && index.row() < m_examples.size() ? m_examples.at(index.row()).path : QString();
}

int ExamplesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_examples.size());
}

int ExamplesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ExamplesModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_examples.size())
        return {};
    const Example &e = m_examples.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return e.name;
        case KindColumn:
            return e.kind;
        case DescriptionColumn:
            return e.description;
        default:
            return {};
        }
    case Qt::ToolTipRole:
        return e.description.isEmpty() ? QDir::toNativeSeparators(e.path)
                                       : QStringLiteral("%1\n%2").arg(e.description, QDir::toNativeSeparators(e.path));
    case PathRole:
        return e.path;
    case DescriptionRole:
        return e.description;
    default:
        return {};
    }
}

QVariant ExamplesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Example");
    case KindColumn:
        return tr("Kind");
    case DescriptionColumn:
        return tr("What it is");
    default:
        return {};
    }
}

RecentFilesModel::RecentFilesModel(RecentFiles &recent, QObject *parent) : QAbstractTableModel(parent), m_recent(recent)
{
    connect(&m_recent, &RecentFiles::changed, this, &RecentFilesModel::reload);
    reload();
}

void RecentFilesModel::reload()
{
    beginResetModel();
    m_entries.clear();
    for (const QString &path : m_recent.files())
        m_entries.append(Entry{path, QFileInfo(path).isFile()});
    endResetModel();
}

QString RecentFilesModel::path(const QModelIndex &index) const
{
    return index.isValid() && index.row() < m_entries.size() ? m_entries.at(index.row()).path : QString();
}

int RecentFilesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int RecentFilesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RecentFilesModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_entries.size())
        return {};
    const Entry &e = m_entries.at(index.row());
    const QFileInfo info(e.path);
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return info.fileName();
        case KindColumn:
            return e.exists ? sourceKind(e.path) : tr("missing");
        case FolderColumn:
            return QDir::toNativeSeparators(info.absolutePath());
        default:
            return {};
        }
    case Qt::ToolTipRole:
        return e.exists ? QDir::toNativeSeparators(e.path)
                        : tr("%1 no longer exists").arg(QDir::toNativeSeparators(e.path));
    case PathRole:
        return e.path;
    default:
        return {};
    }
}

Qt::ItemFlags RecentFilesModel::flags(const QModelIndex &index) const
{
    if (!index.isValid() || index.row() >= m_entries.size())
        return Qt::NoItemFlags;
    return m_entries.at(index.row()).exists ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren
                                            : Qt::ItemNeverHasChildren;
}

QVariant RecentFilesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Recent file");
    case KindColumn:
        return tr("Kind");
    case FolderColumn:
        return tr("Folder");
    default:
        return {};
    }
}

} // namespace stitch::views
