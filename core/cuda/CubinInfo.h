#pragma once
// Kernel resources read from a CUBIN's ELF sections, independent of the ptxas log.
//
// NVRTC's ptxas report (the log) is the usual source of registers, shared memory and spills, but
// it is not always there: on the GPU machine NVRTC sometimes returns an empty log for a successful
// compile. The machine code itself records what the driver needs to launch each kernel:
//   .nv.info              EIATTR_REGCOUNT (0x2f) and EIATTR_FRAME_SIZE (0x11) per kernel symbol
//   .nv.info.<kernel>     EIATTR_NUM_BARRIERS (0x4c)
//   .nv.shared.<kernel>   static shared memory (section size, less the 1 KiB system window of sm_90)
// Spills are not recorded in the CUBIN; kernels read from it carry spill counts of -1 (unknown).

#include "core/common/Result.h"
#include "core/cuda/NvrtcCompiler.h"

#include <cstddef>
#include <span>
#include <vector>

namespace stitch::cuda {

/// Every kernel (`.text.<name>` section with a global function symbol) of an ELF64 CUBIN.
/// A malformed image gives an Error (never reads out of bounds).
Result<std::vector<KernelResources>> readCubinResources(std::span<const char> cubin, const std::string &arch);

} // namespace stitch::cuda
