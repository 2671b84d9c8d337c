#include "core/common/Result.h"

#include <gtest/gtest.h>

using namespace stitch;

TEST(Result, CarriesValueOrError)
{
    Result<int> good = 42;
    ASSERT_TRUE(good.ok());
    EXPECT_EQ(*good, 42);

    Result<int> bad = makeError(ErrorKind::Compile, "boom", SourceLocation{"k.cu", 3, 7});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().kind, ErrorKind::Compile);
    EXPECT_EQ(bad.error().toString(), "k.cu:3:7: compile: boom");
}

TEST(Result, DiagnosticFormatsLikeACompiler)
{
    Diagnostic d{Severity::Warning, {"a.cu", 12, 5}, "unused variable"};
    EXPECT_EQ(d.toString(), "a.cu:12:5: warning: unused variable");
    Diagnostic noCol{Severity::Error, {"a.cu", 12, 0}, "x"};
    EXPECT_EQ(noCol.toString(), "a.cu:12: error: x");
    EXPECT_STREQ(errorKindName(ErrorKind::NoDevice), "no-device");
}
