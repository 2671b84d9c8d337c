#include "core/agents/Trace.h"

#include <nlohmann/json.hpp>

namespace stitch::agents {

using nlohmann::json;

namespace {

json dimensionsJson(const double (&d)[kStaticDimensionCount])
{
    json j = json::object();
    for (int i = 0; i < kStaticDimensionCount; ++i)
        j[kStaticDimensions[i]] = d[i];
    return j;
}

json stageJson(const TraceStage &s)
{
    return json{{"agent", agentName(s.agent)}, {"summary", s.summary}, {"notes", s.notes}};
}

struct Reader {
    std::string file;

    [[noreturn]] void fail(const std::string &where, const std::string &what) const
    {
        throw Error{ErrorKind::Parse, file + ": " + where + ": " + what, std::nullopt, {}};
    }
    const json &member(const json &j, const char *key, const std::string &where) const
    {
        if (!j.is_object() || !j.contains(key))
            fail(where, std::string("missing member \"") + key + "\"");
        return j.at(key);
    }
    std::string str(const json &j, const char *key, const std::string &where) const
    {
        const json &v = member(j, key, where);
        if (!v.is_string())
            fail(where + "." + key, "expected a string");
        return v.get<std::string>();
    }
    double num(const json &j, const char *key, const std::string &where) const
    {
        const json &v = member(j, key, where);
        if (!v.is_number())
            fail(where + "." + key, "expected a number");
        return v.get<double>();
    }
    bool flag(const json &j, const char *key, const std::string &where) const
    {
        const json &v = member(j, key, where);
        if (!v.is_boolean())
            fail(where + "." + key, "expected true or false");
        return v.get<bool>();
    }
    std::vector<std::string> strings(const json &j, const char *key, const std::string &where) const
    {
        const json &v = member(j, key, where);
        if (!v.is_array())
            fail(where + "." + key, "expected an array");
        std::vector<std::string> out;
        for (const auto &e : v) {
            if (!e.is_string())
                fail(where + "." + key, "expected strings");
            out.push_back(e.get<std::string>());
        }
        return out;
    }
    AgentKind agent(const json &j, const std::string &where) const
    {
        auto a = parseAgent(str(j, "agent", where));
        if (!a.ok())
            fail(where + ".agent", a.error().message);
        return *a;
    }
    void dimensions(const json &j, const char *key, const std::string &where, double (&out)[kStaticDimensionCount]) const
    {
        const json &d = member(j, key, where);
        for (int i = 0; i < kStaticDimensionCount; ++i)
            out[i] = num(d, kStaticDimensions[i], where + "." + key);
    }
    TraceStage stage(const json &j, const std::string &where) const
    {
        return {agent(j, where), str(j, "summary", where), strings(j, "notes", where)};
    }
};

} // namespace

std::string traceToJson(const Trace &t)
{
    json j = json::object();
    j["schema"] = "stitchcuda-trace/1";
    j["version"] = Trace::kVersion;
    j["source"] = t.source;
    j["source_text"] = t.sourceText;
    j["sizes"] = t.sizes;
    j["arch"] = t.arch;
    j["precision"] = t.precision;
    j["policy"] = t.policy;
    j["seed"] = t.seed;
    j["mode"] = t.mode;
    j["budget"] = t.budget;
    j["pins"] = t.pins;
    j["parse"] = stageJson(t.parse);
    json decisions = json::array();
    for (const auto &d : t.decisions) {
        json options = json::array();
        for (const auto &o : d.options) {
            json oj{{"value", o.text}, {"legal", o.legal}, {"probability", o.probability}};
            if (!o.why.empty())
                oj["why"] = o.why;
            if (o.estimatedMs)
                oj["estimated_ms"] = *o.estimatedMs;
            options.push_back(oj);
        }
        decisions.push_back(json{{"agent", agentName(d.agent)},
                                 {"id", d.id},
                                 {"group", d.group},
                                 {"key", d.key},
                                 {"subject", d.subject},
                                 {"help", d.help},
                                 {"observation", d.observation},
                                 {"options", options},
                                 {"chosen", d.chosen},
                                 {"heuristic", d.heuristic},
                                 {"pinned", d.pinned},
                                 {"ms_before", d.msBefore},
                                 {"ms_after", d.msAfter},
                                 {"rubric_before", dimensionsJson(d.dimensionsBefore)},
                                 {"rubric_after", dimensionsJson(d.dimensionsAfter)},
                                 {"reward", d.reward},
                                 {"rationale", d.rationale}});
        if (!d.schedule.groups.empty())
            decisions.back()["schedule"] = json::parse(schedule::toJson(d.schedule));
    }
    j["decisions"] = decisions;
    j["fusion_notes"] = t.fusionNotes;
    j["integrate"] = stageJson(t.integrate);
    json conflicts = json::array();
    for (const auto &c : t.conflicts)
        conflicts.push_back(json{{"group", c.group},
                                 {"violation", c.violation},
                                 {"agent", agentName(c.agent)},
                                 {"decision", c.decision},
                                 {"from", c.from},
                                 {"to", c.to},
                                 {"resolved", c.resolved}});
    j["conflicts"] = conflicts;
    json candidates = json::array();
    for (const auto &c : t.candidates) {
        json cj{{"origin", c.origin}, {"schedule", c.schedule}, {"estimated_ms", c.estimatedMs}, {"measured", c.measured}};
        if (c.confirmedMs)
            cj["confirmed_ms"] = *c.confirmedMs;
        candidates.push_back(cj);
    }
    j["candidates"] = candidates;
    j["schedule"] = json::parse(schedule::toJson(t.schedule));
    j["input_ms"] = t.inputMs;
    j["final_ms"] = t.finalMs;
    j["final_measured"] = t.finalMeasured;
    j["final_compiled"] = t.finalCompiled;
    j["kept_input"] = t.keptInput;
    j["decide_ms"] = t.decideMs;
    j["as_written_ms"] = t.asWrittenMs ? json(*t.asWrittenMs) : json(nullptr);
    return j.dump(2) + "\n";
}

void weighAsWritten(Trace &t, double asWrittenMs, const std::string &how)
{
    t.asWrittenMs = asWrittenMs;
    if (t.finalMs >= asWrittenMs) {
        t.keptInput = true;
        t.integrate.notes.push_back("kept the input as written: its own code runs in " + msText(asWrittenMs) + " (" + how +
                                    "), the proposal in " + msText(t.finalMs) + ", which is not faster");
    } else {
        t.integrate.notes.push_back("the proposal (" + msText(t.finalMs) + ") is " +
                                    fixedText(asWrittenMs / std::max(t.finalMs, 1e-12), 2) +
                                    "x faster than the input's own code (" + msText(asWrittenMs) + ", " + how + ")");
    }
}

Result<Trace> parseTrace(const std::string &text, const std::string &fileName)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error &e) {
        return makeError(ErrorKind::Parse, fileName + ": not a trace (invalid JSON: " + e.what() + ")");
    }
    Reader r{fileName};
    try {
        if (!j.is_object())
            r.fail("trace", "expected a JSON object");
        const std::string schema = r.str(j, "schema", "trace");
        if (schema.rfind("stitchcuda-trace/", 0) != 0)
            r.fail("schema", "\"" + schema + "\" is not a StitchCUDA trace");
        const double version = r.num(j, "version", "trace");
        if (version > Trace::kVersion || schema != "stitchcuda-trace/1")
            r.fail("version", "written by a newer StitchCUDA (trace version " + std::to_string(static_cast<int>(version)) +
                                  ", this build reads " + std::to_string(Trace::kVersion) + ")");
        Trace t;
        t.source = r.str(j, "source", "trace");
        t.sourceText = r.str(j, "source_text", "trace");
        const json &sizes = r.member(j, "sizes", "trace");
        if (!sizes.is_object())
            r.fail("sizes", "expected an object of sizes");
        for (const auto &[name, value] : sizes.items()) {
            if (!value.is_number_integer())
                r.fail("sizes." + name, "expected a whole number");
            t.sizes[name] = value.get<std::int64_t>();
        }
        t.arch = r.str(j, "arch", "trace");
        t.precision = r.str(j, "precision", "trace");
        t.policy = r.str(j, "policy", "trace");
        t.seed = static_cast<std::uint64_t>(r.num(j, "seed", "trace"));
        t.mode = r.str(j, "mode", "trace");
        t.budget = static_cast<int>(r.num(j, "budget", "trace"));
        t.pins = r.strings(j, "pins", "trace");
        t.parse = r.stage(r.member(j, "parse", "trace"), "parse");
        const json &decisions = r.member(j, "decisions", "trace");
        if (!decisions.is_array())
            r.fail("decisions", "expected an array");
        for (std::size_t i = 0; i < decisions.size(); ++i) {
            const json &dj = decisions[i];
            const std::string where = "decisions[" + std::to_string(i) + "]";
            TraceDecision d;
            d.agent = r.agent(dj, where);
            d.id = r.str(dj, "id", where);
            d.group = r.str(dj, "group", where);
            d.key = r.str(dj, "key", where);
            d.subject = r.str(dj, "subject", where);
            d.help = r.str(dj, "help", where);
            d.observation = r.str(dj, "observation", where);
            const json &options = r.member(dj, "options", where);
            if (!options.is_array() || options.empty())
                r.fail(where + ".options", "expected a non-empty array");
            for (std::size_t k = 0; k < options.size(); ++k) {
                const std::string ow = where + ".options[" + std::to_string(k) + "]";
                TraceOption o;
                o.text = r.str(options[k], "value", ow);
                o.legal = r.flag(options[k], "legal", ow);
                o.probability = r.num(options[k], "probability", ow);
                if (options[k].contains("why"))
                    o.why = r.str(options[k], "why", ow);
                if (options[k].contains("estimated_ms"))
                    o.estimatedMs = r.num(options[k], "estimated_ms", ow);
                d.options.push_back(o);
            }
            d.chosen = static_cast<int>(r.num(dj, "chosen", where));
            if (d.chosen < 0 || d.chosen >= static_cast<int>(d.options.size()))
                r.fail(where + ".chosen", "not one of the options");
            d.heuristic = static_cast<int>(r.num(dj, "heuristic", where));
            d.pinned = r.flag(dj, "pinned", where);
            d.msBefore = r.num(dj, "ms_before", where);
            d.msAfter = r.num(dj, "ms_after", where);
            r.dimensions(dj, "rubric_before", where, d.dimensionsBefore);
            r.dimensions(dj, "rubric_after", where, d.dimensionsAfter);
            d.reward = r.num(dj, "reward", where);
            d.rationale = r.str(dj, "rationale", where);
            if (dj.contains("schedule")) { // traces written before it was recorded have none
                auto after = schedule::parseSchedule(dj["schedule"].dump(), fileName);
                if (!after.ok())
                    r.fail(where + ".schedule", after.error().message);
                d.schedule = std::move(*after);
            }
            t.decisions.push_back(std::move(d));
        }
        t.fusionNotes = r.strings(j, "fusion_notes", "trace");
        t.integrate = r.stage(r.member(j, "integrate", "trace"), "integrate");
        for (const auto &cj : r.member(j, "conflicts", "trace")) {
            TraceConflict c;
            c.group = r.str(cj, "group", "conflicts");
            c.violation = r.str(cj, "violation", "conflicts");
            c.agent = r.agent(cj, "conflicts");
            c.decision = r.str(cj, "decision", "conflicts");
            c.from = r.str(cj, "from", "conflicts");
            c.to = r.str(cj, "to", "conflicts");
            c.resolved = r.flag(cj, "resolved", "conflicts");
            t.conflicts.push_back(c);
        }
        for (const auto &cj : r.member(j, "candidates", "trace")) {
            TraceCandidate c;
            c.origin = r.str(cj, "origin", "candidates");
            c.schedule = r.str(cj, "schedule", "candidates");
            c.estimatedMs = r.num(cj, "estimated_ms", "candidates");
            c.measured = r.flag(cj, "measured", "candidates");
            if (cj.contains("confirmed_ms"))
                c.confirmedMs = r.num(cj, "confirmed_ms", "candidates");
            t.candidates.push_back(c);
        }
        auto sched = schedule::parseSchedule(r.member(j, "schedule", "trace").dump(), fileName);
        if (!sched.ok())
            return sched.error();
        t.schedule = *sched;
        t.inputMs = r.num(j, "input_ms", "trace");
        t.finalMs = r.num(j, "final_ms", "trace");
        t.finalMeasured = r.flag(j, "final_measured", "trace");
        t.finalCompiled = r.flag(j, "final_compiled", "trace");
        t.keptInput = r.flag(j, "kept_input", "trace");
        t.decideMs = r.num(j, "decide_ms", "trace");
        // Optional: traces written before the input's own code was weighed lack it.
        if (j.contains("as_written_ms") && j["as_written_ms"].is_number())
            t.asWrittenMs = j["as_written_ms"].get<double>();
        return t;
    } catch (const Error &e) {
        return e;
    } catch (const json::exception &e) {
        return makeError(ErrorKind::Parse, fileName + ": " + e.what());
    }
}

} // namespace stitch::agents
