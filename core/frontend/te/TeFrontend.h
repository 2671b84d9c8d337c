#pragma once
// The tensor-expression (.te) frontend: text in, checked ir::Graph out (language in docs/TE.md).
//   .te text -> tokenize -> Parser (names, types, shapes, ranges) -> GraphBuilder -> validate -> LiftedProgram
// liftTensorExpressions (Lift.h) is the entry point most callers want; this header adds the limits.

#include "core/common/Result.h"
#include "core/frontend/Lift.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stitch::frontend::te {

/// Bounds that keep parsing linear in the input and keep hostile input (fuzzers) from exhausting
/// the stack, memory or time in the parser and in the IR's recursive algorithms. Exceeding one is
/// an ordinary located error.
struct Limits {
    std::size_t maxSourceBytes = std::size_t{1} << 20;
    /// Brackets, parentheses, calls, unary operators and ?: inside one another.
    int maxNesting = 64;
    /// Operators on the longest path of one expression tree ("a + b + c" has height 3).
    int maxExprHeight = 200;
    /// Nodes of one expression once size aliases are expanded (aliases share nodes, so a chain
    /// of aliases could otherwise describe an exponentially large tree).
    std::int64_t maxExprNodes = 20000;
    /// Computations per file: keeps the graph, its validation and the interpreter's work for
    /// hostile input bounded (lifting this many takes milliseconds; docs/PERFORMANCE.md).
    int maxStatements = 4096;
    /// Sizes plus tensors (each computation writes a declared tensor, so this exceeds the above).
    int maxDeclarations = 8192;
    /// Operations in the value of a size alias (`size OH = H - R + 1`). Every use of an alias
    /// copies it into shapes and expressions, so it must stay small.
    std::int64_t maxAliasNodes = 64;
    int maxRank = 8;
    int maxReductionVars = 8;
    /// Errors reported before the parser gives up.
    int maxErrors = 20;
};

/// Parses, checks and builds a .te program. Never throws; every problem is a located
/// diagnostic, and the Error (ErrorKind::Parse) lists all of them in Error::diagnostics.
Result<LiftedProgram> parseTensorExpressions(std::string_view source, const std::string &fileName,
                                             const Limits &limits = {});

} // namespace stitch::frontend::te
