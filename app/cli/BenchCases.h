#pragma once
// The cases of `stitchcuda bench` (issue 4's table): one program and its sizes each. Shared by the
// bench and `stitchcuda calibrate`, which re-predicts measured candidates of these cases.

#include "core/ir/Graph.h"
#include "core/ir/Shape.h"
#include "core/schedule/Schedule.h"

#include <string>
#include <vector>

namespace stitch::cli {

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

/// Every case, in table order.
std::vector<BenchCase> allCases();
/// The case whose family and shape are these ("gemm", "1000x3000x700"), or null.
const BenchCase *findCase(const std::vector<BenchCase> &cases, const std::string &family, const std::string &shape);

} // namespace stitch::cli
