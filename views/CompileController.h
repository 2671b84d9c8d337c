#pragma once
// Editor text -> CompileController -> worker thread (cuda::compileProgram) -> finished / failed.
//   CodeEditor edits -> debounce -> job N -> NVRTC on the worker -> delivered only if N is newest
// NVRTC cannot be interrupted, so "cancel" means: a job that is no longer the newest is skipped
// if it has not started, and its result is dropped if it has.

#include "views/MetaTypes.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>

QT_BEGIN_NAMESPACE
class QTextDocument;
class QThreadPool;
QT_END_NAMESPACE

namespace stitch::views {

/// Compiles CUDA source off the GUI thread. Each request gets a job id; only the newest job's
/// outcome is delivered, older ones end with discarded().
class CompileController final : public QObject {
    Q_OBJECT
public:
    /// The function a job runs on the worker (default cuda::compileProgram; an empty function
    /// restores it). Tests replace it to control timing.
    using CompileFunction =
        std::function<Result<cuda::CompileResult>(const std::string &, const cuda::CompileOptions &)>;

    explicit CompileController(QObject *parent = nullptr);
    /// Waits for the compile in flight, if any: NVRTC calls cannot be abandoned safely.
    ~CompileController() override;

    /// Target such as "sm_90". Changing it makes the job in flight stale and recompiles the
    /// attached document, if it has text.
    void setArchitecture(const QString &arch);
    QString architecture() const { return m_architecture; }

    /// Name used in diagnostics and, when it is a path, to resolve local includes.
    void setFileName(const QString &fileName);
    QString fileName() const { return m_fileName; }

    /// Document whose edits trigger a debounced compile (nullptr: no auto-compile source).
    void setDocument(QTextDocument *document);
    void setAutoCompile(bool enabled);
    bool autoCompile() const { return m_autoCompile; }
    void setDebounceInterval(int milliseconds);
    int debounceInterval() const;

    void setCompileFunction(CompileFunction function);

    /// Starts a job for `source` now and returns its id; any older job becomes stale.
    quint64 compile(const QString &source);
    /// Compiles the attached document now (0 when there is none).
    quint64 compileDocument();
    /// Restarts the debounce timer; the document is compiled when it expires.
    void scheduleCompile();

    quint64 currentJobId() const { return m_currentJob; }
    bool isRunning() const { return m_running > 0; }

signals:
    void started(quint64 jobId);
    void finished(quint64 jobId, const stitch::cuda::CompileResult &result);
    void failed(quint64 jobId, const stitch::Error &error);
    /// A stale job ended (skipped or its result dropped); nothing else is emitted for it.
    void discarded(quint64 jobId);

private:
    struct JobOutput;
    void deliver(quint64 jobId, const std::shared_ptr<JobOutput> &output);

    QString m_architecture = QStringLiteral("sm_90");
    QString m_fileName = QStringLiteral("untitled.cu");
    QPointer<QTextDocument> m_document;
    QMetaObject::Connection m_documentConnection;
    bool m_autoCompile = true;
    QTimer m_debounce;
    CompileFunction m_compileFunction;
    // One worker: compiles queue instead of competing for cores, and stale queued jobs are skipped.
    QThreadPool *m_pool = nullptr;
    // Shared with the workers so a queued job can see it has been superseded before it starts.
    std::shared_ptr<std::atomic<quint64>> m_newestJob = std::make_shared<std::atomic<quint64>>(0);
    quint64 m_currentJob = 0;
    quint64 m_nextJob = 1;
    int m_running = 0;
};

} // namespace stitch::views
