// MainWindow's Rubric, Decisions and Generated docks: the newest lift's schedule (the default, or
// the user's overrides), generated, compiled and scored on a worker; with it, once per text and
// architecture, the program as written for the Rubric dock's radar.
//   m_lifted (runLift) + architecture + m_userSchedule -> defaultSchedule / describeDecisions ->
//   rubric::scoreSchedule (NVRTC through m_rubricCache) -> RubricPanel, DecisionsPanel, Generated
//   m_lifted's text -> rubric::scoreAsWritten (+ the generic schedule where it cannot score) -> radar
#include "views/CodeEditor.h"
#include "views/DecisionsPanel.h"
#include "views/GeneratedPanel.h"
#include "views/MainWindow.h"
#include "views/RubricPanel.h"

#include "core/agents/Evaluator.h"
#include "core/frontend/Lift.h"
#include "core/rubric/CheckedDefault.h"
#include "core/rubric/AsWrittenRubric.h"
#include "core/rubric/Rubric.h"
#include "core/schedule/Space.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace stitch::views {

namespace {

/// What one scoring job hands back to the window.
struct ScoringJob {
    std::shared_ptr<const Result<rubric::ScheduleScore>> score;
    schedule::Schedule schedule; ///< the one scored (empty when there was none)
    std::vector<GroupDecisions> decisions;
    std::shared_ptr<const AsWrittenScores> asWritten; ///< computed when the window had none for this text
};

/// Why the lift cannot be scored as it stands, or an empty string when it can.
QString whyNotScored(const Result<frontend::LiftedProgram> *lifted, const ArchLimits *arch, const QString &archName)
{
    if (!lifted)
        return MainWindow::tr("Open a tensor-expression file or a liftable CUDA program to score it.");
    if (!lifted->ok())
        return MainWindow::tr("Not scored: the program was not lifted (%1).")
            .arg(QString::fromStdString(lifted->error().message));
    if (!arch)
        return MainWindow::tr("Not scored: %1 is not in the architecture database.").arg(archName);
    const frontend::LiftedProgram &p = **lifted;
    if (p.graph.ops().empty())
        return MainWindow::tr("Not scored: the graph has no operations.");
    for (const std::string &name : p.graph.sizeVars()) {
        if (!p.sizes.count(name))
            return MainWindow::tr("Not scored: size '%1' has no value in the source; the rubric scores concrete sizes "
                                  "(give it one in Build > Sizes, or in the source, or `stitchcuda rubric --size %1=...`).")
                .arg(QString::fromStdString(name));
    }
    return {};
}

/// The program as written on the radar's dimensions: a .cu's own code (scoreAsWritten, NVRTC on its
/// device code) where it gives a dimension, else the generic schedule's (what `stitchcuda optimize`
/// prints as the input's rubric column).
std::shared_ptr<const AsWrittenScores> asWrittenScores(const frontend::LiftedProgram &p, const std::string &text,
                                                      const ArchLimits &arch, const rubric::Rubric &rubric,
                                                      rubric::CompileCache &cache)
{
    auto out = std::make_shared<AsWrittenScores>();
    std::optional<rubric::AsWrittenReport> own;
    if (p.language == "cuda") {
        rubric::AsWrittenOptions o;
        o.arch = arch.name;
        o.sizes = p.sizes;
        // The lifted text when includes or -D changed it: self-contained, as the agents' trace keeps it.
        auto r = rubric::scoreAsWritten(p.expandedSource.empty() ? text : p.expandedSource, p.sourceFile, o);
        if (r.ok())
            own = std::move(*r);
        else
            out->note = MainWindow::tr("the code as written was not scored: %1")
                            .arg(QString::fromStdString(r.error().message));
    } else {
        out->note = MainWindow::tr("a tensor-expression file has no code as written");
    }
    using Source = AsWrittenScores::Source;
    std::optional<Result<rubric::ScheduleScore>> generic;
    for (const char *d : agents::kStaticDimensions) {
        if (const rubric::RubricScore *s = own ? own->programScore(d) : nullptr) {
            out->scores.push_back(*s);
            out->sources.push_back(Source::Code);
            continue;
        }
        bool cannotGive = !own; // a .te, or the code was not scored
        for (std::size_t k = 0; own && k < own->kernels.size(); ++k)
            cannotGive = cannotGive || own->missing(k, d);
        if (cannotGive && !generic) {
            const schedule::Problem problem{p.graph, p.sizes, arch, schedule::Precision::FP32};
            generic = rubric::scoreSchedule(rubric, problem, rubric::genericSchedule(problem), &cache);
            if (!generic->ok()) { // nothing to stand in: no series rather than made-up points
                out->scores.clear();
                out->sources.clear();
                out->note = QString::fromStdString(generic->error().message);
                break;
            }
        }
        if (const rubric::RubricScore *s = cannotGive ? (*generic)->report.programScore(d) : nullptr) {
            if (own && out->note.isEmpty())
                out->note = MainWindow::tr("not derivable from the code as written");
            out->scores.push_back(*s);
            out->sources.push_back(Source::GenericSchedule);
            continue;
        }
        // Applies to no kernel (of the code, or of the generic schedule standing in for it).
        rubric::RubricScore none;
        none.dimension = d;
        none.score = 5;
        out->scores.push_back(none);
        out->sources.push_back(Source::DoesNotApply);
    }
    return out;
}

ScoringJob score(const frontend::LiftedProgram &p, const ArchLimits &arch, const std::optional<schedule::Schedule> &user,
                 const rubric::Rubric &rubric, rubric::CompileCache &cache)
{
    using Scored = Result<rubric::ScheduleScore>;
    const schedule::Problem problem{p.graph, p.sizes, arch, user ? user->precision : schedule::Precision::FP32};
    ScoringJob job;
    if (user) {
        job.schedule = *user;
        job.schedule.arch = arch.name;
    } else {
        auto def = rubric::modelCheckedDefault(problem);
        if (!def.ok()) {
            job.score = std::make_shared<const Scored>(def.error());
            return job;
        }
        job.schedule = std::move(*def);
    }
    job.decisions = rubric::describeDecisions(job.schedule, problem, &rubric);
    job.score = std::make_shared<const Scored>(rubric::scoreSchedule(rubric, problem, job.schedule, &cache));
    return job;
}

} // namespace

void MainWindow::runRubric()
{
    if (m_rubricRunning) { // the running job's result is stale once it lands: one more run then
        m_rubricPending = true;
        return;
    }
    const QString archName = architecture();
    const ArchLimits *arch = m_database.arch(archName.toStdString());
    const QString why = whyNotScored(m_lifted.get(), arch, archName);
    if (m_agentStep.isEmpty())
        m_rubricPanel->setStep(std::nullopt);
    const bool asWrittenKnown = m_asWritten && m_asWrittenSource == m_liftedSource && m_asWrittenArch == archName;
    if (!asWrittenKnown)
        m_rubricPanel->setAsWritten(nullptr); // another text or architecture: scored again below
    if (!why.isEmpty()) {
        m_rubricPanel->setMessage(why);
        m_decisionsPanel->setMessage(why);
        m_generatedPanel->setMessage(why);
        m_scoredSchedule = {};
        emit rubricUpdated();
        return;
    }
    if (!m_rubricCache)
        m_rubricCache = std::make_shared<rubric::CompileCache>();
    if (!m_rubric)
        m_rubric = std::make_shared<const rubric::Rubric>();
    m_rubricPanel->setMessage(tr("Scoring %1 for %2 (generating, compiling with NVRTC)...")
                                  .arg(!m_agentStep.isEmpty() ? m_agentStep
                                       : m_userSchedule     ? tr("your schedule")
                                                            : tr("the default schedule"),
                                       archName));
    m_rubricRunning = true;
    auto *watcher = new QFutureWatcher<ScoringJob>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, source = m_liftedSource, archName] {
        watcher->deleteLater();
        m_rubricRunning = false;
        const ScoringJob job = watcher->result();
        if (job.asWritten) { // kept even when the rest is stale: the next run may be for the same text
            m_asWritten = job.asWritten;
            m_asWrittenSource = source;
            m_asWrittenArch = archName;
        }
        if (m_rubricPending) {
            m_rubricPending = false;
            runRubric();
            return;
        }
        m_scoredSchedule = job.schedule;
        if (m_asWrittenSource == m_liftedSource && m_asWrittenArch == architecture())
            m_rubricPanel->setAsWritten(m_asWritten);
        m_rubricPanel->setResult(job.score, !m_agentStep.isEmpty() ? m_agentStep
                                            : m_userSchedule     ? tr("your schedule")
                                                                 : tr("default schedule"));
        if (job.decisions.empty())
            m_decisionsPanel->setMessage(m_rubricPanel->summary());
        else
            m_decisionsPanel->setDecisions(job.decisions, m_overridden);
        if (job.score && job.score->ok())
            m_generatedPanel->setProgram(QString::fromStdString((*job.score)->program.source));
        else
            m_generatedPanel->setMessage(
                tr("Not generated: %1").arg(job.score ? QString::fromStdString(job.score->error().message) : QString()));
        emit rubricUpdated();
    });
    watcher->setFuture(QtConcurrent::run([lifted = m_lifted, text = m_liftedSource, arch, user = m_userSchedule,
                                          cache = m_rubricCache, rubric = m_rubric, asWrittenKnown] {
        ScoringJob job = score(**lifted, *arch, user, *rubric, *cache);
        if (!asWrittenKnown)
            job.asWritten = asWrittenScores(**lifted, text ? *text : std::string(), *arch, *rubric, *cache);
        return job;
    }));
}

void MainWindow::overrideDecision(int group, const QString &key, int value)
{
    schedule::Schedule s = m_userSchedule ? *m_userSchedule : m_scoredSchedule;
    if (group < 0 || group >= static_cast<int>(s.groups.size()))
        return;
    schedule::KernelGroup &g = s.groups[static_cast<std::size_t>(group)];
    g.set(key.toStdString(), value);
    m_agentStep.clear(); // the user's schedule from here on
    const std::string id = g.name + "." + key.toStdString();
    if (std::find(m_overridden.begin(), m_overridden.end(), id) == m_overridden.end())
        m_overridden.push_back(id);
    m_userSchedule = std::move(s);
    runRubric();
}

void MainWindow::resetDecisions()
{
    m_userSchedule.reset();
    m_agentStep.clear();
    m_overridden.clear();
    runRubric();
}

} // namespace stitch::views
