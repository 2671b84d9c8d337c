// DiagnosticsModel, KernelResourcesModel and KernelOutlineModel, each under QAbstractItemModelTester.
#include "TestUtil.h"

#include "core/frontend/CudaSourceIndex.h"
#include "views/DiagnosticsModel.h"
#include "views/KernelOutlineModel.h"
#include "views/KernelResourcesModel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

using namespace stitch;
using namespace stitch::views;

class TestModels final : public QObject {
    Q_OBJECT
private slots:
    void diagnosticsSortsErrorsFirst();
    void diagnosticsFromErrorWithoutLocations();
    void resourcesShowCoreOccupancy_data();
    void resourcesShowCoreOccupancy();
    void resourcesBlockSizeUpdatesOccupancy();
    void resourcesUnknownArchitecture();
    void outlineFromSource();
    void outlineUnchangedKeepsTree();
};

namespace {

Diagnostic diag(Severity severity, int line, int column, const char *message)
{
    return Diagnostic{severity, SourceLocation{"/tmp/kernel.cu", line, column}, message};
}

cuda::KernelResources kernel(const char *name, int registers, int sharedBytes)
{
    cuda::KernelResources k;
    k.name = name;
    k.mangledName = std::string("_Z") + name;
    k.registers = registers;
    k.sharedBytes = sharedBytes;
    k.arch = "sm_90";
    return k;
}

} // namespace

void TestModels::diagnosticsSortsErrorsFirst()
{
    DiagnosticsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setDiagnostics({diag(Severity::Warning, 3, 1, "unused variable"),
                          diag(Severity::Error, 12, 5, "identifier \"x\" is undefined"),
                          diag(Severity::Error, 4, 2, "expected a \";\"")});
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), int(DiagnosticsModel::ColumnCount));
    QCOMPARE(model.index(0, DiagnosticsModel::LocationColumn).data().toString(), QStringLiteral("kernel.cu:4:2"));
    QCOMPARE(model.index(1, 0).data(DiagnosticsModel::LineRole).toInt(), 12);
    QCOMPARE(model.index(1, 0).data(DiagnosticsModel::ColumnRole).toInt(), 5);
    QCOMPARE(model.index(2, DiagnosticsModel::SeverityColumn).data().toString(), QStringLiteral("Warning"));
    QVERIFY(!model.index(0, DiagnosticsModel::SeverityColumn).data(Qt::DecorationRole).value<QIcon>().isNull());
    QCOMPARE(model.count(Severity::Error), 2);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
}

void TestModels::diagnosticsFromErrorWithoutLocations()
{
    DiagnosticsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setError(makeError(ErrorKind::Compile, "NVRTC could not be loaded"));
    QCOMPARE(model.rowCount(), 1);
    QVERIFY(model.index(0, DiagnosticsModel::MessageColumn).data().toString().contains(QStringLiteral("NVRTC")));
    QCOMPARE(model.index(0, 0).data(DiagnosticsModel::LineRole).toInt(), 0);

    Error located = makeError(ErrorKind::Compile, "2 errors");
    located.diagnostics = {diag(Severity::Error, 7, 0, "a"), diag(Severity::Error, 9, 3, "b")};
    model.setError(located);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, DiagnosticsModel::LocationColumn).data().toString(), QStringLiteral("kernel.cu:7"));
}

void TestModels::resourcesShowCoreOccupancy_data()
{
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("registers");
    QTest::addColumn<int>("sharedBytes");
    QTest::newRow("light kernel, 256 threads") << 256 << 32 << 0;
    QTest::newRow("register heavy, 128 threads") << 128 << 128 << 0;
    QTest::newRow("shared heavy, 512 threads") << 512 << 40 << 40000;
    QTest::newRow("tiny blocks") << 32 << 16 << 0;
}

void TestModels::resourcesShowCoreOccupancy()
{
    QFETCH(int, blockSize);
    QFETCH(int, registers);
    QFETCH(int, sharedBytes);
    const auto &db = ArchDatabase::builtin();
    const ArchLimits *sm90 = db.arch("sm_90");
    QVERIFY(sm90);

    KernelResourcesModel model(db);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setBlockSize(blockSize);
    model.setKernels({kernel("k", registers, sharedBytes)}, QStringLiteral("sm_90"));
    QCOMPARE(model.rowCount(), 1);

    const auto expected = computeOccupancy(*sm90, blockSize, registers, sharedBytes);
    QVERIFY(expected.ok());
    QCOMPARE(model.index(0, KernelResourcesModel::OccupancyColumn).data().toString(),
             QStringLiteral("%1 %").arg(expected->occupancy * 100.0, 0, 'f', 0));
    QCOMPARE(model.index(0, KernelResourcesModel::OccupancyColumn).data(KernelResourcesModel::SortRole).toDouble(),
             expected->occupancy);
    const QString tip = model.index(0, KernelResourcesModel::OccupancyColumn).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QString::fromStdString(expected->limiter)), qPrintable(tip));
    QCOMPARE(model.index(0, KernelResourcesModel::RegistersColumn).data().toInt(), registers);
    QCOMPARE(model.index(0, KernelResourcesModel::SharedMemoryColumn).data(KernelResourcesModel::SortRole).toInt(),
             sharedBytes);
}

void TestModels::resourcesBlockSizeUpdatesOccupancy()
{
    KernelResourcesModel model(ArchDatabase::builtin());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setKernels({kernel("a", 32, 0), kernel("b", 255, 0)}, QStringLiteral("sm_90"));
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy header(&model, &QAbstractItemModel::headerDataChanged);

    model.setBlockSize(1024);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(header.count(), 1);
    QVERIFY(model.headerData(KernelResourcesModel::OccupancyColumn, Qt::Horizontal)
                .toString()
                .contains(QStringLiteral("1024")));
    // 255 registers x 1024 threads exceeds the register file: the kernel cannot launch at all.
    QCOMPARE(model.index(1, KernelResourcesModel::OccupancyColumn).data().toString(), QStringLiteral("cannot launch"));
    QVERIFY(model.index(1, KernelResourcesModel::OccupancyColumn).data(Qt::ForegroundRole).isValid());

    model.setBlockSize(1024); // unchanged: no signal
    QCOMPARE(changed.count(), 1);
}

void TestModels::resourcesUnknownArchitecture()
{
    KernelResourcesModel model(ArchDatabase::builtin());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setKernels({kernel("a", 32, 0)}, QStringLiteral("sm_12345"));
    QCOMPARE(model.index(0, KernelResourcesModel::OccupancyColumn).data().toString(), QStringLiteral("n/a"));
    QVERIFY(model.index(0, KernelResourcesModel::OccupancyColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("sm_12345")));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
}

void TestModels::outlineFromSource()
{
    const QString source =
        test::readData("saxpy.cu") +
        QStringLiteral("\nvoid launch(float *d, int n)\n{\n    scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);\n}\n");
    KernelOutlineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(model.setIndex(frontend::indexCudaSource(source.toStdString(), "saxpy.cu")));

    QCOMPARE(model.rowCount(), 3); // saxpy, scale, launch sites
    const QModelIndex saxpy = model.index(0, 0);
    QCOMPARE(saxpy.data().toString(), QStringLiteral("saxpy"));
    QCOMPARE(saxpy.data(KernelOutlineModel::LineRole).toInt(), 2);
    QCOMPARE(model.rowCount(saxpy), 4);
    QVERIFY(model.index(2, 0, saxpy).data().toString().contains(QStringLiteral("x")));
    QCOMPARE(model.index(0, 0, saxpy).parent(), saxpy);
    QVERIFY(saxpy.data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("__global__ saxpy(")));

    const QModelIndex launches = model.index(2, 0);
    QCOMPARE(launches.data(KernelOutlineModel::KindRole).toInt(), int(KernelOutlineModel::ItemKind::LaunchGroup));
    QCOMPARE(model.rowCount(launches), 1);
    const QModelIndex launch = model.index(0, 0, launches);
    QVERIFY(launch.data().toString().startsWith(QStringLiteral("scale<<<")));
    QCOMPARE(launch.data(KernelOutlineModel::LineRole).toInt(), 21);
}

void TestModels::outlineUnchangedKeepsTree()
{
    const std::string source = test::readData("saxpy.cu").toStdString();
    KernelOutlineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(model.setIndex(frontend::indexCudaSource(source, "saxpy.cu")));
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    // A comment edit changes nothing the outline shows.
    QVERIFY(!model.setIndex(frontend::indexCudaSource(source + "// more\n", "saxpy.cu")));
    QCOMPARE(reset.count(), 0);
    QVERIFY(model.setIndex(frontend::indexCudaSource("", "empty.cu")));
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.rowCount(), 0);
}

QTEST_MAIN(TestModels)
#include "tst_models.moc"
