#include "core/common/Result.h"

namespace stitch {

const char *errorKindName(ErrorKind kind)
{
    switch (kind) {
    case ErrorKind::Io: return "io";
    case ErrorKind::Parse: return "parse";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::Compile: return "compile";
    case ErrorKind::NoDevice: return "no-device";
    case ErrorKind::Driver: return "driver";
    case ErrorKind::Launch: return "launch";
    case ErrorKind::WrongAnswer: return "wrong-answer";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::ResourceLimit: return "resource-limit";
    case ErrorKind::InvalidArgument: return "invalid-argument";
    case ErrorKind::Fault: return "fault";
    case ErrorKind::OutOfMemory: return "out-of-memory";
    case ErrorKind::Cancelled: return "cancelled";
    }
    return "unknown";
}

const char *severityName(Severity severity)
{
    switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
    }
    return "error";
}

std::string SourceLocation::toString() const
{
    if (!known())
        return file;
    std::string s = file + ":" + std::to_string(line);
    if (column > 0)
        s += ":" + std::to_string(column);
    return s;
}

std::string Diagnostic::toString() const
{
    std::string s = location.toString();
    if (!s.empty())
        s += ": ";
    return s + severityName(severity) + ": " + message;
}

std::string Error::toString() const
{
    std::string s;
    if (location)
        s = location->toString() + ": ";
    return s + errorKindName(kind) + ": " + message;
}

} // namespace stitch
