#include "core/ir/DType.h"

#include <gtest/gtest.h>

using namespace stitch::ir;

TEST(DType, NamesAndSizes)
{
    EXPECT_STREQ(dtypeName(DType::F32), "float32");
    EXPECT_STREQ(dtypeName(DType::BF16), "bfloat16");
    EXPECT_STREQ(dtypeShortName(DType::F16), "f16");
    EXPECT_STREQ(dtypeShortName(DType::Bool), "bool");
    EXPECT_STREQ(cudaTypeName(DType::F16), "__half");
    EXPECT_STREQ(cudaTypeName(DType::I64), "long long");
    EXPECT_EQ(dtypeSize(DType::F64), 8);
    EXPECT_EQ(dtypeSize(DType::F32), 4);
    EXPECT_EQ(dtypeSize(DType::BF16), 2);
    EXPECT_EQ(dtypeSize(DType::I32), 4);
    EXPECT_EQ(dtypeSize(DType::Bool), 1);
    EXPECT_TRUE(isFloat(DType::BF16));
    EXPECT_FALSE(isFloat(DType::I64));
    EXPECT_TRUE(isInteger(DType::I64));
    EXPECT_FALSE(isInteger(DType::Bool));
}

TEST(DType, ParsesCanonicalShortAndCudaSpellings)
{
    struct Case {
        const char *text;
        DType expected;
    };
    const Case cases[] = {
        {"float32", DType::F32}, {"f32", DType::F32}, {"float", DType::F32},
        {"float64", DType::F64}, {"double", DType::F64},
        {"half", DType::F16}, {"__half", DType::F16}, {"f16", DType::F16},
        {"__nv_bfloat16", DType::BF16}, {"bf16", DType::BF16},
        {"int", DType::I32}, {"int32", DType::I32},
        {"long long", DType::I64}, {"int64_t", DType::I64},
        {"bool", DType::Bool},
    };
    for (const Case &c : cases) {
        auto parsed = parseDType(c.text);
        ASSERT_TRUE(parsed.ok()) << c.text;
        EXPECT_EQ(*parsed, c.expected) << c.text;
    }
    // Every canonical name round-trips.
    for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::Bool}) {
        EXPECT_EQ(*parseDType(dtypeName(t)), t);
        EXPECT_EQ(*parseDType(dtypeShortName(t)), t);
    }
}

TEST(DType, UnknownNameIsParseError)
{
    auto parsed = parseDType("float128");
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().kind, stitch::ErrorKind::Parse);
    EXPECT_NE(parsed.error().message.find("float128"), std::string::npos);
}

TEST(DType, Promotion)
{
    EXPECT_EQ(promoteTypes(DType::F32, DType::F32), DType::F32);
    EXPECT_EQ(promoteTypes(DType::I32, DType::F32), DType::F32);
    EXPECT_EQ(promoteTypes(DType::F64, DType::F32), DType::F64);
    EXPECT_EQ(promoteTypes(DType::I64, DType::I32), DType::I64);
    EXPECT_EQ(promoteTypes(DType::I64, DType::F16), DType::F16);
    EXPECT_EQ(promoteTypes(DType::F16, DType::BF16), DType::F32);
    EXPECT_EQ(promoteTypes(DType::Bool, DType::I32), DType::I32);
}
