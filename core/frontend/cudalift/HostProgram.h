#pragma once
// The host side of a CUDA program: allocations, copies and the launch sequence, in program order.
//   main (or other host entry points) -> walkHostProgram -> HostProgram {buffers, launches, events}
//   HostProgram -> KernelExec (one per lifted launch) and Assembly (versions, roles of tensors)
// Straight-line host code is followed exactly; launches inside host loops or branches are kept but
// refused, since the number of times they run is not known statically.

#include "core/frontend/cudalift/KernelExec.h"
#include "core/frontend/cudalift/KernelModel.h"
#include "core/frontend/cudalift/LiftRefusal.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// A step of the host program that changes what buffers hold, in program order.
struct HostEvent {
    enum class Kind {
        CopyIn,        ///< cudaMemcpy host -> device
        CopyOut,       ///< cudaMemcpy device -> host
        Zero,          ///< cudaMemset(..., 0, ...)
        HostWrite,     ///< the host writes managed memory
        HostRead,      ///< the host reads managed memory
        ExternalWrite, ///< something the lifter does not model writes the buffer
        DeviceCopy,    ///< cudaMemcpy device -> device (buffer <- source)
        Launch,
    };
    Kind kind = Kind::Launch;
    int buffer = -1;
    int source = -1;   ///< DeviceCopy
    int launch = -1;   ///< Launch: index into HostProgram::launches
    SourceLocation location;
};

/// One `kernel<<<grid, block>>>(args)` as the host program reaches it.
struct HostLaunch {
    LaunchBinding binding;
    std::string gridText, blockText;
    std::vector<std::string> argumentTexts;
    std::vector<int> bufferArguments;  ///< buffer of each argument, -1 for scalars and unknowns
    std::optional<Refusal> refusal;    ///< why this launch cannot be lifted
};

struct HostProgram {
    std::vector<BufferInfo> buffers;
    std::vector<HostLaunch> launches;
    std::vector<HostEvent> events;
    std::vector<Diagnostic> notes;
    /// File-scope __constant__ / __device__ variables: name -> buffer. Kernels use them by name,
    /// the host fills them with cudaMemcpyToSymbol.
    std::map<std::string, int> globals;
    /// The first host statement the walk met that the grammar could not read (it may launch
    /// kernels or change sizes the lifter does not see); launches after it are refused with it.
    std::optional<Refusal> unreadable;
};

/// Walks main (or, without main, every host function that launches kernels and that no other
/// host function calls). Never throws.
HostProgram walkHostProgram(ProgramContext &program);

} // namespace stitch::frontend::cudalift
