#pragma once
// Template kernels and device functions, instantiated where they are called.
//   parsed file -> instantiateTemplates -> instances appended to the text (each after a #line naming
//   its template, so messages point into the template) -> parse again -> HostProgram / KernelExec
//   look a call's start byte up in TemplateInstances::calls and follow the instance
// Arguments are the call's explicit ones (`K<16, float><<<...>>>`), the template's defaults, and
// types deduced from the call's arguments where each is a variable, parameter or literal whose type
// the enclosing function declares (`K<<<g, b>>>(d_a, n)` with `float *d_a`). What cannot be
// instantiated is a Refusal at the call, naming the template argument.

#include "core/frontend/cudalift/LiftRefusal.h"
#include "core/frontend/cudalift/SyntaxTree.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace stitch::frontend::cudalift {

struct TemplateInstances {
    std::string appendix;                          ///< the instances' text, appended to the file's
    std::map<std::uint32_t, std::string> calls;    ///< a call's start byte -> the instance it calls
    std::map<std::uint32_t, Refusal> refused;      ///< a call's start byte -> why it has no instance
    std::map<std::string, std::string> instances; ///< "K<16, float>" -> "K_16_float"
    std::set<std::string> templatesUsed;           ///< templates with an instance
    bool grew = false;                             ///< this round added instances (parse again)
};

/// One round over tree (the file's text followed by earlier rounds' appendix): every call of a
/// __global__ / __device__ function template outside a template's own body that `previous` has not
/// seen gets its instance or refusal. Calls inside the new instances are found by the next round.
TemplateInstances instantiateTemplates(const SyntaxTree &tree, const TemplateInstances &previous);

} // namespace stitch::frontend::cudalift
