#include "views/MainWindow.h"

#include "views/CodeEditor.h"
#include "views/CompileController.h"
#include "views/DecisionsPanel.h"
#include "views/GeneratedPanel.h"
#include "views/DevicePanel.h"
#include "views/DiagnosticsModel.h"
#include "views/GraphModel.h"
#include "views/GraphPanel.h"
#include "views/KernelOutlineModel.h"
#include "views/KernelResourcesModel.h"
#include "views/RecentFiles.h"
#include "views/ResourcesPanel.h"
#include "views/RubricPanel.h"
#include "views/SyntaxRepository.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QScrollBar>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <QProgressBar>
#include <QTreeView>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace stitch::views {

namespace {

// The studio ships no translations, so tr()'s %n plural forms would print "kernel(s)".
QString countText(int count, const QString &singular, const QString &plural)
{
    return QStringLiteral("%1 %2").arg(count).arg(count == 1 ? singular : plural);
}

} // namespace

MainWindow::MainWindow(SyntaxRepository &syntax, const ArchDatabase &database, RecentFiles &recentFiles,
                       QWidget *parent)
    : QMainWindow(parent), m_syntax(syntax), m_database(database), m_recentFiles(recentFiles),
      m_editor(new CodeEditor(syntax, this)), m_compiler(new CompileController(this)),
      m_diagnostics(new DiagnosticsModel(this)), m_resources(new KernelResourcesModel(database, this)),
      m_outline(new KernelOutlineModel(this)), m_graph(new GraphModel(this)), m_outlineTimer(new QTimer(this))
{
    m_prompt = [this](const QString &name) {
        return QMessageBox::warning(this, tr("Unsaved changes"), tr("%1 has unsaved changes. Save them?").arg(name),
                                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    };

    setObjectName(QStringLiteral("StitchCudaStudioMainWindow"));
    m_editor->setObjectName(QStringLiteral("sourceEditor"));
    setCentralWidget(m_editor);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

    createActions();
    createDocks();
    createAgents();
    createTraining();
    createProject();
    createMenus();
    createToolBar();
    createStatusBar();
    createCodeDiff();
    createWelcome();
    createRun();

    m_compiler->setDocument(m_editor->document());
    connect(m_compiler, &CompileController::started, this, &MainWindow::onCompileStarted);
    connect(m_compiler, &CompileController::finished, this, &MainWindow::onCompileFinished);
    connect(m_compiler, &CompileController::failed, this, &MainWindow::onCompileFailed);

    m_outlineTimer->setSingleShot(true);
    m_outlineTimer->setInterval(300);
    connect(m_outlineTimer, &QTimer::timeout, this, &MainWindow::runOutline);
    connect(m_editor->document(), &QTextDocument::contentsChanged, this, &MainWindow::scheduleOutline);
    connect(m_editor->document(), &QTextDocument::modificationChanged, this, &MainWindow::updateWindowTitle);
    connect(m_editor, &QPlainTextEdit::cursorPositionChanged, this, &MainWindow::updateCursorStatus);
    connect(&m_recentFiles, &RecentFiles::changed, this, &MainWindow::updateRecentFilesMenu);
    connectProblems();

    setCurrentFile({});
    updateRecentFilesMenu();
    updateCursorStatus();
    // Deferred so a caller can still swap the probe (tests) before it starts.
    QTimer::singleShot(0, m_devicePanel, &DevicePanel::refresh);
    resize(1400, 900);
}

MainWindow::~MainWindow() = default;

QIcon MainWindow::themeIcon(const char *name, int fallback) const
{
    // Desktops without an icon theme (and the offscreen platform) still get recognisable icons.
    return QIcon::fromTheme(QLatin1String(name), style()->standardIcon(static_cast<QStyle::StandardPixmap>(fallback)));
}

void MainWindow::createActions()
{
    m_newAction = new QAction(themeIcon("document-new", QStyle::SP_FileIcon), tr("&New"), this);
    m_newAction->setShortcut(QKeySequence::New);
    connect(m_newAction, &QAction::triggered, this, &MainWindow::newFile);

    m_openAction = new QAction(themeIcon("document-open", QStyle::SP_DialogOpenButton), tr("&Open…"), this);
    m_openAction->setShortcut(QKeySequence::Open);
    connect(m_openAction, &QAction::triggered, this, &MainWindow::openWithDialog);

    // Ctrl+S and Ctrl+Shift+S save the project (createProject); these write the source file alone.
    m_saveAction = new QAction(themeIcon("document-save", QStyle::SP_DialogSaveButton), tr("Save &Source"), this);
    connect(m_saveAction, &QAction::triggered, this, &MainWindow::save);

    m_saveAsAction =
        new QAction(themeIcon("document-save-as", QStyle::SP_DialogSaveButton), tr("Save Source &As…"), this);
    connect(m_saveAsAction, &QAction::triggered, this, &MainWindow::saveAs);

    m_welcomeAction = new QAction(tr("&Welcome"), this);
    m_welcomeAction->setObjectName(QStringLiteral("welcomeAction"));
    m_welcomeAction->setToolTip(tr("The bundled examples and the recent files"));
    connect(m_welcomeAction, &QAction::triggered, this, &MainWindow::showWelcome);

    m_quitAction = new QAction(tr("&Quit"), this);
    m_quitAction->setShortcut(QKeySequence::Quit);
    connect(m_quitAction, &QAction::triggered, this, &QWidget::close);

    m_compileAction = new QAction(themeIcon("run-build", QStyle::SP_MediaPlay), tr("&Compile"), this);
    m_compileAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    m_compileAction->setToolTip(tr("Compile with NVRTC (Ctrl+B)"));
    connect(m_compileAction, &QAction::triggered, m_compiler, &CompileController::compileDocument);

    m_autoCompileAction = new QAction(tr("&Auto-compile on Edit"), this);
    m_autoCompileAction->setCheckable(true);
    m_autoCompileAction->setChecked(m_compiler->autoCompile());
    connect(m_autoCompileAction, &QAction::toggled, m_compiler, &CompileController::setAutoCompile);
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_welcomeAction);
    file->addSeparator();
    file->addAction(m_newAction);
    file->addAction(m_openAction);
    file->addAction(m_openProjectAction);
    file->addAction(m_openTrainingLogAction);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addSeparator();
    file->addAction(m_saveProjectAction);
    file->addAction(m_saveProjectAsAction);
    file->addAction(m_saveAction);
    file->addAction(m_saveAsAction);
    file->addSeparator();
    file->addAction(m_quitAction);

    QMenu *build = menuBar()->addMenu(tr("&Build"));
    build->addAction(m_compileAction);
    build->addAction(m_autoCompileAction);
    build->addSeparator();
    build->addAction(m_optimizeAction);
    build->addAction(m_cancelOptimizeAction);
    build->addSeparator();
    m_sourceOptionsAction = build->addAction(tr("&Include Folders and Macros..."), this, &MainWindow::editSourceOptions);
    m_sourceOptionsAction->setObjectName(QStringLiteral("sourceOptionsAction"));
    build->addAction(tr("&Sizes..."), this, &MainWindow::editSizes)->setObjectName(QStringLiteral("sizesAction"));

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    for (auto *dock : findChildren<QDockWidget *>())
        m_viewMenu->addAction(dock->toggleViewAction());
}

void MainWindow::createToolBar()
{
    QToolBar *bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(m_openAction);
    bar->addAction(m_saveProjectAction);
    bar->addSeparator();
    bar->addAction(m_compileAction);
    bar->addAction(m_optimizeAction);
    bar->addAction(m_cancelOptimizeAction);

    m_archCombo = new QComboBox(this);
    m_archCombo->setObjectName(QStringLiteral("architectureCombo"));
    m_archCombo->setToolTip(tr("Target architecture: supported by this NVRTC and known to the architecture database"));
    const auto supported = cuda::supportedArchitectures();
    for (const auto &limits : m_database.architectures()) {
        if (std::find(supported.begin(), supported.end(), limits.name) == supported.end())
            continue;
        m_archCombo->addItem(
            QStringLiteral("%1  (%2)").arg(QString::fromStdString(limits.name), QString::fromStdString(limits.family)),
            QString::fromStdString(limits.name));
    }
    auto *label = new QLabel(tr("  Architecture: "), this);
    label->setBuddy(m_archCombo);
    bar->addWidget(label);
    bar->addWidget(m_archCombo);
    connect(m_archCombo, &QComboBox::currentIndexChanged, this, [this] {
        const QString arch = architecture();
        m_devicePanel->setArchitecture(arch);
        m_compiler->setArchitecture(arch);
        if (m_rubricPanel)
            runRubric();
    });
    // sm_90 is the default: the H200 machines the optimizer targets.
    if (!setArchitecture(QStringLiteral("sm_90")) && m_archCombo->count() > 0)
        m_archCombo->setCurrentIndex(m_archCombo->count() - 1);
    m_compiler->setArchitecture(architecture());
    m_devicePanel->setArchitecture(architecture());
}

void MainWindow::createDocks()
{
    auto makeDock = [this](const QString &title, const QString &name, QWidget *widget, Qt::DockWidgetArea area) {
        auto *dock = new QDockWidget(title, this);
        dock->setObjectName(name);
        dock->setWidget(widget);
        addDockWidget(area, dock);
        return dock;
    };

    m_outlineView = new QTreeView(this);
    m_outlineView->setObjectName(QStringLiteral("outlineView"));
    m_outlineView->setModel(m_outline);
    m_outlineView->setUniformRowHeights(true);
    m_outlineView->header()->setStretchLastSection(false);
    m_outlineView->header()->setSectionResizeMode(KernelOutlineModel::NameColumn, QHeaderView::Stretch);
    m_outlineView->header()->setSectionResizeMode(KernelOutlineModel::LineColumn, QHeaderView::ResizeToContents);
    connect(m_outlineView, &QTreeView::clicked, this, &MainWindow::jumpToOutlineItem);
    connect(m_outlineView, &QTreeView::activated, this, &MainWindow::jumpToOutlineItem);
    connect(m_outline, &QAbstractItemModel::modelReset, m_outlineView, &QTreeView::expandAll);
    auto *outlineDock = makeDock(tr("Outline"), QStringLiteral("outlineDock"), m_outlineView, Qt::LeftDockWidgetArea);

    m_devicePanel = new DevicePanel(m_database, this);
    m_devicePanel->setObjectName(QStringLiteral("devicePanel"));
    auto *deviceDock = makeDock(tr("Device"), QStringLiteral("deviceDock"), m_devicePanel, Qt::LeftDockWidgetArea);
    splitDockWidget(outlineDock, deviceDock, Qt::Vertical);

    m_ptxView = new CodeEditor(m_syntax, this);
    m_ptxView->setObjectName(QStringLiteral("ptxView"));
    m_ptxView->setReadOnly(true);
    m_ptxView->setDefinition(m_syntax.ptxDefinition());
    m_ptxView->setPlaceholderText(tr("PTX appears here after a successful compile."));
    auto *ptxDock = makeDock(tr("PTX"), QStringLiteral("ptxDock"), m_ptxView, Qt::RightDockWidgetArea);

    m_resourcesPanel = new ResourcesPanel(m_resources, this);
    m_resourcesPanel->setObjectName(QStringLiteral("resourcesPanel"));
    m_resourcesPanel->setSummary(tr("Compile a file to see the resources of its kernels."));
    connect(m_resourcesPanel, &ResourcesPanel::kernelActivated, this, &MainWindow::jumpToKernel);
    auto *resourcesDock =
        makeDock(tr("Resources"), QStringLiteral("resourcesDock"), m_resourcesPanel, Qt::BottomDockWidgetArea);

    m_problemsView = new QTreeView(this);
    m_problemsView->setObjectName(QStringLiteral("problemsView"));
    m_problemsView->setModel(m_diagnostics);
    m_problemsView->setRootIsDecorated(false);
    m_problemsView->setUniformRowHeights(true);
    m_problemsView->setAlternatingRowColors(true);
    m_problemsView->header()->setSectionResizeMode(DiagnosticsModel::SeverityColumn, QHeaderView::ResizeToContents);
    m_problemsView->header()->setSectionResizeMode(DiagnosticsModel::LocationColumn, QHeaderView::ResizeToContents);
    connect(m_problemsView, &QTreeView::clicked, this, &MainWindow::jumpToDiagnostic);
    connect(m_problemsView, &QTreeView::activated, this, &MainWindow::jumpToDiagnostic);
    auto *problemsDock =
        makeDock(tr("Problems"), QStringLiteral("problemsDock"), m_problemsView, Qt::BottomDockWidgetArea);
    splitDockWidget(resourcesDock, problemsDock, Qt::Horizontal);

    createGraphDock();
    tabifyDockWidget(ptxDock, m_graphDock);

    m_rubricPanel = new RubricPanel(this);
    m_rubricPanel->setObjectName(QStringLiteral("rubricPanel"));
    m_rubricDock = makeDock(tr("Rubric"), QStringLiteral("rubricDock"), m_rubricPanel, Qt::RightDockWidgetArea);
    tabifyDockWidget(m_graphDock, m_rubricDock);

    m_decisionsPanel = new DecisionsPanel(this);
    m_decisionsPanel->setObjectName(QStringLiteral("decisionsPanel"));
    connect(m_decisionsPanel, &DecisionsPanel::decisionChanged, this, &MainWindow::overrideDecision);
    connect(m_decisionsPanel, &DecisionsPanel::resetRequested, this, &MainWindow::resetDecisions);
    m_decisionsDock =
        makeDock(tr("Decisions"), QStringLiteral("decisionsDock"), m_decisionsPanel, Qt::RightDockWidgetArea);
    tabifyDockWidget(m_rubricDock, m_decisionsDock);

    m_generatedPanel = new GeneratedPanel(m_syntax, this);
    m_generatedPanel->setObjectName(QStringLiteral("generatedPanel"));
    m_generatedDock =
        makeDock(tr("Generated"), QStringLiteral("generatedDock"), m_generatedPanel, Qt::RightDockWidgetArea);
    tabifyDockWidget(m_decisionsDock, m_generatedDock);
    m_rubricDock->raise();

    m_outlineDock = outlineDock;
    m_deviceDock = deviceDock;
    m_ptxDock = ptxDock;
    m_resourcesDock = resourcesDock;
    m_problemsDock = problemsDock;
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (m_docksSized)
        return;
    m_docksSized = true;
    // Proportions of the first shown size, so the editor keeps the most room at any window size.
    const int w = width();
    const int h = height();
    resizeDocks({m_outlineDock, m_ptxDock}, {w * 20 / 100, w * 31 / 100}, Qt::Horizontal);
    resizeDocks({m_outlineDock, m_deviceDock}, {h * 40 / 100, h * 45 / 100}, Qt::Vertical);
    resizeDocks({m_resourcesDock}, {h * 25 / 100}, Qt::Vertical);
    resizeDocks({m_resourcesDock, m_problemsDock}, {w * 57 / 100, w * 43 / 100}, Qt::Horizontal);
}

void MainWindow::createStatusBar()
{
    m_compileStatus = new QLabel(this);
    m_compileStatus->setObjectName(QStringLiteral("compileStatus"));
    m_cursorStatus = new QLabel(this);
    statusBar()->addWidget(m_compileStatus, 1);
    statusBar()->addPermanentWidget(m_optimizeStatus);
    statusBar()->addPermanentWidget(m_optimizeProgress);
    statusBar()->addPermanentWidget(m_cursorStatus);
    m_compileStatus->setText(tr("Ready"));
}

void MainWindow::updateCursorStatus()
{
    m_cursorStatus->setText(tr("Ln %1, Col %2").arg(m_editor->currentLine()).arg(m_editor->currentColumn()));
}

QString MainWindow::compileStatus() const
{
    return m_compileStatus->text();
}

CodeEditor *MainWindow::generatedView() const
{
    return m_generatedPanel->current();
}

bool MainWindow::setArchitecture(const QString &arch)
{
    const int index = m_archCombo->findData(arch);
    if (index < 0)
        return false;
    m_archCombo->setCurrentIndex(index);
    return true;
}

QString MainWindow::architecture() const
{
    return m_archCombo->currentData().toString();
}

QStringList MainWindow::architectures() const
{
    QStringList archs;
    for (int i = 0; i < m_archCombo->count(); ++i)
        archs << m_archCombo->itemData(i).toString();
    return archs;
}

bool MainWindow::isCompileSettled() const
{
    return m_compileShown && !m_compiler->isRunning();
}

void MainWindow::onCompileStarted(quint64)
{
    m_compileShown = false;
    m_compileStatus->setText(tr("Compiling %1 for %2…").arg(documentName(), architecture()));
}

void MainWindow::onCompileFinished(quint64, const cuda::CompileResult &result)
{
    const QString arch = architecture();
    m_resources->setKernels(result.kernels, arch);
    showDiagnostics(result.diagnostics);

    // Keep the reader's place in the PTX when a recompile changes little.
    const int scroll = m_ptxView->verticalScrollBar()->value();
    m_ptxView->setPlainText(QString::fromStdString(result.ptx));
    m_ptxView->verticalScrollBar()->setValue(scroll);

    const int warnings = m_diagnostics->count(DiagnosticsModel::Origin::Compile, Severity::Warning);
    const QString kernels = countText(static_cast<int>(result.kernels.size()), tr("kernel"), tr("kernels"));
    const QString time = tr("%1 ms").arg(result.compileMs, 0, 'f', 0);
    m_resourcesPanel->setSummary(tr("%1 for %2, compiled in %3").arg(kernels, arch, time));
    m_compileStatus->setText(
        warnings > 0
            ? tr("Compiled in %1: %2, %3").arg(time, kernels, countText(warnings, tr("warning"), tr("warnings")))
            : tr("Compiled in %1: %2").arg(time, kernels));
    m_compileShown = true;
    emit compileSettled();
}

void MainWindow::onCompileFailed(quint64, const Error &error)
{
    m_resources->clear();
    m_diagnostics->setError(error);
    updateProblemsTitle();
    m_editor->setDiagnostics(m_diagnostics->editorMarks(compileFileName()));
    m_ptxView->clear();

    const int errors = m_diagnostics->count(DiagnosticsModel::Origin::Compile, Severity::Error);
    m_resourcesPanel->setSummary(tr("Compile failed: no resources. See Problems."));
    if (error.kind == ErrorKind::Compile)
        m_compileStatus->setText(tr("Compile failed: %1").arg(countText(errors, tr("error"), tr("errors"))));
    else
        m_compileStatus->setText(tr("Compile failed: %1").arg(QString::fromStdString(error.message)));
    m_compileShown = true;
    emit compileSettled();
}

void MainWindow::updateProblemsTitle()
{
    const int errors = m_diagnostics->count(Severity::Error);
    const int warnings = m_diagnostics->count(Severity::Warning);
    QStringList parts;
    if (errors > 0)
        parts << countText(errors, tr("error"), tr("errors"));
    if (warnings > 0)
        parts << countText(warnings, tr("warning"), tr("warnings"));
    m_problemsDock->setWindowTitle(parts.isEmpty() ? tr("Problems")
                                                   : tr("Problems: %1").arg(parts.join(QStringLiteral(", "))));
}

void MainWindow::showDiagnostics(const std::vector<Diagnostic> &diagnostics)
{
    m_diagnostics->setDiagnostics(diagnostics);
    updateProblemsTitle();
    m_editor->setDiagnostics(m_diagnostics->editorMarks(compileFileName()));
}

void MainWindow::scheduleOutline()
{
    m_outlineTimer->start();
}

void MainWindow::runOutline()
{
    m_outlineTimer->stop();
    // tree-sitter is fast, but a large file would still stall typing: index on a worker and
    // keep only the newest result.
    const quint64 job = ++m_outlineJob;
    auto *watcher = new QFutureWatcher<frontend::SourceIndex>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, job] {
        watcher->deleteLater();
        if (job != m_outlineJob)
            return;
        m_outline->setIndex(watcher->result());
        emit outlineUpdated();
    });
    runLift();
    watcher->setFuture(
        QtConcurrent::run([source = m_editor->toPlainText().toStdString(), fileName = compileFileName().toStdString()] {
            return frontend::indexCudaSource(source, fileName);
        }));
}

void MainWindow::jumpToDiagnostic(const QModelIndex &index)
{
    const Diagnostic *d = m_diagnostics->diagnostic(m_diagnostics->index(index.row(), 0));
    if (!d || !d->location.known())
        return;
    // Diagnostics inside an included header or a project file point at another file: shown there.
    const QString file = QFileInfo(QString::fromStdString(d->location.file)).fileName();
    if (!file.isEmpty() && file != QFileInfo(compileFileName()).fileName()) {
        showDiagnosticElsewhere(*d);
        return;
    }
    m_editor->goToLocation(d->location.line, d->location.column);
}

void MainWindow::runLift()
{
    // The Parse agent's lift of the same text, on a worker; only the newest result is shown.
    using LiftResult = std::shared_ptr<Result<frontend::LiftedProgram>>;
    const quint64 job = ++m_liftJob;
    auto source = std::make_shared<const std::string>(m_editor->toPlainText().toStdString());
    auto *watcher = new QFutureWatcher<LiftResult>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, job, source] {
        watcher->deleteLater();
        if (job != m_liftJob)
            return;
        const LiftResult result = watcher->result();
        m_graph->setLiftResult(*result);
        m_graphSummary->setText(m_graph->summary());
        emit graphUpdated();
        if (m_liftedSource && *m_liftedSource == *source)
            return; // the same text lifted again (outline refresh): its schedule and scores stand
        m_liftedSource = source;
        m_lifted = result;
        showLiftDrawing();
        m_userSchedule.reset(); // the overrides were for the previous text
        m_agentStep.clear();
        m_overridden.clear();
        runRubric();
    });
    watcher->setFuture(QtConcurrent::run([source, fileName = compileFileName().toStdString(), options = m_sourceOptions,
                                          bindings = m_sizeBindings] {
        auto result = std::make_shared<Result<frontend::LiftedProgram>>(frontend::liftFile(*source, fileName, options));
        // Sizes the source leaves open take the values the user gave (Build > Sizes).
        if (result->ok()) {
            for (const std::string &name : (*result)->graph.sizeVars()) {
                if (!(*result)->sizes.count(name) && bindings.count(name))
                    (*result)->sizes[name] = bindings.at(name);
            }
        }
        return result;
    }));
}

void MainWindow::selectGraphItemSource(const QModelIndex &index)
{
    const QModelIndex first = index.siblingAtColumn(GraphModel::TextColumn);
    const int line = first.data(GraphModel::BeginLineRole).toInt();
    if (line <= 0)
        return;
    m_editor->selectRange(line, first.data(GraphModel::BeginColumnRole).toInt(),
                          first.data(GraphModel::EndLineRole).toInt(), first.data(GraphModel::EndColumnRole).toInt());
}

void MainWindow::jumpToOutlineItem(const QModelIndex &index)
{
    const int line = index.data(KernelOutlineModel::LineRole).toInt();
    if (line > 0)
        m_editor->goToLocation(line, index.data(KernelOutlineModel::ColumnRole).toInt());
}

void MainWindow::jumpToKernel(const QString &name)
{
    for (const auto &k : m_outline->sourceIndex().kernels) {
        if (QString::fromStdString(k.name) == name && k.nameLocation.known()) {
            m_editor->goToLocation(k.nameLocation.line, k.nameLocation.column);
            return;
        }
    }
}

} // namespace stitch::views
