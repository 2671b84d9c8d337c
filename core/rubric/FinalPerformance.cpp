// Final performance: the program's speedup over the generic schedule (one op per kernel, one
// thread per output), measured when a measurement is given, otherwise predicted by PerfModel
// and marked estimated. 0: no faster than generic; 5: at the roofline floor.
//   ProgramFacts::predictedMs (or measuredMs) + genericSchedule -> PerfModel -> speedup -> score
#include "core/rubric/Dimensions.h"

#include "core/rubric/PerfModel.h"

#include <algorithm>
#include <cmath>

namespace stitch::rubric {

namespace {

class FinalPerformance final : public RubricDimension {
public:
    std::string name() const override { return "final_performance"; }

    bool applies(const RubricInput &input) const override
    {
        return input.kernel < 0 && input.problem && (input.program || input.facts);
    }

    RubricScore evaluate(const RubricInput &input) const override
    {
        RubricScore s;
        s.dimension = name();
        Result<ProgramFacts> storage = Error{};
        const ProgramFacts *facts = factsFor(input, storage);
        if (!facts || !input.problem) {
            s.evidence = "no program";
            s.sentence = "Nothing to score.";
            return s;
        }
        double baseline = 0;
        bool baselineEstimated = true;
        if (input.baselineMeasuredMs && input.measuredMs) {
            baseline = *input.baselineMeasuredMs;
            baselineEstimated = false;
        } else if (input.baselinePredictedMs) {
            baseline = *input.baselinePredictedMs;
        } else {
            auto b = PerfModel().predictSchedule(*input.problem, genericSchedule(*input.problem));
            baseline = b.ok() ? *b : 0;
        }
        const double ms = input.measuredMs ? *input.measuredMs : facts->predictedMs;
        s.estimated = !input.measuredMs || baselineEstimated;
        const double floorMs = rooflineFloorMs(*input.problem, *facts->gpu) + 0.0025; // one launch
        if (baseline <= 0 || ms <= 0) {
            s.evidence = "no baseline time";
            s.sentence = "The generic baseline could not be predicted.";
            return s;
        }
        const double speedup = baseline / ms;
        const double best = std::max(baseline / floorMs, 1.0001);
        s.score = roundScore(5 * std::clamp(std::log(speedup) / std::log(best), 0.0, 1.0));
        const std::string how = input.measuredMs ? "measured" : "predicted";
        s.evidence = how + " " + fmt(ms * 1e3, 1) + " us vs generic " + fmt(baseline * 1e3, 1) + " us" +
                     (baselineEstimated ? " (predicted)" : " (measured)") + ": " + fmt(speedup, 2) +
                     "x; roofline floor " + fmt(floorMs * 1e3, 1) + " us (at most " + fmt(best, 1) + "x)";
        std::string calibration;
        if (!input.measuredMs && input.arch)
            calibratedModelFor(*input.arch, &calibration);
        if (!calibration.empty())
            s.evidence += "; " + calibration;
        s.sentence = (s.estimated ? "Estimated (not measured): " : "Measured: ") + fmt(speedup, 1) +
                     "x faster than one generic kernel per op, of at most " + fmt(best, 1) + "x the roofline allows.";
        return s;
    }
};

} // namespace

std::unique_ptr<RubricDimension> makeFinalPerformance()
{
    return std::make_unique<FinalPerformance>();
}

} // namespace stitch::rubric
