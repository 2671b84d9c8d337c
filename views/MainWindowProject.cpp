// MainWindow's projects: File > Open Project, Save Project (Ctrl+S), Save Project As, drops of
// files on the window, the session as a project document and its restore, and the recovery offer.
//   session -> projectSnapshot -> ProjectController::save (QSaveFile) / autosave
//   .stitchproj -> ProjectController::read -> chooseInput -> restoreProject (text, arch, -I/-D,
//   sizes, pins) -> lift (worker) -> applyRestoredProject (trace, step, overrides) -> clean
#include "views/MainWindow.h"

#include "views/AgentsPanel.h"
#include "views/CodeEditor.h"
#include "views/DiagnosticsModel.h"
#include "views/GeneratedPanel.h"
#include "views/OptimizeController.h"
#include "views/ProjectController.h"
#include "views/RecentFiles.h"
#include "views/RubricPanel.h"

#include "core/rubric/Rubric.h"
#include "core/storage/ProjectFile.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMimeData>
#include <QStyle>
#include <QTimer>

namespace stitch::views {

namespace {

const QString ProjectFilter = QStringLiteral("StitchCUDA projects (*.stitchproj);;All files (*)");

/// Opens a local file dropped on the window or the editor (a project or a source); other drops
/// (text dragged within the editor) pass through.
class DropOpener final : public QObject {
public:
    DropOpener(std::function<void(const QString &)> open, QObject *parent) : QObject(parent), m_open(std::move(open)) {}

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
            auto *drag = static_cast<QDropEvent *>(event);
            if (localFile(drag->mimeData()).isEmpty())
                return QObject::eventFilter(watched, event);
            drag->acceptProposedAction();
            return true;
        }
        if (event->type() == QEvent::Drop) {
            auto *drop = static_cast<QDropEvent *>(event);
            const QString path = localFile(drop->mimeData());
            if (path.isEmpty())
                return QObject::eventFilter(watched, event);
            drop->acceptProposedAction();
            // After the drop returns: opening may ask about unsaved changes in a modal dialog.
            QTimer::singleShot(0, this, [this, path] { m_open(path); });
            return true;
        }
        return QObject::eventFilter(watched, event);
    }

private:
    static QString localFile(const QMimeData *mime)
    {
        if (!mime || !mime->hasUrls())
            return {};
        for (const QUrl &url : mime->urls()) {
            if (url.isLocalFile())
                return url.toLocalFile();
        }
        return {};
    }

    std::function<void(const QString &)> m_open;
};

storage::ProjectReport rubricReport(const rubric::ScheduleScore &score, const QString &whose)
{
    storage::ProjectReport r;
    r.schedule = whose.toStdString();
    r.predictedMs = score.report.predictedMs;
    r.note = score.report.calibration;
    for (const rubric::RubricScore &s : score.report.program)
        r.scores.push_back({s.dimension, s.score, std::string(), s.sentence, s.evidence});
    return r;
}

storage::ProjectReport asWrittenReport(const AsWrittenScores &scores)
{
    storage::ProjectReport r;
    r.schedule = "the program as written";
    r.note = scores.note.toStdString();
    for (std::size_t i = 0; i < scores.scores.size(); ++i) {
        const rubric::RubricScore &s = scores.scores[i];
        const auto source = i < scores.sources.size() ? scores.sources[i] : AsWrittenScores::Source::Code;
        r.scores.push_back({s.dimension, s.score,
                            source == AsWrittenScores::Source::Code              ? "code"
                            : source == AsWrittenScores::Source::GenericSchedule ? "generic_schedule"
                                                                                 : "does_not_apply",
                            s.sentence, s.evidence});
    }
    return r;
}

/// What the user reads when a project cannot be opened: what is wrong, where, and that nothing changed.
QString openFailureText(const QString &path, const Error &error)
{
    const QString name = QFileInfo(path).fileName();
    const QString where = error.location && error.location->known()
                              ? QString::fromStdString(error.location->toString()) + QStringLiteral(": ")
                              : QString();
    const QString message = where + QString::fromStdString(error.message);
    switch (error.kind) {
    case ErrorKind::Unsupported:
        return MainWindow::tr(
                   "%1 was written by a newer version of StitchCUDA Studio and cannot be opened here.\n\n%2\n\n"
                   "Nothing was changed.")
            .arg(name, message);
    case ErrorKind::Parse:
        return MainWindow::tr("%1 is damaged or is not a StitchCUDA project.\n\n%2\n\nNothing was changed; the place "
                              "is listed in Problems.")
            .arg(name, message);
    default:
        return MainWindow::tr("%1 cannot be opened: %2").arg(name, message);
    }
}

} // namespace

void MainWindow::createProject()
{
    m_project = new ProjectController([this] { return projectSnapshot(); }, this);
    m_project->setMessageSink(
        [this](const QString &title, const QString &text) { QMessageBox::warning(this, title, text); });
    m_project->setRecoveryPrompt([this](const ProjectController::Recovery &r) {
        const QString what = r.projectPath.isEmpty()
                                 ? tr("An untitled session")
                                 : tr("The project %1").arg(QDir::toNativeSeparators(r.projectPath));
        return QMessageBox::question(
                   this, tr("Recover unsaved work?"),
                   tr("%1 was not closed cleanly; it was autosaved at %2 with changes that were "
                      "never saved.\n\nRestore it?")
                       .arg(what, QLocale().toString(r.autosaved.toLocalTime(), QLocale::ShortFormat)),
                   QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes) == QMessageBox::Yes;
    });

    m_openProjectAction =
        new QAction(themeIcon("document-open", QStyle::SP_DialogOpenButton), tr("Open &Project…"), this);
    m_openProjectAction->setObjectName(QStringLiteral("openProjectAction"));
    connect(m_openProjectAction, &QAction::triggered, this, &MainWindow::openProjectWithDialog);
    m_saveProjectAction =
        new QAction(themeIcon("document-save", QStyle::SP_DialogSaveButton), tr("&Save Project"), this);
    m_saveProjectAction->setObjectName(QStringLiteral("saveProjectAction"));
    m_saveProjectAction->setShortcut(QKeySequence::Save);
    m_saveProjectAction->setToolTip(tr("Save the source, the architecture, the build settings, the agents' trace and "
                                       "your overrides in one project file (Ctrl+S)"));
    connect(m_saveProjectAction, &QAction::triggered, this, &MainWindow::saveCurrentProject);
    m_saveProjectAsAction =
        new QAction(themeIcon("document-save-as", QStyle::SP_DialogSaveButton), tr("Save Project &As…"), this);
    m_saveProjectAsAction->setObjectName(QStringLiteral("saveProjectAsAction"));
    m_saveProjectAsAction->setShortcut(QKeySequence::SaveAs);
    connect(m_saveProjectAsAction, &QAction::triggered, this, &MainWindow::saveProjectAs);

    // The dirty state follows every edit of what a project holds.
    connect(m_project, &ProjectController::dirtyChanged, this, &MainWindow::updateWindowTitle);
    connect(m_project, &ProjectController::saved, this, &MainWindow::updateWindowTitle);
    connect(m_editor->document(), &QTextDocument::contentsChanged, m_project, &ProjectController::checkDirtySoon);
    connect(this, &MainWindow::rubricUpdated, m_project, &ProjectController::checkDirty);
    connect(this, &MainWindow::optimizeSettled, m_project, [this] { m_project->autosave(); });
    // Queued: after runLift's handler has reset the overrides for the new text, not before.
    connect(this, &MainWindow::graphUpdated, this, &MainWindow::applyRestoredProject, Qt::QueuedConnection);

    setAcceptDrops(true);
    auto *drops = new DropOpener([this](const QString &path) { openInteractively(path); }, this);
    installEventFilter(drops);
    m_editor->viewport()->installEventFilter(drops);
}

storage::Project MainWindow::projectSnapshot() const
{
    storage::Project p;
    const QString version = QCoreApplication::applicationVersion();
    p.savedBy = "StitchCUDA Studio" + (version.isEmpty() ? std::string() : " " + version.toStdString());
    p.input.path = m_currentFile.toStdString();
    p.input.text = m_editor->toPlainText().toStdString();
    p.arch = architecture().toStdString();
    for (const QString &d : m_includeDirs)
        p.includeDirs.push_back(d.toStdString());
    for (const QString &d : m_defines)
        p.defines.push_back(d.toStdString());
    p.sizes = m_sizeBindings;
    if (const agents::SourceResult *r = m_agentsPanel->result())
        p.agents = storage::ProjectAgents{r->trace, r->policy, r->program.source, m_agentsPanel->selectedStep()};
    for (const QString &pin : m_pins)
        p.overrides.pins.push_back(pin.toStdString());
    if (m_userSchedule && !m_overridden.empty()) { // the user's values (not an agents' step shown)
        p.overrides.schedule = *m_userSchedule;
        p.overrides.decisions = m_overridden;
    }
    if (const auto *score = m_rubricPanel->result(); score && score->ok())
        p.rubric = rubricReport(**score, m_rubricPanel->whose());
    if (m_asWritten && m_asWrittenSource == m_liftedSource && !m_asWritten->scores.empty())
        p.asWritten = asWrittenReport(*m_asWritten);
    p.measurements = m_project->measurements();
    return p;
}

bool MainWindow::openProject(const QString &path, QString *errorMessage)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    auto project = ProjectController::read(absolute);
    if (!project) {
        // Where the file is damaged, in Problems (a click shows the place); the session is as it was.
        m_diagnostics->setError(DiagnosticsModel::Origin::Project, project.error());
        updateProblemsTitle();
        if (errorMessage)
            *errorMessage = openFailureText(absolute, project.error());
        return false;
    }
    m_diagnostics->clear(DiagnosticsModel::Origin::Project);
    const storage::InputChoice input = storage::chooseInput(*project, absolute.toStdString());
    restoreProject(*project, input, absolute, false);
    m_recentFiles.add(absolute);
    return true;
}

bool MainWindow::saveProject(const QString &path, QString *errorMessage)
{
    if (m_project->isRestoring()) {
        if (errorMessage)
            *errorMessage = tr("The project is still being restored; save again in a moment.");
        return false;
    }
    if (!m_project->save(path, errorMessage))
        return false;
    m_recentFiles.add(m_project->path());
    updateWindowTitle();
    return true;
}

bool MainWindow::saveCurrentProject()
{
    if (!m_project->isOpen())
        return saveProjectAs();
    QString error;
    if (!saveProject(m_project->path(), &error)) {
        m_project->tell(tr("Cannot save the project"), error);
        return false;
    }
    return true;
}

bool MainWindow::saveProjectAs()
{
    QString suggestion = m_project->path();
    if (suggestion.isEmpty()) {
        const QFileInfo source(compileFileName());
        const QDir dir = m_currentFile.isEmpty() ? QDir::current() : source.absoluteDir();
        suggestion = dir.filePath(source.completeBaseName() + QStringLiteral(".stitchproj"));
    }
    QString path = QFileDialog::getSaveFileName(this, tr("Save Project"), suggestion, ProjectFilter);
    if (path.isEmpty())
        return false;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".stitchproj");
    QString error;
    if (!saveProject(path, &error)) {
        m_project->tell(tr("Cannot save the project"), error);
        return false;
    }
    return true;
}

void MainWindow::openProjectWithDialog()
{
    if (!maybeSave())
        return;
    const QString dir = m_project->isOpen() ? QFileInfo(m_project->path()).absolutePath() : QDir::currentPath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Project"), dir, ProjectFilter);
    if (path.isEmpty())
        return;
    QString error;
    if (!openProject(path, &error))
        m_project->tell(tr("Cannot open the project"), error);
}

void MainWindow::openInteractively(const QString &path)
{
    if (!maybeSave())
        return;
    QString error;
    if (!openFile(path, &error))
        m_project->tell(tr("Cannot open file"), error);
}

void MainWindow::restoreProject(const storage::Project &project, const storage::InputChoice &input,
                                const QString &projectPath, bool recovered)
{
    // A run on the old text would land on the restored session: it ends here, its outcome dropped.
    if (m_optimizer->isRunning()) {
        m_optimizer->cancel();
        m_optimizer->waitForIdle();
        endOptimize(tr("Optimize cancelled: a project was opened"));
    }
    std::optional<std::optional<storage::Project>> baseline;
    storage::Project restored = project;
    restored.input.path = input.path;
    if (recovered) { // unsaved by definition: compared with its project as saved, if there is one
        auto saved = projectPath.isEmpty() ? Result<storage::Project>(makeError(ErrorKind::Io, "untitled"))
                                           : ProjectController::read(projectPath);
        baseline.emplace(saved ? std::optional<storage::Project>(*saved) : std::nullopt);
        if (*baseline)
            (*baseline)->input.path = input.path;
    }
    m_project->beginRestore(restored, projectPath, std::move(baseline));

    std::vector<Diagnostic> notes;
    const SourceLocation where{projectPath.toStdString(), 0, 0};
    if (!input.note.empty())
        notes.push_back(Diagnostic{Severity::Warning, where, input.note});
    m_agentsPanel->setMessage(project.agents ? tr("Restoring the agents' trace…")
                                             : tr("No Optimize in this project yet."));
    m_editor->setPlainText(QString::fromStdString(input.text));
    setCurrentFile(QString::fromStdString(input.path));
    showDocument();
    if (!setArchitecture(QString::fromStdString(project.arch)))
        notes.push_back(Diagnostic{Severity::Warning, where,
                                   "architecture " + project.arch +
                                       " is not offered by this build (NVRTC or the "
                                       "architecture database): " +
                                       architecture().toStdString() + " is used"});
    QStringList includeDirs, defines;
    for (const std::string &d : project.includeDirs)
        includeDirs << QString::fromStdString(d);
    for (const std::string &d : project.defines)
        defines << QString::fromStdString(d);
    QString optionsError;
    if (!setSourceOptions(includeDirs, defines, &optionsError)) {
        notes.push_back(
            Diagnostic{Severity::Warning, where, "the macros were not applied: " + optionsError.toStdString()});
        setSourceOptions(includeDirs, {});
    }
    m_pins.clear();
    for (const std::string &pin : project.overrides.pins)
        m_pins << QString::fromStdString(pin);
    QMap<QString, qint64> sizes;
    for (const auto &[name, value] : project.sizes)
        sizes.insert(QString::fromStdString(name), value);
    setSizeBindings(sizes); // the last lift request: the one applyRestoredProject waits for
    m_diagnostics->setDiagnostics(DiagnosticsModel::Origin::Project, notes);
    updateProblemsTitle();
    compileIfCuda();
    if (recovered && projectPath.isEmpty())
        m_editor->document()->setModified(true); // never saved anywhere: closing asks
    updateWindowTitle();
}

void MainWindow::applyRestoredProject()
{
    const storage::Project *p = m_project->pendingRestore();
    if (!p)
        return;
    const bool lifted = m_liftedSource && *m_liftedSource == p->input.text;
    // The user typed before the lift landed: the trace and overrides are shown over what is there.
    if (!lifted && m_editor->toPlainText().toStdString() == p->input.text)
        return;
    if (p->agents) {
        auto result = std::make_shared<agents::SourceResult>();
        result->trace = p->agents->trace;
        result->policy = p->agents->policy;
        result->sizes.insert(p->agents->trace.sizes.begin(), p->agents->trace.sizes.end());
        result->program.source = p->agents->program;
        result->program.schedule = p->agents->trace.schedule;
        m_generatedPanel->setProgram(QString::fromStdString(p->agents->program));
        showGraphKernels(p->agents->trace.schedule, tr("the agents' schedule"));
        m_agentsPanel->setResult(std::move(result)); // shows its last step, as after Optimize
        m_agentsPanel->setPins(m_pins);
        if (p->agents->selectedStep >= 0)
            m_agentsPanel->selectStep(p->agents->selectedStep);
    } else {
        m_agentsPanel->setPins(m_pins);
    }
    if (p->overrides.schedule) { // the user's values in the Decisions dock, scored again
        m_userSchedule = *p->overrides.schedule;
        m_overridden = p->overrides.decisions;
        m_agentStep.clear();
        runRubric();
    }
    m_project->endRestore();
    updateWindowTitle();
}

bool MainWindow::offerRecovery()
{
    const std::vector<ProjectController::Recovery> left = m_project->orphans();
    if (left.empty())
        return false;
    const ProjectController::Recovery &newest = left.front();
    if (!m_project->askRecovery(newest)) {
        ProjectController::removeRecovery(newest);
        return false;
    }
    auto project = ProjectController::read(newest.file);
    if (!project) {
        m_project->tell(tr("Cannot recover"), openFailureText(newest.file, project.error()));
        ProjectController::removeRecovery(newest);
        return false;
    }
    const storage::InputChoice input = storage::chooseInput(*project, newest.projectPath.toStdString());
    restoreProject(*project, input, newest.projectPath, true);
    // This session autosaves it again (under its own name) until it is saved.
    ProjectController::removeRecovery(newest);
    return true;
}

} // namespace stitch::views
