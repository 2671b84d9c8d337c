#pragma once
// `stitchcuda calibrate`'s work, without a GPU: every measured candidate of a `bench --calibration`
// file generated and compiled again from its recorded schedule and predicted by the current model.
//   CalibrationRow (schedule text) -> Problem + Schedule -> program -> NVRTC (CompileCache) -> facts
//   -> PerfModel -> predicted ms beside the measured ms -> Spearman's rho (rubric::summarizeCalibration)
// The CLI prints what these return (app/cli/CalibrateCommand.cpp).

#include "core/arch/ArchDatabase.h"
#include "core/bench/Cases.h"
#include "core/codegen/Program.h"
#include "core/common/Result.h"
#include "core/rubric/Calibration.h"
#include "core/rubric/CompileStore.h"
#include "core/rubric/KernelFacts.h"
#include "core/rubric/MeasuredDimensions.h"
#include "core/rubric/PerfModel.h"
#include "core/rubric/Rubric.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stitch::bench {

/// The bench table's cases and those at the other shapes `rows` name (bench --shape); a row whose
/// family or shape is not valid is left to rebuild(), which says so for that row.
std::vector<BenchCase> casesFor(const std::vector<rubric::CalibrationRow> &rows);

/// A measured candidate generated and compiled again from its recorded schedule.
struct Rebuilt {
    schedule::Problem problem;
    codegen::GeneratedProgram program;
    std::shared_ptr<const cuda::CompileResult> compiled;
};

/// `cache` (backed by the --cache store, if any) keeps NVRTC results between runs.
Result<Rebuilt> rebuild(const rubric::CalibrationRow &measured, const std::vector<BenchCase> &cases,
                        const ArchLimits &arch, rubric::CompileCache &cache);

/// Every row re-predicted by `model` (in parallel), in the rows' order; a row keeps its measurement,
/// and one that cannot be rebuilt or predicted is its error.
std::vector<Result<rubric::CalibrationRow>> repredictRows(const std::vector<rubric::CalibrationRow> &measured,
                                                          const ArchLimits &arch, const rubric::PerfModel &model,
                                                          rubric::CompileCache &cache);

/// A model constant and the values to try (--vary NAME=V1,V2; --set NAME=V has one value).
struct Constant {
    std::string name;
    std::vector<double> values;
};

/// "NAME=V1,V2,...": an InvalidArgument error naming `option` when it is malformed, or the error of
/// PerfModel::Params::set when NAME is no constant of the model.
Result<Constant> parseConstant(const std::string &text, const std::string &option = "--vary");

/// Each --set NAME=V applied to `params` (exactly one value each).
Status applySettings(rubric::PerfModel::Params &params, const std::vector<std::string> &settings);

/// Every candidate generated, compiled and analysed once (in parallel): its facts, or why not
/// (`failed[i]` empty where it was analysed).
struct AnalysedRows {
    std::vector<rubric::ProgramFacts> facts;
    std::vector<std::string> failed;
};
AnalysedRows analyseRows(const std::vector<rubric::CalibrationRow> &measured, const ArchLimits &arch,
                         rubric::CompileCache &cache);

/// One combination of the varied constants: its label ("a=1 b=2"), rho per problem, and the lowest.
struct VariedFit {
    std::string label;
    std::vector<rubric::CalibrationSummary> summary;
    double lowest = 1;
};

/// The analysed rows predicted under each combination of `varied` over `base` (the first constant
/// varying fastest), each combination handed to `each` as soon as it is known. PerfModel::predict
/// writes its expectations into the facts, hence `analysed` is not const.
void varyConstants(const std::vector<rubric::CalibrationRow> &measured, AnalysedRows &analysed,
                   const std::vector<Constant> &varied, const rubric::PerfModel::Params &base,
                   const std::function<void(const VariedFit &)> &each);

/// The static side of every dimension row derived again with the current rubric from the
/// candidates' schedules (the calibration CSV of the same run); the measured side is kept.
/// Coalescing and bank conflicts keep the run's values (their two sides change together).
Status restaticDimensions(std::vector<rubric::DimensionRow> &rows, const std::vector<rubric::CalibrationRow> &candidates,
                          const ArchLimits &arch, rubric::CompileCache &cache);

/// "a,b" "c" -> {a, b, c}: the --by keys.
std::vector<std::string> splitKeys(const std::vector<std::string> &texts);

} // namespace stitch::bench
