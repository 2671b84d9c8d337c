// Memory coalescing: 32-byte sectors per warp request of every global load and store stream,
// against the fewest sectors that could hold the bytes the lanes ask for.
//   KernelFacts::streams (global) -> sectorsPerRequest -> score = 5 x (ideal / actual sectors, traffic-weighted)
#include "core/rubric/Dimensions.h"

namespace stitch::rubric {

double coalescingScore(double idealSectors, double actualSectors)
{
    return actualSectors > 0 ? 5 * idealSectors / actualSectors : 5.0;
}

SectorTotals globalSectorTotals(const KernelFacts &k)
{
    SectorTotals t;
    for (const auto &st : k.streams) {
        if (st.shared)
            continue;
        const SectorStats ss = sectorsPerRequest(st);
        if (ss.sectors <= 0)
            continue;
        (st.store ? t.storeRequests : t.loadRequests) += st.requests;
        (st.store ? t.storeSectors : t.loadSectors) += ss.sectors * st.requests;
        (st.store ? t.storeIdeal : t.loadIdeal) += ss.ideal * st.requests;
    }
    return t;
}

namespace {

class Coalescing final : public KernelDimension {
public:
    std::string name() const override { return "coalescing"; }

protected:
    RubricScore scoreKernel(const KernelFacts &k, const ProgramFacts &, const RubricInput &) const override
    {
        RubricScore s;
        double worstWaste = -1;
        const AccessStream *worst = nullptr;
        SectorStats worstStats;
        for (const auto &st : k.streams) {
            if (st.shared)
                continue;
            const SectorStats ss = sectorsPerRequest(st);
            if (ss.sectors <= 0)
                continue;
            const double waste = (ss.sectors - ss.ideal) * st.requests;
            if (!s.evidence.empty())
                s.evidence += "; ";
            s.evidence += st.what + ": " + fmt(ss.sectors, 1) + " sectors/request (ideal " + fmt(ss.ideal, 1) + ", " +
                          fmt(ss.activeLanes, 0) + " lanes)";
            if (waste > worstWaste) {
                worstWaste = waste;
                worst = &st;
                worstStats = ss;
            }
        }
        if (!worst) {
            s.score = 5;
            s.evidence = "no global memory access";
            s.sentence = "The kernel does not touch global memory.";
            return s;
        }
        const SectorTotals t = globalSectorTotals(k);
        s.score = coalescingScore(t.ideal(), t.sectors());
        const double eff = s.score / 5;
        s.evidence += "; overall " + percent(eff) + " of fetched sectors used";
        const std::string head = worst->what + ": " + fmt(worstStats.activeLanes, 0) + " lanes, " +
                                 fmt(worstStats.sectors, 1) + " sectors per request";
        if (worstWaste <= 1e-9)
            s.sentence = "Every access is fully coalesced (e.g. " + head +
                         ", the ideal): " + fmt(roundScore(s.score), 1) + "/5.";
        else
            s.sentence = head + " where " + fmt(worstStats.ideal, 1) + " would hold the data (" +
                         percent(worstStats.efficiency()) + " of fetched bytes used); overall " + percent(eff) + ": " +
                         fmt(roundScore(s.score), 1) + "/5.";
        return s;
    }
};

} // namespace

std::unique_ptr<RubricDimension> makeCoalescing()
{
    return std::make_unique<Coalescing>();
}

} // namespace stitch::rubric
