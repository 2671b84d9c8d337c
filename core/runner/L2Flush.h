#pragma once
// Empties L2 between timed runs by reading a buffer of twice its size.
//   Executor::time -> L2Flush::enqueue (before the start event) -> stitch_l2_flush_read
//
// A flush by writes (cuMemsetD8Async over the buffer, until run 21) leaves L2 full of dirty lines of
// the flush buffer, and the timed kernel then writes them back to DRAM beside its own traffic: on the
// H200 about 3 us of a 150 us layer norm and 3.5 us of a 1 GiB copy (run 21 call 2). Reading
// leaves clean lines; the dirty ones (the previous run's outputs) are written back during the flush,
// before the start event.
#include "core/common/Result.h"
#include "core/cuda/DriverApi.h"

#include <cstdint>
#include <memory>

namespace stitch::runner {

class L2Flush {
public:
    /// A flush buffer of `bytes` (filled once), read by `multiprocessors` x 8 blocks of 512 threads.
    static Result<std::unique_ptr<L2Flush>> create(cuda::Context &context, std::uint64_t bytes, int multiprocessors);

    /// Queues the read of the whole buffer on `stream`.
    Status enqueue(const cuda::Stream &stream);

    std::uint64_t bytes() const { return m_buffer.size(); }

private:
    L2Flush(cuda::DeviceBuffer buffer, std::unique_ptr<cuda::Module> module, cuda::KernelHandle kernel, int blocks)
        : m_buffer(std::move(buffer)), m_module(std::move(module)), m_kernel(std::move(kernel)), m_blocks(blocks)
    {
    }

    cuda::DeviceBuffer m_buffer;
    std::unique_ptr<cuda::Module> m_module;
    cuda::KernelHandle m_kernel;
    int m_blocks = 1;
};

} // namespace stitch::runner
