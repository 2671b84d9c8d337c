#include "views/OutlineIcons.h"

#include <QGuiApplication>
#include <QHash>
#include <QPainter>
#include <QPixmap>

namespace stitch::views {

namespace {

struct Badge {
    QChar letter;
    QColor color;
};

Badge badgeFor(int itemKind)
{
    // Order matches KernelOutlineModel::ItemKind.
    switch (itemKind) {
    case 0:
        return {QLatin1Char('K'), QColor(0x1e, 0x6f, 0xd9)};
    case 1:
        return {QLatin1Char('D'), QColor(0x2e, 0x8b, 0x57)};
    case 2:
        return {QLatin1Char('p'), QColor(0x80, 0x80, 0x80)};
    case 3:
        return {QLatin1Char('L'), QColor(0x8e, 0x44, 0xad)};
    default:
        return {QLatin1Char('>'), QColor(0x8e, 0x44, 0xad)};
    }
}

QIcon paintBadge(const Badge &badge)
{
    QIcon icon;
    for (int size : {16, 32}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(Qt::NoPen);
        painter.setBrush(badge.color);
        const qreal margin = size / 16.0;
        painter.drawRoundedRect(QRectF(margin, margin, size - 2 * margin, size - 2 * margin), size / 5.0, size / 5.0);
        QFont font = painter.font();
        font.setBold(true);
        font.setPixelSize(size * 11 / 16);
        painter.setFont(font);
        painter.setPen(Qt::white);
        painter.drawText(QRect(0, 0, size, size), Qt::AlignCenter, QString(badge.letter));
        painter.end();
        icon.addPixmap(pixmap);
    }
    return icon;
}

} // namespace

QIcon outlineIcon(int itemKind)
{
    if (!qobject_cast<QGuiApplication *>(QCoreApplication::instance()))
        return {};
    // Painted once per kind; icons are implicitly shared.
    static QHash<int, QIcon> cache;
    auto it = cache.find(itemKind);
    if (it == cache.end())
        it = cache.insert(itemKind, paintBadge(badgeFor(itemKind)));
    return *it;
}

} // namespace stitch::views
