#pragma once
// Independent work spread over a few threads: work(0) ... work(n - 1), each index once, on up to
// `threads` threads (the caller's among them). The results must not depend on the order: each
// index writes its own slot.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace stitch {

template <typename Work>
void parallelFor(std::size_t n, int threads, const Work &work)
{
    const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), n);
    if (workers <= 1) {
        for (std::size_t i = 0; i < n; ++i)
            work(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    auto loop = [&] {
        for (std::size_t i = next++; i < n; i = next++)
            work(i);
    };
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < workers; ++w)
        pool.emplace_back(loop);
    loop();
    for (auto &t : pool)
        t.join();
}

} // namespace stitch
