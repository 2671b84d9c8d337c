#pragma once
// The scene items of the drawn graph and the sizes they need, measured with the fonts they paint
// with, so that Graphviz reserves exactly the room the studio draws into.
//   DrawnNode -> nodeSize -> LayoutNode ... Layout -> GraphNodeItem / GraphEdgeItem / GraphClusterItem
// Fonts are in pixels (scene units), so SVG and PNG exports keep text inside its box.

#include "views/GraphDrawing.h"

#include <QGraphicsItem>
#include <QPainterPath>
#include <QPolygonF>

namespace stitch::views {

QSizeF graphNodeSize(const DrawnNode &node);
QSizeF graphEdgeLabelSize(const QString &label);
QSizeF graphClusterTitleSize(const QString &title);
/// The fill of kernel (or, with no fusion known, op) number `index`: hues spread by the golden ratio.
QColor graphKernelColour(int index);

class GraphNodeItem final : public QGraphicsItem {
public:
    /// `rect` in scene coordinates; `fill` is the kernel's (or the op's) colour.
    GraphNodeItem(int index, const DrawnNode &node, const QRectF &rect, const QColor &fill);

    int index() const { return m_index; }
    DrawnNode::Kind kind() const { return m_kind; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    QPainterPath outline() const;

    int m_index;
    DrawnNode::Kind m_kind;
    QRectF m_rect;
    QColor m_fill;
    QString m_name;
    QString m_detail; ///< elided to the box
};

class GraphEdgeItem final : public QGraphicsItem {
public:
    GraphEdgeItem(QPainterPath path, QPolygonF arrow, const QRectF &labelRect, QString label);

    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    QPainterPath m_path;
    QPolygonF m_arrow;
    QRectF m_labelRect;
    QString m_label;
    QRectF m_bounds;
};

/// A kernel's region behind the ops fused into it, titled with its name and strategy.
class GraphClusterItem final : public QGraphicsItem {
public:
    GraphClusterItem(const QRectF &rect, const QColor &colour, QString title);

    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    QRectF m_rect;
    QColor m_colour;
    QString m_title;
};

} // namespace stitch::views
