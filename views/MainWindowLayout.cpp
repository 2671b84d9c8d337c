// The studio's layout between runs: which docks are open, where, how large, the toolbars and the
// window's geometry (QMainWindow::saveState / saveGeometry in the user's settings).
//   closeEvent -> saveLayout -> QSettings "layout/*"; startup -> setLayoutSettings -> restore
// A layout saved by another layout version (docks added or renamed since) is not restored: the
// default layout is better than a half-applied one.
#include "views/MainWindow.h"

#include <QSettings>

namespace stitch::views {

namespace {

/// Raised whenever docks are added, removed or renamed (their objectName is the state's key).
constexpr int kLayoutVersion = 1;

} // namespace

void MainWindow::setLayoutSettings(QSettings *settings)
{
    m_layoutSettings = settings;
    if (!settings || settings->value(QStringLiteral("layout/version")).toInt() != kLayoutVersion)
        return;
    restoreGeometry(settings->value(QStringLiteral("layout/geometry")).toByteArray());
    restoreState(settings->value(QStringLiteral("layout/state")).toByteArray(), kLayoutVersion);
}

bool MainWindow::saveLayout() const
{
    if (!m_layoutSettings)
        return false;
    m_layoutSettings->setValue(QStringLiteral("layout/version"), kLayoutVersion);
    m_layoutSettings->setValue(QStringLiteral("layout/geometry"), saveGeometry());
    m_layoutSettings->setValue(QStringLiteral("layout/state"), saveState(kLayoutVersion));
    m_layoutSettings->sync();
    return m_layoutSettings->status() == QSettings::NoError;
}

} // namespace stitch::views
