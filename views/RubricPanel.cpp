#include "RubricPanel.h"

#include "views/Text.h"

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QTreeView>
#include <QVBoxLayout>

#include <cmath>
#include <numbers>

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
// RadarChart

RadarChart::RadarChart(QWidget *parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void RadarChart::setScores(const std::vector<rubric::RubricScore> &scores)
{
    m_scores = scores;
    QStringList tips;
    for (const auto &s : m_scores)
        tips << QStringLiteral("%1: %2/5").arg(spacedName(s.dimension)).arg(s.score, 0, 'f', 1);
    setToolTip(tips.join(QLatin1Char('\n')));
    update();
}

QPointF RadarChart::centre() const
{
    return QRectF(rect()).center();
}

double RadarChart::radius() const
{
    // Room for the labels around the outer ring.
    return std::max(10.0, std::min(width() / 2.0 - 70, height() / 2.0 - 24));
}

QPointF RadarChart::spokePoint(int spoke, double score) const
{
    const double n = static_cast<double>(m_scores.size());
    const double angle = -std::numbers::pi / 2 + 2 * std::numbers::pi * spoke / n; // first spoke up
    const double r = radius() * std::clamp(score, 0.0, 5.0) / 5.0;
    return centre() + QPointF(r * std::cos(angle), r * std::sin(angle));
}

QList<QPointF> RadarChart::vertices() const
{
    QList<QPointF> out;
    for (int i = 0; i < static_cast<int>(m_scores.size()); ++i)
        out << spokePoint(i, m_scores[static_cast<std::size_t>(i)].score);
    return out;
}

void RadarChart::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const int n = static_cast<int>(m_scores.size());
    if (n < 3) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, n == 0 ? tr("No scores") : tr("Too few dimensions for a radar"));
        return;
    }
    const QColor grid = palette().color(QPalette::Mid);
    for (int ring = 1; ring <= 5; ++ring) {
        QPolygonF poly;
        for (int i = 0; i < n; ++i)
            poly << spokePoint(i, ring);
        p.setPen(QPen(grid, ring == 5 ? 1.2 : 0.6));
        p.drawPolygon(poly);
    }
    const QFontMetrics fm(font());
    for (int i = 0; i < n; ++i) {
        const auto &s = m_scores[static_cast<std::size_t>(i)];
        p.setPen(QPen(s.hardViolation ? QColor(Qt::red) : grid, 0.8));
        p.drawLine(centre(), spokePoint(i, 5));
        // The label just outside the outer ring, anchored away from the centre.
        const QPointF tip = spokePoint(i, 5.6);
        const QString label = spacedName(s.dimension);
        const double w = fm.horizontalAdvance(label), h = fm.height();
        double x = tip.x() - w / 2;
        if (tip.x() > centre().x() + 1)
            x = tip.x();
        else if (tip.x() < centre().x() - 1)
            x = tip.x() - w;
        p.setPen(s.hardViolation ? QColor(Qt::red) : palette().color(QPalette::WindowText));
        p.drawText(QRectF(x, tip.y() - h / 2, w + 2, h), Qt::AlignCenter, label);
    }
    QPolygonF shape;
    for (const QPointF &v : vertices())
        shape << v;
    QColor fill = palette().color(QPalette::Highlight);
    fill.setAlpha(70);
    p.setBrush(fill);
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.drawPolygon(shape);
    p.setBrush(palette().color(QPalette::Highlight));
    for (const QPointF &v : shape)
        p.drawEllipse(v, 2.5, 2.5);
}

// ------------------------------------------------------------------------------------------------
// RubricPanel

RubricPanel::RubricPanel(QWidget *parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_scope(new QComboBox(this)), m_chart(new RadarChart(this)),
      m_model(new RubricModel(this)), m_table(new QTreeView(this))
{
    m_summary->setWordWrap(true);
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
    layout->addWidget(m_chart, 3);
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
    m_chart->setScores({});
}

void RubricPanel::setResult(std::shared_ptr<const Result<rubric::ScheduleScore>> result, const QString &whose)
{
    if (!result || !result->ok()) {
        setMessage(result ? tr("Not scored: %1").arg(qs(result->error().message)) : tr("Not scored"));
        return;
    }
    m_result = std::move(result);
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
    m_chart->setScores(scores);
    m_model->setScores(std::move(scores));
}

QString RubricPanel::summary() const
{
    return m_summary->text();
}

} // namespace stitch::views
