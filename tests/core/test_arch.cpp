#include "core/arch/ArchDatabase.h"

#include <gtest/gtest.h>

using namespace stitch;

TEST(ArchDatabase, BuiltinHasEveryTargetArchitecture)
{
    const auto &db = ArchDatabase::builtin();
    for (const char *name : {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"}) {
        const ArchLimits *a = db.arch(name);
        ASSERT_NE(a, nullptr) << name;
        EXPECT_EQ(a->registersPerSm, 65536) << name;
        EXPECT_GT(a->sharedMemoryPerBlockOptin, 0) << name;
        EXPECT_NE(db.defaultGpuFor(name), nullptr) << name;
    }
    const GpuSpec *h200 = db.gpu("nvidia h200");
    ASSERT_NE(h200, nullptr);
    EXPECT_EQ(h200->arch, "sm_90");
    EXPECT_EQ(h200->multiprocessors, 132);
    ASSERT_TRUE(h200->measuredCopyGBs.has_value());
    EXPECT_EQ(db.arch("sm_90")->sharedMemoryPerBlockOptin, 227 * 1024);
}

TEST(ArchDatabase, RejectsUnknownKeysAndBadSchema)
{
    auto bad = ArchDatabase::fromJson(R"({"schema":"other"})", "x.json");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().kind, ErrorKind::Parse);

    auto typo = ArchDatabase::fromJson(R"({"schema":"stitchcuda-arch/1","gpus":[],"architectures":[
        {"name":"sm_90","family":"Hopper","computeMajor":9,"computeMinor":0,"maxThreadsPerSm":2048,
         "maxWarpsPerSm":64,"maxBlocksPerSm":32,"registersPerSm":65536,"registersPerBlock":65536,
         "maxRegistersPerThread":255,"registerAllocationUnit":256,"warpAllocationGranularity":4,
         "sharedMemoryPerSm":233472,"sharedMemoryPerBlock":49152,"sharedMemoryPerBlockOptin":232448,
         "sharedMemoryAllocationUnit":128,"reservedSharedMemoryPerBlock":1024,"tensorCoresTf32":true,
         "tensorCoresBf16":true,"asyncCopy":true,"tma":true,"sharedMemoryPerBlok":1}]})",
                                       "x.json");
    ASSERT_FALSE(typo.ok());
    EXPECT_NE(typo.error().message.find("unknown key 'sharedMemoryPerBlok'"), std::string::npos)
        << typo.error().message;

    auto broken = ArchDatabase::fromJson("{ not json", "x.json");
    ASSERT_FALSE(broken.ok());
    EXPECT_EQ(broken.error().location->file, "x.json");
}

// Expected values from NVIDIA's occupancy calculator (CUDA Occupancy Calculator spreadsheet /
// cudaOccupancyMaxActiveBlocksPerMultiprocessor) for compute capability 8.0 and 9.0.
struct OccupancyCase {
    const char *arch;
    int threads, regs, smem;
    int blocks;
    const char *limiter;
};

class OccupancyTable : public ::testing::TestWithParam<OccupancyCase> {};

TEST_P(OccupancyTable, MatchesCalculator)
{
    const auto c = GetParam();
    const ArchLimits *a = ArchDatabase::builtin().arch(c.arch);
    ASSERT_NE(a, nullptr);
    auto o = computeOccupancy(*a, c.threads, c.regs, c.smem);
    ASSERT_TRUE(o.ok()) << o.error().message;
    EXPECT_EQ(o->activeBlocksPerSm, c.blocks);
    EXPECT_EQ(o->limiter, c.limiter);
    EXPECT_DOUBLE_EQ(o->occupancy, static_cast<double>(c.blocks * ((c.threads + 31) / 32)) / a->maxWarpsPerSm);
}

INSTANTIATE_TEST_SUITE_P(Calculator, OccupancyTable,
                         ::testing::Values(OccupancyCase{"sm_90", 256, 32, 0, 8, "warps"},
                                           OccupancyCase{"sm_90", 256, 128, 0, 2, "registers"},
                                           OccupancyCase{"sm_90", 256, 255, 0, 1, "registers"},
                                           OccupancyCase{"sm_90", 1024, 64, 0, 1, "registers"},
                                           OccupancyCase{"sm_90", 128, 32, 48 * 1024, 4, "shared memory"},
                                           OccupancyCase{"sm_90", 32, 16, 0, 32, "blocks"},
                                           OccupancyCase{"sm_80", 256, 40, 0, 6, "registers"},
                                           OccupancyCase{"sm_75", 1024, 32, 0, 1, "warps"},
                                           OccupancyCase{"sm_86", 128, 32, 0, 12, "warps"}));

TEST(Occupancy, RefusesWhatCannotLaunch)
{
    const ArchLimits *a = ArchDatabase::builtin().arch("sm_90");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(computeOccupancy(*a, 2048, 32, 0).error().kind, ErrorKind::ResourceLimit);
    EXPECT_EQ(computeOccupancy(*a, 256, 300, 0).error().kind, ErrorKind::ResourceLimit);
    EXPECT_EQ(computeOccupancy(*a, 256, 32, 300 * 1024).error().kind, ErrorKind::ResourceLimit);
    // 1024 threads x 128 registers needs 128K registers: more than one block's file.
    auto tooMany = computeOccupancy(*a, 1024, 128, 0);
    ASSERT_FALSE(tooMany.ok());
    EXPECT_NE(tooMany.error().message.find("register file"), std::string::npos);
}

TEST(ArchDatabase, ResidentClustersFollowTheMeasuredH200FiguresAndTheGpcRule)
{
    const auto &db = ArchDatabase::builtin();
    const GpuSpec *h200 = db.gpu("NVIDIA H200");
    ASSERT_NE(h200, nullptr);
    // cudaOccupancyMaxActiveClusters on the H200 (run 7): 15 clusters of 8, 7 of 16, one block per SM.
    EXPECT_EQ(residentClusters(*h200, 8, 1), 15);
    EXPECT_EQ(residentClusters(*h200, 16, 1), 7);
    EXPECT_EQ(residentClusters(*h200, 8, 2), 30);
    EXPECT_EQ(residentClusters(*h200, 16, 2), 14);
    // Sizes not measured: 8 GPCs of floor(132 / 8) = 16 SMs.
    EXPECT_EQ(residentClusters(*h200, 4, 1), 32);
    EXPECT_EQ(residentClusters(*h200, 2, 1), 64);
    EXPECT_EQ(residentClusters(*h200, 1, 4), 0) << "not a cluster launch";
    // The H100 (same chip, not measured): the GPC rule, an upper bound.
    const GpuSpec *h100 = db.gpu("H100");
    ASSERT_NE(h100, nullptr);
    EXPECT_EQ(residentClusters(*h100, 8, 1), 16);
    EXPECT_EQ(residentClusters(*h100, 16, 1), 8);
    // No GPC count: the SMs alone.
    GpuSpec plain = *h100;
    plain.gpcs = 0;
    EXPECT_EQ(residentClusters(plain, 8, 1), 16);
    EXPECT_EQ(residentClusters(plain, 16, 3), 24);
}

TEST(ArchDatabase, RejectsBadResidentClusters)
{
    const std::string arch = R"({"name":"sm_90","family":"Hopper","computeMajor":9,"computeMinor":0,"maxThreadsPerSm":2048,
         "maxWarpsPerSm":64,"maxBlocksPerSm":32,"registersPerSm":65536,"registersPerBlock":65536,
         "maxRegistersPerThread":255,"registerAllocationUnit":256,"warpAllocationGranularity":4,
         "sharedMemoryPerSm":233472,"sharedMemoryPerBlock":49152,"sharedMemoryPerBlockOptin":232448,
         "sharedMemoryAllocationUnit":128,"reservedSharedMemoryPerBlock":1024,"tensorCoresTf32":true,
         "tensorCoresBf16":true,"asyncCopy":true,"tma":true})";
    auto gpu = [&](const std::string &clusters) {
        return ArchDatabase::fromJson(R"({"schema":"stitchcuda-arch/1","architectures":[)" + arch +
                                          R"(],"gpus":[{"name":"X","arch":"sm_90","multiprocessors":132,
            "memoryBandwidthGBs":1,"l2CacheMiB":1,"boostClockMHz":1,"fp32Tflops":1,"tf32Tflops":0,"bf16Tflops":0,
            "gpcs":8,"residentClusters":)" + clusters + "}]}",
                                      "x.json");
    };
    auto good = gpu(R"({"8": 15})");
    ASSERT_TRUE(good.ok()) << good.error().toString();
    EXPECT_EQ(residentClusters(good->gpus().front(), 8, 1), 15);
    auto badSize = gpu(R"({"one": 15})");
    ASSERT_FALSE(badSize.ok());
    EXPECT_NE(badSize.error().message.find("residentClusters"), std::string::npos);
    EXPECT_FALSE(gpu(R"({"8": "fifteen"})").ok());
}

// The heuristics' defaults measured on an architecture are data (resources/arch/gpus.json): the
// large-GEMM stream-K default was measured on the H200 (sm_90) only.
TEST(ArchDatabase, MeasuredDefaultsAreData)
{
    const auto &db = stitch::ArchDatabase::builtin();
    EXPECT_TRUE(db.arch("sm_90")->measured("large_gemm_stream_k"));
    for (const char *arch : {"sm_75", "sm_80", "sm_86", "sm_89"})
        EXPECT_FALSE(db.arch(arch)->measured("large_gemm_stream_k")) << arch;
    EXPECT_FALSE(db.arch("sm_90")->measured("no_such_default"));
}
