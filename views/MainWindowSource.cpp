// MainWindow: the -I folders and -D macros a .cu is lifted and optimized with (Build > Include
// Folders and Macros..., or stitchcuda-studio -I DIR -D NAME=VALUE).
#include "views/MainWindow.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPlainTextEdit>

namespace stitch::views {

bool MainWindow::setSourceOptions(const QStringList &includeDirs, const QStringList &defines, QString *errorMessage)
{
    frontend::SourceOptions options;
    for (const QString &d : includeDirs) {
        if (!d.trimmed().isEmpty())
            options.includeDirectories.push_back(d.trimmed().toStdString());
    }
    for (const QString &d : defines) {
        if (d.trimmed().isEmpty())
            continue;
        auto parsed = frontend::parseDefine(d.trimmed().toStdString());
        if (!parsed) {
            if (errorMessage)
                *errorMessage = QString::fromStdString(parsed.error().message);
            return false;
        }
        options.defines.push_back(std::move(*parsed));
    }
    m_includeDirs.clear();
    for (const auto &d : options.includeDirectories)
        m_includeDirs << QString::fromStdString(d);
    m_defines.clear();
    for (const auto &[name, value] : options.defines)
        m_defines << QString::fromStdString(name + "=" + value);
    m_sourceOptions = std::move(options);
    // The same text under other options is another program: lift it again, schedule and score anew.
    m_liftedSource.reset();
    runLift();
    return true;
}

void MainWindow::editSourceOptions()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Include Folders and Macros"));
    auto *form = new QFormLayout(&dialog);
    auto *note = new QLabel(tr("As nvcc's -I and -D: quoted includes are looked for beside the file, then in these "
                               "folders; macros decide #if groups and set sizes."),
                            &dialog);
    note->setWordWrap(true);
    form->addRow(note);
    auto *dirs = new QPlainTextEdit(m_includeDirs.join(QLatin1Char('\n')), &dialog);
    dirs->setObjectName(QStringLiteral("includeDirsEdit"));
    dirs->setPlaceholderText(tr("one folder per line"));
    auto *macros = new QPlainTextEdit(m_defines.join(QLatin1Char('\n')), &dialog);
    macros->setObjectName(QStringLiteral("definesEdit"));
    macros->setPlaceholderText(tr("NAME or NAME=VALUE, one per line"));
    form->addRow(tr("Include folders (-I)"), dirs);
    form->addRow(tr("Macros (-D)"), macros);
    auto *error = new QLabel(&dialog);
    error->setStyleSheet(QStringLiteral("color: #b00020"));
    error->setWordWrap(true);
    form->addRow(error);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, [&] {
        QString message;
        if (setSourceOptions(dirs->toPlainText().split(QLatin1Char('\n')), macros->toPlainText().split(QLatin1Char('\n')),
                             &message))
            dialog.accept();
        else
            error->setText(message); // the dialog stays open on the malformed macro
    });
    dialog.exec();
}

} // namespace stitch::views
