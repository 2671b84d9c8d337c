#include "views/ProjectController.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTimer>

#include <algorithm>
#include <atomic>

namespace stitch::views {

namespace {

const QString RecoveryPrefix = QStringLiteral("autosave-");
const QString ProjectSuffix = QStringLiteral(".stitchproj");

QString nativePath(const QString &path)
{
    return QDir::toNativeSeparators(path);
}

/// QSaveFile: a temporary beside `path`, renamed over it only once everything is written.
/// Unbuffered, so a short write (a full disk, a file size limit) is seen here: Qt 6.4's buffered
/// QSaveFile flushes at commit() and commits a truncated file when the disk takes only part of it.
bool writeAtomically(const QString &path, const QByteArray &bytes, QString *errorMessage)
{
    QSaveFile file(path);
    const bool opened = file.open(QIODevice::WriteOnly | QIODevice::Unbuffered);
    const qint64 written = opened ? file.write(bytes) : -1;
    if (!opened || written != bytes.size() || !file.commit()) {
        if (errorMessage) {
            const QString why = opened && written >= 0 && written < bytes.size()
                                    ? ProjectController::tr("only %1 of %2 bytes could be written (is the disk full?)")
                                          .arg(written)
                                          .arg(bytes.size())
                                    : file.errorString();
            *errorMessage =
                ProjectController::tr("Cannot write %1: %2; the file there is as it was").arg(nativePath(path), why);
        }
        file.cancelWriting();
        return false;
    }
    return true;
}

QString infoPathFor(const QString &recoveryFile)
{
    QString info = recoveryFile;
    info.chop(ProjectSuffix.size());
    return info + QStringLiteral(".json");
}

QString lockPathFor(const QString &recoveryFile)
{
    QString lock = recoveryFile;
    lock.chop(ProjectSuffix.size());
    return lock + QStringLiteral(".lock");
}

} // namespace

ProjectController::ProjectController(Snapshot snapshot, QObject *parent)
    : QObject(parent), m_snapshot(std::move(snapshot)), m_autosaveTimer(new QTimer(this)),
      m_dirtyTimer(new QTimer(this))
{
    static std::atomic<int> sessions{0};
    m_id = QStringLiteral("%1-%2").arg(QCoreApplication::applicationPid()).arg(++sessions);
    m_autosaveTimer->setInterval(DefaultAutosaveMs);
    connect(m_autosaveTimer, &QTimer::timeout, this, &ProjectController::autosave);
    m_dirtyTimer->setSingleShot(true);
    m_dirtyTimer->setInterval(250);
    connect(m_dirtyTimer, &QTimer::timeout, this, &ProjectController::checkDirty);
}

// The recovery file stays (a window destroyed without closing is not a clean exit); the lock is
// released, so the next start may offer it.
ProjectController::~ProjectController() = default;

Result<storage::Project> ProjectController::read(const QString &path)
{
    const std::string name = path.toStdString();
    const QFileInfo info(path);
    if (!info.exists())
        return makeError(ErrorKind::Io, tr("%1 does not exist").arg(nativePath(path)).toStdString());
    if (!info.isFile())
        return makeError(ErrorKind::Io, tr("%1 is not a regular file").arg(nativePath(path)).toStdString());
    if (info.size() > MaxProjectBytes)
        return makeError(ErrorKind::Io, tr("%1 is %2 MiB; a project is expected to be smaller than %3 MiB")
                                            .arg(nativePath(path))
                                            .arg(info.size() / (1024 * 1024))
                                            .arg(MaxProjectBytes / (1024 * 1024))
                                            .toStdString());
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(ErrorKind::Io,
                         tr("Cannot read %1: %2").arg(nativePath(path), file.errorString()).toStdString());
    const QByteArray bytes = file.readAll();
    return storage::parseProject(bytes.toStdString(), name);
}

std::string ProjectController::editKey(storage::Project p)
{
    p.savedBy.clear();
    p.input.relativePath.clear();
    p.rubric.reset();
    p.asWritten.reset();
    if (p.agents)
        p.agents->selectedStep = -1;
    return storage::projectToJson(p, std::string());
}

bool ProjectController::save(const QString &path, QString *errorMessage)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const storage::Project project = m_snapshot();
    const std::string text = storage::projectToJson(project, absolute.toStdString());
    if (!writeAtomically(absolute, QByteArray::fromStdString(text), errorMessage))
        return false;
    m_path = absolute;
    m_baselineKey = editKey(project);
    setDirty(false);
    // Nothing unsaved now: a crash from here on has nothing to recover until the next edit.
    discardRecovery();
    emit saved(absolute);
    return true;
}

void ProjectController::closeProject()
{
    m_path.clear();
    const bool had = !m_measurements.empty();
    m_measurements.clear();
    m_baselineKey = editKey(m_snapshot());
    setDirty(false);
    if (had)
        emit measurementsChanged();
}

void ProjectController::addMeasurements(const std::vector<storage::ProjectMeasurement> &measurements)
{
    if (measurements.empty())
        return;
    m_measurements.insert(m_measurements.end(), measurements.begin(), measurements.end());
    emit measurementsChanged();
    checkDirty();
}

void ProjectController::beginRestore(const storage::Project &project, const QString &path,
                                     std::optional<std::optional<storage::Project>> baseline)
{
    m_pending = std::make_shared<const storage::Project>(project);
    m_pendingPath = path;
    m_pendingBaseline = std::move(baseline);
    m_dirtyTimer->stop();
}

void ProjectController::endRestore()
{
    if (!m_pending)
        return;
    const auto project = std::move(m_pending);
    m_pending.reset();
    m_path = m_pendingPath.isEmpty() ? QString() : QFileInfo(m_pendingPath).absoluteFilePath();
    m_measurements = project->measurements;
    if (!m_pendingBaseline)
        m_baselineKey = editKey(*project);
    else if (*m_pendingBaseline)
        m_baselineKey = editKey(**m_pendingBaseline);
    else
        m_baselineKey.clear(); // recovered and never saved: everything in it is unsaved
    m_pendingBaseline.reset();
    checkDirty();
    emit measurementsChanged();
    emit restored();
}

void ProjectController::tell(const QString &title, const QString &text) const
{
    if (m_tell)
        m_tell(title, text);
}

bool ProjectController::askRecovery(const Recovery &recovery) const
{
    return m_ask && m_ask(recovery);
}

void ProjectController::checkDirty()
{
    m_dirtyTimer->stop();
    if (m_pending)
        return;
    setDirty(editKey(m_snapshot()) != m_baselineKey);
}

void ProjectController::checkDirtySoon()
{
    if (!m_pending)
        m_dirtyTimer->start();
}

void ProjectController::setDirty(bool dirty)
{
    if (dirty == m_dirty)
        return;
    m_dirty = dirty;
    emit dirtyChanged(dirty);
}

void ProjectController::setAutosaveInterval(int ms)
{
    m_autosaveTimer->setInterval(std::max(ms, 100));
}

int ProjectController::autosaveInterval() const
{
    return m_autosaveTimer->interval();
}

QString ProjectController::defaultRecoveryDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/recovery");
}

void ProjectController::setRecoveryDirectory(const QString &dir)
{
    if (!m_recoveryDir.isEmpty())
        discardRecovery();
    m_lock.reset();
    m_autosavedKey.clear();
    m_recoveryDir = dir;
    if (dir.isEmpty())
        m_autosaveTimer->stop();
    else
        m_autosaveTimer->start();
}

QString ProjectController::recoveryFile() const
{
    if (m_recoveryDir.isEmpty())
        return {};
    return QDir(m_recoveryDir).filePath(RecoveryPrefix + m_id + ProjectSuffix);
}

bool ProjectController::ensureLock()
{
    if (m_lock)
        return true;
    if (!QDir().mkpath(m_recoveryDir))
        return false;
    auto lock = std::make_unique<QLockFile>(lockPathFor(recoveryFile()));
    lock->setStaleLockTime(0); // held for the whole session: only a dead owner makes it stale
    if (!lock->tryLock(0))
        return false;
    m_lock = std::move(lock);
    return true;
}

bool ProjectController::autosave()
{
    if (m_pending || m_recoveryDir.isEmpty())
        return false;
    const storage::Project project = m_snapshot();
    const std::string key = editKey(project);
    setDirty(key != m_baselineKey);
    if (key == m_baselineKey) { // nothing unsaved: nothing to recover
        if (!m_autosavedKey.empty()) {
            QFile::remove(recoveryFile());
            QFile::remove(infoPathFor(recoveryFile()));
            m_autosavedKey.clear();
        }
        return false;
    }
    if (key == m_autosavedKey || !ensureLock())
        return false;
    const QString file = recoveryFile();
    const QJsonObject info{{QStringLiteral("project"), m_path},
                           {QStringLiteral("autosaved"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)}};
    // The document first: an info file never points at a half-written autosave.
    if (!writeAtomically(file, QByteArray::fromStdString(storage::projectToJson(project, m_path.toStdString())),
                         nullptr) ||
        !writeAtomically(infoPathFor(file), QJsonDocument(info).toJson(), nullptr))
        return false;
    m_autosavedKey = key;
    emit autosaved(file);
    return true;
}

void ProjectController::discardRecovery()
{
    if (m_recoveryDir.isEmpty())
        return;
    QFile::remove(recoveryFile());
    QFile::remove(infoPathFor(recoveryFile()));
    m_autosavedKey.clear();
}

std::vector<ProjectController::Recovery> ProjectController::orphans() const
{
    std::vector<Recovery> out;
    if (m_recoveryDir.isEmpty())
        return out;
    const QDir dir(m_recoveryDir);
    const QString own = QFileInfo(recoveryFile()).fileName();
    for (const QFileInfo &f : dir.entryInfoList({RecoveryPrefix + QStringLiteral("*") + ProjectSuffix}, QDir::Files)) {
        if (f.fileName() == own)
            continue;
        QLockFile lock(lockPathFor(f.absoluteFilePath()));
        lock.setStaleLockTime(0);
        if (!lock.tryLock(0))
            continue; // its session is still running
        lock.unlock();
        Recovery r;
        r.file = f.absoluteFilePath();
        r.autosaved = f.lastModified();
        QFile infoFile(infoPathFor(r.file));
        if (infoFile.open(QIODevice::ReadOnly)) {
            const QJsonObject info = QJsonDocument::fromJson(infoFile.readAll()).object();
            r.projectPath = info.value(QStringLiteral("project")).toString();
            const QDateTime when =
                QDateTime::fromString(info.value(QStringLiteral("autosaved")).toString(), Qt::ISODateWithMs);
            if (when.isValid())
                r.autosaved = when;
        }
        // Saved after the autosave: the project file has it all (or more).
        if (!r.projectPath.isEmpty() && QFileInfo::exists(r.projectPath) &&
            QFileInfo(r.projectPath).lastModified() >= r.autosaved) {
            removeRecovery(r);
            continue;
        }
        out.push_back(r);
    }
    std::sort(out.begin(), out.end(), [](const Recovery &a, const Recovery &b) { return a.autosaved > b.autosaved; });
    return out;
}

void ProjectController::removeRecovery(const Recovery &recovery)
{
    QFile::remove(recovery.file);
    QFile::remove(infoPathFor(recovery.file));
    QFile::remove(lockPathFor(recovery.file));
}

} // namespace stitch::views
