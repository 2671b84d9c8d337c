// IssueReplay: one scheduler's issue of a loop body, on synthetic instructions with known timing,
// and the scoreboard fields the SASS scan decodes for it (encodings as cuobjdump listed them).
#include "core/rubric/IssueReplay.h"

#include <gtest/gtest.h>

using namespace stitch;
using cuda::SassInstruction;
using cuda::SassOp;

namespace {

SassInstruction ffma(std::uint8_t d, std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t wait = 0)
{
    SassInstruction in;
    in.opcode = 0x223;
    in.op = SassOp::Ffma;
    in.d = d, in.a = a, in.b = b, in.c = c;
    in.stall = 1;
    in.waitMask = wait;
    return in;
}

SassInstruction sharedLoad(std::uint8_t barrier)
{
    SassInstruction in;
    in.op = SassOp::SharedLoad;
    in.stall = 1;
    in.writeBarrier = barrier;
    in.accessBytes = 16;
    return in;
}

} // namespace

TEST(IssueReplay, IndependentInstructionsIssueOnePerCycle)
{
    // Sources in both banks (a = R1 and c = R21, R23, ... odd, b = R2 even): no bank conflict.
    std::vector<SassInstruction> body;
    for (int i = 0; i < 8; ++i) {
        auto in = ffma(static_cast<std::uint8_t>(21 + 2 * i), 1, 2, static_cast<std::uint8_t>(21 + 2 * i));
        in.reuse = 0b001;
        body.push_back(in);
    }
    const auto one = rubric::replayLoop(body, 1, 1);
    EXPECT_EQ(one.instructionsPerTrip, 8);
    EXPECT_DOUBLE_EQ(one.cyclesPerTrip, 8);
    EXPECT_DOUBLE_EQ(one.warpCyclesPerIssue, 1);
    // Four warps share the one issue port: each trip takes four times as long.
    EXPECT_DOUBLE_EQ(rubric::replayLoop(body, 4, 1).cyclesPerTrip, 32);
}

TEST(IssueReplay, OtherWarpsHideAScoreboardWait)
{
    // A shared load whose result the next FFMA waits for (scoreboard 0), then six FFMAs.
    std::vector<SassInstruction> body = {sharedLoad(0)};
    body.push_back(ffma(21, 1, 2, 21, 0b1));
    for (int i = 1; i < 7; ++i)
        body.push_back(ffma(static_cast<std::uint8_t>(21 + 2 * i), 1, 2, static_cast<std::uint8_t>(21 + 2 * i)));
    for (auto &in : body)
        in.reuse = in.op == SassOp::Ffma ? 0b001 : 0;
    rubric::IssueReplayParams c;
    const auto one = rubric::replayLoop(body, 1, 1, c);
    // Alone, a warp waits for the load: 16 bytes x 32 lanes at 32 bytes a cycle, then its latency.
    EXPECT_GE(one.cyclesPerTrip, 16 + c.sharedLatencyCycles);
    // Four warps fill each other's waits: a trip of all four takes less than four lone trips, and
    // no less than their 32 instructions' issue.
    const auto four = rubric::replayLoop(body, 4, 1, c);
    EXPECT_LT(four.cyclesPerTrip, 4 * one.cyclesPerTrip);
    EXPECT_GE(four.cyclesPerTrip, 4 * 8);
}

TEST(IssueReplay, BankConflictsHoldTheIssuePort)
{
    // FFMA R(20 + 2i), R2, R4, R(20 + 2i): all three sources in bank 0 and none from the reuse
    // cache: one conflict each.
    std::vector<SassInstruction> body;
    for (int i = 0; i < 10; ++i)
        body.push_back(ffma(static_cast<std::uint8_t>(20 + 2 * i), 2, 4, static_cast<std::uint8_t>(20 + 2 * i)));
    rubric::IssueReplayParams c;
    EXPECT_DOUBLE_EQ(rubric::replayLoop(body, 1, 1, c).cyclesPerTrip, 20); // a cycle each by default
    c.bankConflictCycles = 0.5;
    EXPECT_DOUBLE_EQ(rubric::replayLoop(body, 1, 1, c).cyclesPerTrip, 15);
    c.bankConflictCycles = 0;
    EXPECT_DOUBLE_EQ(rubric::replayLoop(body, 1, 1, c).cyclesPerTrip, 10);
    // Each marking R2 for reuse: every FFMA after one takes R2 from the cache (the first of a trip
    // too: the last one of the trip before marked it), so none conflicts.
    for (auto &in : body)
        in.reuse = 0b001;
    EXPECT_DOUBLE_EQ(rubric::replayLoop(body, 1, 1, rubric::IssueReplayParams{}).cyclesPerTrip, 10);
}

TEST(IssueReplay, ABarrierJoinsTheBlocksWarps)
{
    std::vector<SassInstruction> body;
    for (int i = 0; i < 4; ++i) {
        auto in = ffma(static_cast<std::uint8_t>(21 + 2 * i), 1, 2, static_cast<std::uint8_t>(21 + 2 * i));
        in.reuse = 0b001;
        body.push_back(in);
    }
    SassInstruction bar;
    bar.op = SassOp::Barrier;
    bar.stall = 1;
    body.push_back(bar);
    rubric::IssueReplayParams c;
    // Two warps of one block: both reach the barrier every trip and wait barrierCycles after the
    // later one; as two blocks of one warp each, each warp releases itself.
    const double joined = rubric::replayLoop(body, 2, 2, c).cyclesPerTrip;
    const double apart = rubric::replayLoop(body, 2, 1, c).cyclesPerTrip;
    EXPECT_GE(joined, 2 * 5 + c.barrierCycles - 1);
    EXPECT_LE(apart, joined);
    EXPECT_EQ(rubric::replayLoop({}, 2, 1).cyclesPerTrip, 0);
    EXPECT_EQ(rubric::replayLoop(body, 0, 1).cyclesPerTrip, 0);
}

TEST(IssueReplay, TheScanDecodesScoreboardsAccessSizesAndPadding)
{
    // LDS.128 R28, [R28+0x330] sets scoreboard 1 and waits on scoreboard 1.
    const auto lds = cuda::decodeSass(0x3050, 0x00330004141c7984, 0x002e620008000c00);
    EXPECT_EQ(lds.writeBarrier, 1);
    EXPECT_EQ(lds.readBarrier, 7);
    EXPECT_EQ(lds.waitMask, 0b10);
    EXPECT_EQ(lds.accessBytes, 16);
    EXPECT_FALSE(lds.neverRuns);
    // FFMA R143, R28, R36.reuse, R40 waits on scoreboards 1 and 3.
    const auto f = cuda::decodeSass(0x30b0, 0x000000241c8f7223, 0x08afe20000000028);
    EXPECT_EQ(f.waitMask, 0b1010);
    EXPECT_EQ(f.writeBarrier, 7);
    // LDGSTS.E [R19], desc[UR10][R4.64]: its sources read on scoreboard 1, 4 bytes a thread; the
    // .BYPASS.128 form copies 16.
    const auto copy = cuda::decodeSass(0x14d0, 0x0000000020257fae, 0x0003e20008921846);
    EXPECT_EQ(copy.readBarrier, 1);
    EXPECT_EQ(copy.accessBytes, 4);
    EXPECT_EQ(cuda::decodeSass(0x17b0, 0x0420000010037fae, 0x0009e8000b901c4a).accessBytes, 16);
    // @!PT LDS RZ, [RZ]: padding that never runs, 4 bytes.
    const auto pad = cuda::decodeSass(0x0b50, 0x00000000fffff984, 0x000fe20000000800);
    EXPECT_TRUE(pad.neverRuns);
    EXPECT_EQ(pad.accessBytes, 4);
}

TEST(IssueReplay, ALoneWarpWaitsForTheInstructionsThatMiss)
{
    // 4096 independent FFMAs (64 KB, sources in both banks): twice the 30 KB cache, so about half
    // of the loop's 512 lines miss on every trip, each 22 cycles.
    std::vector<SassInstruction> body;
    for (int i = 0; i < 4096; ++i) {
        auto in = ffma(static_cast<std::uint8_t>(21 + 2 * (i % 100)), 1, 2, static_cast<std::uint8_t>(21 + 2 * (i % 100)));
        in.address = static_cast<std::uint32_t>(16 * i);
        body.push_back(in);
    }
    const rubric::IssueReplayParams c;
    const double missing = (65536.0 - c.instructionCacheBytes) / 65536.0 * 512;
    const auto one = rubric::replayLoop(body, 1, 1, c);
    EXPECT_NEAR(one.fetchIdleCyclesPerTrip, missing * c.instructionMissCycles, c.instructionMissCycles);
    EXPECT_NEAR(one.cyclesPerTrip, 4096 + one.fetchIdleCyclesPerTrip, 1);
    // Two warps: the one behind issues while the other waits (run 21 call 9); no fetch cycles.
    const auto two = rubric::replayLoop(body, 2, 1, c);
    EXPECT_EQ(two.fetchIdleCyclesPerTrip, 0);
    EXPECT_DOUBLE_EQ(two.cyclesPerTrip, 2 * 4096);
    // A loop that fits: none.
    body.resize(1024);
    EXPECT_EQ(rubric::replayLoop(body, 1, 1, c).fetchIdleCyclesPerTrip, 0);
}
