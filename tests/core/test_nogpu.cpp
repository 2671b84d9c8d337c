#include "core/cuda/DriverApi.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace stitch;

// Holds on every machine: pointing the loader at a library that does not exist must give the
// clean "no GPU" state, never a crash. On a machine without a driver, the default path does too.
TEST(NoGpu, MissingDriverIsNoDevice)
{
    ::setenv("STITCHCUDA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    auto api = cuda::DriverApi::load();
    ::unsetenv("STITCHCUDA_LIBCUDA");
    ASSERT_FALSE(api.ok());
    EXPECT_EQ(api.error().kind, ErrorKind::NoDevice);
    EXPECT_NE(api.error().message.find("/nonexistent/libcuda.so.1"), std::string::npos);
}

TEST(NoGpu, DefaultLoadEitherWorksOrSaysWhy)
{
    auto api = cuda::DriverApi::load();
    if (api) {
        EXPECT_GT((*api)->driverVersion(), 0);
    } else {
        EXPECT_EQ(api.error().kind, ErrorKind::NoDevice);
        EXPECT_FALSE(api.error().message.empty());
    }
}
