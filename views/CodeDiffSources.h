#pragma once
// What the Code view compares, from an Optimize result: the program at each step of the agents'
// timeline (regenerated from the schedule the trace recorded for it), and its PTX or SASS.
//   SourceResult + timeline row -> programAt (codegen::generateProgram) -> codeOf (NVRTC PTX,
//   cuobjdump / nvdisasm SASS) -> text to diff
// Plain functions, called on the Code view's worker thread (NVRTC takes seconds; a tool runs
// as a child process).

#include "core/agents/Session.h"
#include "core/common/Result.h"

#include <QString>

#include <string>

namespace stitch::views {

/// One program of the timeline.
struct TimelineProgram {
    QString title;       ///< "As written: matmul_naive.cu", "After step 3: memory_access.block_k@gemm = 32"
    std::string source;  ///< CUDA
    bool asWritten = false; ///< the user's .cu (compiled as a whole program: host code left out)
};

/// The timeline's rows as the Agents dock numbers them: 0 Parse (the program as written; for a .te,
/// which has no CUDA, the generic schedule's program), 1..N the decisions (the program as it stood
/// once each was taken), N + 1 Stitch (the agents' final program).
int timelineRows(const agents::SourceResult &result);
/// The program at timeline row `row`. Errors: no such row, a trace without per-step schedules, a
/// schedule codegen refuses.
Result<TimelineProgram> programAt(const agents::SourceResult &result, int row);
/// The Step box's name for comparing row `row` with the row before: "Step 3: memory_access.block_k@gemm = 32".
QString stepName(const agents::SourceResult &result, int row);

enum class CodeForm { Cuda, Ptx, Sass };

/// The program's code in `form` for `arch`: its CUDA as is, NVRTC's PTX, or the SASS of NVRTC's
/// CUBIN as `sassTool()` disassembles it (addresses and encodings dropped: they would make every
/// line after an insertion differ). `fileName` names the user's file (include folder, diagnostics).
Result<std::string> codeOf(const TimelineProgram &program, CodeForm form, const std::string &arch,
                           const std::string &fileName);

/// cuobjdump (or nvdisasm) from the CUDA toolkit's bin folder or PATH; empty when neither is there.
QString sassTool();
/// A cuobjdump -sass or nvdisasm listing with the `/*0040*/` addresses and `/* 0x... */` encodings
/// removed and blanks collapsed: one instruction per line, as it reads.
std::string normalizeSassListing(const std::string &listing);

} // namespace stitch::views
