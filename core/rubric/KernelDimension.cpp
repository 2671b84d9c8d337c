// The base of the per-kernel dimensions: builds the facts when none are given, scores one kernel
// or aggregates every kernel into the program's score.
//   RubricInput -> factsFor -> scoreKernel per kernel -> aggregate (weights: predicted time)
#include "core/rubric/Dimensions.h"

#include "core/rubric/PerfModel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stitch::rubric {

double roundScore(double score)
{
    return std::round(std::clamp(score, 0.0, 5.0) * 10.0) / 10.0;
}

std::string fmt(double value, int precision)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", precision, value);
    return buf;
}

std::string percent(double fraction)
{
    return fmt(fraction * 100.0, fraction < 0.1 && fraction > 0 ? 1 : 0) + "%";
}

const ProgramFacts *factsFor(const RubricInput &input, Result<ProgramFacts> &storage)
{
    if (input.facts)
        return input.facts;
    if (!input.problem || !input.program)
        return nullptr;
    storage = analyzeProgram(*input.problem, *input.program, input.compiled, input.gpu);
    if (!storage.ok())
        return nullptr;
    PerfModel().predict(*storage);
    return &*storage;
}

bool KernelDimension::applies(const RubricInput &input) const
{
    if (!input.facts && (!input.problem || !input.program))
        return false;
    Result<ProgramFacts> storage = Error{};
    const ProgramFacts *facts = factsFor(input, storage);
    if (!facts)
        return false;
    if (input.kernel < 0) // the program: when the dimension applies to one of its kernels
        return std::any_of(facts->kernels.begin(), facts->kernels.end(),
                           [&](const KernelFacts &k) { return appliesToKernel(k, input); });
    return input.kernel < static_cast<int>(facts->kernels.size()) &&
           appliesToKernel(facts->kernels[static_cast<std::size_t>(input.kernel)], input);
}

RubricScore KernelDimension::evaluate(const RubricInput &input) const
{
    Result<ProgramFacts> storage = Error{};
    const ProgramFacts *facts = factsFor(input, storage);
    if (!facts) {
        RubricScore s;
        s.dimension = name();
        s.evidence = storage.ok() ? "no program to score" : storage.error().message;
        s.sentence = "Nothing to score: the program has not been generated.";
        return s;
    }
    if (input.kernel >= 0) {
        RubricScore s = scoreKernel(facts->kernels.at(static_cast<std::size_t>(input.kernel)), *facts, input);
        s.dimension = name();
        s.score = roundScore(s.score);
        return s;
    }
    std::vector<std::pair<const KernelFacts *, RubricScore>> scores;
    for (const auto &k : facts->kernels) {
        if (!appliesToKernel(k, input))
            continue;
        RubricScore s = scoreKernel(k, *facts, input);
        s.score = roundScore(s.score);
        scores.push_back({&k, s});
    }
    RubricScore out;
    if (scores.empty()) {
        out.score = 5;
        out.evidence = "no kernel this dimension applies to";
        out.sentence = "Not applicable to this program.";
    } else {
        out = aggregate(scores);
    }
    out.dimension = name();
    out.score = roundScore(out.score);
    return out;
}

RubricScore KernelDimension::aggregate(const std::vector<std::pair<const KernelFacts *, RubricScore>> &scores) const
{
    RubricScore out;
    double total = 0, weighted = 0, worstGain = -1;
    for (const auto &[k, s] : scores)
        total += std::max(k->predictedMs, 1e-9);
    const RubricScore *worst = &scores.front().second;
    for (const auto &[k, s] : scores) {
        const double w = std::max(k->predictedMs, 1e-9) / total;
        weighted += w * s.score;
        out.hardViolation = out.hardViolation || s.hardViolation;
        out.estimated = out.estimated || s.estimated;
        if (!out.evidence.empty())
            out.evidence += "; ";
        out.evidence += k->name + ": " + fmt(s.score, 1) + " (" + percent(w) + " of the predicted time)";
        const double gain = w * (5 - s.score);
        if (gain > worstGain) {
            worstGain = gain;
            worst = &s;
        }
    }
    out.score = weighted;
    out.sentence = scores.size() == 1 || worstGain <= 0
                       ? worst->sentence
                       : "Weighted by predicted time. Most to gain: " + worst->sentence;
    return out;
}

} // namespace stitch::rubric
