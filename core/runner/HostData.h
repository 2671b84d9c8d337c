#pragma once
// Host-side buffer contents: deterministic random inputs and typed element access.
//   Job seed + BufferSpec -> initialBytes -> worker upload | Runner's CPU reference (same bytes)
// Client and worker draw the same inputs from the same seed, so only the seed crosses the pipe.

#include "core/runner/Job.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stitch::runner {

using Bytes = std::vector<std::byte>;

/// The bytes a buffer holds before the first run: Random draws from (seed, buffer name) with
/// SplitMix64, floats uniform in [low, high] and never exactly zero, integers uniform in
/// [ceil(low), floor(high)]; Zero and Poison (0xFF) are constant; CopyOf repeats its source's
/// bytes. `plan` resolves CopyOf.
Bytes initialBytes(const LaunchPlan &plan, const BufferSpec &buffer, std::uint64_t seed);
/// The same into `out`, reusing its capacity (the worker keeps staging buffers between jobs).
void initialBytesInto(const LaunchPlan &plan, const BufferSpec &buffer, std::uint64_t seed, Bytes &out);

/// Element `index` of a typed array, widened to double (f16 and bf16 decoded exactly).
double loadElement(const std::byte *data, ir::DType dtype, std::uint64_t index);
/// Stores a double as the element type (round to nearest even for f16 and bf16; integers truncate).
void storeElement(std::byte *data, ir::DType dtype, std::uint64_t index, double value);
/// True when every byte of the element is 0xFF, the poison pattern.
bool isPoison(const std::byte *data, ir::DType dtype, std::uint64_t index);

/// Every element of a typed array as double.
std::vector<double> toDoubles(const Bytes &bytes, ir::DType dtype);

/// IEEE half and bfloat16 bit patterns <-> float (round to nearest even).
std::uint16_t floatToHalf(float value);
float halfToFloat(std::uint16_t bits);
std::uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(std::uint16_t bits);

} // namespace stitch::runner
