#pragma once
// Programs for the drawn-graph tests: the bundled examples, lifted, and a large generated one.

#include "core/frontend/Lift.h"

#include <QDir>
#include <QFile>
#include <QString>
#include <QStringList>

#include <memory>
#include <string>

namespace stitch::views::test {

/// Every bundled example (examples/*.te, examples/*.cu), as paths.
inline QStringList examplePaths()
{
    QStringList paths;
    const QDir dir(QStringLiteral(STITCHCUDA_SOURCE_DIR "/examples"));
    for (const QString &name : dir.entryList({QStringLiteral("*.te"), QStringLiteral("*.cu")}, QDir::Files, QDir::Name))
        paths << dir.filePath(name);
    return paths;
}

inline Result<frontend::LiftedProgram> liftPath(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(ErrorKind::Io, "cannot read " + path.toStdString());
    return frontend::liftFile(file.readAll().toStdString(), path.toStdString());
}

/// A tensor-expression program of `ops` element-wise ops in a chain with skip connections and
/// a parameter read every few layers: the shape of a deep network, hundreds of ops long.
inline std::string largeProgram(int ops)
{
    std::string text = "graph large\nsize N = 1024\ninput X: f32[N]\n";
    const int params = ops / 7 + 1;
    for (int p = 0; p < params; ++p)
        text += "input W" + std::to_string(p) + ": f32[N]\n";
    for (int k = 0; k + 1 < ops; ++k)
        text += "tensor t" + std::to_string(k) + ": f32[N]\n";
    text += "output Y: f32[N]\n";
    auto name = [&](int k) {
        return k < 0 ? std::string("X") : k + 1 == ops ? std::string("Y") : "t" + std::to_string(k);
    };
    for (int k = 0; k < ops; ++k) {
        std::string body = name(k - 1) + "[i] * 0.5";
        if (k % 4 == 3)
            body += " + " + name(k - 4) + "[i]";
        if (k % 7 == 0)
            body += " + W" + std::to_string(k / 7) + "[i]";
        text += name(k) + "[i] = " + body + "\n";
    }
    return text;
}

} // namespace stitch::views::test
