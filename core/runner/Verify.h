#pragma once
// Output checks: candidate bytes against reference values, with bounds by precision policy.
//   Executor (GPU reference) | Runner (CPU interpreter reference) -> compareOutput -> OutputCheck
// NaN never passes, and an element still holding the poison pattern counts as never written.

#include "core/runner/HostData.h"
#include "core/runner/JobResult.h"

#include <string>
#include <vector>

namespace stitch::runner {

/// Compares `got` (typed bytes of `spec`) with `expected` (one double per element).
/// The output passes when no element is NaN, infinite or unwritten where the reference is finite,
/// and ||got - expected|| / ||expected|| <= tolerance (the absolute norm when the reference is all
/// zero). An element is a mismatch when |got - expected| > tolerance * (|expected| + rms(expected)),
/// or when exactly one of them is not finite; the first eight are listed.
OutputCheck compareOutput(const BufferSpec &spec, const Bytes &got, const std::vector<double> &expected, double tolerance);

/// Row-major coordinates of a flat index; empty when the shape is.
std::vector<std::int64_t> unflattenIndex(std::uint64_t index, const std::vector<std::int64_t> &shape);

/// A Verification from per-output checks: verified when every output passed.
Verification makeVerification(std::string reference, PrecisionPolicy policy, std::vector<OutputCheck> outputs);

} // namespace stitch::runner
