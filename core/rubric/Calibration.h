#pragma once
// Calibration of the performance model against measured times (issue 5).
//   stitchcuda bench --calibration (GPU) -> CalibrationRow per timed candidate -> CSV
//   CSV -> stitchcuda calibrate (no GPU: re-generate, compile, re-predict) -> Spearman's rho per case
// The CSV carries, besides the measured and predicted times, the facts the prediction used (grid,
// registers, occupancy, bytes, PTX size), so a model change can be checked against stored
// measurements on any machine.

#include "core/common/Result.h"
#include "core/rubric/PerfModel.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace stitch::rubric {

struct CalibrationRow {
    std::string family;    ///< bench case: "gemm", "softmax", ...
    std::string shape;     ///< "1000x3000x700"
    int candidate = 0;
    double measuredMs = 0; ///< median on the GPU
    double predictedMs = -1;
    std::string schedule;  ///< the candidate as `describe` prints it ("name [strategy] key=value ...")
    /// The main (longest predicted) kernel's facts, for fitting: empty when not predicted.
    std::vector<std::pair<std::string, std::string>> facts;
};

/// The facts columns of a prediction, in CSV order (`predictedKernel` names the main kernel).
std::vector<std::pair<std::string, std::string>> calibrationFacts(const ProgramFacts &facts,
                                                                  const ProgramPrediction &prediction);

void writeCalibrationHeader(std::ostream &out);
void writeCalibrationRow(std::ostream &out, const CalibrationRow &row);
/// Reads a file written by writeCalibration*; extra columns are kept in `facts`. Errors name
/// file:line and what is wrong.
Result<std::vector<CalibrationRow>> readCalibration(const std::string &path);

namespace detail {
/// A CSV cell in double quotes (inner quotes doubled).
std::string csvQuoted(const std::string &text);
/// One CSV record (RFC 4180 quoting, no embedded newlines).
std::vector<std::string> splitCsvRecord(const std::string &line);
} // namespace detail

/// Spearman's rank correlation (ties share their mean rank); NaN for fewer than 3 pairs or a
/// constant series.
double spearman(const std::vector<double> &xs, const std::vector<double> &ys);

/// Per case: schedules and Spearman's rho of predicted against measured times, also over the
/// candidates of even and of odd index (fit constants on one half, report the other held out).
struct CalibrationSummary {
    std::string family, shape;
    int schedules = 0;
    double rho = 0;
    double rhoEven = 0; ///< NaN with fewer than 3 candidates in the half
    double rhoOdd = 0;
};
std::vector<CalibrationSummary> summarizeCalibration(const std::vector<CalibrationRow> &rows);

/// Where the model is off, per problem: the candidates grouped by the values of `keys` (schedule
/// decisions, "block_k", or fact columns, "sass_replay_warps"; a key neither names is "-"), each
/// group's median and spread of ln(predicted / measured) less the problem's median. A group whose
/// median sits far from 0 is a family the model mis-scales against the rest, which is what moves
/// the rank correlation.
struct ResidualGroup {
    std::string family, shape;
    std::string values; ///< "block_k=32 stages=3"
    int schedules = 0;
    double median = 0;  ///< of ln(predicted / measured), less the problem's
    double spread = 0;  ///< standard deviation of ln(predicted / measured) within the group
};
std::vector<ResidualGroup> groupResiduals(const std::vector<CalibrationRow> &rows, const std::vector<std::string> &keys);
/// The value of a schedule decision in a `describe` text ("C [gemm] block_m=128 ..."; the first
/// group that names it), or empty.
std::string decisionValue(const std::string &schedule, const std::string &key);

} // namespace stitch::rubric
