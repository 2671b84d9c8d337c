// parallelFor (core/common/Parallel.h) on its pool of helper threads: each index once, calls from
// inside a helper (nested) and from several threads at once all finish.
#include "core/common/Parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace stitch;

TEST(ParallelFor, EveryIndexRunsOnce)
{
    for (int threads : {1, 2, 4, 8})
        for (std::size_t n : {0u, 1u, 3u, 100u, 1000u}) {
            std::vector<std::atomic<int>> hits(n);
            parallelFor(n, threads, [&](std::size_t i) { ++hits[i]; });
            for (std::size_t i = 0; i < n; ++i)
                ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n << " on " << threads << " threads";
        }
}

TEST(ParallelFor, NestedCallsFromHelpersFinish)
{
    // Every helper busy with an outer index that itself spreads work: the inner calls take their
    // own indices when no helper is free, instead of waiting for one.
    std::atomic<int> total{0};
    parallelFor(8, 4, [&](std::size_t) {
        parallelFor(50, 4, [&](std::size_t) { ++total; });
    });
    EXPECT_EQ(total.load(), 8 * 50);
}

TEST(ParallelFor, CallersOnSeveralThreadsAtOnce)
{
    std::vector<std::thread> callers;
    std::vector<long> sums(6, 0);
    for (std::size_t c = 0; c < sums.size(); ++c)
        callers.emplace_back([&, c] {
            for (int round = 0; round < 20; ++round) {
                std::vector<long> slot(64, 0);
                parallelFor(slot.size(), 3, [&](std::size_t i) { slot[i] = static_cast<long>(i); });
                for (long v : slot)
                    sums[c] += v;
            }
        });
    for (auto &t : callers)
        t.join();
    for (long s : sums)
        EXPECT_EQ(s, 20L * (63 * 64 / 2));
}
