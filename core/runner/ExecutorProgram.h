#pragma once
// The Executor's loaded program (Executor.cpp prepares and runs it, ExecutorMeasure.cpp times,
// traces and profiles it). Private to core/runner.

#include "core/cuda/DriverApi.h"
#include "core/runner/Executor.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace stitch::runner {

// One kernel parameter: cuLaunchKernel reads as many bytes as the parameter has from the pointer
// it is given, so every scalar lives in its own zeroed, 8-byte aligned slot.
struct ArgSlot {
    alignas(8) unsigned char bytes[8] = {};
};

struct Executor::Program {
    const LaunchPlan *plan = nullptr;
    const std::vector<char> *image = nullptr;           ///< the CUBIN the module was loaded from
    cuda::Module *module = nullptr;                     ///< null when every launch is a library call
    std::vector<cuda::KernelHandle> kernels;            ///< per launch (empty for a library call)
    std::vector<std::array<std::uint64_t, 3>> operands; ///< per launch: a library call's A, B, C addresses
    std::map<std::string, cuda::DeviceBuffer> buffers;
    std::map<std::string, Bytes> inputs;     ///< host copies of input and in-out buffers
    std::vector<std::vector<ArgSlot>> slots; ///< per launch, per parameter
    std::vector<std::vector<void *>> argv;   ///< pointers into slots
    double firstRunMs = 0.0;
};

} // namespace stitch::runner
