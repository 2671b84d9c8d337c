// The worker protocol and the job model: frames, JSON round trips, hashes, validation.
#include "core/common/Sha256.h"
#include "core/runner/JobJson.h"
#include "core/runner/Protocol.h"
#include "core/runner/Verify.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace stitch;
using namespace stitch::runner;

TEST(Sha256, KnownVectors)
{
    EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    Sha256 chunked;
    const std::string million(1000000, 'a');
    for (std::size_t i = 0; i < million.size(); i += 999)
        chunked.update(std::string_view(million).substr(i, 999));
    EXPECT_EQ(chunked.hexDigest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Protocol, FramesSurviveAByteByByteStream)
{
    std::vector<std::byte> payload = {std::byte{0}, std::byte{0xFF}, std::byte{7}};
    const auto one = encodeFrame({{"type", "x"}, {"n", 1}}, payload);
    const auto two = encodeFrame({{"type", "y"}}, {});
    std::vector<std::byte> stream(one);
    stream.insert(stream.end(), two.begin(), two.end());

    FrameDecoder decoder;
    std::vector<Frame> frames;
    for (std::byte b : stream) {
        decoder.append(&b, 1);
        auto f = decoder.next();
        ASSERT_TRUE(f.ok()) << f.error().toString();
        if (*f)
            frames.push_back(std::move(**f));
    }
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].header["n"], 1);
    EXPECT_EQ(frames[0].payload, payload);
    EXPECT_EQ(messageType(frames[1]), "y");
    EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(Protocol, CorruptStreamsAreParseErrors)
{
    FrameDecoder decoder;
    const std::string junk = "Hello from a printf that went to stdout\n";
    decoder.append(reinterpret_cast<const std::byte *>(junk.data()), junk.size());
    auto f = decoder.next();
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.error().kind, ErrorKind::Parse);
    EXPECT_NE(f.error().message.find("SCW1"), std::string::npos);

    auto huge = encodeFrame({{"type", "x"}}, {});
    huge[8] = std::byte{0xFF}, huge[15] = std::byte{0x7F}; // payload length ~ 2^63
    FrameDecoder d2;
    d2.append(huge.data(), huge.size());
    auto g = d2.next();
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.error().message.find("exceeds the limits"), std::string::npos);

    auto notJson = encodeFrame({{"type", "x"}}, {});
    notJson[16] = std::byte{'['};
    FrameDecoder d3;
    d3.append(notJson.data(), notJson.size());
    EXPECT_FALSE(d3.next().ok());
}

TEST(Protocol, JobRoundTripKeepsEveryField)
{
    Job job = fixtures::addJob("add", 1000);
    job.plan.buffers[0].shape = {10, 100};
    job.plan.buffers[1].init = BufferInit{BufferInit::Kind::Random, -2.0, 3.5, {}};
    job.plan.buffers.push_back(BufferSpec{"D", ir::DType::F32, 1000, {}, BufferRole::Scratch, {BufferInit::Kind::CopyOf, -1, 1, "A"}});
    job.plan.launches[0].config.dynamicSharedBytes = 4096;
    job.plan.launches[0].args.push_back(KernelArg::scalar(ir::DType::F64, 0.1));
    job.plan.launches[0].args.push_back(KernelArg::scalar(ir::DType::F32, std::numeric_limits<double>::quiet_NaN()));
    job.plan.launches[0].args.push_back(KernelArg::scalar(ir::DType::I64, std::int64_t{1} << 40));
    job.seed = 0xdeadbeefcafef00dull;
    job.measure.profile = true;
    job.measure.settleMs = 1500;
    job.precision = PrecisionPolicy::TF32;
    GpuReference ref;
    ref.module = {'r', 'e', 'f'};
    ref.plan = job.plan;
    ref.bufferMap = {{"C", "C"}};
    job.reference = ref;

    const Frame frame = encodeJobMessage(42, job);
    auto back = decodeJobMessage(frame);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->first, 42u);
    const Job &j = back->second;
    EXPECT_EQ(j.module, job.module);
    EXPECT_EQ(j.reference->module, ref.module);
    EXPECT_EQ(j.seed, job.seed);
    EXPECT_EQ(j.precision, PrecisionPolicy::TF32);
    EXPECT_EQ(j.measure, job.measure);
    EXPECT_EQ(j.measure.settleMs, 1500);
    EXPECT_FALSE(measureToJson(MeasureOptions{}).contains("settleMs")) << "absent when there is no pause (older keys unchanged)";
    EXPECT_EQ(j.plan.buffers[0].shape, (std::vector<std::int64_t>{10, 100}));
    EXPECT_EQ(j.plan.buffers[1].init, job.plan.buffers[1].init);
    EXPECT_EQ(j.plan.buffers[3].init.source, "A");
    EXPECT_EQ(j.plan.launches[0].config.dynamicSharedBytes, 4096u);
    const auto &args = j.plan.launches[0].args;
    ASSERT_EQ(args.size(), 7u);
    EXPECT_EQ(std::get<std::string>(args[2].value), "C");
    EXPECT_EQ(std::get<ScalarArg>(args[4].value).floatValue, 0.1);
    EXPECT_TRUE(std::isnan(std::get<ScalarArg>(args[5].value).floatValue));
    EXPECT_EQ(std::get<ScalarArg>(args[6].value).intValue, std::int64_t{1} << 40);
    // What was sent is what the worker hashes.
    EXPECT_EQ(programHash(j), programHash(job));
}

TEST(Protocol, ResultRoundTripKeepsNaNAndOutputs)
{
    JobResult r;
    r.jobId = 7;
    r.programHash = "abc";
    r.seed = 99;
    r.device.name = "NVIDIA H200";
    r.device.arch = "sm_90";
    r.device.driverVersion = 13000;
    r.device.toolkitVersion = "13.0";
    OutputCheck c;
    c.buffer = "C";
    c.elements = 4;
    c.relativeError = std::numeric_limits<double>::quiet_NaN();
    c.unwrittenCount = 1;
    c.firstMismatches.push_back(Mismatch{3, {1, 1}, std::numeric_limits<double>::quiet_NaN(), 2.5});
    r.verification = makeVerification("gpu", PrecisionPolicy::FP32, {c});
    r.timing = Timing{1.5, 1.0, 2.0, 1.5, 3, 2, 1 << 20, {1.0, 2.0}};
    Profile p;
    p.available = true;
    p.kernels.push_back(KernelProfile{"add", "add", 12.5, 16, 0, 128, 0, {4, 1, 1}, {256, 1, 1}});
    r.profile = p;
    r.outputs.push_back(OutputData{"C", ir::DType::F32, std::vector<std::byte>(16, std::byte{0xFF})});

    JobReply reply;
    reply.jobId = 7;
    reply.result = r;
    auto back = decodeReply(encodeReply(reply));
    ASSERT_TRUE(back.ok()) << back.error().toString();
    ASSERT_TRUE(back->result.ok());
    const JobResult &b = *back->result;
    EXPECT_FALSE(b.verification->verified);
    EXPECT_TRUE(std::isnan(b.verification->outputs[0].relativeError));
    EXPECT_TRUE(std::isnan(b.verification->outputs[0].firstMismatches[0].got));
    EXPECT_EQ(b.verification->outputs[0].firstMismatches[0].coords, (std::vector<std::int64_t>{1, 1}));
    EXPECT_EQ(b.timing->samplesMs, (std::vector<double>{1.0, 2.0}));
    EXPECT_EQ(b.profile->kernels[0].dynamicSharedBytes, 128);
    EXPECT_EQ(b.profile->kernels[0].grid[0], 4u);
    ASSERT_EQ(b.outputs.size(), 1u);
    EXPECT_EQ(b.outputs[0].bytes.size(), 16u);
    EXPECT_EQ(b.asStatus().error().kind, ErrorKind::WrongAnswer);
}

TEST(Protocol, ErrorsKeepTheirKind)
{
    JobReply reply;
    reply.jobId = 3;
    reply.recycle = true;
    reply.result = makeError(ErrorKind::OutOfMemory, "no room");
    auto back = decodeReply(encodeReply(reply));
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(back->recycle);
    ASSERT_FALSE(back->result.ok());
    EXPECT_EQ(back->result.error().kind, ErrorKind::OutOfMemory);
    EXPECT_EQ(back->result.error().message, "no room");
    for (int k = 0; k <= static_cast<int>(ErrorKind::Cancelled); ++k)
        EXPECT_EQ(parseErrorKind(errorKindName(static_cast<ErrorKind>(k))), static_cast<ErrorKind>(k));
}

TEST(Protocol, OtherVersionsAreRefused)
{
    WorkerHello hello;
    hello.pid = 1;
    hello.error = makeError(ErrorKind::NoDevice, "none");
    Frame f = encodeHello(hello);
    ASSERT_TRUE(decodeHello(f).ok());
    f.header["protocol"] = kProtocolVersion + 1;
    auto h = decodeHello(f);
    ASSERT_FALSE(h.ok());
    EXPECT_EQ(h.error().kind, ErrorKind::Unsupported);
}

TEST(Protocol, BlobReferencesAreBoundsChecked)
{
    Frame f = encodeJobMessage(1, fixtures::addJob("add", 10));
    f.header["job"]["module"]["blob"][1] = 1000000;
    auto job = decodeJobMessage(f);
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.error().kind, ErrorKind::Parse);
    EXPECT_NE(job.error().message.find("outside"), std::string::npos);
}

TEST(Job, ProgramHashIsAboutTheProgramOnly)
{
    const Job a = fixtures::addJob("add", 1000);
    Job b = a;
    b.seed = 12345;
    b.measure.repeats = 99;
    b.deadlineMs = 5;
    EXPECT_EQ(programHash(a), programHash(b));
    EXPECT_NE(settingsHash(a), settingsHash(b));
    Job c = a;
    c.plan.launches[0].config.blockX = 128;
    EXPECT_NE(programHash(a), programHash(c));
    Job d = a;
    d.module.push_back('!');
    EXPECT_NE(programHash(a), programHash(d));
    Job e = a;
    e.measure.returnOutputs = true;
    EXPECT_EQ(settingsHash(a), settingsHash(e));
}

TEST(Job, ValidationNamesTheProblem)
{
    auto expectInvalid = [](const Job &job, const std::string &needle) {
        auto st = validateJob(job);
        ASSERT_FALSE(st.ok()) << needle;
        EXPECT_EQ(st.error().kind, ErrorKind::InvalidArgument);
        EXPECT_NE(st.error().message.find(needle), std::string::npos) << st.error().message;
    };
    EXPECT_TRUE(validateJob(fixtures::addJob("add", 10)).ok());
    Job j = fixtures::addJob("add", 10);
    j.plan.launches[0].args[0] = KernelArg::buffer("nope");
    expectInvalid(j, "unknown buffer 'nope'");
    j = fixtures::addJob("add", 10);
    j.plan.launches[0].config.gridX = 0;
    expectInvalid(j, "must be positive");
    j = fixtures::addJob("add", 10);
    j.plan.buffers.push_back(j.plan.buffers[0]);
    expectInvalid(j, "declared twice");
    j = fixtures::addJob("add", 10);
    j.plan.buffers[1].init = BufferInit{BufferInit::Kind::CopyOf, 0, 0, "Z"};
    expectInvalid(j, "copies unknown buffer 'Z'");
    j = fixtures::addJob("add", 10);
    j.module.clear();
    expectInvalid(j, "no module");
    j = fixtures::addJob("add", 10);
    GpuReference ref;
    ref.module = {'x'};
    ref.plan = j.plan;
    ref.plan.buffers.pop_back();
    ref.plan.launches[0].args.pop_back();
    ref.plan.launches[0].args.pop_back();
    j.reference = ref;
    expectInvalid(j, "output 'C' has no counterpart");
}
