#pragma once
// A lifted program as reviewable text: the graph, sizes, launches, opaque kernels, diagnostics.
//   CudaLiftDetail -> describeLift -> tests/lift/expected/NAME.txt (golden, reviewed by hand)

#include "core/frontend/cudalift/CudaLift.h"

#include <string>

namespace stitch::testing {

/// Locations are printed as line:col so the text does not depend on where the corpus lives.
std::string describeLift(const frontend::cudalift::CudaLiftDetail &detail);

} // namespace stitch::testing
