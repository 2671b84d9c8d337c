#pragma once
// `f(0) ... f(n - 1)` on every core, results in index order. The bench and calibrate compile many
// generated programs with NVRTC, which is thread-safe.

#include <algorithm>
#include <cstddef>
#include <future>
#include <thread>
#include <vector>

namespace stitch::bench {

template <typename F>
auto parallelMap(std::size_t n, F f) -> std::vector<decltype(f(std::size_t{0}))>
{
    std::vector<decltype(f(std::size_t{0}))> out;
    out.reserve(n);
    const std::size_t parallel = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    for (std::size_t i = 0; i < n; i += parallel) {
        std::vector<std::future<decltype(f(std::size_t{0}))>> running;
        for (std::size_t j = i; j < std::min(n, i + parallel); ++j)
            running.push_back(std::async(std::launch::async, [&f, j] { return f(j); }));
        for (auto &r : running)
            out.push_back(r.get());
    }
    return out;
}

} // namespace stitch::bench
