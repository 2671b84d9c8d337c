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
    const double limit = 1e7;
    for (double t = 0; t < limit; t += 1) {
        if (std::all_of(w.begin(), w.end(), [&](const Warp &x) { return x.trips >= kTrips; }))
            break;
        if (t < portFree)
            continue;
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
            const bool pipe = sharedPipe(in.op);
            if (pipe && pipeFree - t > c.mioQueueCycles)
                continue; // the pipe's queue is full: this warp waits (mio throttle)
            // Issue.
            last = i;
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
            }
            break;
        }
    }
    double sum = 0;
    int n = 0;
    for (const auto &x : w)
        if (static_cast<int>(x.tripEnds.size()) >= kTrips) {
            sum += (x.tripEnds[kTrips - 1] - x.tripEnds[kFirstMeasured - 1]) / (kTrips - kFirstMeasured);
            ++n;
        }
    if (n == 0)
        return out;
    out.cyclesPerTrip = sum / n;
    out.warpCyclesPerIssue = out.cyclesPerTrip / out.instructionsPerTrip;
    return out;
}

} // namespace stitch::rubric
