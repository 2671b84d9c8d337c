#pragma once
// What the runner reports for one job: verification, timing, per-kernel profile, provenance.
//   worker Executor / measurement cache -> JobResult -> Runner -> CLI (text, JSON), studio, agents
// A wrong answer is a JobResult with verified == false, never an Error.

#include "core/common/Result.h"
#include "core/ir/DType.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::runner {

/// One element that differs from the reference beyond the tolerance.
struct Mismatch {
    std::uint64_t index = 0;          ///< flat, row-major
    std::vector<std::int64_t> coords; ///< multi-dimensional, when the buffer has a shape
    double got = 0.0;
    double expected = 0.0;
};

/// The comparison of one output buffer with its reference.
struct OutputCheck {
    std::string buffer;
    std::uint64_t elements = 0;
    double relativeError = 0.0;       ///< ||out - ref|| / ||ref|| (||out - ref|| when ref is zero); NaN if any NaN
    double maxAbsError = 0.0;
    std::uint64_t mismatchCount = 0;  ///< elements beyond the tolerance, NaN included
    std::uint64_t unwrittenCount = 0; ///< elements still holding the poison pattern
    std::uint64_t nanCount = 0;       ///< NaN or infinite elements that are not poison
    bool passed = false;
    std::vector<Mismatch> firstMismatches; ///< up to 8, in index order
};

struct Verification {
    bool verified = false;
    std::string reference;            ///< "gpu" (original program) or "cpu" (IR interpreter)
    std::string precision;            ///< policy name
    double tolerance = 0.0;
    std::vector<OutputCheck> outputs;
    /// Outputs the reference could not compute (what a kernel carried unchanged wrote, and what
    /// follows from it): not checked. Verified means every other output matched.
    std::vector<std::string> unchecked;
};

/// CUDA-event timing of the whole program (all launches), over repeated runs.
struct Timing {
    double medianMs = 0.0;
    double minMs = 0.0;
    double maxMs = 0.0;
    double meanMs = 0.0;
    int warmup = 0;
    int repeats = 0;
    std::uint64_t l2FlushBytes = 0;   ///< 0 when L2 was not flushed
    std::vector<double> samplesMs;

    /// max - min: the spread two measurements of one program are compared against.
    double spreadMs() const { return maxMs - minMs; }
};

/// One kernel as CUPTI's activity record saw it.
struct KernelProfile {
    std::string name;                 ///< demangled, without parameters
    std::string mangledName;
    double durationUs = 0.0;
    int registers = 0;
    int staticSharedBytes = 0;
    int dynamicSharedBytes = 0;
    int localBytesPerThread = 0;
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
};

struct Profile {
    bool available = false;           ///< false: `message` says why (e.g. another profiler attached)
    std::string message;
    std::vector<KernelProfile> kernels; ///< in launch order
};

/// Hardware counters of one kernel launch, from CUPTI range profiling (one range per launch).
struct KernelMetrics {
    std::string name;                 ///< demangled, without parameters
    std::string mangledName;          ///< as in the plan
    int launch = 0;                   ///< index into the plan's launches, from 0
    std::string range;                ///< CUPTI's name of the range (automatic ranges are numbered)
    std::map<std::string, double> values;  ///< CUPTI / Nsight Compute metric name -> value (docs/RUNNER.md)
    std::map<std::string, double> derived; ///< figures computed from `values`, e.g. globalLoadSectorsPerRequest
};

/// The hardware-counter run (MeasureOptions::metrics): one more run of the whole program, after
/// timing, with every kernel replayed as often as the counters need.
struct MetricsReport {
    bool available = false;           ///< false: `message` says why (counters not permitted, CUPTI missing, ...)
    std::string message;              ///< why not; or notes (metrics the chip lacks, ranges CUPTI dropped)
    std::string chip;                 ///< CUPTI's chip name, e.g. "GH100"
    int passes = 0;                   ///< replays per kernel the metrics needed
    std::vector<std::string> dropped; ///< requested metrics this chip does not know
    std::vector<KernelMetrics> kernels; ///< in launch order
};

/// Device, driver and toolkit of a measurement: part of its cache key.
struct DeviceIdentity {
    std::string name;                 ///< "NVIDIA H200"
    std::string arch;                 ///< "sm_90"
    int ordinal = 0;
    int driverVersion = 0;            ///< cuDriverGetVersion, e.g. 13000
    std::string toolkitVersion;       ///< the worker's CUDA toolkit (NVRTC), e.g. "13.0"
    int multiprocessors = 0;
    std::uint64_t l2CacheBytes = 0;
    std::uint64_t memoryBytes = 0;
};

/// An output buffer's bytes after the first run (MeasureOptions::returnOutputs).
struct OutputData {
    std::string buffer;
    ir::DType dtype = ir::DType::F32;
    std::vector<std::byte> bytes;
};

struct JobResult {
    std::uint64_t jobId = 0;
    std::string programHash;
    std::uint64_t seed = 0;
    DeviceIdentity device;
    std::optional<Verification> verification;
    std::optional<Timing> timing;
    std::optional<Profile> profile;
    std::optional<MetricsReport> metrics; ///< when MeasureOptions::metrics asked for it
    std::vector<OutputData> outputs;
    double firstRunMs = 0.0;          ///< GPU time of the first (checked) run, launches synchronised one by one
    double workerMs = 0.0;            ///< wall time the worker spent on the job
    int workerPid = 0;
    bool fromCache = false;
    /// No GPU ran it: the timing is the performance model's prediction (estimateSource says which),
    /// nothing was verified or profiled.
    bool estimated = false;
    std::string estimateSource;
    std::string measuredAt;           ///< UTC, ISO 8601, when the worker ran it
    /// The libraries the plan's library calls ran in, e.g. "cuBLAS 13.0.2
    /// (/usr/local/cuda/lib64/libcublas.so.13)"; empty when the plan calls none.
    std::string library;

    /// Ok, or a WrongAnswer error that names the first failing output: for callers that treat a
    /// wrong answer as a failure.
    Status asStatus() const;
};

} // namespace stitch::runner
