#include "views/CompileController.h"

#include "core/cuda/SourceCompiler.h"

#include <QFutureWatcher>
#include <QTextDocument>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <limits>
#include <optional>

namespace stitch::views {

struct CompileController::JobOutput {
    std::optional<Result<cuda::CompileResult>> result; ///< empty when the job was skipped
};

CompileController::CompileController(QObject *parent)
    : QObject(parent), m_compileFunction(&cuda::compileProgram), m_pool(new QThreadPool(this))
{
    m_pool->setMaxThreadCount(1);
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(500);
    connect(&m_debounce, &QTimer::timeout, this, &CompileController::compileDocument);
}

CompileController::~CompileController()
{
    // Queued jobs see they are stale and return at once; only a running NVRTC call is waited for.
    m_newestJob->store(std::numeric_limits<quint64>::max());
    m_pool->waitForDone();
}

void CompileController::setArchitecture(const QString &arch)
{
    if (arch == m_architecture)
        return;
    m_architecture = arch;
    // A result for the old architecture would label the resource table wrongly: drop it, and
    // recompile what the user is looking at.
    if (m_document && !m_document->isEmpty()) {
        compileDocument();
    } else if (m_currentJob != 0) {
        m_currentJob = 0;
        m_newestJob->store(0);
    }
}

void CompileController::setFileName(const QString &fileName)
{
    m_fileName = fileName;
}

void CompileController::setDocument(QTextDocument *document)
{
    if (m_document == document)
        return;
    disconnect(m_documentConnection);
    m_document = document;
    if (document) {
        m_documentConnection = connect(document, &QTextDocument::contentsChanged, this, [this] {
            if (m_autoCompile)
                scheduleCompile();
        });
    }
}

void CompileController::setAutoCompile(bool enabled)
{
    m_autoCompile = enabled;
    if (!enabled)
        m_debounce.stop();
}

void CompileController::setDebounceInterval(int milliseconds)
{
    m_debounce.setInterval(milliseconds);
}

int CompileController::debounceInterval() const
{
    return m_debounce.interval();
}

void CompileController::setCompileFunction(CompileFunction function)
{
    m_compileFunction = function ? std::move(function) : CompileFunction(&cuda::compileProgram);
}

void CompileController::scheduleCompile()
{
    m_debounce.start();
}

quint64 CompileController::compileDocument()
{
    if (!m_document)
        return 0;
    return compile(m_document->toPlainText());
}

quint64 CompileController::compile(const QString &source)
{
    m_debounce.stop();
    const quint64 jobId = m_nextJob++;
    m_currentJob = jobId;
    m_newestJob->store(jobId);

    // The job owns copies of everything it reads: the editor and the settings may change while
    // it runs.
    cuda::CompileOptions options;
    options.arch = m_architecture.toStdString();
    options.fileName = m_fileName.toStdString();
    auto run = [source = source.toStdString(), options = std::move(options), jobId, newest = m_newestJob,
                compileFn = m_compileFunction]() {
        auto output = std::make_shared<JobOutput>();
        if (newest->load() == jobId)
            output->result.emplace(compileFn(source, options));
        return output;
    };

    auto *watcher = new QFutureWatcher<std::shared_ptr<JobOutput>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, jobId] {
        watcher->deleteLater();
        deliver(jobId, watcher->result());
    });
    ++m_running;
    watcher->setFuture(QtConcurrent::run(m_pool, std::move(run)));
    emit started(jobId);
    return jobId;
}

void CompileController::deliver(quint64 jobId, const std::shared_ptr<JobOutput> &output)
{
    --m_running;
    if (jobId != m_currentJob || !output || !output->result) {
        emit discarded(jobId);
        return;
    }
    const auto &result = *output->result;
    if (result.ok())
        emit finished(jobId, result.value());
    else
        emit failed(jobId, result.error());
}

} // namespace stitch::views
