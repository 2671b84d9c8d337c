#pragma once
// NVRTC results kept on disk between runs, keyed by source hash, architecture and NVRTC version.
//   generated source -> CompileCache (memory) -> CompileStore::load (hit) | compileGenerated -> CompileStore::save
// The disk layer of rubric::CompileCache (Rubric.h), which is how callers use it:
// `stitchcuda calibrate --cache DIR` re-predicts stored measurements after a model change without
// compiling every candidate again (963 cp.async GEMMs: 27 min of NVRTC on two cores, seconds from disk).
// Only what the rubric reads is kept: the PTX, the per-kernel resources and the CUBIN (its SASS
// is scanned for the hot loop, core/cuda/SassScan.h); not the log.

#include "core/common/Result.h"
#include "core/cuda/NvrtcCompiler.h"

#include <optional>
#include <string>

namespace stitch::rubric {

class CompileStore {
public:
    /// Entries live in `directory` (created on the first save).
    explicit CompileStore(std::string directory);

    /// The stored result of `source` for `arch`; nullopt when absent, unreadable or written by
    /// another format or NVRTC version (the caller compiles again and saves).
    std::optional<cuda::CompileResult> load(const std::string &source, const std::string &arch) const;
    /// Writes the entry through a temporary file and a rename, so a reader never sees half of one.
    Status save(const std::string &source, const std::string &arch, const cuda::CompileResult &result) const;

    /// The file an entry of `source` for `arch` is kept in.
    std::string entryPath(const std::string &source, const std::string &arch) const;

private:
    std::string m_directory;
};

} // namespace stitch::rubric
