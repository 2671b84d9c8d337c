#pragma once
// Hand-written C++ versions of the corpus programs, independent of the lifter: what each program
// leaves in its device buffers, computed in double from the buffers it starts with.
//   sizes + input buffers (by host name) -> reference -> output buffers (by host name)

#include "core/ir/Shape.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace stitch::testing {

using BufferValues = std::map<std::string, std::vector<double>>;
using Reference = std::function<BufferValues(const ir::SizeBindings &, const BufferValues &)>;

/// The reference of a corpus program; empty when there is none.
Reference referenceFor(const std::string &program);

} // namespace stitch::testing
