// The studio's project file (core/storage/ProjectFile.h): what is saved comes back, and a damaged,
// truncated or newer file is a located error, never a crash.
#include "core/storage/JsonLocations.h"
#include "core/storage/ProjectFile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace stitch;
using namespace stitch::storage;
namespace fs = std::filesystem;

namespace {

schedule::Schedule oneGroup(int blockSize)
{
    schedule::Schedule s;
    s.arch = "sm_90";
    schedule::KernelGroup g;
    g.name = "scale";
    g.ops = {"y"};
    g.strategy = schedule::Strategy::Elementwise;
    g.set("threads", blockSize);
    s.groups.push_back(g);
    return s;
}

Project sampleProject()
{
    Project p;
    p.savedBy = "StitchCUDA Studio test";
    p.input.path = "/work/src/scale.cu";
    p.input.text = "__global__ void scale(float *y) { y[threadIdx.x] *= 2.0f; }\n// é ü\n";
    p.arch = "sm_80";
    p.includeDirs = {"/work/include"};
    p.defines = {"TILE=32", "FAST"};
    p.sizes = {{"n", 4096}};

    ProjectAgents a;
    a.policy = "agents (sm_90.agents)";
    a.program = "// generated\n__global__ void scale_k() {}\n";
    a.selectedStep = 1;
    agents::Trace &t = a.trace;
    t.source = p.input.path;
    t.sourceText = p.input.text;
    t.sizes = p.sizes;
    t.arch = "sm_80";
    t.precision = "fp32";
    t.policy = a.policy;
    t.parse.summary = "lifted 1 kernel";
    agents::TraceDecision d;
    d.agent = agents::AgentKind::ParallelMapping;
    d.id = "parallel_mapping.block_size@scale";
    d.group = "scale";
    d.key = "block_size";
    d.subject = "threads per block";
    d.options = {
        {"128", true, "", 0.25, 0.5}, {"256", true, "", 0.75, 0.4}, {"2048", false, "over 1024 threads", 0, {}}};
    d.chosen = 1;
    d.msBefore = 0.5;
    d.msAfter = 0.4;
    d.rationale = "256 threads keep every SM busy";
    d.schedule = oneGroup(256);
    t.decisions.push_back(d);
    t.integrate.agent = agents::AgentKind::Stitch;
    t.integrate.summary = "one kernel";
    t.schedule = oneGroup(256);
    t.inputMs = 0.5;
    t.finalMs = 0.4;
    t.asWrittenMs = 0.45;
    p.agents = a;

    p.overrides.pins = {"parallel_mapping.block_size@scale=256"};
    p.overrides.schedule = oneGroup(512);
    p.overrides.decisions = {"scale.block_size"};

    ProjectReport rubric;
    rubric.schedule = "your schedule";
    rubric.predictedMs = 0.41;
    rubric.scores = {{"occupancy", 4.5, "", "most warps fit", "48 of 64 warps"}};
    p.rubric = rubric;
    ProjectReport asWritten;
    asWritten.schedule = "the program as written";
    asWritten.note = "not derivable from the code as written";
    asWritten.scores = {{"coalescing", 3, "code", "stride 1", ""}, {"bank_conflicts", 5, "does_not_apply", "", ""}};
    p.asWritten = asWritten;

    p.measurements = {{"agents' schedule", "sm_90", "NVIDIA H200", 0.123, true, "2026-12-01T10:00:00Z"}};
    return p;
}

std::string sampleText()
{
    return projectToJson(sampleProject(), "/work/projects/scale.stitchproj");
}

class ProjectFiles : public ::testing::Test {
protected:
    void SetUp() override
    {
        m_dir = fs::path(::testing::TempDir()) / ("stitch-project-" + std::to_string(::getpid()));
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }
    std::string path(const std::string &name) const { return (m_dir / name).string(); }
    void write(const std::string &name, const std::string &text) const { std::ofstream(path(name)) << text; }
    fs::path m_dir;
};

} // namespace

TEST(ProjectFile, RoundTripKeepsEverything)
{
    const Project in = sampleProject();
    const std::string text = projectToJson(in, "/work/projects/scale.stitchproj");
    auto out = parseProject(text, "scale.stitchproj");
    ASSERT_TRUE(out.ok()) << out.error().toString();
    EXPECT_EQ(out->input.path, in.input.path);
    EXPECT_EQ(out->input.relativePath, "../src/scale.cu");
    EXPECT_EQ(out->input.text, in.input.text);
    EXPECT_EQ(out->arch, "sm_80");
    EXPECT_EQ(out->includeDirs, in.includeDirs);
    EXPECT_EQ(out->defines, in.defines);
    EXPECT_EQ(out->sizes, in.sizes);
    EXPECT_EQ(out->savedBy, in.savedBy);

    ASSERT_TRUE(out->agents);
    EXPECT_EQ(out->agents->policy, in.agents->policy);
    EXPECT_EQ(out->agents->program, in.agents->program);
    EXPECT_EQ(out->agents->selectedStep, 1);
    // The trace is the trace's own JSON: written again, it is byte for byte the same.
    EXPECT_EQ(agents::traceToJson(out->agents->trace), agents::traceToJson(in.agents->trace));
    ASSERT_EQ(out->agents->trace.decisions.size(), 1u);
    EXPECT_EQ(schedule::toJson(out->agents->trace.decisions[0].schedule), schedule::toJson(oneGroup(256)));

    EXPECT_EQ(out->overrides.pins, in.overrides.pins);
    EXPECT_EQ(out->overrides.decisions, in.overrides.decisions);
    ASSERT_TRUE(out->overrides.schedule);
    EXPECT_EQ(schedule::toJson(*out->overrides.schedule), schedule::toJson(oneGroup(512)));
    EXPECT_EQ(out->overrides.schedule->group("scale")->value("threads"), 512);

    ASSERT_TRUE(out->rubric && out->asWritten);
    EXPECT_EQ(out->rubric->schedule, "your schedule");
    EXPECT_DOUBLE_EQ(out->rubric->predictedMs.value_or(0), 0.41);
    ASSERT_EQ(out->rubric->scores.size(), 1u);
    EXPECT_EQ(out->rubric->scores[0].evidence, "48 of 64 warps");
    ASSERT_EQ(out->asWritten->scores.size(), 2u);
    EXPECT_EQ(out->asWritten->scores[1].source, "does_not_apply");
    EXPECT_EQ(out->asWritten->note, in.asWritten->note);

    ASSERT_EQ(out->measurements.size(), 1u);
    EXPECT_EQ(out->measurements[0].gpu, "NVIDIA H200");
    EXPECT_DOUBLE_EQ(out->measurements[0].ms, 0.123);
    EXPECT_TRUE(out->measurements[0].verified);

    // Saved again, the document is the same: nothing is lost or invented on the way.
    EXPECT_EQ(projectToJson(*out, "/work/projects/scale.stitchproj"), text);
}

TEST(ProjectFile, AMinimalProjectReads)
{
    auto p = parseProject(R"({"format": "stitchcuda-project", "version": 1, "input": {"text": "x"}, "arch": "sm_75"})",
                          "min.stitchproj");
    ASSERT_TRUE(p.ok()) << p.error().toString();
    EXPECT_EQ(p->input.text, "x");
    EXPECT_TRUE(p->input.path.empty());
    EXPECT_FALSE(p->agents);
    EXPECT_TRUE(p->overrides.empty());
}

TEST(ProjectFile, UnknownMembersAreIgnored)
{
    nlohmann::json j = nlohmann::json::parse(sampleText());
    j["future_member"] = {{"anything", 1}};
    j["build"]["toolchain"] = "clang";
    j["agents"]["trace"]["decisions"][0]["extra"] = true;
    auto p = parseProject(j.dump(), "extra.stitchproj");
    ASSERT_TRUE(p.ok()) << p.error().toString();
    EXPECT_EQ(p->arch, "sm_80");
}

TEST(ProjectFile, DamagedJsonIsLocated)
{
    std::string text = sampleText();
    // A stray character where a member should start, on a known line.
    const std::size_t at = text.find("\"arch\": \"sm_80\"");
    ASSERT_NE(at, std::string::npos);
    text.insert(at, "@");
    const SourceLocation expected = locationAt(text, at, "bad.stitchproj");
    auto p = parseProject(text, "bad.stitchproj");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().kind, ErrorKind::Parse);
    ASSERT_TRUE(p.error().location);
    EXPECT_EQ(p.error().location->file, "bad.stitchproj");
    EXPECT_EQ(p.error().location->line, expected.line);
    EXPECT_EQ(p.error().location->column, expected.column);
    EXPECT_NE(p.error().message.find("invalid JSON"), std::string::npos) << p.error().message;
    EXPECT_NE(p.error().message.find("@'; expected string literal"), std::string::npos) << p.error().message;
    ASSERT_EQ(p.error().diagnostics.size(), 1u);
    EXPECT_EQ(p.error().diagnostics[0].location, *p.error().location);
}

TEST(ProjectFile, TruncatedFileSaysSo)
{
    const std::string text = sampleText();
    for (std::size_t keep : {std::size_t{0}, std::size_t{1}, text.size() / 3, text.size() / 2, text.size() - 3}) {
        auto p = parseProject(text.substr(0, keep), "cut.stitchproj");
        ASSERT_FALSE(p.ok()) << keep;
        EXPECT_EQ(p.error().kind, ErrorKind::Parse);
        EXPECT_NE(p.error().message.find("truncated"), std::string::npos) << keep << ": " << p.error().message;
        ASSERT_TRUE(p.error().location);
        EXPECT_GT(p.error().location->line, 0);
    }
}

TEST(ProjectFile, GarbageIsAnErrorNotACrash)
{
    const std::string inputs[] = {std::string("\0\1\2\xff\xfe", 5),
                                  "[1, 2, 3]",
                                  "\"text\"",
                                  "{\"format\": 7}",
                                  "{\"format\": \"stitchcuda-project\"}",
                                  "{\"format\": \"something-else\", \"version\": 1}",
                                  "{\"format\": \"stitchcuda-project\", \"version\": \"one\"}",
                                  "{\"a\": \"\xff\xfe\"}"};
    for (const std::string &text : inputs) {
        auto p = parseProject(text, "junk.stitchproj");
        ASSERT_FALSE(p.ok()) << text;
        EXPECT_FALSE(p.error().message.empty());
    }
}

TEST(ProjectFile, AMistypedMemberIsNamedAndLocated)
{
    nlohmann::json j = nlohmann::json::parse(sampleText());
    j["build"]["sizes"]["n"] = "big";
    const std::string text = j.dump(2);
    auto p = parseProject(text, "typed.stitchproj");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message, "build.sizes.n: expected a whole number");
    ASSERT_TRUE(p.error().location);
    // At the member's key: the line that reads "n": "big".
    const std::size_t key = text.find("\"n\": \"big\"");
    const SourceLocation expected = locationAt(text, key, "typed.stitchproj");
    EXPECT_EQ(p.error().location->line, expected.line);
    EXPECT_EQ(p.error().location->column, expected.column);
}

TEST(ProjectFile, AnErrorInsideTheTraceIsLocatedInTheProject)
{
    nlohmann::json j = nlohmann::json::parse(sampleText());
    j["agents"]["trace"]["decisions"][0]["chosen"] = 7; // not one of its three options
    const std::string text = j.dump(2);
    auto p = parseProject(text, "trace.stitchproj");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message, "agents.trace.decisions[0].chosen: not one of the options");
    const std::size_t key = text.find("\"chosen\": 7");
    ASSERT_NE(key, std::string::npos);
    EXPECT_EQ(p.error().location->line, locationAt(text, key, "").line);

    j = nlohmann::json::parse(sampleText());
    j["overrides"]["schedule"]["groups"][0]["decisions"]["threads"] = 3; // not a candidate
    p = parseProject(j.dump(2), "schedule.stitchproj");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message.rfind("overrides.schedule.groups[0].decisions: threads: 3 is not one of", 0), 0u)
        << p.error().message;
    EXPECT_GT(p.error().location->line, 1);
}

TEST(ProjectFile, ANewerVersionIsRefusedNamingBoth)
{
    nlohmann::json j = nlohmann::json::parse(sampleText());
    j["version"] = Project::kFormatVersion + 1;
    j["saved_by"] = "StitchCUDA Studio 9.0";
    j["input"] = 42; // a newer format may change anything: the version is checked first
    auto p = parseProject(j.dump(2), "new.stitchproj");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().kind, ErrorKind::Unsupported);
    const std::string &m = p.error().message;
    EXPECT_NE(m.find("newer StitchCUDA Studio (StitchCUDA Studio 9.0)"), std::string::npos) << m;
    EXPECT_NE(m.find("version " + std::to_string(Project::kFormatVersion + 1)), std::string::npos) << m;
    EXPECT_NE(m.find("reads version " + std::to_string(Project::kFormatVersion)), std::string::npos) << m;
    EXPECT_GT(p.error().location->line, 1);

    // A newer trace inside a current project is refused the same way.
    j = nlohmann::json::parse(sampleText());
    j["agents"]["trace"]["version"] = 2;
    p = parseProject(j.dump(2), "newtrace.stitchproj");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().kind, ErrorKind::Unsupported);
    EXPECT_NE(p.error().message.find("agents.trace.version: written by a newer StitchCUDA"), std::string::npos)
        << p.error().message;
}

TEST_F(ProjectFiles, TheInputFileMatchesChangedOrIsMissing)
{
    Project p = sampleProject();
    p.input.path = path("src/scale.cu");
    const std::string projectPath = path("scale.stitchproj");
    fs::create_directories(m_dir / "src");

    write("src/scale.cu", p.input.text);
    InputChoice c = chooseInput(p, projectPath);
    EXPECT_EQ(c.origin, InputChoice::Origin::File);
    EXPECT_EQ(c.path, p.input.path);
    EXPECT_TRUE(c.note.empty());

    write("src/scale.cu", "// edited elsewhere\n");
    c = chooseInput(p, projectPath);
    EXPECT_EQ(c.origin, InputChoice::Origin::ProjectChanged);
    EXPECT_EQ(c.text, p.input.text); // the project's copy wins
    EXPECT_NE(c.note.find("has changed since the project was saved"), std::string::npos) << c.note;

    fs::remove(m_dir / "src/scale.cu");
    c = chooseInput(p, projectPath);
    EXPECT_EQ(c.origin, InputChoice::Origin::ProjectMissing);
    EXPECT_EQ(c.text, p.input.text);
    EXPECT_EQ(c.path, p.input.path);
    EXPECT_NE(c.note.find("is missing"), std::string::npos) << c.note;
}

TEST_F(ProjectFiles, AProjectMovedWithItsInputFindsItBesideIt)
{
    Project p = sampleProject();
    p.input.path = path("old/place/scale.cu"); // where it was when saved; gone now
    auto saved = parseProject(projectToJson(p, path("old/place/scale.stitchproj")), "p");
    ASSERT_TRUE(saved.ok());
    EXPECT_EQ(saved->input.relativePath, "scale.cu");
    fs::create_directories(m_dir / "moved");
    write("moved/scale.cu", p.input.text);
    const InputChoice c = chooseInput(*saved, path("moved/scale.stitchproj"));
    EXPECT_EQ(c.origin, InputChoice::Origin::File);
    EXPECT_EQ(c.path, path("moved/scale.cu"));
    EXPECT_NE(c.note.find("found beside the project"), std::string::npos) << c.note;
}

TEST(ProjectFile, AnUntitledInputOpensFromTheProject)
{
    Project p = sampleProject();
    p.input.path.clear();
    auto saved = parseProject(projectToJson(p, "/tmp/x.stitchproj"), "x");
    ASSERT_TRUE(saved.ok());
    const InputChoice c = chooseInput(*saved, "/tmp/x.stitchproj", [](const std::string &) {
        ADD_FAILURE() << "an untitled input reads no file";
        return std::optional<std::string>();
    });
    EXPECT_EQ(c.origin, InputChoice::Origin::Untitled);
    EXPECT_EQ(c.text, p.input.text);
}

TEST(JsonLocations, PathsPointAtTheirKeysAndElements)
{
    const std::string text = "{\n  \"a\": [10, \"s,t\", {\"b\": true}],\n  \"c\\\"d\": -1.5e3\n}";
    const JsonLocations at = JsonLocations::index(text);
    EXPECT_EQ(at.find("a", "f").line, 2);
    EXPECT_EQ(at.find("a", "f").column, 3);
    EXPECT_EQ(at.find("a[0]", "f").column, 9);
    EXPECT_EQ(at.find("a[1]", "f").column, 13);
    EXPECT_EQ(at.find("a[2]", "f").column, 20);
    EXPECT_EQ(at.find("a[2].b", "f").column, 21);
    EXPECT_EQ(at.find("c\"d", "f").line, 3);
    EXPECT_EQ(at.find("c\"d", "f").column, 3);
    // A missing member is located at its nearest ancestor.
    EXPECT_EQ(at.find("a[2].missing", "f").column, 20);
    EXPECT_EQ(at.find("nowhere", "f").line, 1);
}
