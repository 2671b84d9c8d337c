#pragma once
// Shared helpers for the views tests.

#include <QFile>
#include <QString>

namespace stitch::views::test {

/// NVRTC on a loaded 2-core machine can take seconds per compile.
constexpr int CompileTimeoutMs = 90000;

inline QString dataPath(const char *name)
{
    return QStringLiteral(STITCHCUDA_VIEWS_TEST_DATA "/") + QLatin1String(name);
}

inline QString readData(const char *name)
{
    QFile file(dataPath(name));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

} // namespace stitch::views::test
