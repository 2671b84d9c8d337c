// Inputs the client and the worker both draw, element access, and output comparison.
#include "core/runner/HostData.h"
#include "core/runner/Verify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace stitch;
using namespace stitch::runner;

namespace {

BufferSpec spec(const std::string &name, ir::DType t, std::uint64_t n, BufferRole role = BufferRole::Input)
{
    BufferSpec b;
    b.name = name;
    b.dtype = t;
    b.count = n;
    b.role = role;
    return b;
}

Bytes floats(const std::vector<float> &v)
{
    Bytes b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

} // namespace

TEST(HostData, RandomInputsAreDeterministicPerSeedAndNameAndNeverZero)
{
    LaunchPlan plan;
    plan.buffers = {spec("A", ir::DType::F32, 100000), spec("B", ir::DType::F32, 100000)};
    const Bytes a1 = initialBytes(plan, plan.buffers[0], 7);
    const Bytes a2 = initialBytes(plan, plan.buffers[0], 7);
    const Bytes b1 = initialBytes(plan, plan.buffers[1], 7);
    const Bytes a3 = initialBytes(plan, plan.buffers[0], 8);
    EXPECT_EQ(a1, a2);
    EXPECT_NE(a1, b1);
    EXPECT_NE(a1, a3);
    double lo = 1, hi = -1;
    for (double v : toDoubles(a1, ir::DType::F32)) {
        ASSERT_NE(v, 0.0);
        lo = std::min(lo, v), hi = std::max(hi, v);
    }
    EXPECT_LT(lo, -0.99);
    EXPECT_GT(hi, 0.99);
}

TEST(HostData, InitKindsAndIntegerRanges)
{
    LaunchPlan plan;
    plan.buffers = {spec("I", ir::DType::I32, 1000), spec("O", ir::DType::F32, 10, BufferRole::Output),
                    spec("S", ir::DType::F32, 10, BufferRole::Scratch), spec("H", ir::DType::F16, 1000)};
    plan.buffers[0].init = BufferInit{BufferInit::Kind::Random, -3.5, 5.0, {}};
    plan.buffers.push_back(spec("copy", ir::DType::I32, 1000));
    plan.buffers.back().init = BufferInit{BufferInit::Kind::CopyOf, 0, 0, "I"};
    const Bytes ints = initialBytes(plan, plan.buffers[0], 1);
    for (double v : toDoubles(ints, ir::DType::I32)) {
        EXPECT_GE(v, -3.0);
        EXPECT_LE(v, 5.0);
    }
    EXPECT_EQ(initialBytes(plan, plan.buffers.back(), 1), ints);
    const Bytes out = initialBytes(plan, plan.buffers[1], 1);
    EXPECT_TRUE(isPoison(out.data(), ir::DType::F32, 9));
    EXPECT_TRUE(std::isnan(loadElement(out.data(), ir::DType::F32, 0)));
    EXPECT_EQ(initialBytes(plan, plan.buffers[2], 1), Bytes(40));
    for (double v : toDoubles(initialBytes(plan, plan.buffers[3], 1), ir::DType::F16))
        ASSERT_TRUE(v != 0.0 && std::abs(v) <= 1.0);
}

TEST(HostData, HalfAndBFloat16Conversions)
{
    EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
    EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
    EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
    EXPECT_EQ(floatToHalf(70000.0f), 0x7C00);
    EXPECT_EQ(floatToHalf(1.0f / 3.0f), 0x3555);
    EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001); // smallest subnormal
    EXPECT_EQ(halfToFloat(0x0001), 5.960464477539063e-08f);
    EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3C00);      // tie rounds to even
    EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::numeric_limits<float>::quiet_NaN()))));
    for (std::uint32_t h = 0; h < 0x7C00; ++h)
        ASSERT_EQ(floatToHalf(halfToFloat(static_cast<std::uint16_t>(h))), h);
    EXPECT_EQ(floatToBFloat16(1.0f), 0x3F80);
    EXPECT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
    EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Verify, ExactMatchPasses)
{
    const BufferSpec c = spec("C", ir::DType::F32, 4, BufferRole::Output);
    auto check = compareOutput(c, floats({1, 2, 3, 4}), {1, 2, 3, 4}, 1e-5);
    EXPECT_TRUE(check.passed);
    EXPECT_EQ(check.relativeError, 0.0);
    EXPECT_EQ(check.mismatchCount, 0u);
}

TEST(Verify, RelativeErrorIsTheNormRatio)
{
    const BufferSpec c = spec("C", ir::DType::F32, 2, BufferRole::Output);
    auto check = compareOutput(c, floats({3.0f, 4.0004f}), {3, 4}, 1e-5);
    EXPECT_NEAR(check.relativeError, 0.0004 / 5.0, 1e-7);
    EXPECT_FALSE(check.passed);
    ASSERT_EQ(check.firstMismatches.size(), 1u);
    EXPECT_EQ(check.firstMismatches[0].index, 1u);
    EXPECT_TRUE(compareOutput(c, floats({3.0f, 4.0004f}), {3, 4}, 1e-3).passed);
}

TEST(Verify, NaNNeverPassesAndPoisonCountsAsUnwritten)
{
    BufferSpec c = spec("C", ir::DType::F32, 6, BufferRole::Output);
    c.shape = {2, 3};
    Bytes got = floats({1, 2, std::numeric_limits<float>::quiet_NaN(), 4, 5, 6});
    std::memset(got.data() + 5 * 4, 0xFF, 4); // element 5 never written
    auto check = compareOutput(c, got, {1, 2, 3, 4, 5, 6}, 1.0);
    EXPECT_FALSE(check.passed);
    EXPECT_TRUE(std::isnan(check.relativeError));
    EXPECT_EQ(check.nanCount, 1u);
    EXPECT_EQ(check.unwrittenCount, 1u);
    EXPECT_EQ(check.mismatchCount, 2u);
    EXPECT_EQ(check.firstMismatches[1].coords, (std::vector<std::int64_t>{1, 2}));
    // A NaN reference is no excuse either.
    EXPECT_FALSE(compareOutput(spec("C", ir::DType::F32, 1), floats({1}), {std::nan("")}, 1.0).passed);
}

TEST(Verify, ZeroReferenceUsesTheAbsoluteNorm)
{
    const BufferSpec c = spec("C", ir::DType::F32, 2, BufferRole::Output);
    EXPECT_TRUE(compareOutput(c, floats({0, 0}), {0, 0}, 1e-5).passed);
    EXPECT_FALSE(compareOutput(c, floats({0, 1e-3f}), {0, 0}, 1e-5).passed);
}

TEST(Verify, ToleranceByPolicy)
{
    EXPECT_EQ(relativeTolerance(PrecisionPolicy::FP32), 1e-5);
    EXPECT_EQ(relativeTolerance(PrecisionPolicy::TF32), 1e-3);
    EXPECT_EQ(relativeTolerance(PrecisionPolicy::BF16), 1e-2);
    const BufferSpec c = spec("C", ir::DType::I32, 3, BufferRole::Output);
    Bytes got(12);
    const std::int32_t v[3] = {1, 2, 4};
    std::memcpy(got.data(), v, 12);
    EXPECT_FALSE(compareOutput(c, got, {1, 2, 3}, relativeTolerance(PrecisionPolicy::Exact)).passed);
    EXPECT_TRUE(compareOutput(c, got, {1, 2, 4}, relativeTolerance(PrecisionPolicy::Exact)).passed);
    EXPECT_FALSE(makeVerification("cpu", PrecisionPolicy::FP32, {}).verified); // nothing checked is not verified
}
