#pragma once
// cuBLAS for the plans' library calls (LibraryCall, Job.h): the library reference a generated GEMM
// is timed beside.
//   Executor: a library step -> CublasSession::sgemm -> libcublas (dlopen'ed) on the job's stream
//   fake worker, tests: cublasGemmArguments -> emulateCublasSgemm (the same call on the host)
// libcublas is never linked: a machine without it still runs and times kernels, and a library call
// there is an Unsupported error naming every path tried.

#include "core/common/Result.h"
#include "core/runner/Job.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stitch::runner {

/// cublasSgemm's arguments for a row-major LibraryCall. cuBLAS is column-major, and a row-major
/// matrix is its transpose read column-major, so C[M, N] = op(A) op(B) is computed as the
/// column-major C^T[N, M] = op(B)^T op(A)^T: cublasSgemm(opB, opA, N, M, K, B, ldb, A, lda, C, N).
/// No copy, no transposition pass: the same bytes, read the other way round.
struct CublasGemmArguments {
    bool transFirst = false;  ///< CUBLAS_OP_T for the first operand (B)
    bool transSecond = false; ///< CUBLAS_OP_T for the second operand (A)
    std::int64_t m = 0;       ///< cuBLAS's m: the call's N
    std::int64_t n = 0;       ///< cuBLAS's n: the call's M
    std::int64_t k = 0;
    std::string first;  ///< the buffer passed as cuBLAS's A: the call's B
    std::string second; ///< the buffer passed as cuBLAS's B: the call's A
    std::int64_t ldFirst = 0, ldSecond = 0, ldc = 0;
    std::int64_t strideFirst = 0, strideSecond = 0, strideC = 0;
    std::int64_t batch = 1;
};
CublasGemmArguments cublasGemmArguments(const LibraryCall &call);

/// What cublasSgemm (or its strided-batched form) computes with these arguments, on the host:
/// column-major, alpha 1, beta 0, a float sum in k order; under TF32 each operand is first rounded
/// to TF32 (10 mantissa bits), as the tensor cores read it. The fake worker answers library calls
/// with it, so the row-major mapping above is checked without a GPU.
void emulateCublasSgemm(const CublasGemmArguments &args, LibraryCall::Math math, const float *first,
                        const float *second, float *c);

/// The float nearest to v with 10 mantissa bits (TF32), ties away from zero (cvt.rna.tf32.f32).
float roundToTf32(float v);

/// Where libcublas is looked for, in order: only $STITCHCUDA_LIBCUBLAS when it is set (a test or a
/// user points at one file, or at none), else the toolkit's found at configure time, the sonames
/// libcublas.so.13 and .12 on the loader's path, and the usual CUDA folders.
std::vector<std::string> cublasCandidatePaths();

class CublasLibrary;

/// Loads the first candidate that opens and has every entry point. Unsupported when none does,
/// naming each path tried and why it failed.
Result<std::shared_ptr<CublasLibrary>> openCublas(const std::vector<std::string> &candidates = cublasCandidatePaths());

/// A dlopen'ed libcublas and the entry points the worker calls. The handle is never closed: the
/// library carries the CUDA runtime inside, which must not be torn down under a live context.
class CublasLibrary {
public:
    struct Functions; ///< the resolved entry points (Cublas.cpp)
    ~CublasLibrary();
    CublasLibrary(const CublasLibrary &) = delete;
    CublasLibrary &operator=(const CublasLibrary &) = delete;

    const std::string &path() const { return m_path; }
    const Functions &fn() const { return *m_fn; }
    /// "CUBLAS_STATUS_X" (through cublasGetStatusName where it resolves).
    std::string statusName(int status) const;

private:
    friend Result<std::shared_ptr<CublasLibrary>> openCublas(const std::vector<std::string> &candidates);
    CublasLibrary();

    std::string m_path;
    std::unique_ptr<Functions> m_fn;
};

/// A cuBLAS handle on the calling thread's current CUDA context, its work queued on one stream.
/// Only inside the worker (ARCHITECTURE.md: kernels run out of process), like the Executor that owns it.
class CublasSession {
public:
    /// cublasCreate + cublasSetStream(stream), a CUstream.
    static Result<std::unique_ptr<CublasSession>> create(std::shared_ptr<const CublasLibrary> library, void *stream);
    ~CublasSession();
    CublasSession(const CublasSession &) = delete;
    CublasSession &operator=(const CublasSession &) = delete;

    /// Queues the call on the stream (asynchronous, like a kernel launch); the addresses are the
    /// device addresses of the call's A, B and C. Errors by cuBLAS status: InvalidArgument (invalid
    /// value), OutOfMemory (its workspace), Unsupported (not supported, architecture mismatch),
    /// Fault (execution failed, internal error: the context may be lost), Launch otherwise.
    Status sgemm(const LibraryCall &call, std::uint64_t a, std::uint64_t b, std::uint64_t c);

    /// "cuBLAS 13.1.0 (/usr/local/cuda/lib64/libcublas.so.13)".
    std::string describe() const;

private:
    CublasSession() = default;

    std::shared_ptr<const CublasLibrary> m_library;
    void *m_handle = nullptr;
    int m_version = 0;
};

} // namespace stitch::runner
