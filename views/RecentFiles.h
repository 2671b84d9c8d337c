#pragma once
// Most-recently-used file list for the File menu.
//   MainWindow open/save -> RecentFiles::add -> QSettings (when given one) -> "Recent Files" menu
// The settings object is passed in, so tests and the headless screenshot mode never touch the
// user's real list.

#include <QObject>
#include <QStringList>

QT_BEGIN_NAMESPACE
class QSettings;
QT_END_NAMESPACE

namespace stitch::views {

class RecentFiles final : public QObject {
    Q_OBJECT
public:
    static constexpr int MaxFiles = 10;

    /// Loads the list from `settings` (may be nullptr: memory only). `settings` must outlive this.
    explicit RecentFiles(QSettings *settings = nullptr, QObject *parent = nullptr);

    QStringList files() const { return m_files; }
    /// Moves `path` (made absolute) to the front.
    void add(const QString &path);
    void remove(const QString &path);
    void clear();

signals:
    void changed();

private:
    void store();

    QSettings *m_settings;
    QStringList m_files;
};

} // namespace stitch::views
