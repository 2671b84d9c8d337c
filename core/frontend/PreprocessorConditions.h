#pragma once
// The macros a file has defined so far and the arithmetic of #if, for expandCudaSource.
//   #define / #undef / -D -> MacroTable -> evaluateCondition("defined(X) && N > 16") -> true / false / unknown
// A name is Unknown when the compiler or a system header may define it (__CUDA_ARCH__,
// CUDART_VERSION, FLT_MAX, ...) or when it was defined inside a group that stayed open; any other
// name nobody defined is undefined, and 0 in arithmetic, as in C.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace stitch::frontend {

class MacroTable {
public:
    enum class Status { Defined, Undefined, Unknown };

    void define(const std::string &name, std::string body);
    void defineFunctionLike(const std::string &name);
    void undefine(const std::string &name);
    void setUnknown(const std::string &name);

    Status status(const std::string &name) const;
    /// The body of a Defined object-like macro; nullopt otherwise (function-like, undefined, unknown).
    std::optional<std::string> body(const std::string &name) const;
    bool functionLike(const std::string &name) const;

    /// Names the compiler predefines or the CUDA and C headers define: never taken as undefined.
    static bool systemName(std::string_view name);

private:
    struct Macro {
        Status status = Status::Undefined;
        bool functionLike = false;
        std::string body;
    };
    std::map<std::string, Macro> m_macros;
};

/// The value of an #if / #elif expression: nullopt when it needs a name that is Unknown, a
/// function-like macro, or something the expression grammar here does not read.
std::optional<bool> evaluateCondition(std::string_view expression, const MacroTable &macros);

} // namespace stitch::frontend
