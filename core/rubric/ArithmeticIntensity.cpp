// Arithmetic intensity: FLOPs per byte the kernel moves from global memory (tile re-reads
// counted, reuse through shared memory and registers credited), against the ridge point
// peak FLOP/s / bandwidth of the GPU.
//   KernelFacts (flops, trafficBytes) + GpuSpec -> score on a log scale: ridge/64 -> 0, ridge -> 5
#include "core/rubric/Dimensions.h"

#include <algorithm>
#include <cmath>

namespace stitch::rubric {

double ridgePoint(const GpuSpec &gpu)
{
    return gpu.fp32Tflops * 1e12 / (gpu.memoryBandwidthGBs * 1e9);
}

double intensityScore(double flopsPerByte, double ridge)
{
    const double span = std::log2(64.0);
    return flopsPerByte <= 0 ? 0 : 5 * std::clamp((std::log2(flopsPerByte / ridge) + span) / span, 0.0, 1.0);
}

namespace {

class ArithmeticIntensity final : public KernelDimension {
public:
    std::string name() const override { return "arithmetic_intensity"; }

protected:
    RubricScore scoreKernel(const KernelFacts &k, const ProgramFacts &p, const RubricInput &) const override
    {
        RubricScore s;
        const double ridge = ridgePoint(*p.gpu);
        const double bytes = std::max(k.trafficBytes, 1.0);
        const double intensity = k.flops / bytes;
        const double best = k.flops / std::max(k.uniqueBytes, 1.0);
        s.score = intensityScore(intensity, ridge);
        s.evidence = fmt(k.flops / 1e6, 3) + " MFLOP over " + fmt(bytes / 1e6, 3) + " MB moved (" +
                     fmt(k.uniqueBytes / 1e6, 3) + " MB unique): " + fmt(intensity, 2) +
                     " FLOP/B; each byte once: " + fmt(best, 2) + " FLOP/B; ridge " + fmt(ridge, 1) + " FLOP/B (" +
                     p.gpu->name + ")";
        if (intensity >= ridge)
            s.sentence = fmt(intensity, 1) + " FLOP per byte is above the ridge point of " + fmt(ridge, 1) +
                         ": the kernel can be compute-bound.";
        else if (best > intensity * 1.5)
            s.sentence = fmt(intensity, 2) + " FLOP per byte, below the ridge point of " + fmt(ridge, 1) +
                         ": memory-bound; reading each byte once would give " + fmt(best, 2) +
                         " (larger tiles or caching raise reuse).";
        else
            s.sentence =
                fmt(intensity, 2) + " FLOP per byte, below the ridge point of " + fmt(ridge, 1) +
                ": memory-bound, and the kernel already reads each byte about once, so only fusing more ops raises it.";
        return s;
    }
};

} // namespace

std::unique_ptr<RubricDimension> makeArithmeticIntensity()
{
    return std::make_unique<ArithmeticIntensity>();
}

} // namespace stitch::rubric
