#include "RubricPanel.h"

#include "views/RubricRadar.h"
#include "views/Text.h"
#include "views/WrapLabel.h"

#include "core/agents/Evaluator.h"

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>

namespace stitch::views {

// ------------------------------------------------------------------------------------------------
// RubricModel

void RubricModel::setScores(std::vector<rubric::RubricScore> scores)
{
    beginResetModel();
    m_scores = std::move(scores);
    endResetModel();
}

int RubricModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_scores.size());
}

int RubricModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RubricModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const rubric::RubricScore &s = m_scores[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case DimensionColumn: return spacedName(s.dimension);
        case ScoreColumn:
            return QStringLiteral("%1/5%2%3")
                .arg(s.score, 0, 'f', 1)
                .arg(s.estimated ? tr(" (estimated)") : QString())
                .arg(s.hardViolation ? tr(" HARD VIOLATION") : QString());
        case SentenceColumn: return qs(s.sentence);
        }
        break;
    case Qt::ToolTipRole: return tr("%1\n\nEvidence: %2").arg(qs(s.sentence), qs(s.evidence));
    case Qt::ForegroundRole:
        if (s.hardViolation)
            return QColor(Qt::red);
        break;
    case ScoreRole: return s.score;
    case HardViolationRole: return s.hardViolation;
    }
    return {};
}

QVariant RubricModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case DimensionColumn: return tr("Dimension");
    case ScoreColumn: return tr("Score");
    case SentenceColumn: return tr("Why");
    }
    return {};
}

// ------------------------------------------------------------------------------------------------
// RubricPanel

RubricPanel::RubricPanel(QWidget *parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_scope(new QComboBox(this)), m_radar(new RubricRadar(this)),
      m_model(new RubricModel(this)), m_table(new QTreeView(this))
{
    wrapWithinDock(m_summary);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_scope->setToolTip(tr("The whole program (each dimension weighted by its kernels' predicted times) or one kernel"));
    m_table->setModel(m_model);
    m_table->setRootIsDecorated(false);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(true);
    m_table->header()->setStretchLastSection(true);
    m_table->header()->setSectionResizeMode(RubricModel::DimensionColumn, QHeaderView::ResizeToContents);
    m_table->header()->setSectionResizeMode(RubricModel::ScoreColumn, QHeaderView::ResizeToContents);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_scope);
    layout->addWidget(m_radar, 3);
    layout->addWidget(m_table, 2);
    connect(m_scope, &QComboBox::currentIndexChanged, this, &RubricPanel::showScope);
    setMessage(tr("Open a tensor-expression file or a liftable CUDA program to score it."));
}

void RubricPanel::setMessage(const QString &text)
{
    m_result.reset();
    m_summary->setText(text);
    const QSignalBlocker block(m_scope);
    m_scope->clear();
    m_scope->setEnabled(false);
    m_model->setScores({});
    updateRadar();
}

void RubricPanel::setAsWritten(std::shared_ptr<const AsWrittenScores> asWritten)
{
    m_asWritten = std::move(asWritten);
    updateRadar();
}

void RubricPanel::setStep(std::optional<AgentStepScores> step)
{
    m_step = std::move(step);
    updateRadar();
}

void RubricPanel::setResult(std::shared_ptr<const Result<rubric::ScheduleScore>> result, const QString &whose)
{
    if (!result || !result->ok()) {
        setMessage(result ? tr("Not scored: %1").arg(qs(result->error().message)) : tr("Not scored"));
        return;
    }
    m_result = std::move(result);
    m_whose = whose;
    const rubric::ScheduleScore &s = **m_result;
    const rubric::RubricReport &r = s.report;
    m_summary->setText(tr("%1 kernel(s), %2; predicted %3 us (estimated; a generic schedule %4 us)%5%6%7")
                           .arg(r.kernels.size())
                           .arg(whose)
                           .arg(r.predictedMs * 1e3, 0, 'f', 1)
                           .arg(r.baselinePredictedMs * 1e3, 0, 'f', 1)
                           .arg(s.compiled ? QString() : tr("; not compiled: registers estimated"))
                           .arg(r.hardViolation ? tr("; HARD VIOLATION: the program is rejected") : QString())
                           .arg(r.calibration.empty() ? QString() : tr("; %1").arg(qs(r.calibration))));
    const QSignalBlocker block(m_scope);
    m_scope->clear();
    m_scope->addItem(tr("Program"));
    for (const auto &k : r.kernels) {
        m_scope->addItem(tr("Kernel %1").arg(qs(k.kernel)));
        m_scope->setItemData(m_scope->count() - 1,
                             tr("%1\npredicted %2 us, %3-bound")
                                 .arg(qs(k.decisions))
                                 .arg(k.prediction.ms * 1e3, 0, 'f', 1)
                                 .arg(qs(k.prediction.bound)),
                             Qt::ToolTipRole);
    }
    m_scope->setEnabled(true);
    m_scope->setCurrentIndex(0);
    showScope(0);
}

void RubricPanel::showScope(int index)
{
    if (!m_result || !m_result->ok() || index < 0)
        return;
    const rubric::RubricReport &r = (*m_result)->report;
    std::vector<rubric::RubricScore> scores;
    if (index == 0)
        scores = r.program;
    else if (const auto kernel = static_cast<std::size_t>(index - 1); kernel < r.kernels.size())
        scores = r.kernels[kernel].scores;
    m_model->setScores(std::move(scores));
    updateRadar();
}

QString RubricPanel::dimensionToolTip(const std::string &dimension, const QStringList &seriesLines) const
{
    QStringList parts{spacedName(dimension) + QLatin1Char('\n') + seriesLines.join(QLatin1Char('\n'))};
    // The sentence and evidence are the table's (the same model and role as its rows' tooltips).
    for (int row = 0; row < m_model->rowCount(); ++row)
        if (m_model->scores()[static_cast<std::size_t>(row)].dimension == dimension) {
            const QModelIndex index = m_model->index(row, RubricModel::SentenceColumn);
            parts << tr("%1, %2/5 in the table: %3")
                         .arg(m_whose, QString::number(index.data(RubricModel::ScoreRole).toDouble(), 'f', 1),
                              index.data(Qt::ToolTipRole).toString());
            break;
        }
    if (m_asWritten && m_scope->currentIndex() <= 0) {
        using Source = AsWrittenScores::Source;
        const auto &dims = agents::kStaticDimensions;
        for (std::size_t i = 0; i < m_asWritten->scores.size() && i < std::size(dims); ++i) {
            if (dims[i] != dimension)
                continue;
            const QString sentence = qs(m_asWritten->scores[i].sentence);
            switch (m_asWritten->sources[i]) {
            case Source::Code: parts << tr("As written: %1").arg(sentence); break;
            case Source::GenericSchedule:
                parts << tr("As written, the generic schedule's (%1): %2").arg(m_asWritten->note, sentence);
                break;
            case Source::DoesNotApply:
                parts << tr("As written: applies to no kernel, counted 5/5 as the agents count it.");
                break;
            }
        }
    }
    return parts.join(QStringLiteral("\n\n"));
}

void RubricPanel::updateRadar()
{
    const bool program = m_scope->currentIndex() <= 0;
    const std::vector<rubric::RubricScore> &table = m_model->scores();
    // The six dimensions the agents read, the trace records and the program as written has (hard
    // limits and final performance are the table's); a kernel has those that apply to it.
    std::vector<std::string> dims;
    for (const char *d : agents::kStaticDimensions)
        if (program || rubric::findScore(table, d))
            dims.emplace_back(d);
    std::vector<RadarSeries> series;
    const bool asWritten = program && m_asWritten && m_asWritten->scores.size() == dims.size();
    using Source = AsWrittenScores::Source;
    const auto from = [&](Source source) {
        return asWritten && std::find(m_asWritten->sources.begin(), m_asWritten->sources.end(), source)
                                != m_asWritten->sources.end();
    };
    const bool anyCode = from(Source::Code), anyGeneric = from(Source::GenericSchedule);
    if (asWritten) {
        RadarSeries s{RadarSeries::Role::AsWritten, {}, {}};
        for (const rubric::RubricScore &score : m_asWritten->scores)
            s.values.push_back(score.score);
        s.name = !anyCode     ? tr("as written: the generic schedule (%1)").arg(m_asWritten->note)
                 : anyGeneric ? tr("as written (*: the generic schedule's)")
                              : tr("as written");
        series.push_back(std::move(s));
    }
    const bool stepCurrent = program && m_step && !m_step->currentName.isEmpty();
    if (program && m_step && m_step->previous.size() == dims.size())
        series.push_back({RadarSeries::Role::Previous, m_step->previousName, m_step->previous});
    if (stepCurrent && m_step->current.size() == dims.size()) {
        series.push_back({RadarSeries::Role::Current, m_step->currentName, m_step->current});
    } else if (!stepCurrent && m_result) {
        RadarSeries s{RadarSeries::Role::Current,
                      program ? m_whose : tr("%1, %2").arg(m_scope->currentText(), m_whose),
                      {}};
        for (const std::string &d : dims)
            if (const rubric::RubricScore *score = rubric::findScore(table, d))
                s.values.push_back(score->score);
        if (s.values.size() == dims.size()) // every one, or none drawn
            series.push_back(std::move(s));
    }

    QStringList spokes, tips;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        const bool marked = anyCode && m_asWritten->sources[i] == Source::GenericSchedule;
        spokes << spacedName(dims[i]) + (marked ? QStringLiteral("*") : QString());
        QStringList lines;
        for (const RadarSeries &s : series)
            if (i < s.values.size())
                lines << tr("  %1: %2/5").arg(s.name, QString::number(s.values[i], 'f', 1));
        tips << dimensionToolTip(dims[i], lines);
    }
    m_radar->setData(spokes, series, tips);
}

QString RubricPanel::summary() const
{
    return m_summary->text();
}

} // namespace stitch::views
