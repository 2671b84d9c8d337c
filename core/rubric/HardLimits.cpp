// Hard constraints: threads, shared memory or registers over the architecture's limits, or
// register spills: score 0 and hardViolation, the program is rejected.
//   KernelFacts (launch shape, resources) + ArchLimits -> every broken limit, named with its value
#include "core/rubric/Dimensions.h"

#include <algorithm>

namespace stitch::rubric {

namespace {

class HardLimits final : public KernelDimension {
public:
    std::string name() const override { return "hard_limits"; }

protected:
    RubricScore scoreKernel(const KernelFacts &k, const ProgramFacts &p, const RubricInput &) const override
    {
        const ArchLimits &a = *p.arch;
        std::vector<std::string> broken;
        if (k.threads > a.maxThreadsPerBlock)
            broken.push_back(std::to_string(k.threads) + " threads per block > " + a.name + " limit of " +
                             std::to_string(a.maxThreadsPerBlock));
        if (k.sharedBytesTotal() > a.sharedMemoryPerBlockOptin)
            broken.push_back(std::to_string(k.sharedBytesTotal()) + " B of shared memory > " + a.name + " limit of " +
                             std::to_string(a.sharedMemoryPerBlockOptin) + " B per block");
        if (k.registers > a.maxRegistersPerThread)
            broken.push_back(std::to_string(k.registers) + " registers per thread > " +
                             std::to_string(a.maxRegistersPerThread));
        if (static_cast<long long>(k.registers) * k.threads > a.registersPerBlock)
            broken.push_back(std::to_string(k.registers) + " registers x " + std::to_string(k.threads) + " threads > " +
                             std::to_string(a.registersPerBlock) + " registers per block");
        if (k.spillBytes > 0)
            broken.push_back(std::to_string(k.spillBytes) + " B of register spills (local memory traffic)");
        if (broken.empty() && !k.occupancy)
            broken.push_back(k.occupancyError);
        RubricScore s;
        s.evidence = std::to_string(k.threads) + " threads (limit " + std::to_string(a.maxThreadsPerBlock) + "), " +
                     std::to_string(k.sharedBytesTotal()) + " B shared (limit " +
                     std::to_string(a.sharedMemoryPerBlockOptin) + "), " + std::to_string(k.registers) + " registers" +
                     (k.compiled ? "" : " (estimated)") + " (limit " + std::to_string(a.maxRegistersPerThread) +
                     "), spills " + (k.spillBytes < 0 ? std::string("unknown") : std::to_string(k.spillBytes) + " B");
        if (broken.empty()) {
            s.score = 5;
            s.sentence = "Within every limit of " + a.name + " and no register spills.";
            return s;
        }
        s.score = 0;
        s.hardViolation = true;
        s.evidence += "; broken: ";
        for (std::size_t i = 0; i < broken.size(); ++i)
            s.evidence += (i ? "; " : "") + broken[i];
        s.sentence = "Rejected: " + broken.front() + ".";
        return s;
    }

    RubricScore aggregate(const std::vector<std::pair<const KernelFacts *, RubricScore>> &scores) const override
    {
        RubricScore out;
        out.score = 5;
        out.sentence = "Every kernel is within the hardware limits.";
        for (const auto &[k, s] : scores) {
            if (!s.hardViolation)
                continue;
            if (!out.hardViolation)
                out.sentence = k->name + ": " + s.sentence;
            out.hardViolation = true;
            out.score = 0;
            out.evidence += (out.evidence.empty() ? "" : "; ") + k->name + ": " + s.evidence;
        }
        if (!out.hardViolation)
            out.evidence = std::to_string(scores.size()) + " kernels checked";
        return out;
    }
};

} // namespace

std::unique_ptr<RubricDimension> makeHardLimits()
{
    return std::make_unique<HardLimits>();
}

} // namespace stitch::rubric
