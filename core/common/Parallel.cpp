#include "core/common/Parallel.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace stitch::detail {

namespace {

/// The process's helper threads: a queue of jobs, each entry one helper's share of a job.
class Pool {
public:
    static Pool &instance()
    {
        static Pool pool;
        return pool;
    }

    void run(const std::shared_ptr<ParallelJob> &job, std::size_t helpers)
    {
        {
            std::lock_guard lock(m_mutex);
            grow(helpers);
            for (std::size_t h = 0; h < helpers; ++h)
                m_queue.push_back(job);
        }
        m_wake.notify_all();
        takeIndices(*job);
        std::unique_lock lock(m_mutex);
        job->closed = true; // a helper that has not started yet leaves the job alone
        m_done.wait(lock, [&] { return job->running == 0; });
    }

    ~Pool()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        for (auto &t : m_threads)
            t.join();
    }

private:
    static void takeIndices(ParallelJob &job)
    {
        for (std::size_t i = job.next++; i < job.n; i = job.next++)
            job.work(i);
    }

    /// At least `helpers` threads (called with the mutex held).
    void grow(std::size_t helpers)
    {
        while (m_threads.size() < helpers)
            m_threads.emplace_back([this] { serve(); });
    }

    void serve()
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] { return m_stop || !m_queue.empty(); });
            if (m_stop)
                return;
            std::shared_ptr<ParallelJob> job = std::move(m_queue.front());
            m_queue.pop_front();
            if (job->closed)
                continue;
            ++job->running;
            lock.unlock();
            takeIndices(*job);
            lock.lock();
            if (--job->running == 0)
                m_done.notify_all();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::deque<std::shared_ptr<ParallelJob>> m_queue;
    std::vector<std::thread> m_threads;
    bool m_stop = false;
};

} // namespace

void runParallelJob(const std::shared_ptr<ParallelJob> &job, std::size_t helpers)
{
    Pool::instance().run(job, helpers);
}

} // namespace stitch::detail
