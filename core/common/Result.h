#pragma once
// Typed errors shared by every core module.
//   any core call -> Result<T> (value or Error{kind, message, location}) -> CLI / views
// Errors are values, not exceptions, so a caller on the GUI thread can show them without try/catch.

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace stitch {

/// What went wrong, in the categories the user interface distinguishes.
enum class ErrorKind {
    Io,              ///< a file could not be read or written
    Parse,           ///< malformed input (source, JSON, tensor expression)
    Unsupported,     ///< well-formed input that uses a construct we cannot handle
    Compile,         ///< NVRTC rejected the program
    NoDevice,        ///< no CUDA driver or no GPU
    Driver,          ///< a CUDA driver call failed
    Launch,          ///< a kernel launch was refused (bad configuration, missing kernel image)
    WrongAnswer,     ///< output did not match the reference
    Timeout,         ///< a job ran past its deadline
    ResourceLimit,   ///< a hardware limit (shared memory, registers, threads) was exceeded
    InvalidArgument, ///< the caller passed something out of range
    Fault,           ///< a kernel faulted (illegal or misaligned address, trap) or its worker crashed
    OutOfMemory,     ///< device memory ran out
    Cancelled,       ///< the caller cancelled the job
};

/// Human-readable name of an ErrorKind ("compile", "no-device", ...), stable for JSON output.
const char *errorKindName(ErrorKind kind);

/// A position in a source file; line and column are 1-based, 0 means "unknown".
struct SourceLocation {
    std::string file;
    int line = 0;
    int column = 0;

    bool known() const { return line > 0; }
    /// "file:line:col", or just "file" when the position is unknown.
    std::string toString() const;
    bool operator==(const SourceLocation &) const = default;
};

enum class Severity { Error, Warning, Note };
const char *severityName(Severity severity);

/// One located message, as a compiler would print it.
struct Diagnostic {
    Severity severity = Severity::Error;
    SourceLocation location;
    std::string message;

    /// "file:line:col: error: message"
    std::string toString() const;
};

struct Error {
    ErrorKind kind = ErrorKind::InvalidArgument;
    std::string message;
    std::optional<SourceLocation> location;
    std::vector<Diagnostic> diagnostics; ///< details, e.g. every compiler error

    /// "[location: ]kind: message"
    std::string toString() const;
};

/// `e` with "context: " put before its message (what was being done when it failed).
inline Error annotate(Error e, const std::string &context)
{
    e.message = context + ": " + e.message;
    return e;
}

/// A value or an Error. Small on purpose: C++20 has no std::expected.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_data(std::move(value)) {}
    Result(Error error) : m_data(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_data); }
    explicit operator bool() const { return ok(); }

    T &value() & { return std::get<T>(m_data); }
    const T &value() const & { return std::get<T>(m_data); }
    T &&value() && { return std::get<T>(std::move(m_data)); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }

    const Error &error() const { return std::get<Error>(m_data); }

private:
    std::variant<T, Error> m_data;
};

/// Result for operations that return nothing but can fail.
struct Ok {};
using Status = Result<Ok>;

inline Error makeError(ErrorKind kind, std::string message, std::optional<SourceLocation> loc = {})
{
    return Error{kind, std::move(message), std::move(loc), {}};
}

} // namespace stitch
