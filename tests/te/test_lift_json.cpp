// `stitchcuda lift --json`: the CLI prints exactly what core's liftToJson produces, the document
// has the documented shape (docs/LIFT-JSON.md), and the structured fields rebuild the same graph.
#include "TeTestUtil.h"

#include "core/frontend/LiftJson.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>

using namespace stitch;
using nlohmann::json;

namespace {

struct Output {
    int exitCode = -1;
    std::string out;
};

Output runCli(const std::string &arguments)
{
    Output result;
    const std::string command = std::string(STITCHCUDA_CLI) + " " + arguments + " 2>/dev/null";
    FILE *pipe = popen(command.c_str(), "r");
    if (!pipe)
        return result;
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
        result.out.append(buffer.data(), n);
    const int status = pclose(pipe);
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

std::vector<std::string> exampleFiles()
{
    std::vector<std::string> files;
    for (const auto &entry : std::filesystem::directory_iterator(std::string(STITCHCUDA_SOURCE_DIR) + "/examples")) {
        if (entry.path().extension() == ".te")
            files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

void expectLocation(const json &j, bool range)
{
    ASSERT_TRUE(j.is_object()) << j;
    EXPECT_TRUE(j.at("file").is_string());
    EXPECT_GT(j.at("line").get<int>(), 0);
    EXPECT_GT(j.at("column").get<int>(), 0);
    if (range) {
        EXPECT_GE(j.at("endLine").get<int>(), j.at("line").get<int>());
        EXPECT_GT(j.at("endColumn").get<int>(), 0);
    }
}

/// Writes .te source from the structured members of a lift document (not from the op text).
std::string teFromJson(const json &doc)
{
    const json &g = doc.at("graph");
    std::string te = "graph " + g.at("name").get<std::string>() + "\n";
    for (const json &s : g.at("sizes")) {
        te += "size " + s.at("name").get<std::string>();
        if (!s.at("value").is_null())
            te += " = " + std::to_string(s.at("value").get<std::int64_t>());
        te += "\n";
    }
    for (const json &t : g.at("tensors")) {
        const std::string role = t.at("role");
        te += (role == "intermediate" ? std::string("tensor") : role) + " " + t.at("name").get<std::string>() + ": "
            + t.at("dtype").get<std::string>() + "[";
        for (std::size_t d = 0; d < t.at("shape").size(); ++d)
            te += (d ? ", " : "") + t.at("shape")[d].get<std::string>();
        te += "]\n";
    }
    for (const json &op : g.at("ops")) {
        te += op.at("output").get<std::string>() + "[";
        for (std::size_t d = 0; d < op.at("domain").size(); ++d)
            te += (d ? ", " : "") + op.at("domain")[d].at("name").get<std::string>();
        te += "] = ";
        const json &r = op.at("reduction");
        if (!r.is_null()) {
            te += r.at("kind").get<std::string>() + "(";
            for (std::size_t v = 0; v < r.at("vars").size(); ++v) {
                const json &var = r.at("vars")[v];
                const std::string lower = var.at("lower"), extent = var.at("extent");
                te += (v ? ", " : "") + var.at("name").get<std::string>();
                te += lower == "0" ? " < " + extent : " in [" + lower + ", " + lower + " + (" + extent + "))";
            }
            if (!r.at("init").is_null())
                te += ", init = " + r.at("init").get<std::string>();
            te += ") ";
        }
        te += op.at("body").get<std::string>() + "\n";
    }
    return te;
}

} // namespace

TEST(LiftJson, CliPrintsCoresDocument)
{
    for (const std::string &file : exampleFiles()) {
        SCOPED_TRACE(file);
        const Output cli = runCli("lift --json " + file);
        ASSERT_EQ(cli.exitCode, 0) << cli.out;
        const json printed = json::parse(cli.out);
        const auto lifted = frontend::liftFile(tetest::readText(file), file);
        ASSERT_TRUE(lifted.ok());
        EXPECT_EQ(printed, frontend::liftToJson(*lifted));
    }
}

TEST(LiftJson, DocumentShape)
{
    for (const std::string &file : exampleFiles()) {
        SCOPED_TRACE(file);
        const json doc = json::parse(runCli("lift --json " + file).out);
        EXPECT_EQ(doc.at("schema"), "stitchcuda-lift/1");
        EXPECT_EQ(doc.at("file"), file);
        EXPECT_EQ(doc.at("language"), "te");
        EXPECT_EQ(doc.at("ok"), true);
        EXPECT_TRUE(doc.at("error").is_null());
        EXPECT_TRUE(doc.at("launches").is_array());
        EXPECT_TRUE(doc.at("opaque").is_array());
        EXPECT_TRUE(doc.at("diagnostics").is_array());
        const json &g = doc.at("graph");
        EXPECT_TRUE(g.at("name").is_string());
        for (const json &s : g.at("sizes")) {
            EXPECT_TRUE(s.at("name").is_string());
            EXPECT_TRUE(s.at("value").is_null() || s.at("value").is_number_integer());
        }
        int id = 0;
        for (const json &t : g.at("tensors")) {
            EXPECT_EQ(t.at("id"), id++);
            EXPECT_TRUE(t.at("role") == "input" || t.at("role") == "output" || t.at("role") == "intermediate");
            EXPECT_TRUE(t.at("dtype").is_string());
            for (const json &dim : t.at("shape"))
                EXPECT_TRUE(dim.is_string());
        }
        for (const json &op : g.at("ops")) {
            EXPECT_TRUE(op.at("text").is_string());
            EXPECT_TRUE(op.at("body").is_string());
            EXPECT_TRUE(op.at("inputs").is_array());
            for (const json &v : op.at("domain")) {
                EXPECT_TRUE(v.at("name").is_string());
                EXPECT_TRUE(v.at("lower").is_string());
                EXPECT_TRUE(v.at("extent").is_string());
            }
            expectLocation(op.at("source"), true);
        }
    }
}

TEST(LiftJson, StructuredFieldsRebuildTheGraph)
{
    for (const std::string &file : exampleFiles()) {
        SCOPED_TRACE(file);
        const json doc = json::parse(runCli("lift --json " + file).out);
        const std::string te = teFromJson(doc);
        const auto original = frontend::liftFile(tetest::readText(file), file);
        const auto rebuilt = frontend::liftTensorExpressions(te, "rebuilt.te");
        ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().toString() << "\n" << te;
        EXPECT_EQ(rebuilt->graph.toString(), original->graph.toString()) << te;
        EXPECT_EQ(rebuilt->sizes, original->sizes);
    }
}

TEST(LiftJson, Failures)
{
    const std::string dir = std::string(STITCHCUDA_SOURCE_DIR) + "/tests/te/data/";
    const Output bad = runCli("lift --json " + dir + "bad_index.te");
    EXPECT_EQ(bad.exitCode, 1);
    const json doc = json::parse(bad.out);
    EXPECT_EQ(doc.at("schema"), "stitchcuda-lift/1");
    EXPECT_EQ(doc.at("ok"), false);
    EXPECT_EQ(doc.at("language"), "te");
    EXPECT_TRUE(doc.at("graph").is_null());
    EXPECT_EQ(doc.at("error").at("kind"), "parse");
    expectLocation(doc.at("error").at("location"), false);
    ASSERT_FALSE(doc.at("diagnostics").empty());
    EXPECT_EQ(doc.at("diagnostics")[0].at("severity"), "error");

    const Output unsupported = runCli("lift --json " + dir + "not_a_program.txt");
    EXPECT_EQ(unsupported.exitCode, 1);
    const json u = json::parse(unsupported.out);
    EXPECT_TRUE(u.at("language").is_null());
    EXPECT_EQ(u.at("error").at("kind"), "unsupported");
    EXPECT_NE(u.at("error").at("message").get<std::string>().find("unsupported extension '.txt'"), std::string::npos);

    EXPECT_EQ(runCli("lift --json /nonexistent/x.te").exitCode, 2);
}

TEST(LiftJson, EvalMember)
{
    const Output out = runCli("lift --json --eval --seed 3 --size M=2 " + tetest::examplePath("softmax.te"));
    ASSERT_EQ(out.exitCode, 0);
    const json eval = json::parse(out.out).at("eval");
    EXPECT_EQ(eval.at("seed"), 3);
    EXPECT_EQ(eval.at("sizes").at("M"), 2);
    ASSERT_EQ(eval.at("outputs").size(), 1u);
    EXPECT_EQ(eval.at("outputs")[0].at("extents"), json::array({2, 1000}));
    EXPECT_NEAR(eval.at("outputs")[0].at("sum").get<double>(), 2.0, 1e-9); // each softmax row sums to one
}

TEST(LiftJson, StringsAreValidUtf8)
{
    // Messages quote source text, which may be any bytes; dump() must never throw on them.
    Error error = makeError(ErrorKind::Parse, "bad byte \xff in 'caf\xc3\xa9' and \xed\xa0\x80 (a surrogate)",
                            SourceLocation{"f\xfe.cu", 1, 2});
    error.diagnostics.push_back(Diagnostic{Severity::Error, *error.location, error.message});
    const json doc = frontend::liftFailureToJson("f\xfe.cu", error);
    std::string text;
    ASSERT_NO_THROW(text = doc.dump());
    const std::string message = doc.at("error").at("message");
    EXPECT_EQ(message, "bad byte \xef\xbf\xbd in 'caf\xc3\xa9' and \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd (a surrogate)");
    EXPECT_EQ(doc.at("file"), "f\xef\xbf\xbd.cu");
    EXPECT_EQ(doc.at("diagnostics")[0].at("message"), message);
}
