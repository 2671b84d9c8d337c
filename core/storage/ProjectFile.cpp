#include "core/storage/ProjectFile.h"

#include "core/common/Files.h"

#include "core/storage/JsonLocations.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace stitch::storage {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

/// A member that is missing or has the wrong shape: where (a path) and what was expected.
struct Failure {
    std::string path;
    std::string what;
    ErrorKind kind = ErrorKind::Parse;
};

[[noreturn]] void fail(const std::string &path, const std::string &what, ErrorKind kind = ErrorKind::Parse)
{
    throw Failure{path, what, kind};
}

std::string join(const std::string &path, const char *key)
{
    return path.empty() ? std::string(key) : path + "." + key;
}

/// Strict about what is there, silent about what is not known: unknown members are skipped.
struct Reader {
    const json *member(const json &j, const char *key, const std::string &path, bool required) const
    {
        if (!j.is_object())
            fail(path, "expected an object");
        if (auto it = j.find(key); it != j.end() && !it->is_null())
            return &*it;
        if (required)
            fail(path, std::string("missing member \"") + key + "\"");
        return nullptr;
    }
    std::string str(const json &j, const char *key, const std::string &path, bool required = true) const
    {
        const json *v = member(j, key, path, required);
        if (!v)
            return {};
        if (!v->is_string())
            fail(join(path, key), "expected a string");
        return v->get<std::string>();
    }
    double num(const json &v, const std::string &path) const
    {
        if (!v.is_number())
            fail(path, "expected a number");
        return v.get<double>();
    }
    std::int64_t integer(const json &v, const std::string &path) const
    {
        if (!v.is_number_integer())
            fail(path, "expected a whole number");
        return v.get<std::int64_t>();
    }
    bool flag(const json &j, const char *key, const std::string &path) const
    {
        const json *v = member(j, key, path, false);
        if (!v)
            return false;
        if (!v->is_boolean())
            fail(join(path, key), "expected true or false");
        return v->get<bool>();
    }
    std::vector<std::string> strings(const json &j, const char *key, const std::string &path) const
    {
        std::vector<std::string> out;
        const json *v = member(j, key, path, false);
        if (!v)
            return out;
        if (!v->is_array())
            fail(join(path, key), "expected an array of strings");
        for (std::size_t i = 0; i < v->size(); ++i) {
            if (!(*v)[i].is_string())
                fail(join(path, key) + "[" + std::to_string(i) + "]", "expected a string");
            out.push_back((*v)[i].get<std::string>());
        }
        return out;
    }
};

/// A nested reader's message "[name: ]path: what" as a path under its root and the what.
std::pair<std::string, std::string> nestedFailure(std::string message, const std::string &name)
{
    if (message.rfind(name + ": ", 0) == 0)
        message = message.substr(name.size() + 2);
    const std::size_t colon = message.find(": ");
    if (colon == std::string::npos)
        return {std::string(), message};
    std::string path = message.substr(0, colon);
    if (path.find(' ') != std::string::npos)
        return {std::string(), message};
    if (path == name)
        path.clear();
    else if (path.rfind(name + ".", 0) == 0)
        path = path.substr(name.size() + 1);
    return {path, message.substr(colon + 2)};
}

json reportJson(const ProjectReport &r)
{
    json scores = json::array();
    for (const ReportScore &s : r.scores) {
        json sj{{"dimension", s.dimension}, {"score", s.score}, {"sentence", s.sentence}};
        if (!s.source.empty())
            sj["source"] = s.source;
        if (!s.evidence.empty())
            sj["evidence"] = s.evidence;
        scores.push_back(std::move(sj));
    }
    json j{{"schedule", r.schedule}, {"scores", scores}};
    if (r.predictedMs)
        j["predicted_ms"] = *r.predictedMs;
    if (!r.note.empty())
        j["note"] = r.note;
    return j;
}

ProjectReport readReport(const Reader &r, const json &j, const std::string &path)
{
    ProjectReport out;
    out.schedule = r.str(j, "schedule", path, false);
    out.note = r.str(j, "note", path, false);
    if (const json *ms = r.member(j, "predicted_ms", path, false))
        out.predictedMs = r.num(*ms, join(path, "predicted_ms"));
    if (const json *scores = r.member(j, "scores", path, false)) {
        if (!scores->is_array())
            fail(join(path, "scores"), "expected an array");
        for (std::size_t i = 0; i < scores->size(); ++i) {
            const std::string where = join(path, "scores") + "[" + std::to_string(i) + "]";
            const json &sj = (*scores)[i];
            ReportScore s;
            s.dimension = r.str(sj, "dimension", where);
            s.score = r.num(*r.member(sj, "score", where, true), join(where, "score"));
            s.source = r.str(sj, "source", where, false);
            s.sentence = r.str(sj, "sentence", where, false);
            s.evidence = r.str(sj, "evidence", where, false);
            out.scores.push_back(std::move(s));
        }
    }
    return out;
}

void readAgents(const Reader &r, const json &j, Project &p)
{
    ProjectAgents a;
    a.policy = r.str(j, "policy", "agents", false);
    a.program = r.str(j, "program", "agents", false);
    if (const json *step = r.member(j, "selected_step", "agents", false)) {
        const std::int64_t row = r.integer(*step, "agents.selected_step");
        if (row < -1 || row > std::numeric_limits<int>::max())
            fail("agents.selected_step", "expected -1 or a row of the timeline");
        a.selectedStep = static_cast<int>(row);
    }
    const json &trace = *r.member(j, "trace", "agents", true);
    auto parsed = agents::parseTrace(trace.dump(), "trace");
    if (!parsed) {
        const auto [path, what] = nestedFailure(parsed.error().message, "trace");
        fail(path.empty() ? "agents.trace" : "agents.trace." + path, what,
             what.find("newer") != std::string::npos ? ErrorKind::Unsupported : ErrorKind::Parse);
    }
    a.trace = std::move(*parsed);
    p.agents = std::move(a);
}

void readOverrides(const Reader &r, const json &j, Project &p)
{
    p.overrides.pins = r.strings(j, "pins", "overrides");
    p.overrides.decisions = r.strings(j, "decisions", "overrides");
    if (const json *s = r.member(j, "schedule", "overrides", false)) {
        auto parsed = schedule::parseSchedule(s->dump(), "schedule");
        if (!parsed) {
            const auto [path, what] = nestedFailure(parsed.error().message, "schedule");
            fail(path.empty() ? "overrides.schedule" : "overrides.schedule." + path, what);
        }
        p.overrides.schedule = std::move(*parsed);
    }
}

void readMeasurements(const Reader &r, const json &list, Project &p)
{
    if (!list.is_array())
        fail("measurements", "expected an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string where = "measurements[" + std::to_string(i) + "]";
        const json &mj = list[i];
        ProjectMeasurement m;
        m.program = r.str(mj, "program", where);
        m.arch = r.str(mj, "arch", where, false);
        m.gpu = r.str(mj, "gpu", where, false);
        m.ms = r.num(*r.member(mj, "ms", where, true), where + ".ms");
        m.verified = r.flag(mj, "verified", where);
        m.when = r.str(mj, "when", where, false);
        p.measurements.push_back(std::move(m));
    }
}

Project readProject(const json &j)
{
    const Reader r;
    if (!j.is_object())
        fail("", "expected a JSON object (a StitchCUDA project)");
    // The format and its version first: a newer document may have changed anything else.
    const json *format = j.contains("format") ? &j.at("format") : nullptr;
    if (!format)
        fail("", "not a StitchCUDA project: no \"format\" member (expected \"" + std::string(Project::kFormat) + "\")");
    if (!format->is_string() || format->get<std::string>() != Project::kFormat)
        fail("format", "not a StitchCUDA project: format " + format->dump() + " (expected \"" +
                           std::string(Project::kFormat) + "\")");
    const json &version = *r.member(j, "version", "", true);
    const std::int64_t v = r.integer(version, "version");
    const std::string savedBy = r.str(j, "saved_by", "", false);
    if (v > Project::kFormatVersion)
        fail("version",
             "written by a newer StitchCUDA Studio" + (savedBy.empty() ? std::string() : " (" + savedBy + ")") +
                 ": project format version " + std::to_string(v) + ", and this build reads version " +
                 std::to_string(Project::kFormatVersion) + " and older; open it with that version or newer",
             ErrorKind::Unsupported);
    if (v < 1)
        fail("version", "project format version " + std::to_string(v) + " does not exist (versions start at 1)");

    Project p;
    p.savedBy = savedBy;
    const json &input = *r.member(j, "input", "", true);
    p.input.path = r.str(input, "path", "input", false);
    p.input.relativePath = r.str(input, "relative_path", "input", false);
    p.input.text = r.str(input, "text", "input", true);
    p.arch = r.str(j, "arch", "", true);
    if (const json *build = r.member(j, "build", "", false)) {
        p.includeDirs = r.strings(*build, "include_dirs", "build");
        p.defines = r.strings(*build, "defines", "build");
        if (const json *sizes = r.member(*build, "sizes", "build", false)) {
            if (!sizes->is_object())
                fail("build.sizes", "expected an object of NAME: value");
            for (const auto &[name, value] : sizes->items()) {
                const std::int64_t n = r.integer(value, "build.sizes." + name);
                if (n <= 0)
                    fail("build.sizes." + name, "expected a size of at least 1, not " + std::to_string(n));
                p.sizes[name] = n;
            }
        }
    }
    if (const json *a = r.member(j, "agents", "", false))
        readAgents(r, *a, p);
    if (const json *o = r.member(j, "overrides", "", false))
        readOverrides(r, *o, p);
    if (const json *reports = r.member(j, "reports", "", false)) {
        if (const json *rubric = r.member(*reports, "rubric", "reports", false))
            p.rubric = readReport(r, *rubric, "reports.rubric");
        if (const json *asWritten = r.member(*reports, "as_written", "reports", false))
            p.asWritten = readReport(r, *asWritten, "reports.as_written");
    }
    if (const json *m = r.member(j, "measurements", "", false))
        readMeasurements(r, *m, p);
    return p;
}


} // namespace

std::string projectToJson(const Project &p, const std::string &projectPath)
{
    json j = json::object();
    j["format"] = Project::kFormat;
    j["version"] = Project::kFormatVersion;
    j["saved_by"] = p.savedBy;
    std::string relative = p.input.relativePath;
    if (!p.input.path.empty() && !projectPath.empty()) {
        const fs::path folder = fs::path(projectPath).parent_path();
        relative = fs::path(p.input.path).lexically_relative(folder.empty() ? fs::path(".") : folder).generic_string();
    }
    j["input"] = json{{"path", p.input.path}, {"relative_path", relative}, {"text", p.input.text}};
    j["arch"] = p.arch;
    j["build"] = json{{"include_dirs", p.includeDirs}, {"defines", p.defines}, {"sizes", p.sizes}};
    if (p.agents) {
        json a{{"policy", p.agents->policy},
               {"program", p.agents->program},
               {"selected_step", p.agents->selectedStep},
               {"trace", json::parse(agents::traceToJson(p.agents->trace))}};
        j["agents"] = std::move(a);
    }
    json o{{"pins", p.overrides.pins}, {"decisions", p.overrides.decisions}};
    if (p.overrides.schedule)
        o["schedule"] = json::parse(schedule::toJson(*p.overrides.schedule));
    j["overrides"] = std::move(o);
    json reports = json::object();
    if (p.rubric)
        reports["rubric"] = reportJson(*p.rubric);
    if (p.asWritten)
        reports["as_written"] = reportJson(*p.asWritten);
    j["reports"] = std::move(reports);
    json measurements = json::array();
    for (const ProjectMeasurement &m : p.measurements)
        measurements.push_back(json{{"program", m.program},
                                    {"arch", m.arch},
                                    {"gpu", m.gpu},
                                    {"ms", m.ms},
                                    {"verified", m.verified},
                                    {"when", m.when}});
    j["measurements"] = std::move(measurements);
    // Text from outside (a file read as bytes) may hold invalid UTF-8: replaced, never a throw.
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<Project> parseProject(const std::string &text, const std::string &fileName)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error &e) {
        return jsonSyntaxError(text, e.byte, e.what(), fileName);
    } catch (const json::exception &e) { // invalid UTF-8 and the like
        return jsonSyntaxError(text, 0, e.what(), fileName);
    }
    try {
        return readProject(j);
    } catch (const Failure &f) {
        const SourceLocation where = JsonLocations::index(text).find(f.path, fileName);
        const std::string message = (f.path.empty() ? std::string() : f.path + ": ") + f.what;
        Error error = makeError(f.kind, message, where);
        error.diagnostics.push_back(Diagnostic{Severity::Error, where, message});
        return error;
    } catch (const json::exception &e) { // a value out of range for its type
        return makeError(ErrorKind::Parse, e.what(), SourceLocation{fileName, 0, 0});
    }
}

InputChoice chooseInput(const Project &project, const std::string &projectPath,
                        const std::function<std::optional<std::string>(const std::string &)> &readFile)
{
    const auto read = readFile ? readFile : readRegularFile;
    InputChoice out;
    out.text = project.input.text;
    out.path = project.input.path;
    std::vector<std::string> candidates;
    if (!project.input.path.empty())
        candidates.push_back(project.input.path);
    if (!project.input.relativePath.empty() && !projectPath.empty())
        candidates.push_back(
            (fs::path(projectPath).parent_path() / project.input.relativePath).lexically_normal().string());
    if (candidates.empty()) {
        out.origin = InputChoice::Origin::Untitled;
        return out;
    }
    for (const std::string &path : candidates) {
        const std::optional<std::string> onDisk = read(path);
        if (!onDisk)
            continue;
        out.path = path;
        if (*onDisk == project.input.text) {
            out.origin = InputChoice::Origin::File;
        } else {
            out.origin = InputChoice::Origin::ProjectChanged;
            out.note = path + " has changed since the project was saved: the project's copy is open (the trace, "
                              "overrides and reports were made for it); the file on disk is left as it is until "
                              "you save the source";
        }
        if (path != project.input.path && !project.input.path.empty())
            out.note +=
                std::string(out.note.empty() ? "" : "; ") + "found beside the project, not at " + project.input.path;
        return out;
    }
    out.origin = InputChoice::Origin::ProjectMissing;
    out.note = (project.input.path.empty() ? candidates.front() : project.input.path) +
               " is missing (moved or deleted): the project's copy is open; saving the source writes it there";
    return out;
}

} // namespace stitch::storage
