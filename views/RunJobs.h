#pragma once
// The Run dock's work, as plain C++ over core (no Qt): what the runner thread computes.
//   agents::SourceResult (the last Optimize) -> the optimized program (toLaunchPlan + NVRTC) and the
//   program before it (a .cu as written: asWrittenProgram + compileAsWritten; a .te, or a .cu whose
//   host code cannot run as written: the generic schedule) and, where the optimized schedule has
//   GEMM kernels, the library reference (one cuBLAS SGEMM per GEMM: runner::LibraryCall) ->
//   runner::Runner (the worker process: verification, timing, CUPTI) -> RunReport
//   no GPU (Runner::device() fails) -> rubric::PerfModel's times, every figure marked estimated; the
//   library reference has no estimate and says so
// Nothing here touches the GPU itself: a faulting kernel costs the worker process, never the studio.

#include "core/agents/Session.h"
#include "core/arch/ArchDatabase.h"
#include "core/rubric/RubricDimension.h"
#include "core/runner/JobResult.h"
#include "core/runner/Runner.h"
#include "core/schedule/Space.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stitch::views {

/// What a run needs, copied when it starts (the window may change meanwhile).
struct RunInput {
    std::shared_ptr<const agents::SourceResult> optimized; ///< the last Optimize
    frontend::SourceOptions source;                        ///< -I / -D the .cu was lifted with
    std::string arch = "sm_90";                            ///< the studio's target (without a GPU)
    bool metrics = true;                                   ///< CUPTI hardware counters when a GPU runs it
    int repeats = 20;                                      ///< timed runs per program
};

/// One kernel on the roofline: FLOPs and bytes from the model's facts, its time measured (CUPTI's
/// kernel duration) or predicted.
struct RooflinePoint {
    std::string kernel;
    double flops = 0;
    double bytes = 0;      ///< DRAM bytes: CUPTI's when measured, else every tensor it touches once
    double ms = 0;
    bool measured = false; ///< false: the model's prediction
    std::string bound;     ///< the model's limiting term ("compute", "DRAM", ...)
    bool bytesMeasured = false;

    double intensity() const { return bytes > 0 ? flops / bytes : 0; }   ///< FLOP per byte
    double gflops() const { return ms > 0 ? flops / (ms * 1e6) : 0; }     ///< achieved or predicted
};

/// A figure the metrics table shows for one kernel.
struct MetricRow {
    std::string kernel;
    std::string quantity;
    std::string value;
    bool measured = false; ///< CUPTI; false: the static rubric's evidence (the model's numbers)
};

/// One program of the run: the optimized program, one it is compared with, or the library reference.
struct ProgramRun {
    enum class Role {
        Optimized,
        AsWritten,
        Generic,
        Library, ///< cuBLAS on the optimized program's GEMMs (their epilogues are not cuBLAS's: see note)
    };
    Role role = Role::Optimized;
    std::string name;                        ///< "optimized", "as written", "generic schedule", "cuBLAS"
    std::optional<runner::JobResult> result; ///< measured, or estimated (result->estimated)
    std::string error;                      ///< why it has no result (located where there is a place)
    std::string note;                       ///< e.g. why its verification left outputs unchecked
    std::vector<RooflinePoint> kernels;
    std::vector<MetricRow> metrics;

    bool estimated() const { return result && result->estimated; }
    const runner::Timing *timing() const { return result && result->timing ? &*result->timing : nullptr; }
};

struct RunReport {
    bool gpu = false;          ///< a GPU ran the programs (else every time is the model's)
    std::string device;        ///< "NVIDIA H200 (sm_90)" or the reason there is none
    std::string arch;          ///< what the programs were compiled for
    std::string gpuSpec;       ///< the database GPU whose ceilings the roofline draws
    double peakGflops = 0;     ///< FP32 (CUDA cores)
    double tensorGflops = 0;   ///< TF32 tensor cores (0: none, or the program does not use them)
    double bandwidthGBs = 0;   ///< DRAM, datasheet
    /// The program before first, then the optimized one, then the library reference where the
    /// optimized schedule has GEMM kernels.
    std::vector<ProgramRun> programs;
    std::vector<std::string> warnings;

    const ProgramRun *optimized() const;
    const ProgramRun *before() const;  ///< as written or the generic schedule
    const ProgramRun *library() const; ///< cuBLAS, or null (no GEMM)
};


/// The device as the runner sees it: its name and arch, or why there is none.
struct DeviceStatus {
    bool gpu = false;
    std::string name;
    std::string arch;
    std::string why; ///< the runner's error when there is no GPU
};
DeviceStatus probeDevice(runner::Runner &runner);

/// Runs (or, without a GPU, estimates) the optimized program and the one before it. `progress`
/// gets a line per stage; `cancelled` is polled between stages and by the runner during a job.
/// Never fails as a whole: each program that cannot run says why in its `error`.
RunReport runPrograms(const RunInput &input, runner::Runner &runner, const ArchDatabase &database,
                      const std::function<bool()> &cancelled = {},
                      const std::function<void(const std::string &)> &progress = {});

/// "0.1234 ms" with the precision a kernel time needs.
std::string runMsText(double ms);

} // namespace stitch::views
