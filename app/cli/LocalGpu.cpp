#include "LocalGpu.h"

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

} // namespace stitch::cli
