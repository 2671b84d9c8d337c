#pragma once
// Small letter badges for outline items (kernel, device function, parameter, launch).
//   KernelOutlineModel::ItemKind -> outlineIcon -> Qt::DecorationRole

#include <QIcon>

namespace stitch::views {

/// Badge for an int(KernelOutlineModel::ItemKind); a null icon without a QGuiApplication.
QIcon outlineIcon(int itemKind);

} // namespace stitch::views
