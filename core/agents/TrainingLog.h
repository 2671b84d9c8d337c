#pragma once
// A training run's curves read back from its CSV: what `stitchcuda train --csv` and
// `stitchcuda retrain --csv` write (trainingCsvHeader, one row per PPO update), plain or gzip.
//   NAME.csv[.gz] -> readTextFile -> parseTrainingLog -> TrainProgress rows -> the studio's
//   Training dock (reward and loss curves)
// Columns are found by their header names (any order; unknown ones ignored, the held-out pair and
// the diagnostics optional). A damaged file is a Parse error at file:line:col naming the column.

#include "core/agents/Training.h"
#include "core/common/Result.h"

#include <string>
#include <vector>

namespace stitch::agents {

struct TrainingLog {
    std::string file;
    std::vector<TrainProgress> rows; ///< in file order, one per update
    /// Which optional columns the file had (a CSV of an older trainer may lack them).
    bool hasHeldOut = false, hasDiagnostics = false;
};

/// The columns every log must have.
const std::vector<std::string> &trainingLogRequiredColumns();

/// Parses a training CSV's text; `file` locates errors. An empty text, a header without a required
/// column, a row with too few or too many fields or a field that is not a number (or empty where
/// a value is required) are Parse errors located at the line and column of the field.
Result<TrainingLog> parseTrainingLog(const std::string &text, const std::string &file);
/// Reads `path` (plain or gzip-compressed) and parses it; an Io error when it cannot be read.
Result<TrainingLog> readTrainingLog(const std::string &path);

} // namespace stitch::agents
