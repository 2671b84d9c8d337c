#pragma once
// Core's strings in the views: std::string -> QString, and core's snake_case names for people.

#include <QString>

#include <string>

namespace stitch::views {

inline QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

/// "arithmetic_intensity" -> "arithmetic intensity" (rubric dimensions, agent categories).
inline QString spacedName(const std::string &name)
{
    return qs(name).replace(QLatin1Char('_'), QLatin1Char(' '));
}

} // namespace stitch::views
