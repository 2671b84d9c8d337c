// MainWindow's Problems dock beyond the compiler: the lift's located errors and warnings, Optimize's
// errors, and a click on a row located in another file (a header, a project file) shows it there.
//   runLift -> GraphModel::diagnostics -> DiagnosticsModel (Lift); OptimizeController::failed ->
//   DiagnosticsModel (Optimize); openProject's errors -> DiagnosticsModel (Project, MainWindowProject.cpp)
#include "views/MainWindow.h"

#include "views/CodeEditor.h"
#include "views/DiagnosticsModel.h"
#include "views/GraphModel.h"
#include "views/OptimizeController.h"
#include "views/SyntaxRepository.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QVBoxLayout>

namespace stitch::views {

namespace {

// Larger files are not opened read-only for a look: a project holds one program.
constexpr qint64 MaxShownBytes = qint64{64} * 1024 * 1024;

} // namespace

void MainWindow::connectProblems()
{
    connect(this, &MainWindow::graphUpdated, this, &MainWindow::showLiftProblems);
    connect(m_optimizer, &OptimizeController::failed, this, [this](quint64, const QString &, const Error &error) {
        m_diagnostics->setError(DiagnosticsModel::Origin::Optimize, error);
        updateProblemsTitle();
    });
    connect(m_optimizer, &OptimizeController::finished, this, [this] {
        m_diagnostics->clear(DiagnosticsModel::Origin::Optimize);
        updateProblemsTitle();
    });
}

void MainWindow::showLiftProblems()
{
    // An empty document has nothing to lift, and nothing wrong with it.
    if (m_editor->document()->isEmpty() || m_editor->toPlainText().trimmed().isEmpty())
        m_diagnostics->clear(DiagnosticsModel::Origin::Lift);
    else
        m_diagnostics->setDiagnostics(DiagnosticsModel::Origin::Lift, m_graph->diagnostics());
    updateProblemsTitle();
    m_editor->setDiagnostics(m_diagnostics->editorMarks(compileFileName()));
}

void MainWindow::showDiagnosticElsewhere(const Diagnostic &diagnostic)
{
    const QString path = QString::fromStdString(diagnostic.location.file);
    QString text;
    const QFileInfo info(path);
    QFile file(path);
    if (info.isFile() && info.size() <= MaxShownBytes && file.open(QIODevice::ReadOnly))
        text = QString::fromUtf8(file.readAll());
    else {
        m_compileStatus->setText(
            tr("%1 is in %2, which cannot be shown")
                .arg(QString::fromStdString(diagnostic.location.toString()), QDir::toNativeSeparators(path)));
        return;
    }
    // One read-only viewer, reused: the file as it is on disk now, the cursor at the place.
    auto *viewer = findChild<QDialog *>(QStringLiteral("locationViewer"));
    if (!viewer) {
        viewer = new QDialog(this);
        viewer->setObjectName(QStringLiteral("locationViewer"));
        auto *layout = new QVBoxLayout(viewer);
        auto *label = new QLabel(viewer);
        label->setObjectName(QStringLiteral("locationLabel"));
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        auto *editor = new CodeEditor(m_syntax, viewer);
        editor->setObjectName(QStringLiteral("locationEditor"));
        editor->setReadOnly(true);
        auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, viewer);
        connect(buttons, &QDialogButtonBox::rejected, viewer, &QDialog::close);
        layout->addWidget(label);
        layout->addWidget(editor, 1);
        layout->addWidget(buttons);
        viewer->resize(900, 600);
    }
    auto *label = viewer->findChild<QLabel *>(QStringLiteral("locationLabel"));
    auto *editor = viewer->findChild<CodeEditor *>(QStringLiteral("locationEditor"));
    viewer->setWindowTitle(tr("%1 (read-only)").arg(info.fileName()));
    label->setText(QString::fromStdString(diagnostic.toString()));
    editor->setDefinition(m_syntax.definitionForFile(path));
    editor->setPlainText(text);
    editor->setDiagnostics({diagnostic});
    editor->goToLocation(diagnostic.location.line, diagnostic.location.column);
    viewer->show();
    viewer->raise();
}

} // namespace stitch::views
