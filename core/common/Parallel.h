#pragma once
// Independent work spread over a few threads: work(0) ... work(n - 1), each index once, on up to
// `threads` threads (the caller's among them). The results must not depend on the order: each
// index writes its own slot.
// The helper threads are a pool that lives as long as the process (the agents call this at every
// decision: starting threads each time was a tenth of a decision); a call from inside a helper, or
// while the helpers are busy with another caller's work, still finishes: the caller takes every
// index no helper has started.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>

namespace stitch {

namespace detail {

/// One parallelFor call: the next index, and the helpers that joined it.
struct ParallelJob {
    std::function<void(std::size_t)> work;
    std::size_t n = 0;
    std::atomic<std::size_t> next{0};
    // Guarded by the pool's mutex: whether the caller is done taking indices, and how many helpers
    // are running its work now.
    bool closed = false;
    int running = 0;
};

/// Hands `job` to up to `helpers` pool threads, runs its indices on the caller too, and returns
/// once every index is done and no helper is still in its work.
void runParallelJob(const std::shared_ptr<ParallelJob> &job, std::size_t helpers);

} // namespace detail

template <typename Work>
void parallelFor(std::size_t n, int threads, const Work &work)
{
    const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(threads > 1 ? threads : 1), n);
    if (workers <= 1) {
        for (std::size_t i = 0; i < n; ++i)
            work(i);
        return;
    }
    auto job = std::make_shared<detail::ParallelJob>();
    job->work = [&work](std::size_t i) { work(i); };
    job->n = n;
    detail::runParallelJob(job, workers - 1);
}

} // namespace stitch
