// MainWindow's document handling: new, open, save, recent files and the unsaved-changes guard.
#include "views/MainWindow.h"

#include "views/CodeEditor.h"
#include "views/CompileController.h"
#include "views/DiagnosticsModel.h"
#include "views/KernelResourcesModel.h"
#include "views/ProjectController.h"
#include "views/RecentFiles.h"
#include "views/ResourcesPanel.h"
#include "views/SyntaxRepository.h"

#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QLabel>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QSaveFile>

namespace stitch::views {

namespace {

// A kernel file larger than this is almost certainly the wrong file (a binary, a data dump).
constexpr qint64 MiB = qint64{1024} * 1024;
constexpr qint64 MaxSourceBytes = 16 * MiB;

const QString FileFilter = QStringLiteral(
    "Projects and sources (*.stitchproj *.cu *.cuh *.te);;StitchCUDA projects (*.stitchproj);;"
    "CUDA and tensor-expression sources (*.cu *.cuh *.te);;C++ sources (*.cpp *.h *.hpp);;All files (*)");

bool isProjectPath(const QString &path)
{
    return QFileInfo(path).suffix().compare(QStringLiteral("stitchproj"), Qt::CaseInsensitive) == 0;
}

} // namespace

void MainWindow::setUnsavedChangesPrompt(UnsavedChangesPrompt prompt)
{
    m_prompt = std::move(prompt);
}

bool MainWindow::maybeSave()
{
    if (m_project->isOpen()) { // the project is the document: it holds the text too
        m_project->checkDirty();
        if (!m_project->isDirty())
            return true;
        switch (m_prompt(QFileInfo(m_project->path()).fileName())) {
        case QMessageBox::Save:
            return saveCurrentProject();
        case QMessageBox::Discard:
            return true;
        default:
            return false;
        }
    }
    if (!m_editor->document()->isModified())
        return true;
    switch (m_prompt(documentName())) {
    case QMessageBox::Save:
        return save();
    case QMessageBox::Discard:
        return true;
    default:
        return false;
    }
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (maybeSave()) {
        m_project->discardRecovery(); // a clean exit: nothing to recover at the next start
        saveLayout();
        event->accept();
    } else
        event->ignore();
}

void MainWindow::newFile()
{
    if (!maybeSave())
        return;
    m_editor->clear();
    showDiagnostics({});
    m_resources->clear();
    m_ptxView->clear();
    m_resourcesPanel->setSummary(tr("Compile a file to see the resources of its kernels."));
    setCurrentFile({});
    m_project->closeProject();
    showDocument();
}

void MainWindow::openWithDialog()
{
    if (!maybeSave())
        return;
    const QString dir = m_currentFile.isEmpty() ? QDir::currentPath() : QFileInfo(m_currentFile).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Project or Source"), dir, FileFilter);
    if (path.isEmpty())
        return;
    QString error;
    if (!openFile(path, &error))
        m_project->tell(tr("Cannot open file"), error);
}

void MainWindow::openRecent(const QString &path)
{
    if (!maybeSave())
        return;
    QString error;
    if (!openFile(path, &error)) {
        if (!QFileInfo::exists(path))
            m_recentFiles.remove(path);
        m_project->tell(tr("Cannot open file"), error);
    }
}

bool MainWindow::openFile(const QString &path, QString *errorMessage)
{
    if (isProjectPath(path))
        return openProject(path, errorMessage);
    auto fail = [errorMessage](const QString &message) {
        if (errorMessage)
            *errorMessage = message;
        return false;
    };
    const QFileInfo info(path);
    if (!info.exists())
        return fail(tr("%1 does not exist.").arg(QDir::toNativeSeparators(path)));
    if (!info.isFile())
        return fail(tr("%1 is not a regular file.").arg(QDir::toNativeSeparators(path)));
    if (info.size() > MaxSourceBytes)
        return fail(tr("%1 is %2 MiB; a CUDA source is expected to be smaller than %3 MiB.")
                        .arg(QDir::toNativeSeparators(path))
                        .arg(info.size() / MiB)
                        .arg(MaxSourceBytes / MiB));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(tr("Cannot read %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
    const QByteArray bytes = file.readAll();
    if (bytes.contains('\0'))
        return fail(tr("%1 looks like a binary file, not CUDA source.").arg(QDir::toNativeSeparators(path)));

    showDiagnostics({});
    m_editor->setPlainText(QString::fromUtf8(bytes));
    setCurrentFile(info.absoluteFilePath());
    m_project->closeProject(); // a source opened on its own is no project's
    m_recentFiles.add(info.absoluteFilePath());
    showDocument();
    // Opening is an explicit request: show results without waiting for the edit debounce.
    compileIfCuda();
    runOutline();
    return true;
}

bool MainWindow::save()
{
    if (m_currentFile.isEmpty())
        return saveAs();
    QString error;
    if (!saveFile(m_currentFile, &error)) {
        QMessageBox::warning(this, tr("Cannot save file"), error);
        return false;
    }
    return true;
}

bool MainWindow::saveAs()
{
    const QString suggestion =
        m_currentFile.isEmpty() ? QDir::current().filePath(QStringLiteral("untitled.cu")) : m_currentFile;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save CUDA Source"), suggestion, FileFilter);
    if (path.isEmpty())
        return false;
    QString error;
    if (!saveFile(path, &error)) {
        QMessageBox::warning(this, tr("Cannot save file"), error);
        return false;
    }
    return true;
}

bool MainWindow::saveFile(const QString &path, QString *errorMessage)
{
    // QSaveFile writes a temporary and renames it: a failed save never truncates the old file.
    // Unbuffered, so a short write (a full disk) is seen before commit(), which would rename it.
    QSaveFile file(path);
    const QByteArray bytes = m_editor->toPlainText().toUtf8();
    if (!file.open(QIODevice::WriteOnly | QIODevice::Unbuffered) || file.write(bytes) != bytes.size() ||
        !file.commit()) {
        if (errorMessage)
            *errorMessage = tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const bool renamed = absolute != m_currentFile;
    setCurrentFile(absolute);
    m_recentFiles.add(absolute);
    // Local includes resolve relative to the file's folder, which may just have changed.
    if (renamed)
        compileIfCuda();
    return true;
}

void MainWindow::setCurrentFile(const QString &path)
{
    m_currentFile = path;
    m_editor->document()->setModified(false);
    m_compiler->setFileName(compileFileName());
    m_editor->setDefinition(m_syntax.definitionForFile(compileFileName()));
    // Tensor-expression files have no CUDA to compile yet: their result is the Graph dock.
    const bool cuda = isCudaDocument();
    m_compiler->setAutoCompile(cuda && m_autoCompileAction->isChecked());
    m_compileAction->setEnabled(cuda);
    updateWindowTitle();
}

bool MainWindow::isCudaDocument() const
{
    return QFileInfo(compileFileName()).suffix().compare(QStringLiteral("te"), Qt::CaseInsensitive) != 0;
}

void MainWindow::compileIfCuda()
{
    if (isCudaDocument()) {
        m_compiler->compileDocument();
        return;
    }
    m_resources->clear();
    showDiagnostics({});
    m_ptxView->clear();
    m_resourcesPanel->setSummary(tr("Tensor-expression file: nothing for NVRTC to compile. See the Graph dock."));
    m_compileStatus->setText(tr("Tensor-expression file: lifted into the Graph dock"));
    m_compileShown = true;
    if (m_graphDock)
        m_graphDock->raise();
    emit compileSettled();
}

QString MainWindow::documentName() const
{
    return m_currentFile.isEmpty() ? tr("untitled.cu") : QFileInfo(m_currentFile).fileName();
}

QString MainWindow::compileFileName() const
{
    return m_currentFile.isEmpty() ? QStringLiteral("untitled.cu") : m_currentFile;
}

void MainWindow::updateWindowTitle()
{
    if (m_project && m_project->isOpen()) {
        setWindowModified(m_project->isDirty());
        setWindowTitle(
            tr("%1[*] (%2) — StitchCUDA Studio").arg(QFileInfo(m_project->path()).fileName(), documentName()));
        return;
    }
    setWindowModified(m_editor->document()->isModified());
    setWindowTitle(tr("%1[*] — StitchCUDA Studio").arg(documentName()));
}

void MainWindow::updateRecentFilesMenu()
{
    m_recentMenu->clear();
    const QStringList files = m_recentFiles.files();
    for (int i = 0; i < files.size(); ++i) {
        const QString &path = files.at(i);
        auto *action = m_recentMenu->addAction(
            tr("&%1 %2").arg(i + 1 < 10 ? QString::number(i + 1) : QString()).arg(QFileInfo(path).fileName()));
        action->setToolTip(QDir::toNativeSeparators(path));
        action->setStatusTip(QDir::toNativeSeparators(path));
        connect(action, &QAction::triggered, this, [this, path] { openRecent(path); });
    }
    if (!files.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear Menu"), &m_recentFiles, &RecentFiles::clear);
    }
    m_recentMenu->setEnabled(!files.isEmpty());
}

} // namespace stitch::views
