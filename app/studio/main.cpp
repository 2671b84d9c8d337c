// stitchcuda-studio [FILE] [--arch sm_XY] [--optimize] [--training-log CSV] [--screenshot PNG [--dock NAME]]: the desktop studio.
//   command line -> MainWindow (views/) -> event loop, or -> headless capture (Screenshot.cpp)
#include "Screenshot.h"

#include "core/arch/ArchDatabase.h"
#include "views/MainWindow.h"
#include "views/ProjectController.h"
#include "views/RunController.h"
#include "views/RecentFiles.h"
#include "views/StallMonitor.h"
#include "views/SyntaxRepository.h"
#include "views/TrainingPanel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QSettings>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>

namespace {

bool hasArgument(int argc, char **argv, std::initializer_list<const char *> names)
{
    for (int i = 1; i < argc; ++i) {
        for (const char *name : names) {
            const std::size_t n = std::strlen(name);
            if (std::strncmp(argv[i], name, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
                return true;
        }
    }
    return false;
}

int usageError(const QString &message)
{
    std::fprintf(stderr, "stitchcuda-studio: %s\n", qPrintable(message));
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    const bool screenshot = hasArgument(argc, argv, {"--screenshot"});
    // The platform plugin is chosen when QApplication is constructed, so decide before that:
    // a capture must work on a machine without a display, and so must --help.
    const bool noDisplay = qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
    const bool textOnly = hasArgument(argc, argv, {"--help", "-h", "--help-all", "--version", "-v"});
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && (screenshot || (textOnly && noDisplay)))
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("StitchCUDA Studio"));
    QApplication::setOrganizationName(QStringLiteral("StitchCUDA"));
    QApplication::setApplicationVersion(QStringLiteral(STITCHCUDA_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Open CUDA kernels, compile them with NVRTC and inspect them."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("file"),
                                 QStringLiteral("CUDA source or StitchCUDA project (.stitchproj) to open"),
                                 QStringLiteral("[FILE]"));
    const QCommandLineOption archOption(QStringLiteral("arch"), QStringLiteral("Target architecture, e.g. sm_90"),
                                        QStringLiteral("sm_XY"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"), QStringLiteral("Render offscreen after the first compile, save a PNG and exit"),
        QStringLiteral("PNG"));
    const QCommandLineOption sizeOption(QStringLiteral("size"),
                                        QStringLiteral("Window size for --screenshot (default 1400x900)"),
                                        QStringLiteral("WxH"), QStringLiteral("1400x900"));
    const QCommandLineOption optimizeOption(
        QStringLiteral("optimize"), QStringLiteral("Run Optimize on FILE once it is open (with --screenshot: wait for it)"));
    const QCommandLineOption dockOption(QStringLiteral("dock"),
                                        QStringLiteral("With --screenshot: raise this dock first (e.g. Graph), or Code for the Code tab; Run with --optimize runs the program"),
                                        QStringLiteral("NAME"));
    const QCommandLineOption includeOption(QStringList{QStringLiteral("I"), QStringLiteral("include-dir")},
                                           QStringLiteral("Folder for quoted includes of a .cu (repeatable, as nvcc -I)"),
                                           QStringLiteral("DIR"));
    const QCommandLineOption defineOption(QStringList{QStringLiteral("D"), QStringLiteral("define")},
                                          QStringLiteral("Macro for a .cu (repeatable, as nvcc -D)"),
                                          QStringLiteral("NAME[=VALUE]"));
    const QCommandLineOption trainingLogOption(
        QStringLiteral("training-log"), QStringLiteral("Show this training CSV in the Training dock"), QStringLiteral("CSV"));
    parser.addOption(trainingLogOption);
    parser.addOption(includeOption);
    parser.addOption(defineOption);
    parser.addOption(optimizeOption);
    parser.addOption(dockOption);
    parser.addOption(archOption);
    parser.addOption(screenshotOption);
    parser.addOption(sizeOption);
    parser.process(app);

    const QStringList files = parser.positionalArguments();
    if (files.size() > 1)
        return usageError(QStringLiteral("expected at most one FILE, got %1").arg(files.size()));

    stitch::studio::ScreenshotOptions capture;
    if (screenshot) {
        capture.outputPath = parser.value(screenshotOption);
        if (capture.outputPath.isEmpty())
            return usageError(QStringLiteral("--screenshot needs a PNG path"));
        const QStringList size = parser.value(sizeOption).split(QLatin1Char('x'));
        bool okW = false;
        bool okH = false;
        if (size.size() == 2)
            capture.size = QSize(size[0].toInt(&okW), size[1].toInt(&okH));
        if (!okW || !okH || capture.size.width() < 320 || capture.size.height() < 240)
            return usageError(QStringLiteral("--size expects WxH of at least 320x240, e.g. 1400x900"));
    }

    stitch::views::SyntaxRepository syntax;
    // A capture must not rewrite the user's recent-files list.
    std::unique_ptr<QSettings> settings;
    if (!screenshot)
        settings = std::make_unique<QSettings>();
    stitch::views::RecentFiles recentFiles(settings.get());
    stitch::views::MainWindow window(syntax, stitch::ArchDatabase::builtin(), recentFiles);
    // Autosave and recovery in the user's folder; a capture leaves it alone, as it does the recent files.
    if (!screenshot)
        window.project()->setRecoveryDirectory(stitch::views::ProjectController::defaultRecoveryDirectory());
    else // nor into your measurement cache
        window.runController()->setSettings(stitch::views::RunController::Settings{{}, false});

    if (parser.isSet(archOption) && !window.setArchitecture(parser.value(archOption))) {
        return usageError(QStringLiteral("unknown architecture '%1'; available: %2")
                              .arg(parser.value(archOption), window.architectures().join(QStringLiteral(", "))));
    }

    QString optionsError;
    if ((parser.isSet(includeOption) || parser.isSet(defineOption)) &&
        !window.setSourceOptions(parser.values(includeOption), parser.values(defineOption), &optionsError))
        return usageError(optionsError);

    QString openError;
    const bool opened = files.isEmpty() || window.openFile(files.first(), &openError);
    if (files.isEmpty()) // nothing to open: the bundled examples and the recent files
        window.showWelcome();
    if (screenshot) {
        if (!opened) {
            std::fprintf(stderr, "stitchcuda-studio: %s\n", qPrintable(openError));
            return 1;
        }
        capture.waitForCompile = !files.isEmpty();
        capture.optimize = parser.isSet(optimizeOption) && !files.isEmpty();
        capture.dock = parser.value(dockOption);
        capture.trainingLog = parser.value(trainingLogOption);
        return stitch::studio::captureScreenshot(window, capture);
    }

    window.setLayoutSettings(settings.get()); // the docks as you left them
    // STITCHCUDA_STALL_LOG=1: every stall of the GUI thread past 50 ms is printed (views/StallMonitor.h).
    stitch::views::StallMonitor stalls;
    if (qEnvironmentVariableIsSet("STITCHCUDA_STALL_LOG")) {
        stalls.setLogThresholdMs(50);
        stalls.start();
    }
    window.show();
    // A session that ended without a clean exit left its autosave: offered once the window is up.
    QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });
    if (parser.isSet(trainingLogOption))
        window.trainingPanel()->openLog(parser.value(trainingLogOption));
    if (opened && !files.isEmpty() && parser.isSet(optimizeOption))
        QTimer::singleShot(0, &window, [&window] { window.optimize(); });
    if (!opened) {
        std::fprintf(stderr, "stitchcuda-studio: %s\n", qPrintable(openError));
        // Shown once the event loop runs, over the (empty) window the user can go on with.
        QTimer::singleShot(0, &window, [&window, openError] {
            QMessageBox::warning(&window, QObject::tr("Cannot open file"), openError);
        });
    }
    return app.exec();
}
