// CompileController: real NVRTC compiles, diagnostics, debouncing, and that stale jobs never
// reach the views.
#include "TestUtil.h"

#include "views/CompileController.h"

#include <QSignalSpy>
#include <QTextDocument>
#include <QtTest>

#include <atomic>
#include <future>

using namespace stitch;
using namespace stitch::views;

class TestCompileController final : public QObject {
    Q_OBJECT
private slots:
    void goodKernelHasResources();
    void brokenKernelHasLocatedDiagnostics();
    void newerRequestDropsRunningJob();
    void newerRequestSkipsQueuedJob();
    void architectureChangeMakesJobStale();
    void editsAreDebounced();
};

namespace {

/// A compile function whose first call blocks until released, so a test can issue a newer
/// request while the older one is provably still running on the worker.
struct GatedCompiler {
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::atomic<int> calls{0};
    std::atomic<bool> firstStarted{false};

    CompileController::CompileFunction function()
    {
        return [this](const std::string &source, const cuda::CompileOptions &) -> Result<cuda::CompileResult> {
            if (calls.fetch_add(1) == 0) {
                firstStarted = true;
                gate.wait();
            }
            cuda::CompileResult result;
            result.ptx = "// " + source;
            return result;
        };
    }
};

} // namespace

void TestCompileController::goodKernelHasResources()
{
    CompileController controller;
    controller.setArchitecture(QStringLiteral("sm_90"));
    controller.setFileName(QStringLiteral("saxpy.cu"));
    QSignalSpy started(&controller, &CompileController::started);
    QSignalSpy finished(&controller, &CompileController::finished);
    QSignalSpy failed(&controller, &CompileController::failed);

    const quint64 job = controller.compile(test::readData("saxpy.cu"));
    QCOMPARE(started.count(), 1);
    QCOMPARE(started.at(0).at(0).toULongLong(), job);
    QVERIFY(controller.isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, test::CompileTimeoutMs);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(QString::fromStdString(failed.at(0).at(1).value<Error>().toString())));
    QCOMPARE(finished.at(0).at(0).toULongLong(), job);
    QVERIFY(!controller.isRunning());

    const auto result = finished.at(0).at(1).value<cuda::CompileResult>();
    QCOMPARE(result.kernels.size(), std::size_t(2));
    const auto *saxpy = result.kernel("saxpy");
    QVERIFY(saxpy);
    QVERIFY(saxpy->registers > 0);
    const auto *scale = result.kernel("scale");
    QVERIFY(scale);
    QCOMPARE(scale->sharedBytes, 1024);
    QVERIFY(result.ptx.find(".entry") != std::string::npos);
}

void TestCompileController::brokenKernelHasLocatedDiagnostics()
{
    CompileController controller;
    controller.setFileName(QStringLiteral("broken.cu"));
    QSignalSpy finished(&controller, &CompileController::finished);
    QSignalSpy failed(&controller, &CompileController::failed);

    const quint64 job = controller.compile(test::readData("broken.cu"));
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, test::CompileTimeoutMs);
    QCOMPARE(finished.count(), 0);
    QCOMPARE(failed.at(0).at(0).toULongLong(), job);
    const auto error = failed.at(0).at(1).value<Error>();
    QCOMPARE(error.kind, ErrorKind::Compile);
    QVERIFY(!error.diagnostics.empty());
    const auto &first = error.diagnostics.front();
    QCOMPARE(first.severity, Severity::Error);
    QCOMPARE(first.location.line, 7);
    QVERIFY2(first.message.find("undeclared_scale") != std::string::npos, first.message.c_str());
}

void TestCompileController::newerRequestDropsRunningJob()
{
    GatedCompiler gated;
    CompileController controller;
    controller.setCompileFunction(gated.function());
    QSignalSpy finished(&controller, &CompileController::finished);
    QSignalSpy discarded(&controller, &CompileController::discarded);

    const quint64 older = controller.compile(QStringLiteral("older"));
    QTRY_VERIFY(gated.firstStarted.load());
    const quint64 newer = controller.compile(QStringLiteral("newer"));
    QVERIFY(newer > older);
    QCOMPARE(controller.currentJobId(), newer);
    gated.release.set_value();

    QTRY_COMPARE(finished.count(), 1);
    QTRY_COMPARE(discarded.count(), 1);
    QCOMPARE(discarded.at(0).at(0).toULongLong(), older);
    QCOMPARE(finished.at(0).at(0).toULongLong(), newer);
    QCOMPARE(finished.at(0).at(1).value<cuda::CompileResult>().ptx, std::string("// newer"));
    // Give a late delivery of the older job every chance to show up.
    QTest::qWait(100);
    QCOMPARE(finished.count(), 1);
}

void TestCompileController::newerRequestSkipsQueuedJob()
{
    GatedCompiler gated;
    CompileController controller;
    controller.setCompileFunction(gated.function());
    QSignalSpy finished(&controller, &CompileController::finished);
    QSignalSpy discarded(&controller, &CompileController::discarded);

    const quint64 first = controller.compile(QStringLiteral("first"));
    QTRY_VERIFY(gated.firstStarted.load());
    const quint64 queued = controller.compile(QStringLiteral("queued"));
    const quint64 last = controller.compile(QStringLiteral("last"));
    gated.release.set_value();

    QTRY_COMPARE(finished.count(), 1);
    QTRY_COMPARE(discarded.count(), 2);
    QCOMPARE(finished.at(0).at(0).toULongLong(), last);
    QList<quint64> dropped{discarded.at(0).at(0).toULongLong(), discarded.at(1).at(0).toULongLong()};
    std::sort(dropped.begin(), dropped.end());
    QCOMPARE(dropped, (QList<quint64>{first, queued}));
    // The queued job never reached the compiler: only "first" and "last" were compiled.
    QCOMPARE(gated.calls.load(), 2);
}

void TestCompileController::architectureChangeMakesJobStale()
{
    GatedCompiler gated;
    CompileController controller;
    controller.setCompileFunction(gated.function());
    QSignalSpy finished(&controller, &CompileController::finished);
    QSignalSpy discarded(&controller, &CompileController::discarded);

    const quint64 job = controller.compile(QStringLiteral("for sm_90"));
    QTRY_VERIFY(gated.firstStarted.load());
    controller.setArchitecture(QStringLiteral("sm_80"));
    gated.release.set_value();
    QTRY_COMPARE(discarded.count(), 1);
    QCOMPARE(discarded.at(0).at(0).toULongLong(), job);
    QCOMPARE(finished.count(), 0);
}

void TestCompileController::editsAreDebounced()
{
    std::atomic<int> calls{0};
    CompileController controller;
    controller.setCompileFunction([&calls](const std::string &source, const cuda::CompileOptions &options) {
        ++calls;
        cuda::CompileResult result;
        result.ptx = source + "|" + options.arch;
        return Result<cuda::CompileResult>(std::move(result));
    });
    controller.setDebounceInterval(150);
    QTextDocument document;
    controller.setDocument(&document);
    QSignalSpy started(&controller, &CompileController::started);
    QSignalSpy finished(&controller, &CompileController::finished);

    for (const char *text : {"a", "ab", "abc", "abcd"}) {
        document.setPlainText(QString::fromLatin1(text));
        QTest::qWait(20);
    }
    QCOMPARE(started.count(), 0);
    QTRY_COMPARE(finished.count(), 1);
    QCOMPARE(started.count(), 1);
    QCOMPARE(calls.load(), 1);
    QCOMPARE(finished.at(0).at(1).value<cuda::CompileResult>().ptx, std::string("abcd|sm_90"));

    controller.setAutoCompile(false);
    document.setPlainText(QStringLiteral("ignored"));
    QTest::qWait(300);
    QCOMPARE(started.count(), 1);
}

QTEST_MAIN(TestCompileController)
#include "tst_compilecontroller.moc"
