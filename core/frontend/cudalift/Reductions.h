#pragma once
// Reductions as a programmer meant them, not as the tiling wrote them.
//   FlatOp from a tiled kernel: sum(ph < ceil(K / T), k < T) select(ph * T + k < K, A[.., ph * T + k], 0) * ...
//   -> tidyReduction -> sum(k < K) A[.., k] * ...
// Both steps are exact rewrites: the fused variable visits the same values in the same order, and
// only iterations whose term is provably the reduction's identity are dropped.

#include "core/frontend/cudalift/IndexMath.h"
#include "core/frontend/cudalift/ThreadSpace.h"

namespace stitch::frontend::cudalift {

/// Fuses reduction variables o, i (o outer, i in [0, B)) into one variable o * B + i when the body
/// uses them only in that combination, then shrinks each variable's range to where a bounds guard
/// in the body lets its term differ from the identity. Ranges of op must be declared in math.
void tidyReduction(FlatOp &op, IndexMath &math);

} // namespace stitch::frontend::cudalift
