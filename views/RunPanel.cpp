#include "views/RunPanel.h"

#include "views/RunCharts.h"
#include "views/RunHistoryModel.h"
#include "views/RunModels.h"
#include "views/Text.h"
#include "views/WrapLabel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace stitch::views {

namespace {

QTreeView *tableView(QAbstractItemModel *model, const QString &name, QWidget *parent)
{
    auto *view = new QTreeView(parent);
    view->setObjectName(name);
    view->setModel(model);
    view->setRootIsDecorated(false);
    view->setUniformRowHeights(true);
    view->setAlternatingRowColors(true);
    view->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->header()->setStretchLastSection(true);
    return view;
}

} // namespace

RunPanel::RunPanel(QAction *runAction, QAction *cancelAction, QWidget *parent)
    : QWidget(parent), m_times(new RunTimesModel(this)), m_verification(new RunVerificationModel(this)),
      m_metrics(new RunMetricsModel(this)), m_history(new RunHistoryModel(this))
{
    auto *top = new QHBoxLayout;
    for (QAction *action : {runAction, cancelAction}) {
        if (!action)
            continue;
        auto *button = new QToolButton(this);
        button->setDefaultAction(action);
        button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        top->addWidget(button);
    }
    top->addStretch(1);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("runMessage"));
    wrapWithinDock(m_message);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_timeChart = new RunTimeChart(this);
    m_timeChart->setObjectName(QStringLiteral("runTimeChart"));
    m_roofline = new RooflineChart(this);
    m_roofline->setObjectName(QStringLiteral("runRoofline"));

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("runTables"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(tableView(m_times, QStringLiteral("runTimesView"), this), tr("Times"));
    m_tabs->addTab(tableView(m_verification, QStringLiteral("runVerificationView"), this), tr("Verification"));
    m_tabs->addTab(tableView(m_metrics, QStringLiteral("runMetricsView"), this), tr("Metrics and rubric"));
    m_tabs->setTabToolTip(2, tr("CUPTI's counters per kernel when a GPU measured them, beside the static rubric's "
                                "evidence (the numbers the performance model reads), each labelled"));
    m_tabs->addTab(tableView(m_history, QStringLiteral("runHistoryView"), this), tr("History"));
    m_tabs->setTabToolTip(3, tr("Every program a GPU timed in this project's Runs, newest first, saved with the "
                                "project (estimates are not kept)"));

    // The two charts side by side over the tables.
    auto *charts = new QSplitter(Qt::Horizontal, this);
    charts->addWidget(m_timeChart);
    charts->addWidget(m_roofline);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(charts);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_message);
    layout->addWidget(split, 1);
    setMessage(
        tr("Optimize a program (Ctrl+R), then Run (F5): the program before and the optimized one (and, for a "
           "GEMM, cuBLAS) are verified and timed on the local GPU, or estimated by the performance model without "
           "one."));
}

void RunPanel::setMessage(const QString &message)
{
    m_message->setText(message);
}

QString RunPanel::message() const
{
    return m_message->text();
}

void RunPanel::setReport(std::shared_ptr<const RunReport> report)
{
    m_report = std::move(report);
    m_times->setReport(m_report);
    m_verification->setReport(m_report);
    m_metrics->setReport(m_report);
    m_timeChart->setReport(m_report);
    m_roofline->setReport(m_report);
    if (!m_report)
        return;
    QStringList lines;
    if (m_report->gpu)
        lines << tr("Measured on %1: verified against the CPU interpreter, timed with CUDA events (L2 flushed), "
                    "kernels profiled with CUPTI.")
                     .arg(qs(m_report->device));
    else
        lines << tr("ESTIMATED: %1. Every time below is the performance model's, not a measurement; nothing was verified.")
                     .arg(qs(m_report->device));
    const ProgramRun *before = m_report->before(), *after = m_report->optimized();
    if (before && after && before->timing() && after->timing() && after->timing()->medianMs > 0)
        lines << tr("Optimized: %1x over %2%3.")
                     .arg(before->timing()->medianMs / after->timing()->medianMs, 0, 'f', 2)
                     .arg(before->role == ProgramRun::Role::AsWritten ? tr("the program as written")
                                                                      : tr("the %1").arg(qs(before->name)),
                          before->estimated() || after->estimated() ? tr(" (estimated)") : QString());
    // The library reference: how the optimized program compares, measured against measured only.
    const ProgramRun *library = m_report->library();
    if (library && after && library->timing() && after->timing() && !after->estimated() &&
        after->timing()->medianMs > 0)
        lines << tr("Optimized: %1x over cuBLAS%2.")
                     .arg(library->timing()->medianMs / after->timing()->medianMs, 0, 'f', 2)
                     .arg(library->note.find("not part of cuBLAS") != std::string::npos
                              ? tr(" (cuBLAS computes the GEMMs alone: its row says what it leaves out)")
                              : QString());
    for (const ProgramRun &p : m_report->programs)
        if (!p.result)
            lines << tr("%1 not run: %2").arg(qs(p.name), qs(p.error));
    for (const std::string &w : m_report->warnings)
        lines << tr("Note: %1").arg(qs(w));
    setMessage(lines.join(QLatin1Char('\n')));
}

} // namespace stitch::views
