// The SASS scan against what ptxas reports for the same CUBIN and against instructions listed by
// `cuobjdump -sass` on the H200 (bench/results/2026-11-30/run13-fused/call5).
#include "core/cuda/NvrtcCompiler.h"
#include "core/cuda/SassScan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace stitch;
using namespace stitch::cuda;

namespace {

const SassKernel *kernel(const std::vector<SassKernel> &ks, const std::string &name)
{
    for (const auto &k : ks)
        if (k.mangledName == name)
            return &k;
    return nullptr;
}

const char *kSpilling = R"(
extern "C" __global__ void __launch_bounds__(256, 8) spilling(float *out, const float *in, int n) {
  float acc[40];
  #pragma unroll
  for (int j = 0; j < 40; ++j) acc[j] = in[threadIdx.x + j * 256];
  for (int i = 0; i < n; ++i) {
    #pragma unroll
    for (int j = 0; j < 40; ++j) acc[j] = acc[j] * acc[(j + 7) % 40] + in[i + j];
  }
  float s = 0;
  #pragma unroll
  for (int j = 0; j < 40; ++j) s += acc[j];
  out[threadIdx.x] = s;
}
extern "C" __global__ void nested(float *out, const float *in, int n, int m) {
  float a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < m; ++j) a = a * in[j] + b;
    b = b * 0.5f + a;
  }
  out[threadIdx.x] = a + b;
}
)";

} // namespace

TEST(SassScan, SpillInstructionsMatchPtxasSpillBytes)
{
    CompileOptions o;
    o.arch = "sm_90";
    auto r = compile(kSpilling, o);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    const KernelResources *res = r->kernel("spilling");
    ASSERT_NE(res, nullptr);
    ASSERT_GT(res->spillStoreBytes, 0) << "the test kernel no longer spills under its launch bounds";
    auto scan = scanSass(r->cubin);
    ASSERT_TRUE(scan.ok()) << scan.error().toString();
    const SassKernel *k = kernel(*scan, "spilling");
    ASSERT_NE(k, nullptr);
    // Every spill is a 4-byte float here: ptxas's bytes are the scan's local stores and loads x 4.
    EXPECT_EQ(k->all.localStores * 4, res->spillStoreBytes);
    EXPECT_EQ(k->all.localLoads * 4, res->spillLoadBytes);
    const SassLoop *hot = k->hotLoop();
    ASSERT_NE(hot, nullptr);
    EXPECT_GE(hot->mix.ffma, 40);          // the unrolled 40 multiply-adds of a trip (FFMA or FMUL+FADD forms)
    EXPECT_GT(hot->mix.localLoads, 0);     // the spills are reloaded inside the loop
    EXPECT_GT(hot->mix.globalLoads, 0);
    // The kernel without a launch bound has no local traffic at all.
    const SassKernel *plain = kernel(*scan, "nested");
    ASSERT_NE(plain, nullptr);
    EXPECT_EQ(plain->all.localLoads + plain->all.localStores, 0);
}

TEST(SassScan, TheHotLoopIsTheInnerLoopOfANest)
{
    CompileOptions o;
    o.arch = "sm_90";
    auto r = compile(kSpilling, o);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    auto scan = scanSass(r->cubin);
    ASSERT_TRUE(scan.ok()) << scan.error().toString();
    const SassKernel *k = kernel(*scan, "nested");
    ASSERT_NE(k, nullptr);
    ASSERT_GE(k->loops.size(), 2u);
    const SassLoop *hot = k->hotLoop();
    ASSERT_NE(hot, nullptr);
    // Some loop of the kernel contains the hot one (the loop over i around the loop over j).
    EXPECT_TRUE(std::any_of(k->loops.begin(), k->loops.end(), [&](const SassLoop &l) {
        return &l != hot && l.begin <= hot->begin && hot->end <= l.end;
    }));
    for (const auto &l : k->loops) // every loop lies in the kernel and ends at a branch back
        EXPECT_LT(l.begin, l.end);
}

TEST(SassScan, DecodesListedHopperInstructions)
{
    // Encodings (lo, hi) as `cuobjdump -sass` listed them for the H200, beside what it printed.
    const auto forward = decodeSass(0x1e0, 0x248947, 0xfea0003800000); // @!P0 BRA 0x280
    EXPECT_EQ(forward.op, SassOp::Branch);
    EXPECT_EQ(forward.target, 0x280);
    EXPECT_EQ(decodeSass(0x2f40, 0x54005cc947, 0xfea0003800000).target, 0x84c0); // @!P4 BRA 0x84c0
    const auto back = decodeSass(0x84b0, 0xffffffa800fca947, 0x010fec000383ffff); // @!P2 BRA 0x30b0
    EXPECT_EQ(back.op, SassOp::Branch);
    EXPECT_EQ(back.target, 0x30b0);
    const auto ffma = decodeSass(0x30b0, 0x000000241c8f7223, 0x08afe20000000028); // FFMA R143, R28, R36.reuse, R40
    EXPECT_EQ(ffma.op, SassOp::Ffma);
    EXPECT_EQ(ffma.d, 143);
    EXPECT_EQ(ffma.a, 28);
    EXPECT_EQ(ffma.b, 36);
    EXPECT_EQ(ffma.c, 40);
    EXPECT_EQ(ffma.reuse, 0b010);
    EXPECT_EQ(decodeSass(0x3050, 0x00330004141c7984, 0x002e620008000c00).op, SassOp::SharedLoad); // LDS.128
    EXPECT_EQ(decodeSass(0x900, 0x0000000200087202, 0x000fe40000000f00).op, SassOp::Move);       // MOV R8, R2
    EXPECT_EQ(decodeSass(0x14d0, 0x0000000020257fae, 0x0003e20008921846).op, SassOp::AsyncCopy);  // LDGSTS.E
    EXPECT_EQ(decodeSass(0x1220, 0x0000000000007b1d, 0x000fec0000010000).op, SassOp::Barrier);    // BAR.SYNC
    // FFMA R143, R28, R36.reuse, R40 moves its accumulator (R40 -> R143) and reads its three sources
    // from bank 0 (its own .reuse keeps R36 for the next instruction).
    SassMix m;
    m = sassMix({ffma}, 0, 0x4000);
    EXPECT_EQ(m.ffma, 1);
    EXPECT_EQ(m.movedAccumulators, 1);
    EXPECT_EQ(m.bankConflicts, 1);
    // After it, an FFMA that reads R36 in the same slot takes it from the reuse cache: two reads
    // left, no conflict; in another slot it is read again.
    SassInstruction next = ffma;
    next.address = 0x30c0;
    next.a = 30;
    next.c = 42;
    EXPECT_FALSE(sassBankConflict(ffma, next));
    EXPECT_EQ(sassMix({ffma, next}, 0, 0x4000).bankConflicts, 1);
    std::swap(next.a, next.b);
    EXPECT_TRUE(sassBankConflict(ffma, next));
    // Sources in both banks, or RZ among them: no conflict.
    next = ffma;
    next.a = 29;
    EXPECT_FALSE(sassBankConflict(SassInstruction{}, next));
    next = ffma;
    next.c = 255;
    EXPECT_FALSE(sassBankConflict(SassInstruction{}, next));
}

TEST(SassScan, OtherArchitecturesAndMalformedImagesAreErrors)
{
    CompileOptions o;
    o.arch = "sm_80";
    auto r = compile("extern \"C\" __global__ void k(float *p) { p[threadIdx.x] *= 2.0f; }", o);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    auto scan = scanSass(r->cubin);
    ASSERT_FALSE(scan.ok());
    EXPECT_NE(scan.error().message.find("sm_80"), std::string::npos) << scan.error().message;
    EXPECT_FALSE(scanSass(std::vector<char>(10, 'x')).ok());
    o.arch = "sm_90";
    auto h = compile("extern \"C\" __global__ void k(float *p) { p[threadIdx.x] *= 2.0f; }", o);
    ASSERT_TRUE(h.ok());
    // Every truncation and single-byte corruption is scanned or refused, never read out of bounds.
    for (std::size_t n = 0; n < h->cubin.size(); n += 7)
        (void)scanSass(std::span<const char>(h->cubin.data(), n));
    for (std::size_t i = 0; i < h->cubin.size(); i += 3) {
        auto copy = h->cubin;
        copy[i] = static_cast<char>(copy[i] ^ 0x5a);
        (void)scanSass(copy);
    }
}
