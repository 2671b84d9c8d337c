// MainWindow: the -I folders and -D macros a .cu is lifted and optimized with (Build > Include
// Folders and Macros..., or stitchcuda-studio -I DIR -D NAME=VALUE), and the values of sizes the
// source leaves open (Build > Sizes...).
#include "views/MainWindow.h"

#include "core/frontend/Lift.h"

#include <QDialog>
#include <QIntValidator>
#include <QLineEdit>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPlainTextEdit>

#include <limits>
#include <map>

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

/// A form with one field per size, prefilled; nullopt when cancelled.
std::optional<QMap<QString, qint64>> MainWindow::askSizes(const QMap<QString, qint64> &proposed)
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Sizes"));
    auto *form = new QFormLayout(&dialog);
    auto *note = new QLabel(tr("The source leaves these sizes open (a kernel alone, or a size computed at run "
                               "time): the program is scored and optimized for these values."),
                            &dialog);
    note->setWordWrap(true);
    form->addRow(note);
    std::map<QString, QLineEdit *> fields;
    for (auto it = proposed.begin(); it != proposed.end(); ++it) {
        auto *edit = new QLineEdit(QString::number(it.value()), &dialog);
        edit->setObjectName(QStringLiteral("size_") + it.key());
        edit->setValidator(new QIntValidator(1, std::numeric_limits<int>::max(), edit));
        form->addRow(it.key(), edit);
        fields[it.key()] = edit;
    }
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted)
        return std::nullopt;
    QMap<QString, qint64> out;
    for (const auto &[name, edit] : fields) {
        bool ok = false;
        const qint64 v = edit->text().toLongLong(&ok);
        if (ok && v > 0)
            out.insert(name, v);
    }
    return out;
}

void MainWindow::setSizeBindings(const QMap<QString, qint64> &sizes)
{
    m_sizeBindings.clear();
    for (auto it = sizes.begin(); it != sizes.end(); ++it)
        m_sizeBindings[it.key().toStdString()] = it.value();
    m_liftedSource.reset(); // the same text at other sizes: lift, schedule and score again
    runLift();
}

QMap<QString, qint64> MainWindow::sizeBindings() const
{
    QMap<QString, qint64> out;
    for (const auto &[name, value] : m_sizeBindings)
        out.insert(QString::fromStdString(name), value);
    return out;
}

QStringList MainWindow::unboundSizes() const
{
    QStringList out;
    if (!m_lifted || !m_lifted->ok())
        return out;
    const frontend::LiftedProgram &p = **m_lifted;
    for (const std::string &name : p.graph.sizeVars()) {
        if (!p.sizes.count(name) && !m_sizeBindings.count(name))
            out << QString::fromStdString(name);
    }
    return out;
}

QMap<QString, qint64> MainWindow::proposedSizes() const
{
    QMap<QString, qint64> proposed = sizeBindings();
    for (const QString &name : unboundSizes())
        proposed.insert(name, 1024);
    return proposed;
}

void MainWindow::editSizes()
{
    const QMap<QString, qint64> proposed = proposedSizes();
    if (proposed.isEmpty()) {
        QMessageBox::information(this, tr("Sizes"), tr("Every size of this program has its value in the source."));
        return;
    }
    if (auto answer = askSizes(proposed))
        setSizeBindings(*answer);
}

} // namespace stitch::views
