#pragma once
// What the runner is asked to do: a compiled module plus the launch plan of a whole program.
//   CLI plan file / studio / agents -> Job -> Runner -> WorkerClient -> (pipe) -> worker Executor
// Plain data, copied into the job when it starts; nothing here touches the GPU.

#include "core/cuda/DriverApi.h"
#include "core/ir/DType.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace stitch::runner {

/// How a buffer relates to the program: what is drawn, what is checked.
enum class BufferRole {
    Input,   ///< read by the program; filled before every run
    Output,  ///< written by the program; poisoned (NaN) before the first run, then verified
    InOut,   ///< filled like an input, verified like an output (in-place kernels)
    Scratch, ///< workspace; initialised as its init says, never verified
};
const char *bufferRoleName(BufferRole role); ///< "input", "output", "inout", "scratch"
std::optional<BufferRole> parseBufferRole(const std::string &name);

/// How a buffer is filled before the first run.
struct BufferInit {
    enum class Kind {
        Default, ///< Random for inputs and in-outs, Poison for outputs, Zero for scratch
        Random,  ///< uniform in [low, high] from the job's seed; floats never exactly zero
        Poison,  ///< every byte 0xFF: NaN in every float type, -1 in integers
        Zero,    ///< for accumulators (atomicAdd outputs)
        CopyOf,  ///< the same bytes as buffer `source` (same size)
    };
    Kind kind = Kind::Default;
    double low = -1.0;
    double high = 1.0;
    std::string source; ///< for CopyOf

    bool operator==(const BufferInit &) const = default;
};
const char *initKindName(BufferInit::Kind kind); ///< "default", "random", "poison", "zero", "copy"
std::optional<BufferInit::Kind> parseInitKind(const std::string &name);

/// One device allocation of the program.
struct BufferSpec {
    std::string name;
    ir::DType dtype = ir::DType::F32;
    std::uint64_t count = 0;          ///< elements
    std::vector<std::int64_t> shape;  ///< optional, row-major; reports multi-dimensional indices
    BufferRole role = BufferRole::Input;
    BufferInit init;

    std::uint64_t bytes() const { return count * static_cast<std::uint64_t>(ir::dtypeSize(dtype)); }
    /// The init that applies once Default is resolved by role.
    BufferInit::Kind effectiveInit() const;
};

/// A scalar kernel argument. Integers keep all 64 bits; floats keep the double.
struct ScalarArg {
    ir::DType dtype = ir::DType::I32;
    std::int64_t intValue = 0;
    double floatValue = 0.0;

    bool operator==(const ScalarArg &) const = default;
};

/// A kernel argument: the device address of a buffer, or a scalar.
struct KernelArg {
    std::variant<std::string, ScalarArg> value; ///< buffer name or scalar

    static KernelArg buffer(std::string name) { return KernelArg{std::move(name)}; }
    static KernelArg scalar(ir::DType dtype, std::int64_t value) { return KernelArg{ScalarArg{dtype, value, 0.0}}; }
    static KernelArg scalar(ir::DType dtype, double value) { return KernelArg{ScalarArg{dtype, 0, value}}; }
    bool isBuffer() const { return std::holds_alternative<std::string>(value); }
};

/// A step that calls a library routine on the plan's buffers instead of launching a kernel of the
/// module: today cuBLAS's single-precision GEMM, the library reference a generated GEMM is timed
/// beside. The worker dlopens the library (core/runner/Cublas.h) and runs the call where a kernel
/// would run: checked first, then warmed up and timed with the other steps.
///
/// Row-major, like every buffer of a plan: C[M, N] = op(A) op(B) with op(A) [M, K] and op(B) [K, N],
/// for `batch` matrices apart by the strides; alpha 1, beta 0 (C is only written).
struct LibraryCall {
    enum class Routine {
        CublasSgemm, ///< cublasSgemm, or cublasSgemmStridedBatched when batch > 1
    };
    /// FP32: plain float math (CUBLAS_DEFAULT_MATH). TF32: TF32 tensor cores allowed
    /// (CUBLAS_TF32_TENSOR_OP_MATH), the fair reference for a program generated with --tf32.
    enum class Math { FP32, TF32 };

    Routine routine = Routine::CublasSgemm;
    Math math = Math::FP32;
    std::string a, b, c; ///< float32 buffers
    std::int64_t m = 0, n = 0, k = 0;
    std::int64_t batch = 1;
    bool transA = false; ///< A is stored [K, M] (the graph reads A[k, i])
    bool transB = false; ///< B is stored [N, K] (the graph reads B[j, k])
    /// Elements from one matrix of the batch to the next; unset: packed (M K, K N, M N). 0 reuses
    /// one matrix for the whole batch (A or B only).
    std::optional<std::int64_t> strideA, strideB, strideC;

    std::int64_t rowsA() const { return transA ? k : m; }
    std::int64_t colsA() const { return transA ? m : k; }
    std::int64_t rowsB() const { return transB ? n : k; }
    std::int64_t colsB() const { return transB ? k : n; }
    std::int64_t effectiveStrideA() const { return strideA.value_or(m * k); }
    std::int64_t effectiveStrideB() const { return strideB.value_or(k * n); }
    std::int64_t effectiveStrideC() const { return strideC.value_or(m * n); }
    /// 2 M N K per matrix.
    double flops() const
    {
        return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
               static_cast<double>(batch);
    }
    /// "cuBLAS sgemm 256x128x64 (FP32)", "cuBLAS sgemm batch 8 of 64x64x64, A transposed (TF32)".
    std::string describe() const;

    bool operator==(const LibraryCall &) const = default;
};
const char *libraryName(LibraryCall::Routine routine); ///< "cublas"
const char *routineName(LibraryCall::Routine routine); ///< "sgemm"
std::optional<LibraryCall::Routine> parseRoutine(const std::string &library, const std::string &routine);
const char *libraryMathName(LibraryCall::Math math); ///< "fp32", "tf32"
std::optional<LibraryCall::Math> parseLibraryMath(const std::string &name);

/// One step of the program, in program order: a kernel launch, or (when `library` is set) a
/// library call, which has no kernel, configuration or arguments of its own.
struct KernelLaunch {
    std::string kernel;          ///< mangled (or extern "C") name, as in the CUBIN
    cuda::LaunchConfig config;   ///< grid, block, dynamic shared memory
    std::vector<KernelArg> args; ///< one per kernel parameter
    std::optional<LibraryCall> library;

    static KernelLaunch libraryCall(LibraryCall call)
    {
        KernelLaunch l;
        l.library = std::move(call);
        return l;
    }
    bool isLibraryCall() const { return library.has_value(); }
    /// The kernel's name, or the library call's description.
    std::string describe() const;
};

/// Every buffer and every launch of a program.
struct LaunchPlan {
    std::vector<BufferSpec> buffers;
    std::vector<KernelLaunch> launches;

    const BufferSpec *buffer(const std::string &name) const;
    bool hasKernelLaunches() const; ///< a module (CUBIN) is needed
    bool hasLibraryCalls() const;
};

/// The reference is the user's original program, run on the GPU in the same job: the candidate's
/// inputs are copied into the reference's buffers of the same (or mapped) name, and every
/// candidate output is compared with its counterpart.
struct GpuReference {
    std::vector<char> module;    ///< CUBIN
    LaunchPlan plan;
    std::map<std::string, std::string> bufferMap; ///< candidate buffer -> reference buffer; default: same name

    std::string referenceBufferFor(const std::string &candidate) const;
};

/// Error bounds by precision policy, on ||out - ref|| / ||ref||.
enum class PrecisionPolicy { FP64, FP32, TF32, FP16, BF16, Exact };
const char *precisionName(PrecisionPolicy policy); ///< "fp64", "fp32", "tf32", "fp16", "bf16", "exact"
std::optional<PrecisionPolicy> parsePrecision(const std::string &name);
/// FP64 1e-12, FP32 1e-5, TF32 1e-3, FP16 1e-3, BF16 1e-2, Exact 0.
double relativeTolerance(PrecisionPolicy policy);

/// What to measure.
struct MeasureOptions {
    bool verify = true;         ///< compare outputs with the GPU reference (the Runner adds the CPU one)
    bool time = true;
    int warmup = 3;             ///< untimed runs of the whole program first
    int repeats = 20;           ///< timed runs; the median is the figure
    bool flushL2 = true;        ///< overwrite a buffer of twice the L2 size before each timed run
    bool profile = false;       ///< one extra run under CUPTI activity tracing
    bool metrics = false;       ///< one extra run under CUPTI range profiling (hardware counters), after timing
    bool returnOutputs = false; ///< send the outputs of the first run back to the client
    /// The kernels whose counters are reported (names as in the plan's launches, or demangled);
    /// empty: every launch. The whole program still runs (later kernels read earlier outputs).
    std::vector<std::string> metricsKernels;
    /// Idle milliseconds before the warm-up: the GPU's power management averages over recent
    /// seconds, so a run right after minutes of sweeping starts under its power cap (H200, run 9:
    /// the SM clock fell from 1980 to 1560 MHz, "SW power cap") where a baseline timed from idle
    /// does not. 0: none. After it the warm-up runs for 20 ms at least (an idle GPU's clocks ramp up
    /// over its first milliseconds of work).
    int settleMs = 0;

    bool operator==(const MeasureOptions &) const = default;
};

/// A whole program to run, verify, time and profile on the worker's GPU.
struct Job {
    std::vector<char> module; ///< CUBIN for the worker's GPU; empty when the plan only calls libraries
    LaunchPlan plan;
    std::optional<GpuReference> reference;
    MeasureOptions measure;
    PrecisionPolicy precision = PrecisionPolicy::FP32;
    std::uint64_t seed = 0;      ///< inputs; the Runner draws a fresh one per job unless fixedSeed
    bool fixedSeed = false;
    int deadlineMs = 10000;      ///< the client kills the worker past this (Timeout)
};

/// InvalidArgument naming the first problem: unknown buffer references, empty launch lists,
/// zero-sized buffers, grids or blocks, copies between buffers of different sizes, outputs that a
/// GPU reference cannot match, a missing module where a kernel is launched, library calls whose
/// sizes do not fit their buffers (or cuBLAS's 32-bit dimensions) or that write an operand.
Status validateJob(const Job &job);

/// SHA-256 (hex) of the module and the launch plan (library calls included): what the program is,
/// not how it is measured.
std::string programHash(const Job &job);

/// SHA-256 (hex) of the measurement settings and the reference: two jobs with the same program hash
/// and settings hash measure the same thing.
std::string settingsHash(const Job &job, const std::string &extraReferenceKey = {});

} // namespace stitch::runner
