// The Rubric dock's radar (issue 32): a QPolarChart over the six dimensions the agents read, with the
// program as written (rubric::scoreAsWritten, or the generic schedule's where it cannot give one),
// the agents' previous step and the current one (the trace's scores) overlaid; it follows the Agents
// dock's selected step, and each spoke's tooltip carries the table's sentence and evidence.
#include "TestUtil.h"
#include "TestWindows.h"

#include "core/agents/Evaluator.h"
#include "core/arch/ArchDatabase.h"
#include "core/frontend/Lift.h"
#include "core/rubric/AsWrittenRubric.h"
#include "core/rubric/PerfModel.h"
#include "views/AgentsModel.h"
#include "views/AgentsPanel.h"
#include "views/CodeEditor.h"
#include "views/DevicePanel.h"
#include "views/MainWindow.h"
#include "views/RecentFiles.h"
#include "views/RubricPanel.h"
#include "views/RubricRadar.h"
#include "views/SyntaxRepository.h"

#include <QAbstractAxis>
#include <QComboBox>
#include <QDockWidget>
#include <QLineSeries>
#include <QPolarChart>
#include <QSignalSpy>
#include <QToolTip>
#include <QtTest>

using namespace stitch;
using namespace stitch::views;

namespace {

QString example(const char *name) { return QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples/") + QLatin1String(name); }

std::string readText(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll().toStdString();
}

/// The shared test window, shown at a size the radar reads at.
struct Studio : test::Studio {
    Studio()
    {
        window->resize(1400, 900);
        window->show();
    }
};

QList<double> toList(const double (&values)[agents::kStaticDimensionCount])
{
    return QList<double>(std::begin(values), std::end(values));
}

bool near(const QList<double> &a, const QList<double> &b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > 1e-9)
            return false;
    return true;
}

QString describe(const QList<double> &values)
{
    QStringList out;
    for (double v : values)
        out << QString::number(v, 'f', 3);
    return out.join(QLatin1Char(' '));
}

/// The program as written, as the dock must draw it: the code's own program score per dimension;
/// one it cannot derive (listed missing for a kernel; every one of a .te) the generic schedule's
/// (scored here, apart from the window); one that applies to no kernel 5, as the agents count it.
struct ExpectedAsWritten {
    QList<double> values;
    QList<AsWrittenScores::Source> sources;
};

ExpectedAsWritten expectedAsWritten(const QString &path, const std::string &arch)
{
    using Source = AsWrittenScores::Source;
    const std::string text = readText(path);
    auto lifted = frontend::liftFile(text, path.toStdString());
    if (!lifted.ok())
        return {};
    std::optional<rubric::AsWrittenReport> own;
    if (lifted->language == "cuda") {
        rubric::AsWrittenOptions o;
        o.arch = arch;
        o.sizes = lifted->sizes;
        if (auto r = rubric::scoreAsWritten(text, path.toStdString(), o); r.ok())
            own = std::move(*r);
    }
    const ArchLimits *limits = ArchDatabase::builtin().arch(arch);
    const schedule::Problem problem{lifted->graph, lifted->sizes, *limits, schedule::Precision::FP32};
    const rubric::Rubric rubric;
    rubric::CompileCache cache;
    const auto generic = rubric::scoreSchedule(rubric, problem, rubric::genericSchedule(problem), &cache);
    if (!generic.ok())
        return {};
    ExpectedAsWritten out;
    for (const char *d : agents::kStaticDimensions) {
        bool missing = !own;
        for (std::size_t k = 0; own && k < own->kernels.size(); ++k)
            missing = missing || own->missing(k, d);
        if (const rubric::RubricScore *s = own ? own->programScore(d) : nullptr) {
            out.values << s->score;
            out.sources << Source::Code;
        } else if (const rubric::RubricScore *g = missing ? generic->report.programScore(d) : nullptr) {
            out.values << g->score;
            out.sources << Source::GenericSchedule;
        } else {
            out.values << 5.0;
            out.sources << Source::DoesNotApply;
        }
    }
    return out;
}

/// Waits until the dock's table scores a schedule whose name contains `words` (not "Scoring ...").
bool waitForScore(MainWindow &window, const QString &words)
{
    QSignalSpy rubric(&window, &MainWindow::rubricUpdated);
    auto landed = [&] {
        const QString s = window.rubricPanel()->summary();
        return s.contains(words) && !s.startsWith(QStringLiteral("Scoring"));
    };
    for (int i = 0; i < 20 && !landed(); ++i)
        rubric.wait(test::CompileTimeoutMs);
    return landed();
}

/// The table's tooltip text (sentence and evidence) of `dimension`, or empty.
QString tableTip(const RubricModel *model, const char *dimension)
{
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->scores()[static_cast<std::size_t>(row)].dimension == dimension)
            return model->index(row, RubricModel::SentenceColumn).data(Qt::ToolTipRole).toString();
    return {};
}

QString tableSentence(const RubricModel *model, const char *dimension)
{
    for (const auto &s : model->scores())
        if (s.dimension == dimension)
            return QString::fromStdString(s.sentence);
    return {};
}

} // namespace

class TestRubricRadar final : public QObject {
    Q_OBJECT
private slots:
    void drawsClosedSeriesOverTheSpokes();
    void asWrittenIsTheCodesOwnScores();
    void aTensorExpressionFileIsTheGenericSchedule();
    void followsTheAgentsSteps();
};

void TestRubricRadar::drawsClosedSeriesOverTheSpokes()
{
    // The widget alone: every series closed over the spokes, a series of the wrong length left out,
    // a spoke found under its own points, and a placeholder when there is nothing to draw.
    RubricRadar radar;
    radar.resize(420, 380);
    radar.show();
    QVERIFY(QTest::qWaitForWindowExposed(&radar));
    QVERIFY(radar.lines().isEmpty());
    QCOMPARE(radar.placeholder(), QStringLiteral("No scores"));
    const QStringList spokes{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("d")};
    radar.setData(spokes,
                  {{RadarSeries::Role::AsWritten, QStringLiteral("as written"), {1, 2, 3, 4}},
                   {RadarSeries::Role::Previous, QStringLiteral("short"), {1, 2}},
                   {RadarSeries::Role::Current, QStringLiteral("now"), {5, 4, 3.5, 0}}},
                  {QStringLiteral("tip a"), QStringLiteral("tip b"), QStringLiteral("tip c"), QStringLiteral("tip d")});
    QCOMPARE(radar.spokes(), spokes);
    QCOMPARE(radar.lines().size(), 2);
    QVERIFY(!radar.line(RadarSeries::Role::Previous));
    QLineSeries *now = radar.line(RadarSeries::Role::Current);
    QVERIFY(now);
    QCOMPARE(now->count(), 5);
    QCOMPARE(now->at(4).y(), now->at(0).y());
    QCOMPARE(RubricRadar::values(now), QList<double>({5, 4, 3.5, 0}));
    QCOMPARE(radar.line(RadarSeries::Role::AsWritten)->pen().style(), Qt::DashLine);
    QVERIFY(radar.line(RadarSeries::Role::AsWritten)->color() != now->color());
    QCoreApplication::processEvents();
    for (int spoke = 0; spoke < 3; ++spoke) { // spoke 3's point sits at the centre, every spoke's
        // Where the chart itself puts the point is where spokePosition says.
        const QPointF inChart = radar.polarChart()->mapToPosition(now->at(spoke), now);
        const QPoint drawn = radar.mapFromScene(radar.polarChart()->mapToScene(inChart));
        QVERIFY2((drawn - radar.spokePosition(spoke, now->at(spoke).y())).manhattanLength() <= 2,
                 qPrintable(QStringLiteral("spoke %1").arg(spoke)));
        QCOMPARE(radar.spokeAt(drawn), spoke);
        QCOMPARE(radar.spokeToolTip(radar.spokeAt(drawn)), QStringLiteral("tip ") + spokes[spoke]);
    }
    QCOMPARE(radar.spokeAt(radar.spokePosition(0, 0)), -1);      // the centre is no one spoke's
    QCOMPARE(radar.spokeAt(radar.spokePosition(0, 5) + QPoint(0, -40)), -1); // outside the rings
    // The next step's scores: the same lines (stepping replaces their points, it does not rebuild
    // the chart), renamed and moved; another set of roles gets its own lines.
    QLineSeries *asWritten = radar.line(RadarSeries::Role::AsWritten);
    radar.setData(spokes,
                  {{RadarSeries::Role::AsWritten, QStringLiteral("as written"), {1, 2, 3, 4}},
                   {RadarSeries::Role::Current, QStringLiteral("next"), {0, 1, 6, 2}}},
                  {});
    QCOMPARE(radar.line(RadarSeries::Role::Current), now);
    QCOMPARE(radar.line(RadarSeries::Role::AsWritten), asWritten);
    QCOMPARE(now->name(), QStringLiteral("next"));
    QCOMPARE(RubricRadar::values(now), QList<double>({0, 1, 5, 2})); // clamped to the outer ring
    QCOMPARE(now->at(4).y(), now->at(0).y());
    QCOMPARE(now->attachedAxes().size(), 2);
    QCOMPARE(radar.spokeToolTip(0), QString());
    radar.setData(spokes,
                  {{RadarSeries::Role::Previous, QStringLiteral("before"), {1, 1, 1, 1}},
                   {RadarSeries::Role::Current, QStringLiteral("after"), {2, 2, 2, 2}}},
                  {});
    QCOMPARE(radar.lines().size(), 2);
    QVERIFY(!radar.line(RadarSeries::Role::AsWritten));
    QCOMPARE(RubricRadar::values(radar.line(RadarSeries::Role::Previous)), QList<double>({1, 1, 1, 1}));
    QCOMPARE(radar.line(RadarSeries::Role::Current)->attachedAxes().size(), 2);
    const QStringList five = spokes + QStringList{QStringLiteral("e")};
    radar.setData(five, {{RadarSeries::Role::Current, QStringLiteral("after"), {1, 2, 3, 4, 5}}}, {});
    QCOMPARE(radar.spokes(), five);
    QCOMPARE(RubricRadar::values(radar.line(RadarSeries::Role::Current)), QList<double>({1, 2, 3, 4, 5}));
    QCOMPARE(radar.polarChart()->axes().size(), 2);
    // Kept axes follow the palette (a theme switched while the radar is up).
    QPalette dark = radar.palette();
    dark.setColor(QPalette::Mid, QColor(0x40, 0x40, 0x40));
    dark.setColor(QPalette::WindowText, QColor(0xee, 0xee, 0xee));
    radar.setPalette(dark);
    for (QAbstractAxis *axis : radar.polarChart()->axes())
        QCOMPARE(axis->gridLineColor(), QColor(0x40, 0x40, 0x40));
    radar.setData(spokes.mid(0, 2), {{RadarSeries::Role::Current, QStringLiteral("now"), {1, 2}}}, {});
    QVERIFY(radar.lines().isEmpty());
    QCOMPARE(radar.placeholder(), QStringLiteral("Too few dimensions for a radar"));
}

void TestRubricRadar::asWrittenIsTheCodesOwnScores()
{
    // A .cu: the dashed series is scoreAsWritten's program scores (a dimension it cannot give is the
    // generic schedule's, starred); the current series is the table's default schedule.
    Studio studio;
    MainWindow &window = *studio.window;
    const QString path = example("matmul_naive.cu");
    QVERIFY(window.openFile(path));
    RubricPanel *panel = window.rubricPanel();
    RubricRadar *radar = panel->radar();
    QVERIFY2(waitForScore(window, QStringLiteral("default schedule")), qPrintable(panel->summary()));
    QTRY_VERIFY_WITH_TIMEOUT(radar->line(RadarSeries::Role::AsWritten), test::CompileTimeoutMs);
    QCOMPARE(radar->spokes().size(), agents::kStaticDimensionCount);
    QCOMPARE(radar->lines().size(), 2); // no agents' step: as written and the current schedule
    const ExpectedAsWritten expected = expectedAsWritten(path, window.architecture().toStdString());
    QCOMPARE(expected.values.size(), agents::kStaticDimensionCount);
    const QList<double> drawn = RubricRadar::values(radar->line(RadarSeries::Role::AsWritten));
    QVERIFY2(near(drawn, expected.values), qPrintable(describe(drawn) + QStringLiteral(" vs ") + describe(expected.values)));
    QVERIFY2(expected.sources.count(AsWrittenScores::Source::Code) >= 4,
             "matmul_naive.cu is scored as written on most dimensions");
    for (int i = 0; i < agents::kStaticDimensionCount; ++i)
        QCOMPARE(radar->spokes()[i].endsWith(QLatin1Char('*')),
                 expected.sources[i] == AsWrittenScores::Source::GenericSchedule);
    // The table's sentence and evidence, and the code's own sentence, on the first spoke.
    const QString coalescing = radar->spokeToolTip(0);
    QVERIFY2(coalescing.contains(tableTip(panel->model(), "coalescing")), qPrintable(coalescing));
    QVERIFY2(coalescing.contains(QStringLiteral("As written: ")), qPrintable(coalescing));
    QCOMPARE(radar->line(RadarSeries::Role::AsWritten)->pen().style(), Qt::DashLine);

    QList<double> table;
    for (const char *d : agents::kStaticDimensions)
        table << rubric::findScore(panel->model()->scores(), d)->score;
    QCOMPARE(RubricRadar::values(radar->line(RadarSeries::Role::Current)), table);
    QCOMPARE(radar->line(RadarSeries::Role::Current)->name(), QStringLiteral("default schedule"));

    // A kernel's scope: the kernel's own scores only (the other series are the whole program's).
    panel->scopeBox()->setCurrentIndex(1);
    QCOMPARE(radar->lines().size(), 1);
    QVERIFY(radar->line(RadarSeries::Role::Current));
    QVERIFY(radar->spokes().size() >= 3);
    panel->scopeBox()->setCurrentIndex(0);
    QCOMPARE(radar->lines().size(), 2);
}

void TestRubricRadar::aTensorExpressionFileIsTheGenericSchedule()
{
    // A .te has no code as written: the dashed series is the generic schedule's, said so in the legend.
    Studio studio;
    MainWindow &window = *studio.window;
    const QString path = example("matmul.te");
    QVERIFY(window.openFile(path));
    RubricRadar *radar = window.rubricPanel()->radar();
    QVERIFY2(waitForScore(window, QStringLiteral("default schedule")), qPrintable(window.rubricPanel()->summary()));
    QTRY_VERIFY_WITH_TIMEOUT(radar->line(RadarSeries::Role::AsWritten), test::CompileTimeoutMs);
    QLineSeries *asWritten = radar->line(RadarSeries::Role::AsWritten);
    QVERIFY2(asWritten->name().contains(QStringLiteral("generic schedule")), qPrintable(asWritten->name()));
    const ExpectedAsWritten expected = expectedAsWritten(path, window.architecture().toStdString());
    QCOMPARE(expected.sources.count(AsWrittenScores::Source::Code), 0);
    QVERIFY(near(RubricRadar::values(asWritten), expected.values));
    for (const QString &spoke : radar->spokes())
        QVERIFY(!spoke.endsWith(QLatin1Char('*'))); // the legend says it once for every spoke
}

void TestRubricRadar::followsTheAgentsSteps()
{
    Studio studio;
    MainWindow &window = *studio.window;
    QVERIFY(window.openFile(example("matmul_naive.cu")));
    RubricPanel *rubric = window.rubricPanel();
    RubricRadar *radar = rubric->radar();
    QVERIFY2(waitForScore(window, QStringLiteral("default schedule")), qPrintable(rubric->summary()));
    QTRY_VERIFY_WITH_TIMEOUT(radar->line(RadarSeries::Role::AsWritten), test::CompileTimeoutMs);
    const QList<double> asWritten = RubricRadar::values(radar->line(RadarSeries::Role::AsWritten));
    QSignalSpy settled(&window, &MainWindow::optimizeSettled);
    QVERIFY(window.optimize());
    QVERIFY(settled.wait(test::CompileTimeoutMs));
    AgentsPanel *agentsPanel = window.agentsPanel();
    const agents::Trace *trace = agentsPanel->model()->trace();
    QVERIFY(trace && trace->decisions.size() >= 2);

    // Stitch (selected after Optimize): the last decision's scores, then the final schedule's table.
    QVERIFY2(waitForScore(window, QStringLiteral("final schedule")), qPrintable(rubric->summary()));
    QCOMPARE(radar->lines().size(), 3);
    QVERIFY(near(RubricRadar::values(radar->line(RadarSeries::Role::Previous)), toList(trace->decisions.back().dimensionsAfter)));

    // A decision: three series of six points, the trace's scores before and after it, drawn at once.
    const int first = 1;
    QVERIFY(agentsPanel->selectStep(first));
    const agents::TraceDecision &d1 = trace->decisions[first - 1];
    QCOMPARE(radar->lines().size(), 3);
    for (QLineSeries *line : radar->lines())
        QCOMPARE(RubricRadar::values(line).size(), agents::kStaticDimensionCount);
    QVERIFY(near(RubricRadar::values(radar->line(RadarSeries::Role::AsWritten)), asWritten));
    QVERIFY(near(RubricRadar::values(radar->line(RadarSeries::Role::Previous)), toList(d1.dimensionsBefore)));
    QVERIFY(near(RubricRadar::values(radar->line(RadarSeries::Role::Current)), toList(d1.dimensionsAfter)));
    QCOMPARE(radar->line(RadarSeries::Role::Current)->name(), QStringLiteral("after step 1"));
    QCOMPARE(radar->line(RadarSeries::Role::Previous)->name(), QStringLiteral("before step 1"));

    // Another decision whose scores differ: both step series move with it.
    int other = -1;
    for (std::size_t i = 1; i < trace->decisions.size() && other < 0; ++i)
        if (!near(toList(trace->decisions[i].dimensionsAfter), toList(d1.dimensionsAfter))
            && !near(toList(trace->decisions[i].dimensionsBefore), toList(d1.dimensionsBefore)))
            other = static_cast<int>(i) + 1;
    QVERIFY2(other > 0, "a decision that changes the rubric");
    QVERIFY(agentsPanel->selectStep(other));
    const agents::TraceDecision &d2 = trace->decisions[static_cast<std::size_t>(other - 1)];
    QVERIFY(near(RubricRadar::values(radar->line(RadarSeries::Role::Previous)), toList(d2.dimensionsBefore)));
    QVERIFY(near(RubricRadar::values(radar->line(RadarSeries::Role::Current)), toList(d2.dimensionsAfter)));
    QVERIFY(near(RubricRadar::values(radar->line(RadarSeries::Role::AsWritten)), asWritten));

    // Once the step's schedule is scored, each spoke's tooltip has the table's sentence and
    // evidence for that dimension, and every series' score on it.
    QVERIFY2(waitForScore(window, QStringLiteral("after step %1").arg(other)), qPrintable(rubric->summary()));
    window.findChild<QDockWidget *>(QStringLiteral("rubricDock"))->raise(); // Optimize raised the Agents dock
    QTRY_VERIFY(radar->isVisible() && radar->polarChart()->plotArea().width() > 50);
    for (int i = 0; i < agents::kStaticDimensionCount; ++i) {
        const char *dim = agents::kStaticDimensions[i];
        const QString tip = radar->spokeToolTip(i);
        const QString sentence = tableSentence(rubric->model(), dim);
        QVERIFY(!sentence.isEmpty());
        QVERIFY2(tip.contains(sentence), qPrintable(tip));
        QVERIFY2(tip.contains(tableTip(rubric->model(), dim)), qPrintable(tip)); // the table's own tooltip
        QVERIFY2(tip.contains(QStringLiteral("after step %1: %2/5").arg(other).arg(d2.dimensionsAfter[i], 0, 'f', 1)),
                 qPrintable(tip));
        // Hovering the spoke where the current series' point is finds this dimension.
        const QPoint point = radar->spokePosition(i, std::max(1.0, d2.dimensionsAfter[i]));
        QCOMPARE(radar->spokeAt(point), i);
    }
    // The tooltip event itself, on the first spoke.
    const QPoint at = radar->spokePosition(0, 4);
    QHelpEvent help(QEvent::ToolTip, at, radar->viewport()->mapToGlobal(at));
    QCoreApplication::sendEvent(radar->viewport(), &help);
    QTRY_VERIFY(QToolTip::text().contains(tableSentence(rubric->model(), agents::kStaticDimensions[0])));

    // An edit ends the agents' steps: the new text's default schedule, as written scored again.
    window.editor()->setPlainText(window.editor()->toPlainText() + QStringLiteral("\n"));
    QVERIFY2(waitForScore(window, QStringLiteral("default schedule")), qPrintable(rubric->summary()));
    QTRY_VERIFY_WITH_TIMEOUT(radar->line(RadarSeries::Role::AsWritten), test::CompileTimeoutMs);
    QVERIFY(!radar->line(RadarSeries::Role::Previous));
    QCOMPARE(radar->line(RadarSeries::Role::Current)->name(), QStringLiteral("default schedule"));
}

QTEST_MAIN(TestRubricRadar)
#include "tst_rubricradar.moc"
