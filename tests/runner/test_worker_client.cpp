// The client side of the worker, against the real worker without a driver and against a fake
// worker that crashes, hangs and lies: the client never dies with it, types the error, and the
// next job runs on a fresh worker.
#include "core/runner/Runner.h"
#include "core/runner/WorkerClient.h"
#include "core/storage/MeasurementStore.h"

#include "TestSupport.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace stitch;
using namespace stitch::runner;
using Ms = std::chrono::milliseconds;

namespace {

WorkerOptions fakeWorker(const std::string &mode = "normal")
{
    WorkerOptions o;
    o.workerPath = STITCHCUDA_FAKE_WORKER_PATH;
    o.extraArguments = {"--mode", mode};
    o.deadlineMarginMs = 200;
    o.startupTimeoutMs = 10000;
    return o;
}

Job fakeJob(const std::string &kernel, int deadlineMs = 20000)
{
    Job job = fixtures::addJob(kernel, 1000);
    job.deadlineMs = deadlineMs;
    return job;
}

void expectError(const Result<JobResult> &r, ErrorKind kind, const std::string &needle)
{
    ASSERT_FALSE(r.ok()) << "expected " << errorKindName(kind);
    EXPECT_EQ(r.error().kind, kind) << r.error().toString();
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
}

} // namespace

TEST(Worker, RealWorkerWithoutADriverSaysNoDevice)
{
    WorkerOptions o;
    o.workerPath = fixtures::workerPath();
    o.environment = {{"STITCHCUDA_LIBCUDA", "/nonexistent/libcuda.so.1"}};
    WorkerClient client(o);
    auto info = client.start();
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.error().kind, ErrorKind::NoDevice);
    EXPECT_NE(info.error().message.find("/nonexistent/libcuda.so.1"), std::string::npos) << info.error().message;
    auto result = client.submit(fakeJob("add"), 1);
    expectError(result, ErrorKind::NoDevice, "cannot load");
    EXPECT_FALSE(client.workerPid().has_value());
}

TEST(Worker, MissingExecutableIsAnIoError)
{
    WorkerOptions o;
    o.workerPath = "/nonexistent/stitchcuda-worker";
    WorkerClient client(o);
    auto info = client.start();
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.error().kind, ErrorKind::Io);
    EXPECT_NE(info.error().message.find("/nonexistent/stitchcuda-worker"), std::string::npos);
}

TEST(Worker, StartupFailuresAreTyped)
{
    struct Case {
        const char *mode;
        ErrorKind kind;
        const char *needle;
    };
    for (const Case &c : {Case{"no-device", ErrorKind::NoDevice, "the fake worker has no GPU"},
                          Case{"old-protocol", ErrorKind::Unsupported, "protocol 0"},
                          Case{"die-at-start", ErrorKind::Io, "exited with status 1"},
                          Case{"silent", ErrorKind::Timeout, "did not say hello"}}) {
        WorkerOptions o = fakeWorker(c.mode);
        o.startupTimeoutMs = c.kind == ErrorKind::Timeout ? 500 : 10000;
        WorkerClient client(o);
        auto info = client.start();
        ASSERT_FALSE(info.ok()) << c.mode;
        EXPECT_EQ(info.error().kind, c.kind) << c.mode << ": " << info.error().toString();
        EXPECT_NE(info.error().message.find(c.needle), std::string::npos) << info.error().message;
        EXPECT_FALSE(client.workerPid().has_value()) << c.mode;
    }
}

TEST(Worker, HealthyJobsShareOneWorker)
{
    WorkerClient client(fakeWorker());
    auto a = client.submit(fakeJob("add"), 1);
    auto b = client.submit(fakeJob("add"), 2);
    ASSERT_TRUE(a.ok()) << a.error().toString();
    ASSERT_TRUE(b.ok()) << b.error().toString();
    EXPECT_EQ(a->jobId, 1u);
    EXPECT_EQ(b->jobId, 2u);
    EXPECT_EQ(a->workerPid, b->workerPid);
    EXPECT_EQ(client.workersStarted(), 1);
}

TEST(Worker, EveryWayOfDyingIsTypedAndTheNextJobGetsAFreshWorker)
{
    struct Case {
        const char *kernel;
        ErrorKind kind;
        const char *needle;
        int deadlineMs;
    };
    const Case cases[] = {
        {"crash", ErrorKind::Fault, "killed by signal 11", 20000},
        {"exit", ErrorKind::Fault, "exited with status 3", 20000},
        {"hang", ErrorKind::Timeout, "ran past its deadline of 300 ms", 300},
        {"garbage", ErrorKind::Parse, "SCW1", 20000},
        {"fault", ErrorKind::Fault, "CUDA_ERROR_ILLEGAL_ADDRESS", 20000},
        {"oom", ErrorKind::OutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", 20000},
    };
    WorkerClient client(fakeWorker());
    int started = 0;
    std::uint64_t id = 1;
    for (const Case &c : cases) {
        const auto began = std::chrono::steady_clock::now();
        auto bad = client.submit(fakeJob(c.kernel, c.deadlineMs), id++);
        expectError(bad, c.kind, c.needle);
        EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(10)) << c.kernel;
        ++started;
        EXPECT_FALSE(client.workerPid().has_value()) << c.kernel << ": the broken worker is gone";
        auto next = client.submit(fakeJob("add"), id++);
        ASSERT_TRUE(next.ok()) << c.kernel << ": " << next.error().toString();
        ++started;
        EXPECT_EQ(client.workersStarted(), started) << c.kernel;
        client.shutdown();
    }
}

TEST(Worker, CrashReportIncludesTheWorkersLastWords)
{
    WorkerClient client(fakeWorker());
    auto r = client.submit(fakeJob("crash"), 9);
    expectError(r, ErrorKind::Fault, "fake worker: job 9 runs 'crash'");
}

TEST(Worker, RejectedJobKeepsTheWorker)
{
    WorkerClient client(fakeWorker());
    ASSERT_TRUE(client.submit(fakeJob("add"), 1).ok());
    const auto pid = client.workerPid();
    expectError(client.submit(fakeJob("badarg"), 2), ErrorKind::InvalidArgument, "job 2: no kernel 'badarg'");
    EXPECT_EQ(client.workerPid(), pid);
    EXPECT_TRUE(client.submit(fakeJob("add"), 3).ok());
    EXPECT_EQ(client.workersStarted(), 1);
}

TEST(Worker, CancelKillsAHungJobPromptly)
{
    WorkerClient client(fakeWorker());
    std::atomic<bool> cancel{false};
    std::thread canceller([&] {
        std::this_thread::sleep_for(Ms(200));
        cancel = true;
    });
    const auto began = std::chrono::steady_clock::now();
    auto r = client.submit(fakeJob("hang"), 1, [&] { return cancel.load(); });
    canceller.join();
    expectError(r, ErrorKind::Cancelled, "cancelled");
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(3));
    EXPECT_TRUE(client.submit(fakeJob("add"), 2).ok());
}

TEST(Runner, CpuReferenceVerifiesAndWrongAnswersAreResults)
{
    Runner runner(fakeWorker(), nullptr);
    RunRequest ok{fakeJob("add"), fixtures::addReference(1000), false};
    auto good = runner.run(ok);
    ASSERT_TRUE(good.ok()) << good.error().toString();
    ASSERT_TRUE(good->verification.has_value());
    EXPECT_TRUE(good->verification->verified);
    EXPECT_EQ(good->verification->reference, "cpu");
    EXPECT_TRUE(good->outputs.empty()) << "outputs fetched for verification are not handed back unasked";

    RunRequest wrong{fakeJob("add_wrong"), fixtures::addReference(1000), false};
    auto bad = runner.run(wrong);
    ASSERT_TRUE(bad.ok()) << "a wrong answer is a result, not an error";
    EXPECT_FALSE(bad->verification->verified);
    const auto &check = bad->verification->outputs.at(0);
    EXPECT_EQ(check.mismatchCount, 1u);
    ASSERT_EQ(check.firstMismatches.size(), 1u);
    EXPECT_EQ(check.firstMismatches[0].index, 3u);
    EXPECT_NEAR(check.firstMismatches[0].got - check.firstMismatches[0].expected, 0.5, 1e-6);
    EXPECT_EQ(bad->asStatus().error().kind, ErrorKind::WrongAnswer);

    RunRequest partial{fakeJob("add_partial"), fixtures::addReference(1000), false};
    auto unwritten = runner.run(partial);
    ASSERT_TRUE(unwritten.ok());
    EXPECT_FALSE(unwritten->verification->verified);
    EXPECT_EQ(unwritten->verification->outputs.at(0).unwrittenCount, 1u);

    EXPECT_NE(good->seed, bad->seed) << "every check draws fresh inputs";
    EXPECT_LT(good->jobId, bad->jobId);
}

TEST(Runner, ReferenceThatDoesNotCoverAnOutputIsRefusedBeforeRunning)
{
    Runner runner(fakeWorker(), nullptr);
    CpuReference ref = fixtures::addReference(1000);
    ref.tensorForBuffer["C"] = "A";
    auto r = runner.run(RunRequest{fakeJob("add"), ref, false});
    expectError(r, ErrorKind::InvalidArgument, "output 'C' maps to no tensor");
}

TEST(Runner, RepeatMeasurementsComeFromTheCache)
{
    fixtures::TempDir dir;
    auto store = storage::MeasurementStore::open(dir.file("measurements.db"));
    ASSERT_TRUE(store.ok());
    Runner runner(fakeWorker(), std::move(*store));
    auto first = runner.run(RunRequest{fakeJob("add"), fixtures::addReference(1000), false});
    ASSERT_TRUE(first.ok()) << first.error().toString();
    EXPECT_FALSE(first->fromCache);
    auto second = runner.run(RunRequest{fakeJob("add"), fixtures::addReference(1000), false});
    ASSERT_TRUE(second.ok());
    EXPECT_TRUE(second->fromCache);
    EXPECT_EQ(second->seed, first->seed);
    EXPECT_EQ(second->timing->medianMs, first->timing->medianMs);
    EXPECT_NE(second->jobId, first->jobId);
    auto again = runner.run(RunRequest{fakeJob("add"), fixtures::addReference(1000), true});
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->fromCache);
    Job otherSettings = fakeJob("add");
    otherSettings.measure.repeats = 7;
    auto other = runner.run(RunRequest{otherSettings, fixtures::addReference(1000), false});
    ASSERT_TRUE(other.ok());
    EXPECT_FALSE(other->fromCache);
    EXPECT_TRUE(runner.warnings().empty());
}

TEST(Runner, ALockedCacheIsAWarningNotAFailure)
{
    fixtures::TempDir dir;
    const std::string path = dir.file("measurements.db");
    auto store = storage::MeasurementStore::open(path, storage::StoreOptions{50});
    ASSERT_TRUE(store.ok());
    Runner runner(fakeWorker(), std::move(*store));
    sqlite3 *other = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE; DELETE FROM schema_version", nullptr, nullptr, nullptr), SQLITE_OK);
    auto r = runner.run(RunRequest{fakeJob("add"), fixtures::addReference(1000), false});
    sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(other);
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_TRUE(r->verification->verified);
    ASSERT_EQ(runner.warnings().size(), 1u);
    EXPECT_NE(runner.warnings()[0].find("locked"), std::string::npos) << runner.warnings()[0];
    EXPECT_FALSE(runner.hasCache());
}

TEST(Runner, MetricsAreNeverAnsweredByACachedResultWithoutThem)
{
    fixtures::TempDir dir;
    auto store = storage::MeasurementStore::open(dir.file("measurements.db"));
    ASSERT_TRUE(store.ok());
    Runner runner(fakeWorker(), std::move(*store));
    auto plain = runner.run(RunRequest{fakeJob("add"), fixtures::addReference(1000), false});
    ASSERT_TRUE(plain.ok()) << plain.error().toString();
    EXPECT_FALSE(plain->metrics.has_value());

    Job withMetrics = fakeJob("add");
    withMetrics.measure.metrics = true;
    auto first = runner.run(RunRequest{withMetrics, fixtures::addReference(1000), false});
    ASSERT_TRUE(first.ok()) << first.error().toString();
    EXPECT_FALSE(first->fromCache) << "the cached result has no metrics";
    ASSERT_TRUE(first->metrics.has_value());
    EXPECT_TRUE(first->metrics->available);

    auto second = runner.run(RunRequest{withMetrics, fixtures::addReference(1000), false});
    ASSERT_TRUE(second.ok());
    EXPECT_TRUE(second->fromCache);
    ASSERT_TRUE(second->metrics.has_value());
    ASSERT_EQ(second->metrics->kernels.size(), 1u);
    EXPECT_EQ(second->metrics->kernels[0].derived.at("globalLoadSectorsPerRequest"), 4.0);

    auto withoutAgain = runner.run(RunRequest{fakeJob("add"), fixtures::addReference(1000), false});
    ASSERT_TRUE(withoutAgain.ok());
    EXPECT_TRUE(withoutAgain->fromCache) << "results cached without metrics keep their key";
    EXPECT_FALSE(withoutAgain->metrics.has_value());
}

TEST(Runner, RefusedMetricsAreAResultAndAreMeasuredAgain)
{
    fixtures::TempDir dir;
    auto store = storage::MeasurementStore::open(dir.file("measurements.db"));
    ASSERT_TRUE(store.ok());
    Runner runner(fakeWorker(), std::move(*store));
    Job locked = fakeJob("add_locked");
    locked.measure.metrics = true;
    auto first = runner.run(RunRequest{locked, fixtures::addReference(1000), false});
    ASSERT_TRUE(first.ok()) << "refused counters leave the job a success: " << first.error().toString();
    EXPECT_TRUE(first->verification->verified);
    ASSERT_TRUE(first->timing.has_value());
    ASSERT_TRUE(first->metrics.has_value());
    EXPECT_FALSE(first->metrics->available);
    EXPECT_NE(first->metrics->message.find("restricted to administrators"), std::string::npos) << first->metrics->message;
    auto second = runner.run(RunRequest{locked, fixtures::addReference(1000), false});
    ASSERT_TRUE(second.ok());
    EXPECT_FALSE(second->fromCache) << "counters refused then may be permitted now";
}

TEST(Worker, NoDeviceIsAskedOnceAndEstimatesAnswerWithoutAWorker)
{
    Runner runner(fakeWorker("no-device"), nullptr);
    auto first = runner.device();
    ASSERT_FALSE(first.ok());
    EXPECT_EQ(first.error().kind, ErrorKind::NoDevice);
    EXPECT_EQ(runner.client().workersStarted(), 1);
    auto again = runner.device();
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().message, first.error().message);

    RunRequest request;
    request.job = fakeJob("add");
    request.estimate = ModelEstimate{0.25, "test model"};
    auto r = runner.run(std::move(request));
    ASSERT_TRUE(r.ok()) << r.error().toString();
    EXPECT_TRUE(r->estimated);
    EXPECT_EQ(runner.client().workersStarted(), 1) << "the NoDevice answer is kept, no second worker";
}
