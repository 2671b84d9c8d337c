#pragma once
// The runner API: measure a program on the local GPU, verified, timed, profiled and cached.
//   CLI `run` / studio / agents -> Runner::run(RunRequest) -> cache | WorkerClient -> CPU reference -> JobResult
// The Runner adds what the worker cannot do: job ids, a fresh seed per check, the CPU interpreter
// reference and the measurement cache. It never touches the GPU itself.

#include "core/common/Result.h"
#include "core/ir/Graph.h"
#include "core/ir/Shape.h"
#include "core/runner/Job.h"
#include "core/runner/JobResult.h"
#include "core/runner/WorkerClient.h"
#include "core/storage/MeasurementStore.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stitch::runner {

/// The CPU interpreter as reference: the graph, its sizes, and which tensor each buffer holds.
/// Buffers mapped to graph inputs feed the interpreter with the bytes the worker uploaded (the
/// same seed); output and in-out buffers mapped to computed tensors are compared.
struct CpuReference {
    ir::Graph graph;
    ir::SizeBindings sizes;
    std::map<std::string, std::string> tensorForBuffer; ///< buffer -> tensor; unmapped buffers use their own name
    /// In-out buffers (in-place kernels) -> the graph input their initial contents are; their
    /// tensorForBuffer entry names the tensor their final contents are checked against.
    std::map<std::string, std::string> inputTensorForBuffer;
    /// Graph inputs that are what a kernel carried unchanged wrote (codegen/Carry.h): no buffer of
    /// their own; the interpreter, which cannot run that kernel, reads zeros for them.
    std::set<std::string> carriedTensors;
    /// Buffers whose final contents the interpreter cannot compute (a carried kernel writes them,
    /// or they are computed from what one wrote): not checked, and the verification says so.
    std::set<std::string> uncheckedBuffers;
};

/// What to answer when there is no GPU: a predicted time for the whole program (the caller's
/// performance model, e.g. rubric::PerfModel for a generated program).
struct ModelEstimate {
    double ms = 0;
    std::string source;                        ///< which model, e.g. "the StitchCUDA performance model for sm_90 (...)"
};

struct RunRequest {
    Job job;
    std::optional<CpuReference> cpuReference; ///< used when job.reference (GPU) is not set
    bool remeasure = false;                    ///< skip the cache lookup (the result is still stored)
    std::optional<ModelEstimate> estimate;     ///< the answer when no GPU is present (marked estimated)
};

/// Owns one WorkerClient (one GPU) and the cache. Use it from one thread, such as the studio's
/// runner thread; cancellation comes in through the CancelCheck.
class Runner {
public:
    /// `store` may be null: no cache.
    Runner(WorkerOptions worker, std::unique_ptr<storage::MeasurementStore> store);
    ~Runner();
    Runner(const Runner &) = delete;
    Runner &operator=(const Runner &) = delete;

    /// The worker's device, starting the worker if needed (see WorkerClient::start).
    Result<WorkerInfo> device();

    /// Runs the request as the next job id. A fresh random seed is drawn unless job.fixedSeed;
    /// the result's seed reproduces the inputs. A cache hit (same program, settings, device,
    /// driver and toolkit) returns the stored result with fromCache set. Errors are typed as in
    /// WorkerClient::submit; a wrong answer is a result with verification->verified == false.
    /// Cache problems never fail a run: they are added to warnings() and the cache is dropped.
    Result<JobResult> run(RunRequest request, const CancelCheck &cancelled = {});

    /// The id the next run() will use.
    std::uint64_t nextJobId() const { return m_nextJobId.load(); }
    /// Notes for the user, e.g. "measurement cache unavailable: ...".
    const std::vector<std::string> &warnings() const { return m_warnings; }
    bool hasCache() const { return m_store != nullptr; }
    WorkerClient &client() { return m_client; }

private:
    Status verifyOnCpu(const RunRequest &request, JobResult &result);
    void dropCache(const Error &error);

    WorkerClient m_client;
    std::optional<Error> m_noDevice; ///< the first NoDevice answer, kept for the Runner's life
    std::unique_ptr<storage::MeasurementStore> m_store;
    std::atomic<std::uint64_t> m_nextJobId{1};
    std::vector<std::string> m_warnings;
};

/// The result Runner::run gives without a GPU when the request carries an estimate.
JobResult estimatedResult(std::uint64_t jobId, const Job &job, const ModelEstimate &estimate, const std::string &why);

/// Checks that every output of the plan maps to a tensor the graph computes and every graph
/// input to a buffer. InvalidArgument naming the first gap.
Status validateCpuReference(const LaunchPlan &plan, const CpuReference &reference);

/// Verifies returned outputs against the interpreter run on the inputs drawn from `seed`.
Result<Verification> verifyWithInterpreter(const LaunchPlan &plan, std::uint64_t seed, const std::vector<OutputData> &outputs,
                                           const CpuReference &reference, PrecisionPolicy precision);

} // namespace stitch::runner
