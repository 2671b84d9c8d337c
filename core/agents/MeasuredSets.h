#pragma once
// The stored H200 measurements (bench/results: `stitchcuda bench --calibration` CSVs) as the
// agents' instruments: a measured time for a schedule that was timed, and the question "of a
// measured set, is the candidate the agents rank first among the fastest?".
//   CSV rows -> MeasuredStore (problem + schedule -> median measured ms) -> Evaluator::confirm
//   CSV rows -> one set per (file, case, shape) -> agents' log-likelihood of each candidate -> first
// The bench families map onto the canonical programs of core/ir/Programs.h, as the bench builds them.

#include "core/agents/Environment.h"
#include "core/rubric/Calibration.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace stitch::agents {

/// A bench case's problem: the family's canonical program ("gemm", "gemm_tf32", "gemm_bias_gelu",
/// "softmax", "layernorm", "chain5") at a shape ("1000x3000x700"), as bench::makeCase builds it.
struct BenchProblem {
    ir::Graph graph;
    ir::SizeBindings sizes;
    schedule::Precision precision = schedule::Precision::FP32;
};
Result<BenchProblem> benchProblem(const std::string &family, const std::string &shape);

/// Measured times by problem and schedule: the median over every row that timed it.
class MeasuredStore final : public MeasuredTimes {
public:
    /// Every *.csv and *.csv.gz under `folder` (recursively) that readCalibration reads; other files are skipped.
    static Result<MeasuredStore> loadFolder(const std::string &folder, const std::string &arch);
    void add(const rubric::CalibrationRow &row, const std::string &arch);
    std::optional<double> lookup(const schedule::Problem &problem, const schedule::Schedule &schedule) const override;
    std::size_t size() const { return m_times.size(); }
    int files() const { return m_files; }

private:
    std::map<std::string, std::vector<double>> m_times;
    int m_files = 0;
};

/// The agents' log-likelihood of reaching `candidate` (each decision's option the candidate takes);
/// -infinity when an episode cannot reach it (another fusion, an illegal value).
double candidateLogLikelihood(Environment &env, const PolicySource &policy, const schedule::Schedule &candidate);

struct MeasuredSetRank {
    std::string file, family, shape;
    int candidates = 0;      ///< rows of the set
    int reachable = 0;       ///< candidates an episode can reach
    double bestMs = 0;       ///< the set's measured best
    double firstMs = 0;      ///< measured time of the candidate the agents rank first
    std::string first;       ///< its schedule
    double ratio() const { return firstMs > 0 ? bestMs / firstMs : 0; }
};

/// Ranks each measured set of `file` by the agents' log-likelihood (ties: the model's estimate).
Result<std::vector<MeasuredSetRank>> rankMeasuredSets(const std::string &file, const PolicySource &policy,
                                                      Evaluator &evaluator, const std::string &arch);

} // namespace stitch::agents
