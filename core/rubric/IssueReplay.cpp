#include "core/rubric/IssueReplay.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace stitch::rubric {

namespace {

using cuda::SassInstruction;
using cuda::SassOp;

bool sharedPipe(SassOp op)
{
    return op == SassOp::SharedLoad || op == SassOp::SharedStore || op == SassOp::LocalLoad ||
           op == SassOp::LocalStore || op == SassOp::AsyncCopy;
}

struct Warp {
    std::size_t next = 0;             ///< index into the body
    double readyAt = 0;               ///< its next instruction may issue from this cycle
    std::array<double, 6> board{};    ///< each scoreboard's release cycle
    bool atBarrier = false;
    int trips = 0;
    std::vector<double> tripEnds;     ///< the cycle each trip ended
    std::vector<double> tripFetchIdle; ///< the scheduler's fetch-idle cycles when each trip ended
    double fetchUntil = 0;            ///< waiting for its next instructions until this cycle
};

/// The instruction cache, for a loop of `bytes` larger than it: the part that does not fit misses
/// on every trip, spread evenly over its 128-byte lines. The first warp to enter a missing line in
/// a trip fetches it; a warp that enters it later in the same trip waits only for the fetch to land.
/// Only a lone warp waits for it: with two warps or more on the scheduler they drift apart and the
/// one behind finds the lines the one ahead fetched, issuing while it waits (ncu: 0.02-0.10 cycles
/// per instruction waiting for instructions at two and three warps, loops of 20-40 KB, run 21
/// call 9; 0.05-2.04 at one, 20-81 KB, run 22 call 3).
class Fetch {
public:
    Fetch(const std::vector<SassInstruction> &body, int warps, const IssueReplayParams &c)
        : m_cycles(c.instructionMissCycles)
    {
        constexpr std::uint32_t kLine = 128;
        const std::uint32_t first = body.front().address;
        const double bytes = body.back().address + cuda::kSassInstructionBytes - first;
        const double missing =
            warps == 1 && c.instructionCacheBytes > 0 ? std::max(0.0, bytes - c.instructionCacheBytes) / bytes : 0;
        m_line.resize(body.size(), -1);
        std::uint32_t previous = ~0u;
        for (std::size_t i = 0; i < body.size(); ++i) {
            const std::uint32_t line = (body[i].address - first) / kLine;
            // Line l misses when the running share of missing lines passes a whole line at it.
            if (line != previous && std::floor((line + 1) * missing) > std::floor(line * missing))
                m_line[i] = static_cast<int>(line);
            previous = line;
        }
        m_fetchedTrip.assign(static_cast<std::size_t>(bytes / kLine) + 2, -1);
        m_ready.assign(m_fetchedTrip.size(), 0);
    }

    /// The cycle from which a warp on its `trip` may issue body[i] (<= t: now).
    double readyAt(std::size_t i, int trip, double t)
    {
        const int line = m_line[i];
        if (line < 0)
            return t;
        auto l = static_cast<std::size_t>(line);
        if (m_fetchedTrip[l] < trip) {
            m_fetchedTrip[l] = trip;
            m_ready[l] = t + m_cycles;
        }
        return m_ready[l];
    }

private:
    double m_cycles;
    std::vector<int> m_line;          ///< per instruction: the missing line it enters, or -1
    std::vector<int> m_fetchedTrip;   ///< per line: the latest trip that fetched it
    std::vector<double> m_ready;      ///< per line: when that fetch lands
};

} // namespace

std::vector<SassInstruction> loopBody(const cuda::SassKernel &kernel, const cuda::SassLoop &loop)
{
    std::vector<SassInstruction> body;
    for (const auto &in : kernel.code)
        if (in.address >= loop.begin && in.address <= loop.end && !in.neverRuns)
            body.push_back(in);
    return body;
}

IssueReplayResult replayLoop(const std::vector<SassInstruction> &body, int warps, int warpsPerBlock,
                             const IssueReplayParams &c)
{
    IssueReplayResult out;
    if (body.empty() || warps <= 0)
        return out;
    warpsPerBlock = std::clamp(warpsPerBlock, 1, warps);
    out.instructionsPerTrip = static_cast<int>(body.size());
    constexpr int kTrips = 8, kFirstMeasured = 3; // warm up, then measure trips 4-8
    std::vector<Warp> w(static_cast<std::size_t>(warps));
    double pipeFree = 0;   // the shared-memory pipe's next free cycle
    double portFree = 0;   // the issue port's (a bank-conflicted FFMA holds it longer)
    double portDebt = 0;   // conflict cycles not yet taken (fractional costs add up)
    std::size_t last = w.size() - 1;
    Fetch fetch(body, warps, c);
    double fetchIdle = 0; // cycles nothing issued while a warp waited for its instructions
    const double limit = 1e7;
    for (double t = 0; t < limit; t += 1) {
        if (std::all_of(w.begin(), w.end(), [&](const Warp &x) { return x.trips >= kTrips; }))
            break;
        if (t < portFree)
            continue;
        bool issued = false;
        // Round robin from the warp after the last one that issued.
        for (std::size_t k = 1; k <= w.size(); ++k) {
            const std::size_t i = (last + k) % w.size();
            Warp &x = w[i];
            if (x.trips >= kTrips || x.atBarrier || x.readyAt > t)
                continue;
            const SassInstruction &in = body[x.next];
            bool waiting = false;
            for (int b = 0; b < 6; ++b)
                if ((in.waitMask >> b & 1) && x.board[static_cast<std::size_t>(b)] > t)
                    waiting = true;
            if (waiting)
                continue;
            if (const double fetched = fetch.readyAt(x.next, x.trips, t); fetched > t) {
                x.readyAt = x.fetchUntil = fetched;
                continue;
            }
            const bool pipe = sharedPipe(in.op);
            if (pipe && pipeFree - t > c.mioQueueCycles)
                continue; // the pipe's queue is full: this warp waits (mio throttle)
            // Issue.
            last = i;
            issued = true;
            if (cuda::sassBankConflict(body[(x.next + body.size() - 1) % body.size()], in))
                portDebt += c.bankConflictCycles;
            const double held = std::floor(portDebt);
            portDebt -= held;
            portFree = t + 1 + held;
            x.readyAt = t + std::max<int>(1, in.stall);
            double lands = t + 1;
            if (pipe) {
                const double bytes = 32.0 * std::max<int>(in.accessBytes, 4);
                const double start = std::max(t, pipeFree);
                pipeFree = start + bytes / c.sharedBytesPerCycle;
                lands = pipeFree + (in.op == SassOp::LocalLoad ? c.localLatencyCycles : c.sharedLatencyCycles);
            } else if (in.op == SassOp::GlobalLoad) {
                lands = t + c.globalLatencyCycles;
            }
            if (in.writeBarrier < 6)
                x.board[in.writeBarrier] = std::max(x.board[in.writeBarrier], lands);
            if (in.readBarrier < 6)
                x.board[in.readBarrier] = std::max(x.board[in.readBarrier], t + c.sourceReadCycles);
            if (in.op == SassOp::Barrier) {
                x.atBarrier = true;
                // The block's warps on this scheduler: i's group of warpsPerBlock.
                const std::size_t first = i / static_cast<std::size_t>(warpsPerBlock) * static_cast<std::size_t>(warpsPerBlock);
                const std::size_t end = std::min(w.size(), first + static_cast<std::size_t>(warpsPerBlock));
                bool all = true;
                for (std::size_t j = first; j < end; ++j)
                    all = all && (w[j].atBarrier || w[j].trips >= kTrips);
                if (all)
                    for (std::size_t j = first; j < end; ++j) {
                        w[j].atBarrier = false;
                        w[j].readyAt = std::max(w[j].readyAt, t + c.barrierCycles);
                    }
            }
            if (++x.next == body.size()) {
                x.next = 0;
                ++x.trips;
                x.tripEnds.push_back(t);
                x.tripFetchIdle.push_back(fetchIdle);
            }
            break;
        }
        if (!issued && std::any_of(w.begin(), w.end(), [&](const Warp &x) { return x.fetchUntil > t; }))
            fetchIdle += 1;
    }
    double sum = 0, idle = 0;
    int n = 0;
    for (const auto &x : w)
        if (static_cast<int>(x.tripEnds.size()) >= kTrips) {
            sum += (x.tripEnds[kTrips - 1] - x.tripEnds[kFirstMeasured - 1]) / (kTrips - kFirstMeasured);
            idle += (x.tripFetchIdle[kTrips - 1] - x.tripFetchIdle[kFirstMeasured - 1]) / (kTrips - kFirstMeasured);
            ++n;
        }
    if (n == 0)
        return out;
    out.cyclesPerTrip = sum / n;
    out.fetchIdleCyclesPerTrip = idle / n;
    out.warpCyclesPerIssue = out.cyclesPerTrip / out.instructionsPerTrip;
    return out;
}

} // namespace stitch::rubric
