#include "core/runner/Cublas.h"

#include "core/runner/LibraryPaths.h"

// Types and names only: libcublas is dlopen'ed, never linked. cublas_api.h declares the versioned
// entry points (cublasCreate_v2, ...) that the library exports; cublas_v2.h, which maps the plain
// names onto them with macros, is not included.
#include <cublas_api.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#define STITCH_STR2(x) #x
#define STITCH_STR(x) STITCH_STR2(x)

// Every cuBLAS entry point the worker calls; X(name) is expanded once for the member and once for dlsym.
// clang-format off
#define STITCH_CUBLAS_FUNCTIONS(X)                                                                 \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasGetVersion_v2) X(cublasSetStream_v2)            \
    X(cublasSetMathMode) X(cublasSgemm_v2) X(cublasSgemmStridedBatched)
// clang-format on

namespace stitch::runner {

struct CublasLibrary::Functions {
#define STITCH_MEMBER(name) decltype(&::name) name = nullptr;
    STITCH_CUBLAS_FUNCTIONS(STITCH_MEMBER)
#undef STITCH_MEMBER
    decltype(&::cublasGetStatusName) cublasGetStatusName = nullptr; ///< optional: names in messages
};

CublasGemmArguments cublasGemmArguments(const LibraryCall &call)
{
    CublasGemmArguments g;
    g.m = call.n;
    g.n = call.m;
    g.k = call.k;
    // B [K, N] row-major is column-major [N, K] with leading dimension N: op N. Stored [N, K] (transB)
    // it is column-major [K, N] with leading dimension K: op T.
    g.first = call.b;
    g.transFirst = call.transB;
    g.ldFirst = call.transB ? call.k : call.n;
    // A [M, K] row-major is column-major [K, M] with leading dimension K: op N. Stored [K, M]
    // (transA) it is column-major [M, K] with leading dimension M: op T.
    g.second = call.a;
    g.transSecond = call.transA;
    g.ldSecond = call.transA ? call.m : call.k;
    g.ldc = call.n;
    g.strideFirst = call.effectiveStrideB();
    g.strideSecond = call.effectiveStrideA();
    g.strideC = call.effectiveStrideC();
    g.batch = call.batch;
    return g;
}

float roundToTf32(float v)
{
    if (!std::isfinite(v))
        return v;
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    bits = (bits + 0x1000u) & ~0x1FFFu; // 13 of float's 23 mantissa bits dropped, half of them added first
    std::memcpy(&v, &bits, sizeof bits);
    return v;
}

void emulateCublasSgemm(const CublasGemmArguments &g, LibraryCall::Math math, const float *first, const float *second,
                        float *c)
{
    const bool tf32 = math == LibraryCall::Math::TF32;
    auto operand = [tf32](float v) { return tf32 ? roundToTf32(v) : v; };
    for (std::int64_t p = 0; p < g.batch; ++p) {
        const float *x = first + p * g.strideFirst, *y = second + p * g.strideSecond;
        float *out = c + p * g.strideC;
        for (std::int64_t j = 0; j < g.n; ++j)
            for (std::int64_t i = 0; i < g.m; ++i) {
                float sum = 0.0f;
                for (std::int64_t l = 0; l < g.k; ++l) {
                    const float xv = g.transFirst ? x[l + i * g.ldFirst] : x[i + l * g.ldFirst];
                    const float yv = g.transSecond ? y[j + l * g.ldSecond] : y[l + j * g.ldSecond];
                    sum = std::fma(operand(xv), operand(yv), sum);
                }
                out[i + j * g.ldc] = sum;
            }
    }
}

std::vector<std::string> cublasCandidatePaths()
{
    return libraryCandidates("STITCHCUDA_LIBCUBLAS",
                             {
#ifdef STITCHCUDA_CUBLAS_LIBRARY
                                 STITCHCUDA_CUBLAS_LIBRARY,
#endif
                                 "libcublas.so.13", "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.13",
                                 "/usr/local/cuda/lib64/libcublas.so.12",
                                 "/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.13",
                                 "/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.12"});
}

CublasLibrary::CublasLibrary() : m_fn(std::make_unique<Functions>()) {}

CublasLibrary::~CublasLibrary() = default;

std::string CublasLibrary::statusName(int status) const
{
    if (m_fn->cublasGetStatusName)
        if (const char *name = m_fn->cublasGetStatusName(static_cast<cublasStatus_t>(status)))
            return name;
    return "cuBLAS status " + std::to_string(status);
}

Result<std::shared_ptr<CublasLibrary>> openCublas(const std::vector<std::string> &candidates)
{
    std::string tried;
    for (const auto &path : candidates) {
        tried += tried.empty() ? "" : "; ";
        void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *why = dlerror();
            tried += why ? std::string(why) : path + ": cannot be opened";
            continue;
        }
        std::shared_ptr<CublasLibrary> lib(new CublasLibrary());
        lib->m_path = path;
        CublasLibrary::Functions &f = *lib->m_fn;
        std::string missing;
#define STITCH_RESOLVE(name)                                                                                           \
    f.name = reinterpret_cast<decltype(f.name)>(dlsym(handle, STITCH_STR(name)));                                      \
    if (!f.name && missing.empty())                                                                                    \
        missing = STITCH_STR(name);
        STITCH_CUBLAS_FUNCTIONS(STITCH_RESOLVE)
#undef STITCH_RESOLVE
        if (!missing.empty()) {
            // Nothing of it ran yet: it can go again.
            dlclose(handle);
            tried += path + " lacks " + missing;
            continue;
        }
        f.cublasGetStatusName = reinterpret_cast<decltype(f.cublasGetStatusName)>(dlsym(handle, "cublasGetStatusName"));
        return lib;
    }
    return makeError(ErrorKind::Unsupported, "cuBLAS not found (tried " + tried + "; set STITCHCUDA_LIBCUBLAS)");
}

namespace {

Error cublasError(const CublasLibrary &lib, const std::string &call, cublasStatus_t status)
{
    ErrorKind kind = ErrorKind::Launch;
    switch (status) {
    case CUBLAS_STATUS_INVALID_VALUE:
        kind = ErrorKind::InvalidArgument;
        break;
    case CUBLAS_STATUS_ALLOC_FAILED:
        kind = ErrorKind::OutOfMemory;
        break;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_LICENSE_ERROR:
        kind = ErrorKind::Unsupported;
        break;
    // A kernel of cuBLAS failed, or a CUDA call inside it: the context may be lost, as after a fault.
    case CUBLAS_STATUS_EXECUTION_FAILED:
    case CUBLAS_STATUS_INTERNAL_ERROR:
        kind = ErrorKind::Fault;
        break;
    default:
        break;
    }
    return makeError(kind, call + " failed: " + lib.statusName(status) + " (" + std::to_string(int(status)) + ")");
}

} // namespace

Result<std::unique_ptr<CublasSession>> CublasSession::create(std::shared_ptr<const CublasLibrary> library, void *stream)
{
    const auto &f = library->fn();
    std::unique_ptr<CublasSession> s(new CublasSession());
    s->m_library = std::move(library);
    cublasHandle_t handle = nullptr;
    if (cublasStatus_t rc = f.cublasCreate_v2(&handle); rc != CUBLAS_STATUS_SUCCESS)
        return annotate(cublasError(*s->m_library, "cublasCreate", rc), "cuBLAS from " + s->m_library->path());
    s->m_handle = handle;
    if (cublasStatus_t rc = f.cublasSetStream_v2(handle, static_cast<cudaStream_t>(stream));
        rc != CUBLAS_STATUS_SUCCESS)
        return cublasError(*s->m_library, "cublasSetStream", rc);
    if (f.cublasGetVersion_v2(handle, &s->m_version) != CUBLAS_STATUS_SUCCESS)
        s->m_version = 0;
    return s;
}

CublasSession::~CublasSession()
{
    if (m_handle)
        m_library->fn().cublasDestroy_v2(static_cast<cublasHandle_t>(m_handle));
}

std::string CublasSession::describe() const
{
    std::string version = m_version > 0
                              ? std::to_string(m_version / 10000) + "." + std::to_string(m_version / 100 % 100) + "." +
                                    std::to_string(m_version % 100)
                              : std::string("(version unknown)");
    return "cuBLAS " + version + " (" + m_library->path() + ")";
}

Status CublasSession::sgemm(const LibraryCall &call, std::uint64_t a, std::uint64_t b, std::uint64_t c)
{
    const auto &f = m_library->fn();
    auto *handle = static_cast<cublasHandle_t>(m_handle);
    // Per call: two calls of one job may differ. A host-side setting, no GPU work.
    const cublasMath_t mode = call.math == LibraryCall::Math::TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
    if (cublasStatus_t rc = f.cublasSetMathMode(handle, mode); rc != CUBLAS_STATUS_SUCCESS)
        return cublasError(*m_library, "cublasSetMathMode", rc);
    const CublasGemmArguments g = cublasGemmArguments(call);
    const auto device = [](std::uint64_t address) {
        return reinterpret_cast<float *>(static_cast<std::uintptr_t>(address));
    };
    const float *first = device(b), *second = device(a); // B first: cublasGemmArguments
    float *out = device(c);
    const cublasOperation_t opFirst = g.transFirst ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opSecond = g.transSecond ? CUBLAS_OP_T : CUBLAS_OP_N;
    const float one = 1.0f, zero = 0.0f;
    const auto i32 = [](std::int64_t v) { return static_cast<int>(v); }; // validateJob bounds them
    cublasStatus_t rc;
    if (g.batch == 1)
        rc = f.cublasSgemm_v2(handle, opFirst, opSecond, i32(g.m), i32(g.n), i32(g.k), &one, first, i32(g.ldFirst),
                              second, i32(g.ldSecond), &zero, out, i32(g.ldc));
    else
        rc = f.cublasSgemmStridedBatched(handle, opFirst, opSecond, i32(g.m), i32(g.n), i32(g.k), &one, first,
                                         i32(g.ldFirst), g.strideFirst, second, i32(g.ldSecond), g.strideSecond, &zero,
                                         out, i32(g.ldc), g.strideC, i32(g.batch));
    if (rc != CUBLAS_STATUS_SUCCESS)
        return cublasError(*m_library, g.batch == 1 ? "cublasSgemm" : "cublasSgemmStridedBatched", rc);
    return Ok{};
}

} // namespace stitch::runner
