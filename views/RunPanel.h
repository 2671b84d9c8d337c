#pragma once
// The Run dock: the last Optimize's programs run on the local GPU through the runner, or, without
// one, timed by the performance model and marked estimated everywhere.
//   Run (F5) -> RunController (runner thread) -> RunReport -> time chart, tables, roofline
// The panel shows; MainWindowRun.cpp decides what runs and when.

#include "views/RunJobs.h"

#include <QWidget>

#include <memory>

QT_BEGIN_NAMESPACE
class QLabel;
class QTabWidget;
class QToolButton;
class QTreeView;
class QAction;
QT_END_NAMESPACE

namespace stitch::views {

class RooflineChart;
class RunHistoryModel;
class RunMetricsModel;
class RunTimeChart;
class RunTimesModel;
class RunVerificationModel;

class RunPanel final : public QWidget {
    Q_OBJECT
public:
    /// `runAction` and `cancelAction` are the window's (F5 and its cancel): the panel's buttons.
    RunPanel(QAction *runAction, QAction *cancelAction, QWidget *parent = nullptr);

    void setMessage(const QString &message);
    QString message() const;
    /// Shows a run's outcome in every view (null clears them).
    void setReport(std::shared_ptr<const RunReport> report);
    const RunReport *report() const { return m_report.get(); }

    RunTimesModel *timesModel() const { return m_times; }
    RunVerificationModel *verificationModel() const { return m_verification; }
    RunMetricsModel *metricsModel() const { return m_metrics; }
    RunTimeChart *timeChart() const { return m_timeChart; }
    RooflineChart *roofline() const { return m_roofline; }
    QTabWidget *tables() const { return m_tabs; }
    /// The project's measurements, in the History tab.
    RunHistoryModel *historyModel() const { return m_history; }

private:
    QLabel *m_message = nullptr;
    RunTimesModel *m_times = nullptr;
    RunVerificationModel *m_verification = nullptr;
    RunMetricsModel *m_metrics = nullptr;
    RunHistoryModel *m_history = nullptr;
    RunTimeChart *m_timeChart = nullptr;
    RooflineChart *m_roofline = nullptr;
    QTabWidget *m_tabs = nullptr;
    std::shared_ptr<const RunReport> m_report;
};

} // namespace stitch::views
