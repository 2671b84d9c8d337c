#include "views/RecentFiles.h"

#include <QFileInfo>
#include <QSettings>

namespace stitch::views {

namespace {
const QString SettingsKey = QStringLiteral("recentFiles");
}

RecentFiles::RecentFiles(QSettings *settings, QObject *parent) : QObject(parent), m_settings(settings)
{
    if (m_settings)
        m_files = m_settings->value(SettingsKey).toStringList().mid(0, MaxFiles);
}

void RecentFiles::add(const QString &path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    m_files.removeAll(absolute);
    m_files.prepend(absolute);
    while (m_files.size() > MaxFiles)
        m_files.removeLast();
    store();
}

void RecentFiles::remove(const QString &path)
{
    if (m_files.removeAll(QFileInfo(path).absoluteFilePath()) > 0)
        store();
}

void RecentFiles::clear()
{
    m_files.clear();
    store();
}

void RecentFiles::store()
{
    if (m_settings)
        m_settings->setValue(SettingsKey, m_files);
    emit changed();
}

} // namespace stitch::views
