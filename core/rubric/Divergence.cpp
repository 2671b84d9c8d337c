// Warp divergence: the lane-dependent branches of the strategy's kernel and the share of lanes
// idle in boundary tiles, row tails and reduction trees (from the sizes against the tiles).
//   KernelFacts (usefulLaneFraction, branches) -> score = 5 x useful lanes
#include "core/rubric/Dimensions.h"

namespace stitch::rubric {

double divergenceScore(double usefulLaneFraction)
{
    return 5 * usefulLaneFraction;
}

namespace {

class Divergence final : public KernelDimension {
public:
    std::string name() const override { return "divergence"; }

protected:
    RubricScore scoreKernel(const KernelFacts &k, const ProgramFacts &, const RubricInput &) const override
    {
        RubricScore s;
        s.score = divergenceScore(k.usefulLaneFraction);
        s.evidence = k.boundary + "; useful lanes " + percent(k.usefulLaneFraction);
        const Branch *worst = nullptr;
        for (const auto &b : k.branches) {
            s.evidence += "; " + b.what + ": " + percent(b.idleFraction) + " idle";
            if (!worst || b.idleFraction > worst->idleFraction)
                worst = &b;
        }
        if (!worst || worst->idleFraction < 0.005)
            s.sentence = "No lane-dependent branch costs anything: " + percent(k.usefulLaneFraction) +
                         " of the launched lanes do useful work.";
        else
            s.sentence = percent(1 - k.usefulLaneFraction) + " of the launched lanes idle; the worst branch is " +
                         worst->what + " (" + percent(worst->idleFraction) + " idle where it runs).";
        return s;
    }
};

} // namespace

std::unique_ptr<RubricDimension> makeDivergence()
{
    return std::make_unique<Divergence>();
}

} // namespace stitch::rubric
