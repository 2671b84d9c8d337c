// Shared-memory bank conflicts: ways of conflict of every shared access stream (the GEMM's tile
// stores and fragment reads, the row reductions' red_ arrays), replayed from the strategy's layouts.
// A wgmma GEMM's descriptor operand is read by the tensor cores (no instructions, a swizzled tile):
// named in the evidence and the sentence, not counted in the wavefronts.
//   KernelFacts::streams (shared) -> bankWavefronts -> score = 5 x (ideal / actual wavefronts, weighted)
#include "core/rubric/Dimensions.h"

#include <utility>
#include <vector>

namespace stitch::rubric {

double bankConflictScore(double idealWavefronts, double actualWavefronts)
{
    return actualWavefronts > 0 ? 5 * idealWavefronts / actualWavefronts : 5.0;
}

WavefrontTotals sharedWavefrontTotals(const KernelFacts &k, int banks)
{
    WavefrontTotals t;
    for (const auto &st : k.streams) {
        if (!st.shared)
            continue;
        const BankStats b = bankWavefronts(st, banks);
        (st.store ? t.storeRequests : t.loadRequests) += st.requests;
        (st.store ? t.storeWavefronts : t.loadWavefronts) += b.wavefronts * st.requests;
        (st.store ? t.storeIdeal : t.loadIdeal) += b.ideal * st.requests;
    }
    return t;
}

bool hasSharedStreams(const KernelFacts &k)
{
    for (const auto &s : k.streams)
        if (s.shared)
            return true;
    return false;
}

namespace {

/// A shared stream and its bank figures, as the score loop measured them.
using MeasuredStream = std::pair<const AccessStream *, BankStats>;

/// math=tf32_wgmma: what each shared access of the kernel is, in words (KernelFacts::warpgroupMma).
std::string wgmmaSentence(const KernelFacts &k, const std::vector<MeasuredStream> &shared, double eff)
{
    const AccessStream *fragments = nullptr, *worstFill = nullptr;
    BankStats fragmentStats, fillStats;
    for (const auto &[st, b] : shared) {
        if (!st->store && (!fragments || b.maxWays > fragmentStats.maxWays)) {
            fragments = st;
            fragmentStats = b;
        } else if (st->store && (!worstFill || b.maxWays > fillStats.maxWays)) {
            worstFill = st;
            fillStats = b;
        }
    }
    if (k.bothDescriptors) {
        std::string s = k.descriptorOperand + " are read by the tensor cores through wgmma descriptors from " +
                        std::to_string(k.descriptorSwizzleBytes) +
                        "-byte-swizzled tiles: no fragment loads, no bank conflicts";
        if (!worstFill || fillStats.maxWays <= 1)
            return s + "; the cp.async fills of both tiles are conflict free.";
        return s + "; " + worstFill->what + " is a " + std::to_string(fillStats.maxWays) + "-way bank conflict.";
    }
    std::string s = k.descriptorOperand + " is read by the tensor cores through a wgmma descriptor from a " +
                    std::to_string(k.descriptorSwizzleBytes) +
                    "-byte-swizzled tile (no bank conflicts, no load instructions); " + k.registerOperand +
                    "'s fragments: 4 " +
                    (fragmentStats.maxWays <= 1 ? std::string("conflict-free ") : std::string()) +
                    "4-byte loads per thread per 8-deep step" +
                    (fragmentStats.maxWays > 1 ? " (a " + std::to_string(fragmentStats.maxWays) + "-way bank conflict)"
                                               : std::string());
    if (!worstFill || fillStats.maxWays <= 1)
        s += "; the cp.async fills of both tiles are conflict free.";
    else
        s += "; " + worstFill->what + " is a " + std::to_string(fillStats.maxWays) + "-way bank conflict";
    if (eff < 1 - 1e-9)
        s += (worstFill && fillStats.maxWays > 1 ? "; " : " ") + percent(1 - eff) +
             " of shared-memory passes are replays.";
    else if (worstFill && fillStats.maxWays > 1)
        s += ".";
    return s;
}

class BankConflicts final : public KernelDimension {
public:
    std::string name() const override { return "bank_conflicts"; }

protected:
    bool appliesToKernel(const KernelFacts &k, const RubricInput &) const override { return hasSharedStreams(k); }

    RubricScore scoreKernel(const KernelFacts &k, const ProgramFacts &p, const RubricInput &) const override
    {
        RubricScore s;
        const AccessStream *worst = nullptr;
        BankStats worstStats;
        if (k.warpgroupMma)
            s.evidence = k.descriptorOperand + " by wgmma descriptor: the tensor cores read " +
                         fmt(k.descriptorBytesPerTile, 0) + " B per warpgroup and k-tile (" +
                         std::to_string(k.warpgroups) + " warpgroup" + (k.warpgroups == 1 ? "" : "s") + ") from a " +
                         std::to_string(k.descriptorSwizzleBytes) +
                         "-byte-swizzled tile: no load instructions, conflict free, not in the wavefronts below";
        std::vector<MeasuredStream> shared;
        for (const auto &st : k.streams) {
            if (!st.shared)
                continue;
            const BankStats b = bankWavefronts(st, p.arch->sharedMemoryBanks);
            shared.emplace_back(&st, b);
            if (!s.evidence.empty())
                s.evidence += "; ";
            s.evidence += st.what + ": " + std::to_string(b.maxWays) + "-way, " + fmt(b.wavefronts, 1) +
                          " wavefronts (ideal " + fmt(b.ideal, 1) + ")";
            if (!worst || b.maxWays > worstStats.maxWays) {
                worst = &st;
                worstStats = b;
            }
        }
        const WavefrontTotals t = sharedWavefrontTotals(k, p.arch->sharedMemoryBanks);
        s.score = bankConflictScore(t.ideal(), t.wavefronts());
        const double eff = s.score / 5;
        s.evidence += "; " + percent(eff) + " of shared-memory wavefronts useful";
        if (k.warpgroupMma)
            s.sentence = wgmmaSentence(k, shared, eff);
        else if (!worst || worstStats.maxWays <= 1)
            s.sentence = "No shared-memory access conflicts: every phase of a warp hits distinct banks (or one word, "
                         "broadcast).";
        else
            s.sentence = worst->what + " is a " + std::to_string(worstStats.maxWays) +
                         "-way bank conflict (lanes of one phase hit the same bank at different words); " +
                         percent(1 - eff) + " of shared-memory passes are replays" +
                         (k.strategy == schedule::Strategy::Gemm ? " (smem_pad shifts the rows across banks)." : ".");
        return s;
    }
};

} // namespace

std::unique_ptr<RubricDimension> makeBankConflicts()
{
    return std::make_unique<BankConflicts>();
}

} // namespace stitch::rubric
