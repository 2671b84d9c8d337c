#pragma once
// Whole text files, plain or gzip-compressed: the stored measurements under bench/results keep
// their large CSVs as NAME.csv.gz, and every reader of them reads both.

#include "core/common/Result.h"

#include <string>

namespace stitch {

/// The file's text, decompressed when it is gzip data (whatever its name); an Io error naming the
/// file when it cannot be opened, a Parse error when its gzip data is damaged.
Result<std::string> readTextFile(const std::string &path);

/// Whether `path` names a CSV file, plain or compressed: "x.csv" or "x.csv.gz".
bool isCsvPath(const std::string &path);

} // namespace stitch
