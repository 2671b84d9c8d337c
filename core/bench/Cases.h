#pragma once
// The cases of `stitchcuda bench` (issue 4's table): one program and its sizes each. Shared by the
// bench and `stitchcuda calibrate`, which re-predicts measured candidates of these cases.
//   family:shape -> BenchCase (graph, sizes, FLOPs, bytes) -> Problem -> candidates (Sweep.h)

#include "core/ir/Graph.h"
#include "core/ir/Shape.h"
#include "core/common/Result.h"
#include "core/schedule/Schedule.h"

#include <string>
#include <vector>

namespace stitch::bench {

struct BenchCase {
    std::string family;  ///< "gemm", "softmax", ...
    std::string shape;   ///< "4096x4096x4096"
    ir::Graph graph;
    ir::SizeBindings sizes;
    double flops = 0;    ///< for TFLOP/s
    double bytes = 0;    ///< minimal DRAM traffic, for GB/s
    /// tf32 (gemm_tf32): the schedules may round GEMM operands to TF32 (tensor cores) and the
    /// result is verified with the TF32 bound.
    schedule::Precision precision = schedule::Precision::FP32;
};

/// A case of one of the families at any shape: "gemm" / "gemm_tf32" / "gemm_bias_gelu" with MxNxK,
/// "softmax" / "layernorm" / "chain5" with MxN (`stitchcuda bench --shape`); an unknown family or a
/// malformed shape is an InvalidArgument error that says what was expected.
Result<BenchCase> makeCase(const std::string &family, const std::string &shape);
/// Every case of the table (issue 4's), in table order.
std::vector<BenchCase> allCases();
/// The case of `cases` whose family and shape are these ("gemm", "1000x3000x700"), or null.
const BenchCase *findCase(const std::vector<BenchCase> &cases, const std::string &family, const std::string &shape);
/// Adds the case at this shape unless `cases` has it (a --shape case of a bench run, for calibrate).
/// Pointers into `cases` (and the Problems that refer to their graphs) do not survive it.
Status addCase(std::vector<BenchCase> &cases, const std::string &family, const std::string &shape);
/// The cases a bench run times: the table's whose "family:shape" contains one of `only` (all of them
/// when both `only` and `shapes` are empty), then each FAMILY:SHAPE of `shapes` (--shape); a malformed
/// one is an InvalidArgument error naming it.
Result<std::vector<BenchCase>> selectCases(const std::vector<std::string> &only, const std::vector<std::string> &shapes);

} // namespace stitch::bench
