#pragma once
// Shared fixtures of the runner tests: temporary folders, small jobs and their IR references.

#include "core/frontend/Lift.h"
#include "core/ir/GraphBuilder.h"
#include "core/runner/Job.h"
#include "core/runner/Runner.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace stitch::fixtures {

/// The worker under test: $STITCHCUDA_WORKER when set (a build copied elsewhere), else the one built here.
inline std::string workerPath()
{
    const char *env = std::getenv("STITCHCUDA_WORKER");
    return env && *env ? env : STITCHCUDA_WORKER_PATH;
}

/// The source tree (examples/): $STITCHCUDA_SOURCE_DIR when set, else the one this was built from.
inline std::string sourceDir()
{
    const char *env = std::getenv("STITCHCUDA_SOURCE_DIR");
    return env && *env ? env : STITCHCUDA_SOURCE_DIR;
}

/// A fresh folder under the system's temp dir, removed with the object.
class TempDir {
public:
    TempDir()
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / "stitchcuda-test-XXXXXX").string();
        // A failure is the test's, said with its reason (not a null pointer turned into a string).
        const char *made = ::mkdtemp(tmpl.data());
        if (!made)
            throw std::runtime_error("cannot create a temporary folder " + tmpl + ": " + std::strerror(errno));
        m_path = made;
    }
    ~TempDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    const std::string &path() const { return m_path; }
    std::string file(const std::string &name) const { return (std::filesystem::path(m_path) / name).string(); }

private:
    std::string m_path;
};

/// C[i] = A[i] + B[i] over n float32 elements: kernel(A, B, C, n), one thread per element.
inline runner::Job addJob(const std::string &kernel, std::uint64_t n, std::vector<char> module = {'c', 'u', 'b', 'i', 'n'})
{
    using namespace runner;
    Job job;
    job.module = std::move(module);
    job.plan.buffers = {BufferSpec{"A", ir::DType::F32, n, {}, BufferRole::Input, {}},
                        BufferSpec{"B", ir::DType::F32, n, {}, BufferRole::Input, {}},
                        BufferSpec{"C", ir::DType::F32, n, {}, BufferRole::Output, {}}};
    KernelLaunch l;
    l.kernel = kernel;
    l.config.blockX = 256;
    l.config.gridX = static_cast<unsigned>((n + 255) / 256);
    l.args = {KernelArg::buffer("A"), KernelArg::buffer("B"), KernelArg::buffer("C"),
              KernelArg::scalar(ir::DType::I32, static_cast<std::int64_t>(n))};
    job.plan.launches = {l};
    job.measure.warmup = 1;
    job.measure.repeats = 5;
    job.deadlineMs = 20000;
    return job;
}

/// The IR of addJob: C = A + B with N elements.
inline runner::CpuReference addReference(std::int64_t n)
{
    const char *te = "graph add\n"
                     "size N = 16\n"
                     "input A: f32[N]\n"
                     "input B: f32[N]\n"
                     "output C: f32[N]\n"
                     "C[i] = A[i] + B[i]\n";
    auto lifted = frontend::liftTensorExpressions(te, "add.te");
    EXPECT_TRUE(lifted.ok()) << (lifted ? "" : lifted.error().toString());
    runner::CpuReference ref;
    if (lifted) {
        ref.graph = lifted->graph;
        ref.sizes = lifted->sizes;
    }
    ref.sizes["N"] = n;
    return ref;
}

/// The shape of a cuBLAS SGEMM test: C = op(A) op(B), row-major; A [M, K] ([K, M] when transA),
/// B [K, N] ([N, K] when transB). With batch > 1, A and C hold one matrix per batch entry and B
/// is one matrix for all of them when sharedB (stride 0), else one per entry too.
struct Sgemm {
    std::int64_t m = 48, n = 40, k = 24;
    bool transA = false, transB = false;
    std::int64_t batch = 1;
    bool sharedB = false;
    runner::LibraryCall::Math math = runner::LibraryCall::Math::FP32;
};

/// A job of one cuBLAS SGEMM (no kernel, no module) over buffers A, B, C.
inline runner::Job sgemmJob(const Sgemm &s)
{
    using namespace runner;
    Job job;
    const std::uint64_t batch = static_cast<std::uint64_t>(s.batch);
    const std::uint64_t mk = static_cast<std::uint64_t>(s.m * s.k), kn = static_cast<std::uint64_t>(s.k * s.n);
    job.plan.buffers = {
        BufferSpec{"A", ir::DType::F32, batch * mk, {}, BufferRole::Input, {}},
        BufferSpec{"B", ir::DType::F32, s.sharedB ? kn : batch * kn, {}, BufferRole::Input, {}},
        BufferSpec{"C", ir::DType::F32, batch * static_cast<std::uint64_t>(s.m * s.n), {}, BufferRole::Output, {}}};
    LibraryCall call;
    call.math = s.math;
    call.a = "A", call.b = "B", call.c = "C";
    call.m = s.m, call.n = s.n, call.k = s.k;
    call.batch = s.batch;
    call.transA = s.transA, call.transB = s.transB;
    if (s.sharedB)
        call.strideB = 0;
    job.plan.launches = {KernelLaunch::libraryCall(call)};
    job.precision = s.math == LibraryCall::Math::TF32 ? PrecisionPolicy::TF32 : PrecisionPolicy::FP32;
    job.measure.warmup = 1;
    job.measure.repeats = 5;
    job.deadlineMs = 60000;
    return job;
}

/// The IR of sgemmJob: C[(p,) i, j] = sum(k) A[(p,) i, k] * B[(p,) k, j], with A[k, i] and B[j, k]
/// read where transposed.
inline runner::CpuReference sgemmReference(const Sgemm &s)
{
    using namespace ir;
    GraphBuilder b("sgemm");
    const Expr M = sizeVar("M"), N = sizeVar("N"), K = sizeVar("K"), P = sizeVar("P");
    const bool batched = s.batch > 1;
    auto shape = [&](std::vector<Expr> dims, bool perEntry) {
        if (batched && perEntry)
            dims.insert(dims.begin(), P);
        return Shape(dims);
    };
    const Tensor A =
        b.input("A", DType::F32, shape(s.transA ? std::vector<Expr>{K, M} : std::vector<Expr>{M, K}, true));
    const Tensor B =
        b.input("B", DType::F32, shape(s.transB ? std::vector<Expr>{N, K} : std::vector<Expr>{K, N}, !s.sharedB));
    const Tensor C = b.output("C", DType::F32, shape({M, N}, true));
    const Expr p = var("p"), i = var("i"), j = var("j"), k = var("k");
    auto read = [&](const Tensor &t, Expr r, Expr c, bool perEntry) {
        return batched && perEntry ? t(p, r, c) : t(r, c);
    };
    const Expr a = s.transA ? read(A, k, i, true) : read(A, i, k, true);
    const Expr bv = s.transB ? read(B, j, k, !s.sharedB) : read(B, k, j, !s.sharedB);
    if (batched)
        b.compute(C, {p, i, j}, reduceSum({{"k", K}}), a * bv);
    else
        b.compute(C, {i, j}, reduceSum({{"k", K}}), a * bv);
    runner::CpuReference ref;
    auto graph = b.build();
    EXPECT_TRUE(graph.ok()) << (graph ? "" : graph.error().toString());
    if (graph)
        ref.graph = *graph;
    ref.sizes = {{"M", s.m}, {"N", s.n}, {"K", s.k}};
    if (batched)
        ref.sizes["P"] = s.batch;
    return ref;
}

} // namespace stitch::fixtures
