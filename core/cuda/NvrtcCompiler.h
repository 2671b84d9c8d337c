#pragma once
// CUDA source -> NVRTC -> PTX + CUBIN + per-kernel resources (parsed from the ptxas report).
//   Source text -> NvrtcCompiler::compile -> CompileResult -> views / CLI / (later) rubric, runner
// NVRTC needs no GPU: the studio compiles and reports resources on a machine without one.

#include "core/common/Result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stitch::cuda {

/// Resource usage of one kernel as ptxas reports it for the chosen architecture.
struct KernelResources {
    std::string mangledName;  ///< e.g. _Z13matmul_naivePKfS0_Pfi
    std::string name;         ///< demangled function name without parameters, e.g. matmul_naive
    int registers = 0;        ///< registers per thread
    int sharedBytes = 0;      ///< static shared memory per block ("smem")
    int constantBytes = -1;   ///< sum of cmem[*] banks; -1 when ptxas does not report it (CUDA 13)
    int stackFrameBytes = 0;  ///< per-thread stack frame
    int spillStoreBytes = 0;  ///< -1 when unknown (resources read from the CUBIN, not the ptxas report)
    int spillLoadBytes = 0;   ///< -1 when unknown
    int barriers = 0;         ///< named barriers used
    int localBytes = 0;       ///< "lmem" (local memory) if reported
    std::string arch;         ///< "sm_90"
};

struct CompileOptions {
    std::string arch = "sm_90";          ///< target, "sm_XY"
    std::string fileName = "kernel.cu";  ///< name used in diagnostics
    bool lineInfo = true;                ///< -lineinfo (profilers map SASS to lines)
    bool fastMath = false;               ///< --use_fast_math changes results: opt-in only
    bool wantCubin = true;               ///< also produce machine code (requires a real sm_ target)
    int maxRegisters = 0;                ///< --maxrregcount, 0 = compiler's choice
    std::vector<std::string> defines;    ///< "N=1024" -> -DN=1024
    std::vector<std::string> extraOptions;
};

struct CompileResult {
    std::string ptx;
    std::vector<char> cubin;                 ///< empty when not requested
    std::vector<KernelResources> kernels;    ///< one entry per __global__ function, in report order
    std::vector<Diagnostic> diagnostics;     ///< warnings (errors fail the Result instead)
    std::string log;                         ///< the raw NVRTC log
    double compileMs = 0.0;

    const KernelResources *kernel(const std::string &name) const;
};

/// Version of the NVRTC library that is linked, e.g. {13, 0}.
struct NvrtcVersion {
    int major = 0;
    int minor = 0;
};
NvrtcVersion nvrtcVersion();

/// Architectures NVRTC can target, as "sm_XY", ascending.
std::vector<std::string> supportedArchitectures();

/// Compiles CUDA C++ source with NVRTC.
/// On failure the Error has kind Compile and one Diagnostic per compiler error, located in
/// options.fileName with line and column.
Result<CompileResult> compile(const std::string &source, const CompileOptions &options);

/// Parses NVRTC's log into diagnostics (exposed for tests). Lines look like
/// `kernel.cu(12): error: identifier "x" is undefined` followed by the source line and a caret.
std::vector<Diagnostic> parseNvrtcLog(const std::string &log, const std::string &fileName);

/// Parses the ptxas -v part of an NVRTC log into per-kernel resources (exposed for tests).
std::vector<KernelResources> parsePtxasReport(const std::string &log);

/// Demangles an Itanium C++ name and drops the parameter list: "_Z3fooPfi" -> "foo".
std::string shortKernelName(const std::string &mangled);

} // namespace stitch::cuda
