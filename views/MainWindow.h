#pragma once
// The studio window: editor in the centre, analysis docks around it.
//   file -> CodeEditor -> CompileController (worker) -> Resources / Problems / PTX docks
//                      -> indexCudaSource (worker)   -> Outline dock
//   DriverApi probe (worker) -> Device dock
//                      -> liftFile (worker) -> Graph dock -> rubric::scoreSchedule (worker) -> Rubric dock
//                                              (drawing: GraphView, kernels of the scored or agents' schedule)
// Every dock shows what the last current job produced; stale jobs never reach the window.

#include "core/arch/ArchDatabase.h"
#include "core/cuda/NvrtcCompiler.h"
#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/SourceExpansion.h"
#include "core/schedule/Schedule.h"

#include <QMainWindow>
#include <QMap>
#include <QMessageBox>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

QT_BEGIN_NAMESPACE
class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QSettings;
class QStackedWidget;
class QTabWidget;
class QTimer;
class QTreeView;
QT_END_NAMESPACE

namespace stitch::frontend {
struct LiftedProgram;
}
namespace stitch::rubric {
class CompileCache;
class Rubric;
}
namespace stitch::storage {
struct InputChoice;
struct Project;
} // namespace stitch::storage

namespace stitch::views {

class CodeDiffController;
class CodeDiffView;
class CodeEditor;
class CompileController;
class AgentsPanel;
class DecisionsPanel;
class OptimizeController;
class ProjectController;
class GeneratedPanel;
class GraphModel;
class GraphPanel;
class DevicePanel;
class DiagnosticsModel;
class KernelOutlineModel;
class KernelResourcesModel;
class RecentFiles;
class ResourcesPanel;
class RetrainController;
class TrainingPanel;
class RubricPanel;
class WelcomePage;
class RunController;
class RunPanel;
class SyntaxRepository;
struct AsWrittenScores;

class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    /// Asked before unsaved changes would be lost: Save, Discard or Cancel. Tests replace it.
    using UnsavedChangesPrompt = std::function<QMessageBox::StandardButton(const QString &documentName)>;

    /// `syntax`, `database` and `recentFiles` must outlive the window.
    MainWindow(SyntaxRepository &syntax, const ArchDatabase &database, RecentFiles &recentFiles,
               QWidget *parent = nullptr);
    ~MainWindow() override;

    /// Loads a file without asking about unsaved changes; false with a message when it cannot.
    bool openFile(const QString &path, QString *errorMessage = nullptr);
    bool saveFile(const QString &path, QString *errorMessage = nullptr);
    QString currentFile() const { return m_currentFile; }

    /// Selects a target; false when it is not offered (not supported by NVRTC or not in the database).
    bool setArchitecture(const QString &arch);
    QString architecture() const;
    QStringList architectures() const;

    /// Asks about unsaved changes; true when it is fine to discard the document now.
    bool maybeSave();
    void setUnsavedChangesPrompt(UnsavedChangesPrompt prompt);

    /// True when no compile is pending or running and the last one has been shown.
    bool isCompileSettled() const;
    /// True when no scoring job for the Rubric dock is running or waiting.
    bool isRubricSettled() const { return !m_rubricRunning && !m_rubricPending; }

    CodeEditor *editor() const { return m_editor; }
    CodeEditor *ptxView() const { return m_ptxView; }
    CompileController *compiler() const { return m_compiler; }
    DiagnosticsModel *diagnosticsModel() const { return m_diagnostics; }
    KernelResourcesModel *resourcesModel() const { return m_resources; }
    KernelOutlineModel *outlineModel() const { return m_outline; }
    GraphModel *graphModel() const { return m_graph; }
    /// The Graph dock's tree (GraphModel); the drawing is graphPanel()->drawing().
    QTreeView *graphView() const { return m_graphView; }
    GraphPanel *graphPanel() const { return m_graphPanel; }
    QTreeView *problemsView() const { return m_problemsView; }
    QTreeView *outlineView() const { return m_outlineView; }
    ResourcesPanel *resourcesPanel() const { return m_resourcesPanel; }
    DevicePanel *devicePanel() const { return m_devicePanel; }
    RubricPanel *rubricPanel() const { return m_rubricPanel; }
    DecisionsPanel *decisionsPanel() const { return m_decisionsPanel; }
    GeneratedPanel *generatedPanel() const { return m_generatedPanel; }
    AgentsPanel *agentsPanel() const { return m_agentsPanel; }
    OptimizeController *optimizer() const { return m_optimizer; }
    QAction *optimizeAction() const { return m_optimizeAction; }
    /// Runs the agents on the editor's text (Ctrl+R); false with the reason in the Agents dock when
    /// there is nothing to optimize (an empty or unsaved-language document).
    bool optimize();
    void cancelOptimize();
    bool isOptimizing() const;
    /// The pins the next Optimize keeps (the Agents dock's overrides).
    QStringList optimizePins() const { return m_pins; }
    /// -I folders and -D macros (NAME or NAME=VALUE), as nvcc takes them, for the lift and Optimize
    /// of a .cu (quoted includes beside the file are always followed). False, with the malformed
    /// macro named in `errorMessage`, when a define is not NAME[=VALUE]; nothing changes then.
    bool setSourceOptions(const QStringList &includeDirs, const QStringList &defines, QString *errorMessage = nullptr);
    QStringList includeDirs() const { return m_includeDirs; }
    QStringList defines() const { return m_defines; }
    /// Build > Include Folders and Macros...: edits them in a dialog.
    void editSourceOptions();
    /// Values for sizes the source leaves open (a kernel alone: `int M, int N, int K`; a size read
    /// from argv): the lift, the rubric and Optimize use them as `--size NAME=V` would.
    void setSizeBindings(const QMap<QString, qint64> &sizes);
    QMap<QString, qint64> sizeBindings() const;
    /// The current lift's sizes without a value (neither in the source nor bound here).
    QStringList unboundSizes() const;
    /// Build > Sizes...: edits the bindings in a dialog, each open size offered with a default.
    void editSizes();
    /// The bindings so far and every open size at 1024: what the Sizes dialog and Optimize offer.
    QMap<QString, qint64> proposedSizes() const;
    /// The Sizes dialog over `proposed`; nullopt when cancelled.
    std::optional<QMap<QString, qint64>> askSizes(const QMap<QString, qint64> &proposed);
    /// Asked by Optimize for the sizes still open (names, proposed values); nullopt cancels. Tests replace it.
    using SizesPrompt = std::function<std::optional<QMap<QString, qint64>>(const QMap<QString, qint64> &proposed)>;
    void setSizesPrompt(SizesPrompt prompt) { m_sizesPrompt = std::move(prompt); }
    /// The generated program's view (GeneratedPanel::current).
    CodeEditor *generatedView() const;
    /// The central area's Code tab (views/MainWindowDiff.cpp): two programs of the last Optimize side by side.
    CodeDiffView *codeDiffView() const { return m_codeDiffView; }
    CodeDiffController *codeDiff() const { return m_codeDiff; }
    /// Shows the Code tab (true) or the Source tab (false) of the central area.
    void showCodeTab(bool code);
    bool isCodeTabShown() const;
    QString compileStatus() const;

    // The welcome page (MainWindowWelcome.cpp): the bundled examples and the recent files.
    /// Shows the welcome page in the central area (the studio started without a file, File > Welcome);
    /// the open document, if any, stays as it is behind it.
    void showWelcome();
    bool isWelcomeShown() const;
    WelcomePage *welcomePage() const { return m_welcome; }
    QAction *welcomeAction() const { return m_welcomeAction; }

    // Run and profile (MainWindowRun.cpp): the last Optimize's programs through the runner.
    RunPanel *runPanel() const { return m_runPanel; }
    RunController *runController() const { return m_runController; }
    QAction *runAction() const { return m_runAction; }
    /// Runs (F5) the optimized program and the one before it; false, said in the Run dock, before an Optimize.
    bool runPrograms();
    bool isRunSettled() const;

    // Projects (.stitchproj; MainWindowProject.cpp, ProjectController): the whole session in one file.
    /// Opens a project (openFile does too, for a .stitchproj); false with the reason, the damaged
    /// place listed in Problems and the current work untouched when it cannot be read.
    bool openProject(const QString &path, QString *errorMessage = nullptr);
    /// Writes the session to `path` atomically; false with the reason (the old file intact).
    bool saveProject(const QString &path, QString *errorMessage = nullptr);
    /// The session as a project document: what Save Project writes and autosave keeps.
    storage::Project projectSnapshot() const;
    ProjectController *project() const { return m_project; }
    /// Offers the newest autosave of a session that did not end cleanly (ProjectController's
    /// recovery prompt); true when it was restored.
    bool offerRecovery();

    // Layout (MainWindowLayout.cpp): docks, toolbars and the window's geometry kept between runs.
    /// Restores the layout `settings` holds (when it was saved by this layout version) and saves the
    /// window's layout there when it closes; null: nothing is kept (tests, screenshots).
    void setLayoutSettings(QSettings *settings);
    /// Writes the current layout to the layout settings (closeEvent does); false without settings.
    bool saveLayout() const;

    // Training (MainWindowTraining.cpp): the Training dock and Retrain with my overrides.
    TrainingPanel *trainingPanel() const { return m_trainingPanel; }
    RetrainController *retrainer() const { return m_retrainer; }
    QAction *openTrainingLogAction() const { return m_openTrainingLogAction; }
    /// Retrains the agents in use from the Agents dock's result (its pins) in the background, for
    /// the Training dock's number of updates; false with the reason in that dock when it cannot.
    bool retrainWithOverrides();

signals:
    /// The current compile job's outcome has been shown in every dock.
    void compileSettled();
    /// The outline was rebuilt from the current text.
    void outlineUpdated();
    /// The Graph dock shows the lift of the current text (a graph or why there is none).
    void graphUpdated();
    /// The Rubric, Decisions and Generated docks show the current lift's schedule (the default, or
    /// the user's overrides), its scores and its program (or why there are none).
    void rubricUpdated();
    /// An Optimize run ended: the Agents dock shows its trace, or why there is none.
    void optimizeSettled();
    /// A Run ended (shown in the Run dock), was cancelled, or had nothing to run.
    void runSettled();

protected:
    void closeEvent(QCloseEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    QIcon themeIcon(const char *name, int fallback) const;
    void createActions();
    void createMenus();
    void createToolBar();
    void createDocks();
    void createStatusBar();
    void createAgents();
    void createCodeDiff();
    void createWelcome();
    /// The central area shows the document's tabs (Source / Code) instead of the welcome page.
    void showDocument();
    void createTraining();
    void showAgentsInUse();
    void createRun();
    void onOptimizeProgress(quint64 runId, const QString &stage, const QString &agent, int decisions, int candidates,
                            int budget);
    void endOptimize(const QString &status);
    void updateRecentFilesMenu();
    void updateWindowTitle();
    void updateCursorStatus();

    void newFile();
    void openWithDialog();
    bool save();
    bool saveAs();
    void openRecent(const QString &path);
    void setCurrentFile(const QString &path);
    QString documentName() const;
    QString compileFileName() const;

    void onCompileStarted(quint64 jobId);
    void onCompileFinished(quint64 jobId, const cuda::CompileResult &result);
    void onCompileFailed(quint64 jobId, const Error &error);
    void showDiagnostics(const std::vector<Diagnostic> &diagnostics);
    void updateProblemsTitle();
    void scheduleOutline();
    void runOutline();
    void jumpToDiagnostic(const QModelIndex &index);
    void jumpToOutlineItem(const QModelIndex &index);
    void runLift();
    void runRubric();
    void overrideDecision(int group, const QString &key, int value);
    void resetDecisions();
    /// The Rubric, Decisions and Generated docks show the program as it stood at the Agents dock's
    /// timeline row (a decision: the schedule once it was taken; Stitch: the final one).
    void showAgentStep(int row);
    bool isCudaDocument() const;
    void compileIfCuda();
    void createGraphDock();
    /// The Graph dock's drawing shows the newest lift (or why there is none).
    void showLiftDrawing();
    /// The drawing's kernel regions: the groups of `schedule`, the schedule `whose` it is.
    void showGraphKernels(const schedule::Schedule &schedule, const QString &whose);
    void selectGraphItemSource(const QModelIndex &index);
    void jumpToKernel(const QString &name);
    void createProject();
    bool saveCurrentProject();
    bool saveProjectAs();
    void openProjectWithDialog();
    /// Opens `path` (a project or a source) after asking about unsaved changes; failures are told.
    void openInteractively(const QString &path);
    void restoreProject(const storage::Project &project, const storage::InputChoice &input, const QString &projectPath,
                        bool recovered);
    void applyRestoredProject();
    /// The lift's and Optimize's located errors in Problems (MainWindowProblems.cpp).
    void connectProblems();
    void showLiftProblems();
    /// A diagnostic located in another file (a header, a project file): shown read-only there.
    void showDiagnosticElsewhere(const Diagnostic &diagnostic);

    SyntaxRepository &m_syntax;
    const ArchDatabase &m_database;
    RecentFiles &m_recentFiles;
    UnsavedChangesPrompt m_prompt;

    CodeEditor *m_editor = nullptr;
    CodeEditor *m_ptxView = nullptr;
    CompileController *m_compiler = nullptr;
    DiagnosticsModel *m_diagnostics = nullptr;
    KernelResourcesModel *m_resources = nullptr;
    KernelOutlineModel *m_outline = nullptr;
    GraphModel *m_graph = nullptr;
    QTreeView *m_graphView = nullptr;
    GraphPanel *m_graphPanel = nullptr;
    QLabel *m_graphSummary = nullptr;
    ResourcesPanel *m_resourcesPanel = nullptr;
    DevicePanel *m_devicePanel = nullptr;
    QTreeView *m_problemsView = nullptr;
    QTreeView *m_outlineView = nullptr;
    QComboBox *m_archCombo = nullptr;
    QLabel *m_compileStatus = nullptr;
    QLabel *m_cursorStatus = nullptr;
    QMenu *m_recentMenu = nullptr;
    QMenu *m_viewMenu = nullptr;
    QDockWidget *m_outlineDock = nullptr;
    QDockWidget *m_deviceDock = nullptr;
    QDockWidget *m_ptxDock = nullptr;
    QDockWidget *m_resourcesDock = nullptr;
    QDockWidget *m_problemsDock = nullptr;
    QDockWidget *m_graphDock = nullptr;
    RubricPanel *m_rubricPanel = nullptr;
    QDockWidget *m_rubricDock = nullptr;
    DecisionsPanel *m_decisionsPanel = nullptr;
    QDockWidget *m_decisionsDock = nullptr;
    GeneratedPanel *m_generatedPanel = nullptr;
    QDockWidget *m_generatedDock = nullptr;
    bool m_docksSized = false;

    QAction *m_newAction = nullptr;
    QAction *m_openAction = nullptr;
    QAction *m_saveAction = nullptr;
    QAction *m_saveAsAction = nullptr;
    QAction *m_quitAction = nullptr;
    QAction *m_compileAction = nullptr;
    QAction *m_autoCompileAction = nullptr;
    QAction *m_optimizeAction = nullptr;
    QAction *m_sourceOptionsAction = nullptr;
    QAction *m_openProjectAction = nullptr;
    QAction *m_saveProjectAction = nullptr;
    QAction *m_saveProjectAsAction = nullptr;
    ProjectController *m_project = nullptr;
    QStringList m_includeDirs, m_defines;
    std::map<std::string, std::int64_t> m_sizeBindings; ///< sizes the user gave values to
    SizesPrompt m_sizesPrompt;
    frontend::SourceOptions m_sourceOptions; ///< the two above, parsed
    QAction *m_cancelOptimizeAction = nullptr;
    OptimizeController *m_optimizer = nullptr;
    AgentsPanel *m_agentsPanel = nullptr;
    QDockWidget *m_agentsDock = nullptr;
    CodeDiffView *m_codeDiffView = nullptr;
    CodeDiffController *m_codeDiff = nullptr;
    QTabWidget *m_centralTabs = nullptr;
    QStackedWidget *m_centralStack = nullptr;
    WelcomePage *m_welcome = nullptr;
    QAction *m_welcomeAction = nullptr;
    QLabel *m_optimizeStatus = nullptr;
    QProgressBar *m_optimizeProgress = nullptr;
    QStringList m_pins;
    TrainingPanel *m_trainingPanel = nullptr;
    QDockWidget *m_trainingDock = nullptr;
    RetrainController *m_retrainer = nullptr;
    QAction *m_openTrainingLogAction = nullptr;
    RunController *m_runController = nullptr;
    RunPanel *m_runPanel = nullptr;
    QDockWidget *m_runDock = nullptr;
    QAction *m_runAction = nullptr;
    QLabel *m_deviceStatus = nullptr;

    QString m_currentFile; ///< empty for an untitled document
    bool m_compileShown = false;
    QTimer *m_outlineTimer = nullptr;
    QSettings *m_layoutSettings = nullptr; ///< setLayoutSettings: where the layout is kept
    quint64 m_outlineJob = 0;
    quint64 m_liftJob = 0;
    /// The newest lift (success or error) the Rubric dock scores; one scoring job runs at a time and
    /// a request while it runs is coalesced into one more (NVRTC takes seconds for a GEMM).
    std::shared_ptr<const Result<frontend::LiftedProgram>> m_lifted;
    std::shared_ptr<const std::string> m_liftedSource; ///< the text m_lifted came from
    std::shared_ptr<rubric::CompileCache> m_rubricCache;
    std::shared_ptr<const rubric::Rubric> m_rubric;
    bool m_rubricRunning = false;
    bool m_rubricPending = false;
    schedule::Schedule m_scoredSchedule;        ///< the schedule of the last scoring job
    std::optional<schedule::Schedule> m_userSchedule; ///< with the user's overrides (until the next lift)
    QString m_agentStep; ///< when m_userSchedule is an agents' step: which ("the agents' schedule after step 3")
    std::vector<std::string> m_overridden;      ///< "group.key" of each override
    /// The program as written on the Rubric dock's radar: scored once per text and architecture
    /// (the scoring job computes it when these do not match the job's lift and architecture).
    std::shared_ptr<const AsWrittenScores> m_asWritten;
    std::shared_ptr<const std::string> m_asWrittenSource;
    QString m_asWrittenArch;
};

} // namespace stitch::views
