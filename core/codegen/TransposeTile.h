#pragma once
// transpose_b=on's pass (GemmTranspose.cpp): B goes to the transposed workspace through 64 x 64
// tiles of shared memory, 256 threads per tile, each tile row (along k) 16 chunks of 4 floats with
// chunk n / 4 stored at (n / 4) ^ ((k / 4) % 8). The code generator writes these figures into the
// kernel; the rubric's replay (core/rubric/GemmStreams.cpp) computes its addresses with them.
namespace stitch::codegen::transpose {

inline constexpr int kTile = 64;     ///< tile edge, in floats (k and n)
inline constexpr int kThreads = 256; ///< threads per tile

/// The float index of element (k, n) in the tile: the kernel's at_(k, n).
constexpr int tileIndex(int k, int n) { return k * kTile + (((n >> 2) ^ ((k >> 2) & 7)) << 2) + (n & 3); }

} // namespace stitch::codegen::transpose
