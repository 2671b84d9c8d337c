#include "views/GraphItems.h"

#include <QApplication>
#include <QFontDatabase>
#include <QFontMetricsF>
#include <QPainter>
#include <QPalette>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

namespace stitch::views {

namespace {

constexpr double kPadX = 10;
constexpr double kPadY = 6;
constexpr double kMaxDetailWidth = 280;
// Below this scale text is unreadable anyway; large graphs stay fluid without it.
constexpr double kTextLevelOfDetail = 0.35;

QFont nameFont()
{
    QFont f = QApplication::font();
    f.setPixelSize(12);
    f.setBold(true);
    return f;
}

QFont monoFont(int pixels)
{
    QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    f.setPixelSize(pixels);
    return f;
}

QFont detailFont()
{
    return monoFont(11);
}
QFont labelFont()
{
    return monoFont(10);
}

QFont titleFont()
{
    QFont f = QApplication::font();
    f.setPixelSize(11);
    f.setBold(true);
    return f;
}

bool isTensor(DrawnNode::Kind kind)
{
    return kind == DrawnNode::Kind::Input || kind == DrawnNode::Kind::Output || kind == DrawnNode::Kind::Buffer;
}

QString elidedDetail(const DrawnNode &node)
{
    return QFontMetricsF(detailFont()).elidedText(QString::fromStdString(node.detail), Qt::ElideRight, kMaxDetailWidth);
}

double levelOfDetail(const QPainter *painter)
{
    return QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
}

} // namespace

QSizeF graphNodeSize(const DrawnNode &node)
{
    const QFontMetricsF name(nameFont());
    const QFontMetricsF detail(detailFont());
    const double textWidth = std::max(name.horizontalAdvance(QString::fromStdString(node.name)),
                                      detail.horizontalAdvance(elidedDetail(node)));
    const double textHeight = name.height() + detail.height();
    if (isTensor(node.kind)) // the text's box inscribed in the ellipse, with room for a double border
        return {std::ceil(textWidth * 1.25 + 2 * kPadX), std::ceil(textHeight * 1.35 + 2 * kPadY)};
    return {std::ceil(textWidth + 2 * kPadX), std::ceil(textHeight + 2 * kPadY)};
}

QSizeF graphEdgeLabelSize(const QString &label)
{
    const QFontMetricsF m(labelFont());
    return {std::ceil(m.horizontalAdvance(label) + 4), std::ceil(m.height())};
}

QSizeF graphClusterTitleSize(const QString &title)
{
    const QFontMetricsF m(titleFont());
    return {std::ceil(m.horizontalAdvance(title) + 8), std::ceil(m.height() + 2)};
}

QColor graphKernelColour(int index)
{
    const double hue = std::fmod(0.58 + index * 0.6180339887, 1.0);
    return QColor::fromHsvF(static_cast<float>(hue), 0.32f, 0.98f);
}

GraphNodeItem::GraphNodeItem(int index, const DrawnNode &node, const QRectF &rect, const QColor &fill)
    : m_index(index), m_kind(node.kind), m_rect(rect), m_fill(fill), m_name(QString::fromStdString(node.name)),
      m_detail(elidedDetail(node))
{
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(false);
    setToolTip(QString::fromStdString(node.toolTip));
    setZValue(2);
}

QRectF GraphNodeItem::boundingRect() const
{
    return m_rect.adjusted(-4, -4, 4, 4);
}

QPainterPath GraphNodeItem::outline() const
{
    QPainterPath path;
    if (isTensor(m_kind))
        path.addEllipse(m_rect);
    else
        path.addRoundedRect(m_rect, 4, 4);
    return path;
}

QPainterPath GraphNodeItem::shape() const
{
    return outline();
}

void GraphNodeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    painter->setRenderHint(QPainter::Antialiasing);
    const QPainterPath path = outline();
    QColor border(60, 60, 60);
    Qt::PenStyle style = Qt::SolidLine;
    QBrush brush(m_fill);
    switch (m_kind) {
    case DrawnNode::Kind::Op:
        break;
    case DrawnNode::Kind::Input:
        brush = QColor(232, 245, 233);
        border = QColor(46, 125, 50);
        break;
    case DrawnNode::Kind::Output:
        brush = QColor(227, 242, 253);
        border = QColor(21, 101, 192);
        break;
    case DrawnNode::Kind::Buffer:
        brush = QColor(245, 245, 245);
        border = QColor(120, 120, 120);
        style = Qt::DashLine;
        break;
    case DrawnNode::Kind::Opaque:
        brush = QColor(238, 238, 238);
        border = QColor(160, 40, 40);
        style = Qt::DashLine;
        break;
    }
    painter->setPen(QPen(border, 1.2, style));
    painter->setBrush(brush);
    painter->drawPath(path);
    if (m_kind == DrawnNode::Kind::Opaque) { // hatched: kept as written, not part of the graph
        painter->setPen(Qt::NoPen);
        painter->setBrush(QBrush(QColor(160, 40, 40, 90), Qt::BDiagPattern));
        painter->drawPath(path);
    }
    if (m_kind == DrawnNode::Kind::Output) { // a double border, as for a final state
        painter->setPen(QPen(border, 1.0));
        painter->setBrush(Qt::NoBrush);
        painter->drawEllipse(m_rect.adjusted(3, 3, -3, -3));
    }
    if (isSelected()) {
        const QColor highlight = QApplication::palette().color(QPalette::Highlight);
        painter->setPen(QPen(highlight, 3));
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(path);
    }
    if (levelOfDetail(painter) < kTextLevelOfDetail)
        return;

    const QFontMetricsF nameMetrics(nameFont());
    const QFontMetricsF detailMetrics(detailFont());
    const double top = m_rect.center().y() - (nameMetrics.height() + detailMetrics.height()) / 2;
    const QRectF nameRect(m_rect.left(), top, m_rect.width(), nameMetrics.height());
    const QRectF detailRect(m_rect.left(), top + nameMetrics.height(), m_rect.width(), detailMetrics.height());
    painter->setPen(QColor(20, 20, 20));
    painter->setFont(nameFont());
    painter->drawText(nameRect, Qt::AlignCenter, m_name);
    painter->setPen(QColor(70, 70, 70));
    painter->setFont(detailFont());
    painter->drawText(detailRect, Qt::AlignCenter, m_detail);
}

GraphEdgeItem::GraphEdgeItem(QPainterPath path, QPolygonF arrow, const QRectF &labelRect, QString label)
    : m_path(std::move(path)), m_arrow(std::move(arrow)), m_labelRect(labelRect), m_label(std::move(label))
{
    m_bounds = m_path.boundingRect().united(m_arrow.boundingRect());
    if (!m_label.isEmpty())
        m_bounds = m_bounds.united(m_labelRect);
    m_bounds.adjust(-2, -2, 2, 2);
    setToolTip(m_label);
    setZValue(1);
}

QRectF GraphEdgeItem::boundingRect() const
{
    return m_bounds;
}

void GraphEdgeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    painter->setRenderHint(QPainter::Antialiasing);
    const QColor colour(90, 90, 90);
    painter->setPen(QPen(colour, 1.1));
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(m_path);
    if (!m_arrow.isEmpty()) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(colour);
        painter->drawPolygon(m_arrow);
    }
    if (m_label.isEmpty() || levelOfDetail(painter) < kTextLevelOfDetail)
        return;
    painter->setPen(QColor(50, 50, 110));
    painter->setFont(labelFont());
    painter->drawText(m_labelRect, Qt::AlignCenter, m_label);
}

GraphClusterItem::GraphClusterItem(const QRectF &rect, const QColor &colour, QString title)
    : m_rect(rect), m_colour(colour), m_title(std::move(title))
{
    setToolTip(m_title);
    setZValue(0);
}

QRectF GraphClusterItem::boundingRect() const
{
    return m_rect.adjusted(-1, -1, 1, 1);
}

void GraphClusterItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    painter->setRenderHint(QPainter::Antialiasing);
    QColor fill = m_colour;
    fill.setAlphaF(0.35f);
    painter->setPen(QPen(m_colour.darker(160), 1.0));
    painter->setBrush(fill);
    painter->drawRoundedRect(m_rect, 8, 8);
    if (levelOfDetail(painter) < kTextLevelOfDetail)
        return;
    painter->setPen(m_colour.darker(300));
    painter->setFont(titleFont());
    painter->drawText(m_rect.adjusted(4, 4, -4, 0), Qt::AlignHCenter | Qt::AlignTop, m_title);
}

} // namespace stitch::views
