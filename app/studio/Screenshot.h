#pragma once
// Headless capture: `stitchcuda-studio FILE --screenshot out.png`.
//   open FILE -> wait for compile, outline and device probe -> grab the window -> PNG
// Used by tests and documentation to see what a user would see, without a display.

#include <QSize>
#include <QString>

namespace stitch::views {
class MainWindow;
}

namespace stitch::studio {

struct ScreenshotOptions {
    QString outputPath;
    QSize size{1400, 900};
    int timeoutMs = 120000;
    bool waitForCompile = true; ///< false when no file was opened
    bool optimize = false;      ///< run Optimize first, wait for it, show a decision in the Agents dock
    QString dock;               ///< raise this dock (its title or object name, e.g. "Graph") before the capture;
                                ///< "Code": the central Code tab (with optimize: the chosen step beside the one before)
    QString trainingLog;        ///< a training CSV shown in the Training dock (the capture waits for it)
                                ///< "Run" with optimize: the Run dock after a Run (F5) of the agents' program
};

/// Shows the window, waits until every dock has its result, and saves it. Returns the process
/// exit code (0 on success) and prints the reason for a failure to stderr.
int captureScreenshot(views::MainWindow &window, const ScreenshotOptions &options);

} // namespace stitch::studio
