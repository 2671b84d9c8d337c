#include "tests/lift/LiftGolden.h"

namespace stitch::testing {

std::string describeLift(const frontend::cudalift::CudaLiftDetail &detail)
{
    const frontend::LiftedProgram &p = detail.program;
    std::string text = p.graph.toString();
    text += "sizes:";
    for (const auto &[name, value] : p.sizes)
        text += " " + name + "=" + std::to_string(value);
    text += "\n";
    for (const frontend::LiftedLaunch &l : p.launches) {
        text += "launch " + l.kernel + "<<<" + l.grid + ", " + l.block + ">>> ->";
        if (l.ops.empty())
            text += " (opaque)";
        for (const std::string &op : l.ops)
            text += " " + op;
        text += "\n";
    }
    for (const frontend::OpaqueKernel &k : p.opaque) {
        text += "opaque " + k.name + " reads [";
        for (std::size_t i = 0; i < k.reads.size(); ++i)
            text += (i ? ", " : "") + k.reads[i];
        text += "] writes [";
        for (std::size_t i = 0; i < k.writes.size(); ++i)
            text += (i ? ", " : "") + k.writes[i];
        text += "]\n";
    }
    for (const Diagnostic &d : p.diagnostics) {
        text += std::string(severityName(d.severity)) + " " + std::to_string(d.location.line) + ":"
            + std::to_string(d.location.column) + ": " + d.message + "\n";
    }
    return text;
}

} // namespace stitch::testing
