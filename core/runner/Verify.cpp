#include "core/runner/Verify.h"

#include <cmath>
#include <limits>

namespace stitch::runner {

std::vector<std::int64_t> unflattenIndex(std::uint64_t index, const std::vector<std::int64_t> &shape)
{
    std::vector<std::int64_t> coords(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
        const auto extent = static_cast<std::uint64_t>(shape[d]);
        coords[d] = static_cast<std::int64_t>(index % extent);
        index /= extent;
    }
    return coords;
}

OutputCheck compareOutput(const BufferSpec &spec, const Bytes &got, const std::vector<double> &expected, double tolerance)
{
    OutputCheck c;
    c.buffer = spec.name;
    c.elements = spec.count;
    if (got.size() != spec.bytes() || expected.size() != spec.count) {
        c.relativeError = std::numeric_limits<double>::quiet_NaN();
        c.mismatchCount = spec.count;
        return c;
    }
    double refSq = 0.0;
    for (double e : expected)
        if (std::isfinite(e))
            refSq += e * e;
    const double refRms = std::sqrt(refSq / static_cast<double>(std::max<std::uint64_t>(spec.count, 1)));

    double diffSq = 0.0;
    bool anyNonFinite = false;
    for (std::uint64_t i = 0; i < spec.count; ++i) {
        const double g = loadElement(got.data(), spec.dtype, i);
        const double e = expected[i];
        bool bad = false;
        if (!std::isfinite(g) || !std::isfinite(e)) {
            anyNonFinite = true;
            // Both infinite with the same sign is a match; every NaN is a mismatch.
            bad = !(std::isinf(g) && g == e);
            if (isPoison(got.data(), spec.dtype, i))
                ++c.unwrittenCount;
            else if (!std::isfinite(g) && bad)
                ++c.nanCount;
        } else {
            const double d = std::abs(g - e);
            diffSq += d * d;
            c.maxAbsError = std::max(c.maxAbsError, d);
            bad = d > tolerance * (std::abs(e) + refRms);
        }
        if (bad) {
            ++c.mismatchCount;
            if (c.firstMismatches.size() < 8)
                c.firstMismatches.push_back(Mismatch{i, unflattenIndex(i, spec.shape), g, e});
        }
    }
    const double diff = std::sqrt(diffSq);
    const double ref = std::sqrt(refSq);
    c.relativeError = anyNonFinite && c.mismatchCount ? std::numeric_limits<double>::quiet_NaN() : ref > 0 ? diff / ref : diff;
    // Poison is a NaN only in float types, so unwritten integer elements show as wrong values
    // (-1), not as unwritten.
    c.passed = !std::isnan(c.relativeError) && c.relativeError <= tolerance && c.unwrittenCount == 0;
    return c;
}

Verification makeVerification(std::string reference, PrecisionPolicy policy, std::vector<OutputCheck> outputs)
{
    Verification v;
    v.reference = std::move(reference);
    v.precision = precisionName(policy);
    v.tolerance = relativeTolerance(policy);
    v.outputs = std::move(outputs);
    v.verified = !v.outputs.empty();
    for (const auto &o : v.outputs)
        v.verified = v.verified && o.passed;
    return v;
}

} // namespace stitch::runner
