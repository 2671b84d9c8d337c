// Occupancy: computeOccupancy (NVIDIA's calculator) on the kernel's registers, static plus
// dynamic shared memory and block size. Register-blocked GEMMs hide latency with ILP, so 25 %
// is their full mark; other kernels need 50 %.
//   KernelFacts (registers, shared bytes, threads) -> Occupancy -> score = 5 x min(1, occupancy / target)
#include "core/rubric/Dimensions.h"

#include <algorithm>

namespace stitch::rubric {

double occupancyTarget(const KernelFacts &k)
{
    const bool gemm = k.tiledGemm();
    return gemm ? 0.25 : 0.5;
}

double occupancyScore(double occupancy, double target)
{
    return 5 * std::min(1.0, occupancy / target);
}

double occupancyFigure(const KernelFacts &k)
{
    if (!k.occupancy)
        return 0;
    return k.expectedOccupancy >= 0 ? std::min(k.expectedOccupancy, k.occupancy->occupancy) : k.occupancy->occupancy;
}

namespace {

class OccupancyDimension final : public KernelDimension {
public:
    std::string name() const override { return "occupancy"; }

protected:
    RubricScore scoreKernel(const KernelFacts &k, const ProgramFacts &p, const RubricInput &) const override
    {
        RubricScore s;
        s.estimated = !k.compiled;
        const std::string res = std::to_string(k.threads) + " threads, " + std::to_string(k.registers) + " registers" +
                                (k.compiled ? "" : " (estimated)") + ", " + std::to_string(k.sharedBytesTotal()) +
                                " B shared memory (" + std::to_string(k.staticSharedBytes) + " static + " +
                                std::to_string(k.dynamicSharedBytes) + " dynamic)";
        if (!k.occupancy) {
            s.score = 0;
            s.evidence = res + ": " + k.occupancyError;
            s.sentence = "The kernel cannot launch: " + k.occupancyError + ".";
            return s;
        }
        const Occupancy &o = *k.occupancy;
        const bool gemm = k.tiledGemm();
        // The score is the occupancy the warps reach: the calculator's theoretical figure, less
        // what short-lived blocks or a small grid leave empty (the model's estimate, which the
        // H200's achieved-occupancy counter checks, docs/RUBRIC.md).
        const double reached = occupancyFigure(k);
        s.score = occupancyScore(reached, occupancyTarget(k));
        const std::int64_t launched = k.launchedBlocks(); // stream-K: its shared blocks and the whole tiles
        const double fill = static_cast<double>(launched) / (p.gpu->multiprocessors * double(o.activeBlocksPerSm));
        s.evidence = res + ": " + std::to_string(o.activeBlocksPerSm) + " blocks/SM, " +
                     std::to_string(o.activeWarpsPerSm) + " of " + std::to_string(p.arch->maxWarpsPerSm) +
                     " warps = " + percent(o.occupancy) + " (limited by " + o.limiter + "); grid " +
                     std::to_string(launched) + " blocks" +
                     (k.streamK && launched != k.blocks
                          ? " (stream-K: " + std::to_string(k.streamKBlocks) + " sharing the k steps of " +
                                std::to_string(k.streamKTiles) + " of " + std::to_string(k.blocks) + " tiles)"
                          : std::string()) +
                     " = " + fmt(fill, 2) + " waves on " +
                     std::to_string(p.gpu->multiprocessors) + " SMs";
        const bool short_ = reached < o.occupancy * 0.9;
        if (short_)
            s.evidence += "; expected achieved " + percent(reached) + " (blocks " +
                          (fill < 1 ? std::string("fill less than one wave") : "finish before the SM refills their slots") + ")";
        s.sentence =
            percent(o.occupancy) + " theoretical occupancy (" + std::to_string(o.activeWarpsPerSm) +
            " warps per SM), limited by " + o.limiter +
            (short_ ? ", about " + percent(reached) + " reached" : std::string()) + "; " +
            (gemm ? "a register-blocked GEMM needs about 25%" : "this kernel needs about 50%") + " to hide latency" +
            (fill < 1 ? ", and the grid fills only " + percent(fill) + " of one wave." : ".");
        return s;
    }
};

} // namespace

std::unique_ptr<RubricDimension> makeOccupancy()
{
    return std::make_unique<OccupancyDimension>();
}

} // namespace stitch::rubric
