#include "core/runner/L2Flush.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace stitch::runner {

namespace {

// stitch_l2_flush_read(p, n, sink): grid-stride over n 16-byte words of p with ld.global.cg (kept in
// L2, not L1); the words are folded into one value that is stored to sink only if it equals a
// constant, so the loads cannot be removed and nothing is written in practice (sink is the buffer's
// last word: a store there would be harmless). PTX, so the driver JIT-compiles it for any GPU the
// runner supports, without NVRTC in the worker.
constexpr std::string_view kFlushPtx = R"(
.version 7.0
.target sm_70
.address_size 64

.visible .entry stitch_l2_flush_read(.param .u64 p, .param .u64 n, .param .u64 sink)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [n];
    ld.param.u64 %rd3, [sink];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd3, %rd3;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.s64 %rd4, %rd4, %rd5;
    mul.wide.u32 %rd6, %r4, %r2;
    mov.u32 %r5, 0;
    setp.ge.u64 %p1, %rd4, %rd2;
    @%p1 bra DONE;
LOOP:
    shl.b64 %rd7, %rd4, 4;
    add.s64 %rd8, %rd1, %rd7;
    ld.global.cg.v4.u32 {%r6, %r7, %r8, %r9}, [%rd8];
    add.u32 %r5, %r5, %r6;
    xor.b32 %r5, %r5, %r7;
    add.u32 %r5, %r5, %r8;
    xor.b32 %r5, %r5, %r9;
    add.s64 %rd4, %rd4, %rd6;
    setp.lt.u64 %p2, %rd4, %rd2;
    @%p2 bra LOOP;
DONE:
    setp.ne.u32 %p1, %r5, 1234567891;
    @%p1 bra END;
    st.global.u32 [%rd3], %r5;
END:
    ret;
}
)";

} // namespace

Result<std::unique_ptr<L2Flush>> L2Flush::create(cuda::Context &context, std::uint64_t bytes, int multiprocessors)
{
    bytes = std::max<std::uint64_t>(bytes / 16 * 16, 16);
    auto buffer = context.allocate(bytes);
    if (!buffer)
        return annotate(buffer.error(), "L2 flush buffer");
    if (auto st = context.fillBytes(*buffer, 0x5a); !st)
        return annotate(st.error(), "L2 flush buffer");
    std::vector<char> image(kFlushPtx.begin(), kFlushPtx.end());
    image.push_back('\0');
    auto module = context.loadModule(image);
    if (!module)
        return annotate(module.error(), "L2 flush kernel");
    auto kernel = (*module)->kernel("stitch_l2_flush_read");
    if (!kernel)
        return annotate(kernel.error(), "L2 flush kernel");
    return std::unique_ptr<L2Flush>(
        new L2Flush(std::move(*buffer), std::move(*module), std::move(*kernel), std::max(1, multiprocessors) * 8));
}

Status L2Flush::enqueue(const cuda::Stream &stream)
{
    std::uint64_t p = m_buffer.address();
    std::uint64_t n = m_buffer.size() / 16;
    std::uint64_t sink = m_buffer.address() + m_buffer.size() - 16;
    void *args[] = {&p, &n, &sink};
    cuda::LaunchConfig config;
    config.gridX = static_cast<unsigned>(m_blocks);
    config.blockX = 512;
    return m_module->enqueue(m_kernel, config, args, &stream);
}

} // namespace stitch::runner
