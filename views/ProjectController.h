#pragma once
// The studio's project file and the safety around it: atomic saves, the dirty state, autosave and
// recovery after a crash. MainWindow decides what a project holds (its snapshot) and restores it.
//   MainWindow::projectSnapshot -> storage::projectToJson -> QSaveFile (.stitchproj, atomic)
//   file -> read() (size limit, storage::parseProject: located errors, newer versions refused)
//   timer / Optimize -> autosave() -> <recovery dir>/autosave-<id>.stitchproj (+ .json: whose, when)
//   next start -> orphans() (lock free: its session ended without a clean exit) -> offer, restore
// A clean exit (the window closed) removes this session's recovery file; a crash leaves it, and its
// QLockFile, whose process is gone, lets the next start take it.

#include "core/common/Result.h"
#include "core/storage/ProjectFile.h"

#include <QDateTime>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

QT_BEGIN_NAMESPACE
class QLockFile;
class QTimer;
QT_END_NAMESPACE

namespace stitch::views {

class ProjectController final : public QObject {
    Q_OBJECT
public:
    /// The session as a project document, asked for on save, autosave and each dirty check.
    using Snapshot = std::function<storage::Project()>;

    /// A session's autosave left behind.
    struct Recovery {
        QString file;        ///< the autosaved .stitchproj
        QString projectPath; ///< the project it belongs to; empty for an untitled session
        QDateTime autosaved;
    };

    /// Tells the user something (a project that cannot be opened, a save that failed). Tests replace it.
    using MessageSink = std::function<void(const QString &title, const QString &text)>;
    /// Asks whether to restore a recovery file; true restores it. Tests replace it.
    using RecoveryPrompt = std::function<bool(const Recovery &recovery)>;

    static constexpr int DefaultAutosaveMs = 30'000;
    /// A project larger than this is not one the studio wrote (a project holds one program).
    static constexpr qint64 MaxProjectBytes = qint64{256} * 1024 * 1024;

    explicit ProjectController(Snapshot snapshot, QObject *parent = nullptr);
    ~ProjectController() override;

    /// Reads and parses a project; nothing changes. Io errors name the file; parse errors are located.
    static Result<storage::Project> read(const QString &path);

    QString path() const { return m_path; }
    bool isOpen() const { return !m_path.isEmpty(); }
    /// The session differs from the project as last saved or opened (reports and the selected step
    /// are records, not edits, and do not count; a new measurement does: it would be lost unsaved).
    bool isDirty() const { return m_dirty; }

    /// Writes the snapshot to `path` through QSaveFile: the old file stays whole when anything
    /// fails. On success the project is `path`, clean, and this session's autosave is dropped.
    bool save(const QString &path, QString *errorMessage = nullptr);
    /// The session is a plain source file again (New, Open of a .cu): no project; the baseline is
    /// the session as it is now.
    void closeProject();
    /// While a restore is applied (asynchronously, after the lift) the session is half old, half
    /// new: no dirty checks and no autosaves until it ends.
    /// `project` (from `path`, or from a recovery file of `path`) is being restored into the window:
    /// until endRestore the session is half old, half new, so no dirty checks and no autosaves.
    /// `baseline` is what the dirty state compares with afterwards (default: `project` itself; a
    /// recovered session compares with its project as saved, or with nothing when it has none).
    void beginRestore(const storage::Project &project, const QString &path,
                      std::optional<std::optional<storage::Project>> baseline = std::nullopt);
    /// The project being restored (null when none).
    const storage::Project *pendingRestore() const { return m_pending.get(); }
    void endRestore();
    bool isRestoring() const { return m_pending != nullptr; }
    /// Compares the session with the baseline (debounced for typing: call checkDirtySoon).
    void checkDirty();
    void checkDirtySoon();

    /// The GPU measurements of this project: those it brought and those its Runs took, oldest first.
    const std::vector<storage::ProjectMeasurement> &measurements() const { return m_measurements; }
    /// Appends a Run's measurements (unsaved until the next save; autosave keeps them meanwhile).
    void addMeasurements(const std::vector<storage::ProjectMeasurement> &measurements);

    void setAutosaveInterval(int ms);
    int autosaveInterval() const;
    /// Where recovery files go; autosave runs (every autosaveInterval, and when asked) only once
    /// one is set, so tests and headless captures never write into the user's folder. Empty: off.
    void setRecoveryDirectory(const QString &dir);
    /// QStandardPaths::AppDataLocation/recovery: the studio's.
    static QString defaultRecoveryDirectory();
    QString recoveryDirectory() const { return m_recoveryDir; }
    /// This session's recovery file (it exists only while there is unsaved work); empty when off.
    QString recoveryFile() const;
    /// Writes the session to the recovery file when it differs from the baseline and from the last
    /// autosave; removes the file when there is nothing unsaved. True when it wrote.
    bool autosave();
    /// A clean exit: this session's recovery file goes.
    void discardRecovery();

    /// Recovery files of sessions that ended without a clean exit, newest first. One older than its
    /// project's last save is stale and removed here.
    std::vector<Recovery> orphans() const;
    /// Removes a recovery file the user declined or has restored.
    static void removeRecovery(const Recovery &recovery);

    void setMessageSink(MessageSink sink) { m_tell = std::move(sink); }
    void setRecoveryPrompt(RecoveryPrompt prompt) { m_ask = std::move(prompt); }
    void tell(const QString &title, const QString &text) const;
    bool askRecovery(const Recovery &recovery) const;

signals:
    void dirtyChanged(bool dirty);
    void saved(const QString &path);
    void autosaved(const QString &file);
    /// A restore (beginRestore) has been applied.
    void restored();
    /// measurements() changed: a Run added some, a project brought its own, or closing dropped them.
    void measurementsChanged();

private:
    /// The part of a document that counts for the dirty state.
    static std::string editKey(storage::Project project);
    void setDirty(bool dirty);
    bool ensureLock();

    Snapshot m_snapshot;
    QString m_path;
    std::string m_baselineKey;
    std::string m_autosavedKey;
    bool m_dirty = false;
    std::shared_ptr<const storage::Project> m_pending;
    QString m_pendingPath;
    std::optional<std::optional<storage::Project>> m_pendingBaseline;
    MessageSink m_tell;
    RecoveryPrompt m_ask;
    std::vector<storage::ProjectMeasurement> m_measurements;
    QTimer *m_autosaveTimer;
    QTimer *m_dirtyTimer;
    QString m_recoveryDir;
    QString m_id; ///< this session's: "<pid>-<n>"
    std::unique_ptr<QLockFile> m_lock;
};

} // namespace stitch::views
