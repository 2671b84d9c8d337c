#pragma once
// Why a kernel (or a launch) cannot be lifted, located at the construct that blocks it.
//   symbolic evaluation / host walk -> throw LiftRefusal -> caught per kernel -> Diagnostic + OpaqueKernel
// The exception never leaves cudalift: liftCudaProgram turns each one into a located Diagnostic.

#include "core/common/Result.h"

#include <stdexcept>
#include <string>

namespace stitch::frontend::cudalift {

/// A construct that blocks lifting: where it is, what it is (the source fragment), why it blocks
/// lifting and what the user can do about it.
struct Refusal {
    SourceLocation location;
    std::string construct; ///< the source fragment, e.g. "atomicAdd(&bins[b], 1)"
    std::string why;
    std::string advice;

    /// "'<construct>': <why>. <advice>"
    std::string message() const;
};

/// Thrown inside the lifter to abandon the kernel being lifted; caught at the kernel boundary.
class LiftRefusal : public std::runtime_error {
public:
    explicit LiftRefusal(Refusal refusal)
        : std::runtime_error(refusal.message()), m_refusal(std::move(refusal))
    {
    }
    const Refusal &refusal() const { return m_refusal; }

private:
    Refusal m_refusal;
};

/// Shortens a source fragment to one line of at most 60 characters for messages.
std::string fragment(std::string_view text);

} // namespace stitch::frontend::cudalift
