#pragma once
// Word-wrapped labels in docks. QLabel's minimum width is its longest unbreakable run: a file path
// or a pinned decision ("instruction_scheduling.min_blocks@matmul_naive=1") in a dock's summary
// raised the whole dock area's minimum, which pushed the neighbouring docks to their minimum (and,
// with room left, widened the window). A label made with wrapWithinDock takes the width its dock
// has: the text wraps at spaces, and a run longer than the width is cut at the dock's edge (the
// full text stays selectable where the label allows it, and in its tooltip where one is set).

#include <QLabel>
#include <QSizePolicy>

namespace stitch::views {

inline void wrapWithinDock(QLabel *label)
{
    label->setWordWrap(true);
    QSizePolicy policy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    policy.setHeightForWidth(true); // the height still follows the wrapped text
    label->setSizePolicy(policy);
}

} // namespace stitch::views
