#include "Screenshot.h"

#include "views/AgentsPanel.h"
#include "views/CodeDiffController.h"
#include "views/CodeDiffSources.h"
#include "views/CompileController.h"
#include "views/DevicePanel.h"
#include "views/GraphPanel.h"
#include "views/GraphView.h"
#include "views/MainWindow.h"
#include "views/TrainingPanel.h"

#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QPixmap>
#include <QTimer>

#include <cstdio>

namespace stitch::studio {

namespace {

void printError(const QString &message)
{
    std::fprintf(stderr, "stitchcuda-studio: %s\n", qPrintable(message));
}

// The dock titled `name` (case-insensitive), or whose object name is `name` or `name` + "Dock".
QDockWidget *findDock(views::MainWindow &window, const QString &name)
{
    for (QDockWidget *dock : window.findChildren<QDockWidget *>())
        if (dock->windowTitle().compare(name, Qt::CaseInsensitive) == 0 || dock->objectName() == name
            || dock->objectName().compare(name + QStringLiteral("Dock"), Qt::CaseInsensitive) == 0)
            return dock;
    return nullptr;
}

} // namespace

int captureScreenshot(views::MainWindow &window, const ScreenshotOptions &options)
{
    window.resize(options.size);
    window.show();
    QDockWidget *dock = nullptr;
    // "Code" is the central area's Code tab, not a dock.
    const bool codeTab = options.dock.compare(QStringLiteral("Code"), Qt::CaseInsensitive) == 0;
    // "Run" with optimize: the Run dock after a Run of the agents' program (F5).
    const bool runDock = options.optimize && options.dock.compare(QStringLiteral("Run"), Qt::CaseInsensitive) == 0;
    bool runDone = !runDock;
    if (codeTab)
        window.showCodeTab(true);
    if (!options.dock.isEmpty() && !codeTab) {
        dock = findDock(window, options.dock);
        if (!dock) {
            printError(QStringLiteral("no dock named '%1'").arg(options.dock));
            return 1;
        }
        dock->raise();
        if (runDock) // two charts and the tables: the width the editor otherwise has
            window.resizeDocks({dock}, {options.size.width() * 62 / 100}, Qt::Horizontal);
    }
    const views::GraphView *drawing = window.graphPanel()->drawing();

    bool outlineDone = !options.waitForCompile;
    bool rubricDone = !options.waitForCompile;
    bool optimizeDone = !options.optimize;
    bool logDone = options.trainingLog.isEmpty();
    QString logError;
    auto ready = [&] {
        const bool compiled = !options.waitForCompile || window.isCompileSettled();
        // The Rubric dock settled too: the step Optimize selects below is scored after it ends.
        return compiled && outlineDone && rubricDone && window.isRubricSettled() && optimizeDone && logDone
               && window.devicePanel()->hasProbed() && drawing->isLaidOut() && window.codeDiff()->isSettled() && runDone;
    };

    QEventLoop loop;
    QTimer timeout;
    timeout.setSingleShot(true);
    QObject::connect(&timeout, &QTimer::timeout, &loop, [&loop] { loop.exit(1); });
    auto check = [&] {
        if (ready())
            loop.exit(0);
    };
    QObject::connect(&window, &views::MainWindow::compileSettled, &loop, check);
    QObject::connect(window.devicePanel(), &views::DevicePanel::probeFinished, &loop, check);
    QObject::connect(window.codeDiff(), &views::CodeDiffController::updated, &loop, check);
    QObject::connect(drawing, &views::GraphView::laidOut, &loop, check);
    QObject::connect(&window, &views::MainWindow::outlineUpdated, &loop, [&] {
        outlineDone = true;
        check();
    });
    QObject::connect(&window, &views::MainWindow::rubricUpdated, &loop, [&] {
        rubricDone = true;
        check();
    });
    QObject::connect(&window, &views::MainWindow::optimizeSettled, &loop, [&] {
        optimizeDone = true;
        // The inspector on the first decision the agents had a real choice in (for the Code tab,
        // one that changed the program too: it shows beside the step before).
        if (const auto *result = window.agentsPanel()->result())
            for (std::size_t d = 0; d < result->trace.decisions.size(); ++d) {
                const int row = static_cast<int>(d) + 1;
                int legal = 0;
                for (const auto &o : result->trace.decisions[d].options)
                    legal += o.legal ? 1 : 0;
                if (legal > 2 && codeTab) {
                    auto before = views::programAt(*result, row - 1), after = views::programAt(*result, row);
                    if (!before || !after || before->source == after->source)
                        continue;
                }
                if (legal > 2) {
                    window.agentsPanel()->selectStep(row);
                    if (codeTab)
                        window.codeDiff()->showStepChanges(row);
                    break;
                }
            }
        if (dock) // Optimize raised the Agents dock
            dock->raise();
        if (runDock && !window.runPrograms())
            runDone = true; // nothing to run: the dock says why
        check();
    });
    QObject::connect(&window, &views::MainWindow::runSettled, &loop, [&] {
        runDone = true;
        check();
    });
    QObject::connect(window.trainingPanel(), &views::TrainingPanel::logLoaded, &loop, [&] {
        logDone = true;
        check();
    });
    QObject::connect(window.trainingPanel(), &views::TrainingPanel::logFailed, &loop,
                     [&](const QString &, const QString &message) {
                         logError = message;
                         loop.exit(2);
                     });
    if (!options.trainingLog.isEmpty())
        window.trainingPanel()->openLog(options.trainingLog);
    if (options.optimize)
        QTimer::singleShot(0, &window, [&window, &optimizeDone] {
            if (!window.optimize())
                optimizeDone = true; // nothing to optimize: the dock says why
        });
    timeout.start(options.timeoutMs);
    QTimer::singleShot(0, &loop, check);
    const int code = loop.exec();
    if (code == 2) {
        printError(QStringLiteral("cannot show the training log: %1").arg(logError));
        return 1;
    }
    if (code != 0) {
        const QString what = !window.isCompileSettled() ? QStringLiteral("compile")
                             : !outlineDone             ? QStringLiteral("outline")
                             : !rubricDone || !window.isRubricSettled() ? QStringLiteral("rubric")
                             : !drawing->isLaidOut()    ? QStringLiteral("graph layout")
                             : !window.codeDiff()->isSettled() ? QStringLiteral("code diff")
                             : !logDone                 ? QStringLiteral("training log")
                             : !runDone ? QStringLiteral("run")
                                                        : QStringLiteral("device probe");
        printError(QStringLiteral("timed out after %1 s waiting for the %2").arg(options.timeoutMs / 1000).arg(what));
        return 1;
    }

    // Let queued layout and repaint events for the last results run before grabbing.
    QElapsedTimer settle;
    settle.start();
    while (settle.elapsed() < 200)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);

    const QPixmap pixmap = window.grab();
    if (pixmap.isNull()) {
        printError(QStringLiteral("could not render the window"));
        return 1;
    }
    const QFileInfo out(options.outputPath);
    if (!out.absoluteDir().exists()) {
        printError(QStringLiteral("folder %1 does not exist").arg(QDir::toNativeSeparators(out.absolutePath())));
        return 1;
    }
    if (!pixmap.save(out.absoluteFilePath(), "PNG")) {
        printError(QStringLiteral("could not write %1").arg(QDir::toNativeSeparators(out.absoluteFilePath())));
        return 1;
    }
    std::printf("%s: %s\n", qPrintable(QDir::toNativeSeparators(out.absoluteFilePath())),
                qPrintable(window.compileStatus()));
    return 0;
}

} // namespace stitch::studio
