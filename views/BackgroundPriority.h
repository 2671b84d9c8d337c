#pragma once
// The studio's heavy background work (the agents' optimization and retraining: their environment
// scores options on as many threads as the machine has cores) runs at a lower scheduling priority
// than the GUI thread, so that on a machine of few cores the GUI thread is not left waiting for
// one: on 2 cores a retraining had the GUI thread's 30 ms of work take 60-75 ms.

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace stitch::views {

/// Lowers the calling thread's priority (nice 10 on Linux, where a thread's niceness is its own
/// and the threads it starts inherit it). Call it first in a worker thread's function. Best
/// effort: a refusal leaves the thread as it was.
inline void lowerThisThreadsPriority()
{
#if defined(__linux__)
    const auto tid = static_cast<id_t>(syscall(SYS_gettid));
    (void)setpriority(PRIO_PROCESS, tid, 10);
#endif
}

} // namespace stitch::views
