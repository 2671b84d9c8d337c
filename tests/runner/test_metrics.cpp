// Hardware metrics without a GPU: their JSON, their measure option (protocol, plan files, cache
// key), the derived figures, and CUPTI being absent or refusing, which must leave a plain reason.
#include "core/runner/CuptiLibrary.h"
#include "core/runner/JobJson.h"
#include "core/runner/MetricProfiler.h"
#include "core/runner/PlanFile.h"
#include "core/runner/Protocol.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

using namespace stitch;
using namespace stitch::runner;

namespace {

MetricsReport sampleReport()
{
    MetricsReport m;
    m.available = true;
    m.message = "not available on GH100: smsp__made_up.sum";
    m.chip = "GH100";
    m.passes = 4;
    m.dropped = {"smsp__made_up.sum"};
    KernelMetrics k;
    k.name = "copy";
    k.mangledName = "_Z4copyPKfPfi";
    k.launch = 1;
    k.range = "1";
    k.values = {{"dram__bytes_read.sum", 4194304.0},
                {"smsp__sass_average_branch_targets_threads_uniform.pct", std::numeric_limits<double>::quiet_NaN()}};
    k.derived = {{"globalLoadSectorsPerRequest", 4.0}};
    m.kernels.push_back(k);
    return m;
}

/// Sets an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char *name, const char *value) : m_name(name)
    {
        if (const char *old = std::getenv(name))
            m_old = old, m_had = true;
        ::setenv(name, value, 1);
    }
    ~ScopedEnv()
    {
        if (m_had)
            ::setenv(m_name, m_old.c_str(), 1);
        else
            ::unsetenv(m_name);
    }

private:
    const char *m_name;
    std::string m_old;
    bool m_had = false;
};

} // namespace

TEST(Metrics, ResultRoundTripKeepsEveryFieldAndNaN)
{
    JobResult r;
    r.jobId = 3;
    r.programHash = "abc";
    r.device.name = "NVIDIA H200";
    r.metrics = sampleReport();
    JobReply reply;
    reply.jobId = 3;
    reply.result = r;
    auto back = decodeReply(encodeReply(reply));
    ASSERT_TRUE(back.ok()) << back.error().toString();
    ASSERT_TRUE(back->result.ok());
    ASSERT_TRUE(back->result->metrics.has_value());
    const MetricsReport &m = *back->result->metrics;
    EXPECT_TRUE(m.available);
    EXPECT_EQ(m.message, r.metrics->message);
    EXPECT_EQ(m.chip, "GH100");
    EXPECT_EQ(m.passes, 4);
    EXPECT_EQ(m.dropped, r.metrics->dropped);
    ASSERT_EQ(m.kernels.size(), 1u);
    const KernelMetrics &k = m.kernels[0];
    EXPECT_EQ(k.name, "copy");
    EXPECT_EQ(k.mangledName, "_Z4copyPKfPfi");
    EXPECT_EQ(k.launch, 1);
    EXPECT_EQ(k.range, "1");
    EXPECT_EQ(k.values.at("dram__bytes_read.sum"), 4194304.0);
    EXPECT_TRUE(std::isnan(k.values.at("smsp__sass_average_branch_targets_threads_uniform.pct")));
    EXPECT_EQ(k.derived.at("globalLoadSectorsPerRequest"), 4.0);
}

TEST(Metrics, JsonIsTheDocumentedShape)
{
    JobResult r;
    r.metrics = sampleReport();
    const nlohmann::json j = resultToJson(r, nullptr);
    const auto &m = j.at("metrics");
    for (const char *key : {"available", "message", "chip", "passes", "dropped", "kernels"})
        EXPECT_TRUE(m.contains(key)) << key;
    const auto &k = m.at("kernels").at(0);
    for (const char *key : {"name", "mangledName", "launch", "range", "values", "derived"})
        EXPECT_TRUE(k.contains(key)) << key;
    EXPECT_EQ(k.at("values").at("smsp__sass_average_branch_targets_threads_uniform.pct"), "nan");

    JobResult none;
    EXPECT_TRUE(resultToJson(none, nullptr).at("metrics").is_null());
}

TEST(Metrics, ResultsCachedBeforeMetricsExistedStillRead)
{
    JobResult r;
    r.device.name = "NVIDIA H200";
    nlohmann::json j = resultToJson(r, nullptr);
    j.erase("metrics");
    auto back = resultFromJson(j, nullptr);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_FALSE(back->metrics.has_value());
}

TEST(Metrics, MeasureOptionTravelsAndKeysTheCache)
{
    Job job = fixtures::addJob("add", 100);
    job.measure.metrics = true;
    BlobSink blobs;
    const nlohmann::json j = jobToJson(job, blobs);
    EXPECT_EQ(j.at("measure").at("metrics"), true);
    BlobSource source(blobs.bytes().data(), blobs.bytes().size());
    auto back = jobFromJson(j, source);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_TRUE(back->measure.metrics);
    EXPECT_EQ(back->measure, job.measure);

    nlohmann::json older = measureToJson(MeasureOptions{});
    older.erase("metrics");
    auto defaults = measureFromJson(older);
    ASSERT_TRUE(defaults.ok());
    EXPECT_FALSE(defaults->metrics) << "a client that predates metrics asks for none";

    Job plain = fixtures::addJob("add", 100);
    EXPECT_NE(settingsHash(plain), settingsHash(job)) << "a result without metrics never answers a request for them";
    EXPECT_EQ(programHash(plain), programHash(job));
}

TEST(Metrics, SettingsHashWithoutMetricsIsUnchanged)
{
    // The key of a result measured without metrics must not move, or every cached result would be
    // measured again: "metrics": false is left out of what is hashed. The literal is the hash the
    // build before metrics gave this job.
    Job plain = fixtures::addJob("add", 100);
    nlohmann::json withKey = measureToJson(plain.measure);
    ASSERT_TRUE(withKey.contains("metrics"));
    const std::string before = settingsHash(plain);
    plain.measure.metrics = false;
    EXPECT_EQ(settingsHash(plain), before);
    EXPECT_EQ(before, "10f10684cb349b1f5bef8623d2e4dcdb4fa1b53633ea1d775b2941e4913ce121")
        << "settingsHash moved: results cached by earlier builds would be measured again";
}

TEST(Metrics, PlanFilesAskForMetrics)
{
    const std::string base = R"({
  "schema": "stitchcuda-plan/1",
  "source": "k.cu",
  "buffers": [{"name": "X", "dtype": "float32", "count": 10}],
  "launches": [{"kernel": "k", "grid": 1, "block": [32], "args": ["X", {"int32": 10}]}],
  "measure": {"metrics": VALUE}
})";
    auto with = [&](const std::string &value) {
        std::string text = base;
        text.replace(text.find("VALUE"), 5, value);
        return parsePlanFile(text, "p.json");
    };
    auto yes = with("true");
    ASSERT_TRUE(yes.ok()) << yes.error().toString();
    EXPECT_TRUE(yes->measure.metrics);
    auto no = with("false");
    ASSERT_TRUE(no.ok());
    EXPECT_FALSE(no->measure.metrics);
    auto bad = with("1");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("measure.metrics"), std::string::npos) << bad.error().message;
}

TEST(Metrics, DerivedFiguresComeFromTheRawValues)
{
    const std::map<std::string, double> v = {
        {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1000.0},
        {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 250.0},
        {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 3200.0},
        {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 100.0},
        {"dram__bytes_read.sum", 3000.0},
        {"dram__bytes_write.sum", 1000.0},
        {"gpu__time_duration.sum", 2000.0},
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 31.0},
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 1.0},
        {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 64.0},
        {"smsp__sass_inst_executed_op_shared_ld.sum", 2.0},
        {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 3200.0},
        {"smsp__inst_executed.sum", 1000.0},
        {"smsp__sass_inst_executed_op_global_ld.sum", 250.0},
    };
    const auto d = deriveMetrics(v);
    EXPECT_DOUBLE_EQ(d.at("globalLoadSectorsPerRequest"), 4.0);
    EXPECT_DOUBLE_EQ(d.at("globalStoreSectorsPerRequest"), 32.0);
    EXPECT_DOUBLE_EQ(d.at("dramBytes"), 4000.0);
    EXPECT_DOUBLE_EQ(d.at("dramGBPerSecond"), 2.0);
    EXPECT_DOUBLE_EQ(d.at("sharedBankConflicts"), 32.0);
    EXPECT_DOUBLE_EQ(d.at("sharedLoadWavefrontsPerInstruction"), 32.0);
    EXPECT_DOUBLE_EQ(d.at("ffmaGflops"), 3.2);
    EXPECT_DOUBLE_EQ(d.at("ffmaPct"), 10.0);
    EXPECT_DOUBLE_EQ(d.at("globalLoadInstructionPct"), 25.0);
    EXPECT_DOUBLE_EQ(d.at("sharedLoadInstructionPct"), 0.2);
    std::set<std::string> documented;
    for (const auto &m : derivedMetrics())
        documented.insert(m.name);
    for (const auto &[name, value] : d)
        EXPECT_TRUE(documented.count(name)) << name << " is not in derivedMetrics()";
    EXPECT_EQ(d.size(), documented.size());
}

TEST(Metrics, DerivedFiguresNeedTheirInputsAndANonZeroDenominator)
{
    const std::map<std::string, double> v = {
        {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 0.0},
        {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 0.0},
        {"dram__bytes_read.sum", std::numeric_limits<double>::quiet_NaN()},
        {"dram__bytes_write.sum", 10.0},
    };
    const auto d = deriveMetrics(v);
    EXPECT_FALSE(d.count("globalLoadSectorsPerRequest")) << "no loads: no sectors per load request";
    EXPECT_FALSE(d.count("globalStoreSectorsPerRequest"));
    EXPECT_FALSE(d.count("dramBytes"));
    EXPECT_TRUE(deriveMetrics({}).empty());
}

TEST(Metrics, StandardMetricsAreTheIssuesList)
{
    std::set<std::string> names;
    for (const auto &m : standardMetrics()) {
        EXPECT_TRUE(names.insert(m.name).second) << "duplicate " << m.name;
        EXPECT_NE(std::string(m.unit), "");
        EXPECT_NE(std::string(m.meaning), "");
    }
    for (const char *needed : {"sm__warps_active.avg.pct_of_peak_sustained_active", "dram__bytes_read.sum",
                               "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                               "smsp__sass_average_branch_targets_threads_uniform.pct",
                               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "smsp__inst_executed.sum",
                               "sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum",
                               "sm__inst_executed_pipe_tensor_op_hmma.sum"})
        EXPECT_TRUE(names.count(needed)) << needed;
    EXPECT_EQ(names.size(), 22u);
}

TEST(Metrics, EveryLaunchIsProfiledInOneSpanWhenNoKernelIsChosen)
{
    EXPECT_EQ(profiledLaunches({"_Z4copyPKfPfi", "_Z5scalePfi", "_Z4copyPKfPfi"}, {}),
              (std::vector<LaunchSpan>{{0, 3}}));
    EXPECT_TRUE(profiledLaunches({}, {}).empty());
}

TEST(Metrics, OnlyTheChosenKernelsLaunchesAreProfiled)
{
    // copy, scale, copy, copy, reduce: the chosen kernel's launches, consecutive ones in one span.
    const std::vector<std::string> kernels = {"_Z4copyPKfPfi", "_Z5scalePfi", "_Z4copyPKfPfi", "_Z4copyPKfPfi",
                                              "reduce"};
    EXPECT_EQ(profiledLaunches(kernels, {"copy"}), (std::vector<LaunchSpan>{{0, 1}, {2, 4}}));
    EXPECT_EQ(profiledLaunches(kernels, {"_Z5scalePfi"}), (std::vector<LaunchSpan>{{1, 2}})) << "by the mangled name";
    EXPECT_EQ(profiledLaunches(kernels, {"scale", "reduce"}), (std::vector<LaunchSpan>{{1, 2}, {4, 5}}));
    EXPECT_EQ(profiledLaunches(kernels, {"copy", "scale"}), (std::vector<LaunchSpan>{{0, 4}}));
    EXPECT_TRUE(profiledLaunches(kernels, {"transpose"}).empty()) << "no launch of an unknown kernel";
}

TEST(Metrics, MissingCuptiIsAPlainReasonAndNothingRuns)
{
    MetricProfiler profiler({"/nonexistent/libcupti.so"});
    int calls = 0;
    auto r = profiler.profile(MetricProfiler::Request{}, [&] { return ++calls, Status(Ok{}); },
                              [&](std::size_t) { return ++calls, Status(Ok{}); }, [&] { return ++calls, Status(Ok{}); });
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Unsupported);
    EXPECT_NE(r.error().message.find("CUPTI not found (tried /nonexistent/libcupti.so"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(calls, 0);
    EXPECT_TRUE(profiler.libraryPath().empty());
}

TEST(Metrics, TheEnvironmentNamesTheOnlyCuptiToTry)
{
    {
        ScopedEnv env("STITCHCUDA_LIBCUPTI", "/nonexistent/libcupti.so.13");
        EXPECT_EQ(cuptiCandidatePaths(), std::vector<std::string>{"/nonexistent/libcupti.so.13"});
        auto lib = openCupti();
        ASSERT_FALSE(lib.ok());
        EXPECT_NE(lib.error().message.find("set STITCHCUDA_LIBCUPTI"), std::string::npos);
    }
    ScopedEnv cleared("STITCHCUDA_LIBCUPTI", "");
    EXPECT_GT(cuptiCandidatePaths().size(), 1u);
}

TEST(Metrics, RefusalsSayWhyInWords)
{
    EXPECT_NE(cuptiRefusalReason(35).find("restricted to administrators"), std::string::npos); // INSUFFICIENT_PRIVILEGES
    EXPECT_NE(cuptiRefusalReason(39).find("another profiler"), std::string::npos);             // MULTIPLE_SUBSCRIBERS
    EXPECT_NE(cuptiRefusalReason(43).find("MIG"), std::string::npos);
    EXPECT_TRUE(cuptiRefusalReason(1).empty()); // CUPTI_ERROR_INVALID_PARAMETER: a bug, not a refusal
}

TEST(Metrics, ChosenKernelsTravelKeyTheCacheAndComeFromPlanFiles)
{
    Job job = fixtures::addJob("add", 100);
    job.measure.metrics = true;
    const std::string every = settingsHash(job);
    job.measure.metricsKernels = {"add"};
    BlobSink blobs;
    const nlohmann::json j = jobToJson(job, blobs);
    EXPECT_EQ(j.at("measure").at("metricsKernels"), nlohmann::json::array({"add"}));
    BlobSource source(blobs.bytes().data(), blobs.bytes().size());
    auto back = jobFromJson(j, source);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->measure, job.measure);
    EXPECT_NE(settingsHash(job), every) << "a report of one kernel never answers a request for all";
    EXPECT_FALSE(measureToJson(MeasureOptions{}).contains("metricsKernels")) << "absent when every launch is asked for";

    const std::string plan = R"({
  "schema": "stitchcuda-plan/1",
  "source": "k.cu",
  "buffers": [{"name": "X", "dtype": "float32", "count": 10}],
  "launches": [{"kernel": "k", "grid": 1, "block": [32], "args": ["X", {"int32": 10}]}],
  "measure": {"metrics": true, "metricsKernels": KERNELS}
})";
    auto with = [&](const std::string &value) {
        std::string text = plan;
        text.replace(text.find("KERNELS"), 7, value);
        return parsePlanFile(text, "p.json");
    };
    auto ok = with(R"(["k"])");
    ASSERT_TRUE(ok.ok()) << ok.error().toString();
    EXPECT_EQ(ok->measure.metricsKernels, std::vector<std::string>{"k"});
    auto bad = with(R"("k")");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("measure.metricsKernels"), std::string::npos) << bad.error().message;
}
