#pragma once
// The schedule: every decision that shapes the generated CUDA, per kernel group.
//   defaultSchedule / agents / user file -> Schedule -> validateSchedule (Space.h) -> codegen
// A schedule is plain data: which ops share a kernel (fusion), the strategy of each kernel and a
// table of integer decisions (tile sizes, vector width, ...) whose meaning and legal values the
// decision table below defines. JSON form: docs/SCHEDULE.md.

#include "core/common/Result.h"

#include <map>
#include <string>
#include <vector>

namespace stitch::schedule {

/// How a kernel group maps onto the GPU.
enum class Strategy {
    Elementwise,  ///< ops over one domain, one element (or vector) per thread, fused in registers
    RowReduction, ///< row-wise reductions and the element-wise ops around them (softmax, layer norm)
    Gemm,         ///< a contraction C = A B with its element-wise epilogue, tiled in shared memory
    Generic,      ///< one op, one thread per output element, reductions as loops: always legal
};

/// Every strategy, in the order the studio and the error messages list them.
inline constexpr Strategy kAllStrategies[] = {Strategy::Elementwise, Strategy::RowReduction, Strategy::Gemm,
                                              Strategy::Generic};
const char *strategyName(Strategy s); ///< "elementwise", "row_reduction", "gemm", "generic"
Result<Strategy> parseStrategy(const std::string &name);

/// Which of the agents owns a decision (the studio groups them by this).
enum class Category { Fusion, ParallelMapping, MemoryAccess, InstructionScheduling };
const char *categoryName(Category c); ///< "fusion", "parallel_mapping", "memory_access", "instruction_scheduling"

/// One decision of a strategy: its key, what it means and the values the space offers.
struct DecisionDef {
    std::string key;                       ///< "block_m"
    Category category = Category::ParallelMapping;
    std::string help;                      ///< one line for users and learners
    std::vector<int> candidates;           ///< the values the space offers, before legality
    std::vector<std::string> valueNames;   ///< names for enum-like decisions (same order as candidates)
    int defaultValue = 0;

    /// "128", or the value's name ("registers") for enum-like decisions.
    std::string valueText(int value) const;
    /// Parses a value's text or number; error names the key and the candidates.
    Result<int> parseValue(const std::string &text) const;
};

/// The decisions of a strategy, in display order.
const std::vector<DecisionDef> &decisionDefs(Strategy s);
const DecisionDef *findDecision(Strategy s, const std::string &key);

/// A kernel: the ops fused into it (in program order), its strategy and decisions.
struct KernelGroup {
    std::string name;                 ///< kernel name in the generated code
    std::vector<std::string> ops;     ///< IR op names
    Strategy strategy = Strategy::Generic;
    std::map<std::string, int> values; ///< decision key -> value; missing keys take the default

    int value(const std::string &key) const;
    void set(const std::string &key, int v) { values[key] = v; }
    bool operator==(const KernelGroup &) const = default;
};

/// Which numerics the generated code may use.
enum class Precision { FP32, TF32 };
const char *precisionName(Precision p); ///< "fp32", "tf32"

struct Schedule {
    static constexpr int kVersion = 1;
    std::string arch = "sm_90";
    Precision precision = Precision::FP32; ///< tf32 allows TF32 tensor cores in GEMMs
    std::vector<KernelGroup> groups;       ///< kernels in launch order

    bool operator==(const Schedule &) const = default;
    const KernelGroup *group(const std::string &name) const;
};

/// JSON text, stable key order (the format of docs/SCHEDULE.md).
std::string toJson(const Schedule &schedule);
/// Parses schedule JSON strictly: an unknown key, a wrong type or a value outside a decision's
/// candidates is an error naming the member ("groups[0].block_m: 96 is not one of 16, 32, ...").
/// Legality against the program and the architecture is checked by validateSchedule (Space.h).
Result<Schedule> parseSchedule(const std::string &text, const std::string &fileName);

/// "gemm_bias_gelu [gemm] block_m=128 block_n=128 ..." on one line.
std::string describe(const KernelGroup &group);
/// The schedule with each group's decisions set from `describe` lines joined by "; " (how the
/// bench's calibration CSV records candidates). Names and strategies must match `base`'s groups; a
/// named group's decisions missing from its line take their defaults (DecisionDef), not `base`'s.
Result<Schedule> applyDescriptions(const Schedule &base, const std::string &text);

} // namespace stitch::schedule
