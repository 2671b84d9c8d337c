#include "LocalGpu.h"

#include <iostream>

namespace stitch::cli {

Result<LocalGpu> openLocalGpu(const std::string &arch, rubric::CompileCache *cache, int device, int repeats)
{
    runner::WorkerOptions worker;
    worker.deviceOrdinal = device;
    LocalGpu gpu;
    gpu.runner = std::make_unique<runner::Runner>(worker, nullptr);
    auto info = gpu.runner->device();
    if (!info)
        return Error{ErrorKind::NoDevice, "--measure needs a GPU: " + info.error().message};
    if (info->device.arch != arch)
        return Error{ErrorKind::InvalidArgument, "--measure: the GPU (" + info->device.name + ") is " + info->device.arch +
                                                     ", not " + arch + " (--arch " + info->device.arch + ")"};
    gpu.name = info->device.name;
    gpu.times = std::make_unique<agents::GpuTimes>(*gpu.runner, arch, cache, repeats);
    return gpu;
}

int openMeasuringGpu(const std::string &arch, rubric::CompileCache *cache, bool otherTimes, LocalGpu &gpu)
{
    if (otherTimes) {
        std::cerr << "stitchcuda: --measure times candidates on this GPU; it goes with neither --measured nor --no-compile\n";
        return 2;
    }
    auto opened = openLocalGpu(arch, cache);
    if (!opened) {
        std::cerr << "stitchcuda: " << opened.error().message << "\n";
        return opened.error().kind == ErrorKind::InvalidArgument ? 2 : 1;
    }
    gpu = std::move(*opened);
    return 0;
}

} // namespace stitch::cli
