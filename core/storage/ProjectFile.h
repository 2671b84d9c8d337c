#pragma once
// The studio's project file (.stitchproj): one versioned JSON document with what a session made.
//   studio state -> Project -> projectToJson -> file (written atomically by the studio)
//   file text -> parseProject (errors at line:col, newer versions refused) -> Project -> chooseInput
// The format is specified in docs/STUDIO.md ("Project files"); the agents' trace inside it is the
// trace's own JSON (docs/AGENTS.md), read by agents::parseTrace.

#include "core/agents/Trace.h"
#include "core/common/Result.h"
#include "core/schedule/Schedule.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stitch::storage {

/// The program the project was made for: where it was and its text at the time.
struct ProjectInput {
    std::string path;         ///< absolute; empty for a document never saved
    std::string relativePath; ///< from the project file's folder (written by projectToJson); empty if none
    std::string text;
};

/// The last Optimize: the trace, who decided, the program it generated and the step shown.
struct ProjectAgents {
    agents::Trace trace;
    std::string policy;
    std::string program;   ///< the generated CUDA source
    int selectedStep = -1; ///< the Agents dock's timeline row; -1: none recorded
};

/// What the user decided over the agents and the defaults.
struct ProjectOverrides {
    std::vector<std::string> pins;              ///< the Agents dock's: "AGENT.DECISION@GROUP=VALUE"
    std::optional<schedule::Schedule> schedule; ///< the Decisions dock's schedule with the user's values
    std::vector<std::string> decisions;         ///< "group.key" of each value the user set in it
    bool empty() const { return pins.empty() && !schedule && decisions.empty(); }
};

/// One rubric dimension as a report recorded it.
struct ReportScore {
    std::string dimension;
    double score = 0;
    std::string source; ///< as written: "code", "generic_schedule", "does_not_apply"; else empty
    std::string sentence;
    std::string evidence;
};

/// A rubric the studio showed when the project was saved, kept as a record (the studio scores the
/// program again when it opens the project).
struct ProjectReport {
    std::string schedule;              ///< whose: "default schedule", "your schedule", "the agents' final schedule"
    std::optional<double> predictedMs; ///< the model's time of the program, where scored
    std::string note;
    std::vector<ReportScore> scores; ///< the program's, one per dimension
};

/// A program timed on a GPU.
struct ProjectMeasurement {
    std::string program; ///< what was timed ("agents' schedule", a describe() line)
    std::string arch;
    std::string gpu;
    double ms = 0;
    bool verified = false;
    std::string when; ///< ISO 8601
};

struct Project {
    static constexpr int kFormatVersion = 1;
    static constexpr const char *kFormat = "stitchcuda-project";

    ProjectInput input;
    std::string arch = "sm_90";
    std::vector<std::string> includeDirs;      ///< -I
    std::vector<std::string> defines;          ///< -D, NAME or NAME=VALUE
    std::map<std::string, std::int64_t> sizes; ///< values of sizes the source leaves open
    std::optional<ProjectAgents> agents;
    ProjectOverrides overrides;
    std::optional<ProjectReport> rubric;    ///< the Rubric dock's table
    std::optional<ProjectReport> asWritten; ///< the program as written on the radar
    std::vector<ProjectMeasurement> measurements;
    std::string savedBy; ///< "StitchCUDA Studio 0.1.0"; informative only
};

/// The document, pretty-printed. `projectPath` (where it will be written) gives input.relativePath.
std::string projectToJson(const Project &project, const std::string &projectPath);

/// Reads a project. Unknown members are ignored (a later minor addition reads fine); a missing or
/// mistyped member, a damaged or truncated file is a Parse error located at line:col of the JSON
/// with the member's path and what was expected; a document of a newer format version is an
/// Unsupported error naming both versions. Never throws.
Result<Project> parseProject(const std::string &text, const std::string &fileName);

/// Which text to open, and from where, when the project's input file may have moved or changed.
struct InputChoice {
    enum class Origin {
        Untitled,       ///< the project's input was never saved: its copy
        File,           ///< the file on disk has the project's text
        ProjectChanged, ///< the file differs: the project's copy wins, the file is left alone
        ProjectMissing, ///< no file at the path (nor beside the project): the project's copy
    };
    Origin origin = Origin::Untitled;
    std::string path; ///< where the editor's file is (the recorded path, or where it was found)
    std::string text; ///< always the project's copy
    std::string note; ///< for the user, empty when the file matched
};

/// The project's copy of the text always wins: the trace, the overrides and the reports were made
/// for it, and a file changed since would silently invalidate them. The path is the recorded one,
/// else input.relativePath beside `projectPath` (the project moved with its input). `readFile`
/// returns a file's text, or nullopt when it cannot be read (default: the file system).
InputChoice chooseInput(const Project &project, const std::string &projectPath,
                        const std::function<std::optional<std::string>(const std::string &)> &readFile = {});

} // namespace stitch::storage
