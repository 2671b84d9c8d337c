#pragma once
// Kernels that no host code launches ("lone" kernels), lifted on their own.
//   a file whose host code launches nothing -> synthesizeLoneLaunches, per __global__ kernel in
//   source order: pointer parameters -> buffers of their own, integer parameters -> sizes named
//   after the parameter, floating-point parameters -> scalar inputs; a probe run of KernelExec
//   with a symbolic grid and block -> which thread indices the kernel uses and the guards (or
//   stride loops) that bound them -> a LaunchBinding whose threads cover exactly those bounds
//   (grid = ceil(bound / block)) and host events (every buffer copied in, the launch, copied out)
//   HostProgram -> the usual pipeline (KernelExec, buildFlatOps) -> sizeLoneBuffers: each
//   buffer's element count and factors from the ranges of its accesses -> shapes, assembly
// Dataflow between kernels is not assumed: each kernel's pointer parameters are its own tensors
// (a name an earlier kernel took is prefixed with the kernel's name); sizes of the same name are
// one size.

#include "core/frontend/cudalift/HostProgram.h"
#include "core/frontend/cudalift/Shapes.h"
#include "core/frontend/cudalift/ThreadSpace.h"

#include <set>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// What the synthesized host program adds beyond buffers, launches and events.
struct LoneKernels {
    ShapeMap scalarShapes;                    ///< buffers of floating-point parameters: rank 0
    std::set<std::string> sizeNames;          ///< sizes the integer parameters introduced
};

/// Adds to host one launch per __global__ kernel of kernels (in their order), its parameters'
/// buffers and the events around it; a kernel whose launch cannot be inferred gets a launch with
/// a located refusal. Expects ctx.buffers to point at host.buffers. Never throws LiftRefusal.
LoneKernels synthesizeLoneLaunches(ProgramContext &ctx, const std::vector<KernelInfo> &kernels, HostProgram &host);

/// Sets the element count and factors of every buffer launch's lifted ops touch, from the ranges
/// of the indices they use (A[row * K + k] with row < M, k < K: M * K elements, factors M, K).
/// Throws LiftRefusal when an index may be negative or has no upper bound the lifter can prove.
void sizeLoneBuffers(const LaunchOps &ops, const HostLaunch &launch, std::vector<BufferInfo> &buffers,
                     IndexMath &math);

/// The note for a lone kernel that lifted: how it was launched and where its sizes come from.
Diagnostic loneLaunchNote(const HostLaunch &launch, const std::set<std::string> &sizeNames);

} // namespace stitch::frontend::cudalift
