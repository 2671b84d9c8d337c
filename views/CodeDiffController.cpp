#include "views/CodeDiffController.h"

#include "views/CodeDiffSources.h"

#include "core/common/Sha256.h"

#include <QFutureWatcher>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>

namespace stitch::views {

struct CodeDiffController::Cache {
    std::mutex mutex;
    std::map<std::string, std::string> code; ///< form, architecture, origin, SHA-256 of the CUDA -> code
};

struct CodeDiffController::Outcome {
    bool skipped = false; ///< a newer job came before this one started
    QString leftTitle, rightTitle;
    TextDiff diff;
    CodeDiffView::Language language = CodeDiffView::Language::Cuda;
    QString error;
};

namespace {

struct JobInput {
    std::shared_ptr<const agents::SourceResult> result;
    int leftRow = 0, rightRow = 0;
    CodeForm form = CodeForm::Cuda;
    std::string arch, fileName;
};

QString formName(CodeForm form)
{
    return form == CodeForm::Cuda ? QStringLiteral("CUDA") : form == CodeForm::Ptx ? QStringLiteral("PTX") : QStringLiteral("SASS");
}

} // namespace

CodeDiffController::CodeDiffController(CodeDiffView *view, QObject *parent)
    : QObject(parent), m_view(view), m_pool(new QThreadPool(this)), m_cache(std::make_shared<Cache>())
{
    m_pool->setMaxThreadCount(1);
    const bool sass = !sassTool().isEmpty();
    m_view->setRepresentationAvailable(CodeDiffView::SassCode, sass,
                                       tr("Needs cuobjdump or nvdisasm (CUDA toolkit's bin folder or PATH); neither is installed."));
    m_view->setComparisons({tr("As written / optimized"), tr("Step / the step before")}, m_comparison);
    connect(m_view, &CodeDiffView::comparisonChosen, this, [this](int c) { setComparison(static_cast<Comparison>(c)); });
    connect(m_view, &CodeDiffView::stepChosen, this, [this](int index) {
        m_step = index + 1;
        refresh();
    });
    connect(m_view, &CodeDiffView::representationChosen, this,
            [this](int r) { setRepresentation(static_cast<CodeDiffView::Representation>(r)); });
    updateControls();
}

CodeDiffController::~CodeDiffController()
{
    m_newest->store(std::numeric_limits<quint64>::max()); // queued jobs return at once
    m_pool->waitForDone();
}

void CodeDiffController::setResult(std::shared_ptr<const agents::SourceResult> result, const QString &fileName,
                                   int selectedRow)
{
    m_result = std::move(result);
    m_fileName = fileName;
    if (!m_result) {
        clear(tr("No Optimize result to compare."));
        return;
    }
    const int last = timelineRows(*m_result) - 1;
    m_step = selectedRow >= 1 && selectedRow <= last ? selectedRow : last;
    refresh();
}

void CodeDiffController::clear(const QString &why)
{
    m_result.reset();
    ++m_requested; // a job in flight is stale now
    m_delivered = m_requested;
    m_newest->store(m_requested);
    updateControls();
    m_view->setMessage(why);
    emit updated();
}

void CodeDiffController::setArchitecture(const QString &arch)
{
    if (arch == m_arch)
        return;
    m_arch = arch;
    if (m_representation != CodeDiffView::CudaSource) // CUDA does not depend on it
        refresh();
}

void CodeDiffController::followStep(int row)
{
    if (!m_result || row < 1 || row >= timelineRows(*m_result) || row == m_step)
        return;
    m_step = row;
    if (m_comparison == StepAndPrevious)
        refresh();
    else
        updateControls();
}

void CodeDiffController::showStepChanges(int row)
{
    if (!m_result || row < 1 || row >= timelineRows(*m_result))
        return;
    m_step = row;
    m_comparison = StepAndPrevious;
    refresh();
}

void CodeDiffController::setComparison(Comparison comparison)
{
    m_comparison = comparison;
    refresh();
}

void CodeDiffController::setRepresentation(CodeDiffView::Representation representation)
{
    m_representation = representation;
    refresh();
}

void CodeDiffController::updateControls()
{
    m_view->setComparisons({tr("As written / optimized"), tr("Step / the step before")}, m_comparison);
    m_view->setRepresentation(m_representation);
    QStringList steps;
    for (int row = 1; m_result && row < timelineRows(*m_result); ++row)
        steps << stepName(*m_result, row);
    m_view->setSteps(steps, std::max(0, m_step - 1));
    m_view->setStepsEnabled(m_result && m_comparison == StepAndPrevious);
}

void CodeDiffController::refresh()
{
    updateControls();
    if (!m_result)
        return;
    JobInput input;
    input.result = m_result;
    const int last = timelineRows(*m_result) - 1;
    input.leftRow = m_comparison == AsWrittenAndOptimized ? 0 : std::clamp(m_step - 1, 0, last);
    input.rightRow = m_comparison == AsWrittenAndOptimized ? last : std::clamp(m_step, 0, last);
    input.form = m_representation == CodeDiffView::PtxCode    ? CodeForm::Ptx
                 : m_representation == CodeDiffView::SassCode ? CodeForm::Sass
                                                              : CodeForm::Cuda;
    input.arch = m_arch.toStdString();
    input.fileName = m_fileName.toStdString();
    const quint64 job = ++m_requested;
    m_newest->store(job);
    m_view->setStatus(input.form == CodeForm::Cuda ? tr("Generating the programs...")
                                                   : tr("Compiling both programs for %1 (NVRTC)...").arg(m_arch));

    auto *watcher = new QFutureWatcher<std::shared_ptr<Outcome>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, job] {
        watcher->deleteLater();
        deliver(job, watcher->result());
    });
    watcher->setFuture(QtConcurrent::run(m_pool, [input, job, newest = m_newest, cache = m_cache] {
        auto out = std::make_shared<Outcome>();
        if (newest->load() != job) {
            out->skipped = true;
            return out;
        }
        out->language = input.form == CodeForm::Ptx    ? CodeDiffView::Language::Ptx
                        : input.form == CodeForm::Sass ? CodeDiffView::Language::Sass
                                                       : CodeDiffView::Language::Cuda;
        std::string texts[2];
        const int rows[2] = {input.leftRow, input.rightRow};
        for (int side = 0; side < 2; ++side) {
            auto program = programAt(*input.result, rows[side]);
            if (!program) {
                out->error = tr("Nothing to compare: %1.").arg(QString::fromStdString(program.error().message));
                return out;
            }
            (side == 0 ? out->leftTitle : out->rightTitle) = program->title;
            const std::string key = formName(input.form).toStdString() + "|" + input.arch + "|" +
                                    (program->asWritten ? "w|" : "g|") + sha256Hex(program->source);
            {
                std::lock_guard lock(cache->mutex);
                if (auto it = cache->code.find(key); it != cache->code.end()) {
                    texts[side] = it->second;
                    continue;
                }
            }
            auto code = codeOf(*program, input.form, input.arch, input.fileName);
            if (!code) {
                out->error = tr("No %1 for \"%2\": %3")
                                 .arg(formName(input.form), program->title, QString::fromStdString(code.error().message));
                return out;
            }
            texts[side] = std::move(*code);
            std::lock_guard lock(cache->mutex);
            if (cache->code.size() >= 64) // a long session's steps: keep the memory bounded
                cache->code.clear();
            cache->code[key] = texts[side];
        }
        out->diff = diffTexts(texts[0], texts[1]);
        return out;
    }));
}

void CodeDiffController::deliver(quint64 job, const std::shared_ptr<Outcome> &outcome)
{
    if (job != m_requested || !outcome || outcome->skipped)
        return; // a newer request is queued or running: it will deliver
    m_delivered = job;
    if (!outcome->error.isEmpty())
        m_view->setMessage(outcome->error);
    else
        m_view->setDiff(outcome->leftTitle, outcome->rightTitle, outcome->diff, outcome->language);
    emit updated();
}

} // namespace stitch::views
