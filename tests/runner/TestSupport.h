#pragma once
// Shared fixtures of the runner tests: temporary folders, small jobs and their IR references.

#include "core/frontend/Lift.h"
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

} // namespace stitch::fixtures
