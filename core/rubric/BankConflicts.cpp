// Shared-memory bank conflicts: ways of conflict of every shared access stream (the GEMM's tile
// stores and fragment reads, the row reductions' red_ arrays), replayed from the strategy's layouts.
//   KernelFacts::streams (shared) -> bankWavefronts -> score = 5 x (ideal / actual wavefronts, weighted)
#include "core/rubric/Dimensions.h"

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
        for (const auto &st : k.streams) {
            if (!st.shared)
                continue;
            const BankStats b = bankWavefronts(st, p.arch->sharedMemoryBanks);
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
        if (!worst || worstStats.maxWays <= 1)
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
