#pragma once
// The static dimensions beside their hardware counterparts (CUPTI range profiling, docs/RUNNER.md).
//   KernelFacts + runner::KernelMetrics::values -> compareWithMetrics -> DimensionComparison per dimension
//   stitchcuda bench --calibration F --metrics (GPU) -> DimensionRow per kernel and dimension -> F.dimensions.csv
//   F.dimensions.csv -> stitchcuda calibrate --dimensions (no GPU) -> agreement per dimension
// A measured score goes through the static dimension's own formula (Dimensions.h), with the
// quantity the static analysis estimates replaced by the counter that measures it; a dimension
// whose static quantity has no counter is reported as not comparable, with the reason.
// hard_limits and final_performance have no counterpart (a kernel that runs passed the limits;
// measured times are the ranking calibration, Calibration.h).

#include "core/common/Result.h"
#include "core/rubric/KernelFacts.h"

#include <iosfwd>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace stitch::rubric {

/// The CUPTI metric names the comparison reads (all in runner::standardMetrics()).
namespace metric {
inline constexpr const char *kLoadSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char *kLoadRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char *kStoreSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
inline constexpr const char *kStoreRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
inline constexpr const char *kSharedLoadWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
inline constexpr const char *kSharedStoreWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
inline constexpr const char *kSharedLoadInstructions = "smsp__sass_inst_executed_op_shared_ld.sum";
inline constexpr const char *kSharedStoreInstructions = "smsp__sass_inst_executed_op_shared_st.sum";
inline constexpr const char *kSharedStoreConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
inline constexpr const char *kBranchEfficiency = "smsp__sass_average_branch_targets_threads_uniform.pct";
inline constexpr const char *kThreadInstructions = "smsp__thread_inst_executed.sum";
inline constexpr const char *kInstructions = "smsp__inst_executed.sum";
/// Tensor-core MMA instructions, one per warp (mma.sync; on sm_90 wgmma.mma_async too: the H200
/// counts each warp of a warpgroup once, as sm__inst_executed_pipe_tensor_op_gmma does).
inline constexpr const char *kTensorInstructions = "sm__inst_executed_pipe_tensor_op_hmma.sum";
inline constexpr const char *kAchievedOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char *kFfmaThreadInstructions = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr const char *kDramRead = "dram__bytes_read.sum";
inline constexpr const char *kDramWrite = "dram__bytes_write.sum";
} // namespace metric

/// One static dimension of one kernel beside its measured counterpart. `dimension` is the
/// dimension's name, or "name:view" for a second measured view of it (e.g.
/// "arithmetic_intensity:dram", "divergence:branch_efficiency").
struct DimensionComparison {
    static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    std::string dimension;
    std::string quantity;    ///< what staticValue and measuredValue are, e.g. "global sectors per request"
    bool comparable = false; ///< false: `note` says why, measuredScore is NaN
    std::string note;        ///< why not comparable, or how the measured side was put together
    double staticScore = kNone;   ///< the dimension's score (one decimal, as the rubric prints it)
    double measuredScore = kNone; ///< the same formula on the measured quantity (one decimal)
    double staticValue = kNone;
    double measuredValue = kNone;
};

/// Every comparable view of the kernel's static dimensions against one launch's metric values
/// (runner::KernelMetrics::values: CUPTI name -> value; NaN or absent = not collected).
/// `p` gives the arch (banks) and GPU (ridge point).
std::vector<DimensionComparison> compareWithMetrics(const KernelFacts &k, const ProgramFacts &p,
                                                    const std::map<std::string, double> &values);

/// One CSV row: a kernel of a bench candidate and one dimension.
struct DimensionRow {
    std::string family, shape; ///< bench case
    int candidate = 0;
    std::string kernel;
    DimensionComparison comparison;
};

/// `cal.csv` -> `cal.dimensions.csv` (the suffix is appended when the name has no `.csv`).
std::string dimensionsPathFor(const std::string &calibrationPath);
void writeDimensionHeader(std::ostream &out);
void writeDimensionRow(std::ostream &out, const DimensionRow &row);
/// Reads a file written by writeDimension*; errors name file:line and what is wrong.
Result<std::vector<DimensionRow>> readDimensions(const std::string &path);

/// Agreement of one dimension (or view) over the kernels where it is comparable.
struct DimensionAgreement {
    std::string dimension;
    int compared = 0;
    int withinOnePoint = 0;   ///< |static - measured| <= 1
    int notComparable = 0;
    std::string firstReason;  ///< the note of the first row that was not comparable
    double meanAbsDifference = 0;
    std::vector<DimensionRow> worst; ///< the largest |static - measured| first
    double share() const { return compared ? double(withinOnePoint) / compared : 0.0; }
};
/// Per dimension, in name order (a dimension before its views).
std::vector<DimensionAgreement> summarizeDimensions(const std::vector<DimensionRow> &rows, int worstCount = 3);

} // namespace stitch::rubric
