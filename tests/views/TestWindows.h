#pragma once
// Main windows for the views tests, on a machine "without a GPU" whatever the machine has: the
// device probe answers "no driver" and the Run dock's worker finds no libcuda.

#include "core/arch/ArchDatabase.h"
#include "views/DevicePanel.h"
#include "views/MainWindow.h"
#include "views/RecentFiles.h"
#include "views/RunController.h"
#include "views/SyntaxRepository.h"

#include <memory>

namespace stitch::views::test {

/// The window's device probe answers "test probe: no driver" (the status bar and Run dock say so).
inline void answerNoDriver(MainWindow &window)
{
    window.devicePanel()->setProbeFunction([] {
        DeviceProbe probe;
        probe.problem = QStringLiteral("test probe: no driver");
        return probe;
    });
}

/// A main window with its repositories, its probe answering "no driver".
struct Studio {
    SyntaxRepository syntax;
    RecentFiles recent;
    std::unique_ptr<MainWindow> window;
    Studio() : window(std::make_unique<MainWindow>(syntax, ArchDatabase::builtin(), recent)) { answerNoDriver(*window); }
};

#ifdef STITCHCUDA_WORKER_PATH
/// The real worker on a machine "without a driver": what a studio without a GPU gets, also on a GPU
/// machine; never the user's measurement cache.
inline RunController::Settings noGpu()
{
    RunController::Settings s;
    s.worker.workerPath = STITCHCUDA_WORKER_PATH;
    s.worker.environment = {{"STITCHCUDA_LIBCUDA", "/nonexistent/libcuda.so.1"}};
    s.cache = false;
    return s;
}
#endif

} // namespace stitch::views::test
