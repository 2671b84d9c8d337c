#include "core/agents/Features.h"

#include "core/schedule/Space.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace stitch::agents {

namespace {

constexpr int kAgentSlots = 4;
constexpr int kStrategySlots = 4;
constexpr int kProblemFeatures = 20;
constexpr int kArchFeatures = 8;
constexpr int kOptionFeatures = 7;

float log2Norm(double v, double scale = 16.0)
{
    return v > 0 ? static_cast<float>(std::log2(v) / scale) : 0.0f;
}

float flag(bool b) { return b ? 1.0f : 0.0f; }

} // namespace

const std::vector<std::string> &observedKeys()
{
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k = {"fuse", "strategy"};
        for (auto s : schedule::kAllStrategies)
            for (const auto &d : schedule::decisionDefs(s))
                if (std::find(k.begin(), k.end(), d.key) == k.end())
                    k.push_back(d.key);
        return k;
    }();
    return keys;
}

int observationSize()
{
    const int keys = static_cast<int>(observedKeys().size());
    // agent, the key one-hot, strategy, problem, arch, the group's decisions (value and taken),
    // and each option's features.
    return kAgentSlots + keys + kStrategySlots + kProblemFeatures + kArchFeatures + 2 * keys +
           kMaxActions * kOptionFeatures;
}

std::string observationSchema()
{
    std::string s = "stitchcuda-observation/1";
    for (const auto &k : observedKeys())
        s += " " + k;
    return s;
}

std::vector<float> observe(const Environment &env)
{
    std::vector<float> o;
    o.reserve(static_cast<std::size_t>(observationSize()));
    const DecisionStep &step = env.step();
    const schedule::Problem &p = env.problem();
    const auto &keys = observedKeys();

    // Who decides, and what.
    const int agent = static_cast<int>(learningAgent(step.agent));
    for (int i = 0; i < kAgentSlots; ++i)
        o.push_back(flag(i == agent));
    for (const auto &k : keys)
        o.push_back(flag(k == step.key));

    // The kernel group.
    const schedule::Schedule &sched = env.schedule();
    const schedule::KernelGroup *group = step.group < sched.groups.size() ? &sched.groups[step.group] : nullptr;
    for (auto s : schedule::kAllStrategies)
        o.push_back(flag(group && group->strategy == s));
    const schedule::GroupAnalysis *a = env.analysis(step.group);
    std::int64_t m = 0, n = 0, k = 0, total = 1, last = 0;
    if (a) {
        for (const auto &e : a->domain) {
            const auto v = schedule::sizeValue(e, p);
            total *= std::max<std::int64_t>(v, 1);
        }
        if (!a->domain.empty())
            last = schedule::sizeValue(a->domain.back(), p);
        if (a->strategy == schedule::Strategy::Gemm && a->domain.size() == 2) {
            m = schedule::sizeValue(a->domain[0], p);
            n = schedule::sizeValue(a->domain[1], p);
            k = schedule::sizeValue(a->k, p);
        }
    }
    const std::int64_t rows = last > 0 ? total / last : 0;
    o.push_back(log2Norm(static_cast<double>(m)));
    o.push_back(log2Norm(static_cast<double>(n)));
    o.push_back(log2Norm(static_cast<double>(k)));
    o.push_back(log2Norm(static_cast<double>(total), 32));
    o.push_back(log2Norm(static_cast<double>(last)));
    o.push_back(log2Norm(static_cast<double>(rows)));
    const std::int64_t aligned = a && a->strategy == schedule::Strategy::Gemm ? std::gcd(std::gcd(m, n), k) : last;
    o.push_back(flag(aligned > 0 && aligned % 4 == 0));
    o.push_back(flag(aligned > 0 && aligned % 32 == 0));
    o.push_back(flag(aligned > 0 && (aligned & (aligned - 1)) == 0));
    o.push_back(a ? static_cast<float>(a->ops.size()) / 8.0f : 0.0f);
    o.push_back(a ? static_cast<float>(a->reads.size()) / 8.0f : 0.0f);
    o.push_back(flag(a && a->aRowMajor));
    o.push_back(flag(a && a->bRowMajor));
    o.push_back(flag(a && schedule::computesFloatExp(*a)));
    o.push_back(flag(a && schedule::computesOnePlusErf(*a)));
    o.push_back(static_cast<float>(sched.groups.size()) / 8.0f);
    o.push_back(sched.groups.empty() ? 0.0f : static_cast<float>(step.group) / static_cast<float>(sched.groups.size()));
    o.push_back(flag(p.precision == schedule::Precision::TF32));
    o.push_back(static_cast<float>(p.graph.ops().size()) / 8.0f);
    o.push_back(log2Norm(m > 0 && n > 0 ? static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) /
                                              (static_cast<double>(m * k + k * n + m * n))
                                        : 0.0,
                         8));

    // The target.
    const GpuSpec *gpu = ArchDatabase::builtin().defaultGpuFor(p.arch.name);
    o.push_back(static_cast<float>(p.arch.computeMajor * 10 + p.arch.computeMinor) / 100.0f);
    o.push_back(gpu ? static_cast<float>(gpu->multiprocessors) / 132.0f : 0.0f);
    o.push_back(static_cast<float>(p.arch.sharedMemoryPerSm) / 233472.0f);
    o.push_back(static_cast<float>(p.arch.registersPerSm) / 65536.0f);
    o.push_back(static_cast<float>(p.arch.maxThreadsPerSm) / 2048.0f);
    o.push_back(gpu ? static_cast<float>(gpu->memoryBandwidthGBs) / 4800.0f : 0.0f);
    o.push_back(gpu ? static_cast<float>(gpu->fp32Tflops) / 67.0f : 0.0f);
    o.push_back(flag(p.arch.tensorCoresTf32));

    // The group's decisions as they stand, and which were taken.
    for (const auto &key : keys) {
        const schedule::DecisionDef *d = group ? schedule::findDecision(group->strategy, key) : nullptr;
        float v = 0;
        if (d && d->candidates.size() > 1) {
            const int value = group->value(key);
            const auto it = std::find(d->candidates.begin(), d->candidates.end(), value);
            v = static_cast<float>(it - d->candidates.begin()) / static_cast<float>(d->candidates.size() - 1);
        } else if (key == "strategy" && group) {
            v = static_cast<float>(static_cast<int>(group->strategy)) / 3.0f;
        }
        o.push_back(v);
        o.push_back(flag(group && env.decided(step.group, key)));
    }

    // Each option: legal, its place among the candidates, its outcome by the model and the rubric.
    const Score &now = env.current();
    const auto dims = affectedDimensions(step.agent);
    auto mean = [&](const Score &s) {
        double sum = 0;
        for (int d : dims)
            sum += s.dimensions[d];
        return dims.empty() ? 0.0 : sum / static_cast<double>(dims.size());
    };
    const auto mask = step.mask();
    const std::size_t options = step.options.size();
    double bestMs = 0;
    for (std::size_t i = 0; i < options && i < mask.size(); ++i)
        if (mask[i] && env.outcomes()[i].ok && (bestMs <= 0 || env.outcomes()[i].ms < bestMs))
            bestMs = env.outcomes()[i].ms;
    for (int i = 0; i < kMaxActions; ++i) {
        const bool exists = i < static_cast<int>(options);
        const Score *s = exists ? &env.outcomes()[static_cast<std::size_t>(i)] : nullptr;
        const bool usable = exists && mask[i] && s->ok && now.ok;
        o.push_back(flag(exists && mask[i]));
        o.push_back(exists && options > 1 ? static_cast<float>(i) / static_cast<float>(options - 1) : 0.0f);
        o.push_back(usable ? static_cast<float>(std::clamp(std::log(s->ms / now.ms), -2.0, 2.0)) : 0.0f);
        o.push_back(usable ? static_cast<float>((mean(*s) - mean(now)) / 5.0) : 0.0f);
        o.push_back(flag(exists && i == step.heuristicIndex));
        // Against the best option by the model: a few percent must be visible to the network.
        o.push_back(usable && bestMs > 0 ? static_cast<float>(std::min(std::log(s->ms / bestMs) * 10.0, 4.0)) : 4.0f);
        o.push_back(flag(usable && s->ms <= bestMs));
    }
    return o;
}

} // namespace stitch::agents
