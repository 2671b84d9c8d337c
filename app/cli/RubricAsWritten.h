#pragma once
// The rubric of the program as written in the CLI: JSON, text, and the before/after table of
// `stitchcuda rubric FILE.cu` (RubricAsWritten.cpp).

#include "core/rubric/AsWrittenRubric.h"
#include "core/rubric/Rubric.h"

#include <nlohmann/json.hpp>

#include <string>

namespace stitch::cli {

/// `"program": "as_written"`, per kernel its scores, missing dimensions (located) and time.
nlohmann::json asWrittenJson(const rubric::AsWrittenReport &report);
void printAsWritten(const rubric::AsWrittenReport &report);
/// Program scores side by side: as written (before) and the default schedule (after; null: none, `afterNote` says why).
void printSideBySide(const rubric::AsWrittenReport &before, const rubric::RubricReport *after, const std::string &afterNote);

} // namespace stitch::cli
