#pragma once
// What the Code view shows and the work behind it: the last Optimize result, which pair of its
// programs (as written / optimized, or a step beside the step before it), in which form (CUDA,
// PTX, SASS), diffed on a worker.
//   OptimizeController::finished -> setResult; Agents dock -> followStep / showStepChanges
//   -> job (programAt, codeOf: codegen, NVRTC, cuobjdump; diffTexts) on one worker thread
//   -> newest job only -> CodeDiffView::setDiff -> updated()
// One worker: compiles queue rather than compete for the cores, and a queued job that is no longer
// the newest returns at once. Compiled code is cached per program text, form and architecture.

#include "views/CodeDiffView.h"

#include "core/agents/Session.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

QT_BEGIN_NAMESPACE
class QThreadPool;
QT_END_NAMESPACE

namespace stitch::views {

class CodeDiffController final : public QObject {
    Q_OBJECT
public:
    enum Comparison { AsWrittenAndOptimized, StepAndPrevious };

    /// `view` must outlive the controller.
    explicit CodeDiffController(CodeDiffView *view, QObject *parent = nullptr);
    /// Waits for the job in flight: an NVRTC call cannot be abandoned.
    ~CodeDiffController() override;

    /// A new Optimize result (null: none); `fileName` is the user's file, `selectedRow` the
    /// Agents dock's selection (the step compared in step mode when it is a decision or Stitch).
    void setResult(std::shared_ptr<const agents::SourceResult> result, const QString &fileName, int selectedRow);
    /// No result, and why (Optimize failed, was cancelled, or the text changed).
    void clear(const QString &why);
    void setArchitecture(const QString &arch);
    /// The Agents dock selected timeline row `row`: in step mode, the view compares it with the
    /// row before (Parse, row 0, changes no code: the view stays).
    void followStep(int row);
    /// Step mode on timeline row `row` (a decision or Stitch), the view at the first change it made.
    void showStepChanges(int row);
    void setComparison(Comparison comparison);
    void setRepresentation(CodeDiffView::Representation representation);

    Comparison comparison() const { return m_comparison; }
    /// The timeline row compared with the row before in step mode (1 .. decisions + 1).
    int step() const { return m_step; }
    const agents::SourceResult *result() const { return m_result.get(); }
    /// True when no job is queued or running: the view shows the newest request.
    bool isSettled() const { return m_delivered == m_requested; }

signals:
    /// The view shows the newest request's diff, or why there is none.
    void updated();

private:
    struct Cache;
    struct Outcome;
    void refresh();
    void updateControls();
    void deliver(quint64 job, const std::shared_ptr<Outcome> &outcome);

    CodeDiffView *m_view;
    QThreadPool *m_pool;
    std::shared_ptr<Cache> m_cache;
    std::shared_ptr<const agents::SourceResult> m_result;
    QString m_fileName;
    QString m_arch = QStringLiteral("sm_90");
    Comparison m_comparison = AsWrittenAndOptimized;
    CodeDiffView::Representation m_representation = CodeDiffView::CudaSource;
    int m_step = 1;
    quint64 m_requested = 0;
    quint64 m_delivered = 0;
    std::shared_ptr<std::atomic<quint64>> m_newest = std::make_shared<std::atomic<quint64>>(0);
};

} // namespace stitch::views
