#pragma once
// LiftedProgram <-> the versioned JSON of `stitchcuda lift --json` (schema in docs/LIFT-JSON.md).
//   liftFile / liftTensorExpressions / liftCudaProgram -> Result<LiftedProgram> -> liftResultToJson -> CLI, studio
// The schema string changes whenever a field changes meaning or disappears; adding fields keeps it.
// Every string is valid UTF-8 (invalid bytes quoted from a source become U+FFFD), so dump() of a
// document made here never throws.

#include "core/common/Result.h"
#include "core/frontend/Lift.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace stitch::frontend {

/// The value of the "schema" member of every document this header writes.
inline constexpr const char *kLiftJsonSchema = "stitchcuda-lift/1";

/// The document for a lifted program: "ok": true, the graph, sizes, launches, opaque kernels and
/// warnings. Expressions are written in .te syntax (docs/TE.md), as ir::Expr::toString prints them.
nlohmann::json liftToJson(const LiftedProgram &program);

/// The document for a failed lift of file: "ok": false, "graph": null and the error with every
/// located diagnostic.
nlohmann::json liftFailureToJson(const std::string &file, const Error &error);

/// liftToJson or liftFailureToJson, whichever applies.
nlohmann::json liftResultToJson(const Result<LiftedProgram> &result, const std::string &file);

/// {"severity", "file", "line", "column", "message"}; line and column are 0 when unknown.
nlohmann::json diagnosticToJson(const Diagnostic &diagnostic);

} // namespace stitch::frontend
