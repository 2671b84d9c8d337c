#pragma once
// What the C preprocessor does before the lifter reads a .cu file, as far as lifting needs it.
//   file text + SourceOptions (-I, -D) -> expandCudaSource -> one self-contained text
//     quoted includes inlined where they stand (between #line directives naming the header),
//     #if / #ifdef / #ifndef / #elif / #else / #endif decided where every name they test is known
//     (the directive and the branches not taken become blanks of the same length),
//     -D macros as #define lines after the file's text (the lifter's macros are order-free)
//   expanded text -> SyntaxTree / indexCudaTree / grammarLimits, whose locations go through
//     LineMap: file:line:col of the header or the file, as a compiler would print them.
// A file with nothing to expand comes back byte for byte, so byte offsets stay the file's own.
// Macro expansion itself stays the lifter's (cudalift/Preprocessor.h): #define lines are kept.

#include "core/common/Result.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stitch::frontend {

/// Maps rows of an expanded text back to the files they came from, through its `#line N "file"`
/// directives (those the expansion writes and any the user wrote, as nvcc honours them).
class LineMap {
public:
    /// Scans text for #line directives; cheap when there are none.
    explicit LineMap(std::string_view text);
    /// The location of 0-based (row, column) of the text; rows before any directive, and every row
    /// when there is none, are fileName's own.
    SourceLocation at(const std::string &fileName, unsigned row, unsigned column) const;
    bool identity() const { return m_marks.empty(); }

private:
    struct Mark {
        unsigned row = 0;   ///< first row the directive governs (the one after it)
        int line = 1;       ///< its line number there
        std::string file;   ///< empty: the directive named no file (keep the previous one)
    };
    std::vector<Mark> m_marks;
};

/// How to read a file the way the compiler would be given it.
struct SourceOptions {
    std::vector<std::string> includeDirectories;                    ///< -I, searched after the including file's folder
    std::vector<std::pair<std::string, std::string>> defines;       ///< -D NAME[=VALUE] (VALUE "1" when absent)
    /// Reads a file; nullopt when it cannot be read. Default: the file system.
    std::function<std::optional<std::string>(const std::string &path)> readFile;
};

/// Parses "-DNAME", "NAME", "NAME=VALUE" (the -D prefix optional) into a define; an error names the
/// text when NAME is not an identifier.
Result<std::pair<std::string, std::string>> parseDefine(std::string_view text);

struct ExpandedSource {
    std::string text;
    std::vector<std::string> includedFiles;       ///< headers inlined, as their #line names them
    std::vector<Diagnostic> diagnostics;          ///< includes not found, conditions left open, redefinitions
    bool changed = false;                         ///< text differs from the file's
};

/// Expands fileName's text as described above. Never fails on what nvcc would accept: an include
/// that cannot be found stays as written with a located warning (the kernels it holds stay
/// unknown), a condition on a name only the compiler or a system header knows (__CUDA_ARCH__,
/// CUDART_VERSION, a function-like macro) keeps all its branches as written, with a note. Includes
/// nest up to 32 deep and each header is inlined once (as with #pragma once or include guards).
ExpandedSource expandCudaSource(const std::string &text, const std::string &fileName, const SourceOptions &options = {});

} // namespace stitch::frontend
